"""`lance-cpp file write --version 2.1|2.2` against pylance: every type the
structural encoders handle must read back in pylance's LanceFileReader as the
table that went in; and the page layouts and compressions we choose are
compared with what pylance's LanceFileWriter picks for the same batches."""
from __future__ import annotations

import re
import subprocess
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
from lance.file import LanceFileReader, LanceFileWriter

from conftest import lance_cpp_binary

VERSIONS = ["2.1", "2.2"]


def _mask(rng, n, p):
    return rng.random(n) < p if p > 0 else None


def _pmask(rng, n, p):
    return pa.array(rng.random(n) < p) if p > 0 else None


def _strings(rng, n, p, lo=0, hi=12, alphabet="abcdefgh"):
    letters = np.array(list(alphabet))
    out = ["".join(rng.choice(letters, int(k))) for k in rng.integers(lo, hi, n)]
    m = rng.random(n) < p
    return [None if m[i] else s for i, s in enumerate(out)]


def _list(rng, n, p, child, large=False, max_len=4):
    lens = rng.integers(0, max_len, n)
    flat = child(int(lens.sum()))
    offsets = pa.array(np.concatenate([[0], np.cumsum(lens)]), pa.int64() if large else pa.int32())
    cls = pa.LargeListArray if large else pa.ListArray
    return cls.from_arrays(offsets, flat, mask=_pmask(rng, n, p))


def _struct(rng, n, p, **children):
    arrays = [c(n) for c in children.values()]
    return pa.StructArray.from_arrays(arrays, names=list(children), mask=_pmask(rng, n, p))


def random_table(seed: int, n: int, version: str, p: float = 0.2) -> pa.Table:
    rng = np.random.default_rng(seed)

    def ints(dt, lo, hi):
        if pa.types.is_integer(dt):
            return lambda k=n: pa.array(rng.integers(lo, hi, k), dt, mask=_mask(rng, k, p))
        # temporal types: build the integer storage, then view it
        storage = pa.int32() if dt.bit_width == 32 else pa.int64()
        return lambda k=n: pa.array(rng.integers(lo, hi, k), storage, mask=_mask(rng, k, p)).view(dt)

    def floats(np_dt, dt):
        return lambda k=n: pa.array(rng.standard_normal(k).astype(np_dt), dt, mask=_mask(rng, k, p))

    def strings(dt=pa.string(), lo=0, hi=12):
        return lambda k=n: pa.array(_strings(rng, k, p, lo, hi), dt)

    def fsl(dt, np_dt, dim, item_p=0.0):
        def make(k=n):
            items = pa.array(rng.standard_normal(k * dim).astype(np_dt), dt, mask=_mask(rng, k * dim, item_p))
            return pa.FixedSizeListArray.from_arrays(items, dim, mask=_pmask(rng, k, p))
        return make

    cols = {
        "i8": ints(pa.int8(), -128, 128)(),
        "i16": ints(pa.int16(), -300, 300)(),
        "i32": ints(pa.int32(), 0, 1000)(),
        "i64": ints(pa.int64(), -(2**40), 2**40)(),
        "u8": ints(pa.uint8(), 0, 256)(),
        "u16": ints(pa.uint16(), 0, 70)(),
        "u32": ints(pa.uint32(), 0, 2**32)(),
        "u64": ints(pa.uint64(), 0, 2**63)(),
        "runs": pa.array(np.repeat(rng.integers(0, 5, n // 50 + 1), 50)[:n], pa.int32()),
        "f16": floats(np.float16, pa.float16())(),
        "f32": floats(np.float32, pa.float32())(),
        "f64": floats(np.float64, pa.float64())(),
        "bool": pa.array(rng.random(n) < 0.5, mask=_mask(rng, n, p)),
        "dec128": pa.array([Decimal(int(v)).scaleb(-2) for v in rng.integers(-10**9, 10**9, n)],
                           pa.decimal128(12, 2), mask=_mask(rng, n, p)),
        "dec256": pa.array([Decimal(int(v)).scaleb(-3) for v in rng.integers(-10**9, 10**9, n)],
                           pa.decimal256(40, 3), mask=_mask(rng, n, p)),
        "date32": ints(pa.date32(), 0, 40000)(),
        "date64": pa.array(rng.integers(0, 40000, n) * 86400000, pa.int64(), mask=_mask(rng, n, p)).view(pa.date64()),
        "time32": ints(pa.time32("ms"), 0, 86400000)(),
        "time64": ints(pa.time64("us"), 0, 86400000000)(),
        "ts": ints(pa.timestamp("us"), 0, 2**50)(),
        "ts_tz": ints(pa.timestamp("ns", "UTC"), 0, 2**60)(),
        "dur": ints(pa.duration("ms"), -(2**40), 2**40)(),
        "fsb": pa.array([bytes(rng.integers(0, 256, 5, dtype=np.uint8)) for _ in range(n)], pa.binary(5),
                        mask=_mask(rng, n, p)),
        "fsb_wide": pa.array([bytes(rng.integers(0, 256, 300, dtype=np.uint8)) for _ in range(n)],
                             pa.binary(300), mask=_mask(rng, n, p)),
        "str": strings()(),
        "bin": pa.array([None if s is None else s.encode() for s in _strings(rng, n, p)], pa.binary()),
        "lstr": strings(pa.large_string())(),
        "lbin": pa.array([None if s is None else s.encode() for s in _strings(rng, n, p)], pa.large_binary()),
        "long_str": strings(pa.string(), 200, 600)(),
        "nulls": pa.nulls(n),
        "all_null_i32": pa.nulls(n, pa.int32()),
        "list_i32": _list(rng, n, p, ints(pa.int32(), 0, 100)),
        "llist_str": _list(rng, n, p, strings(), large=True),
        "list_list": _list(rng, n, p, lambda k: _list(rng, k, p, ints(pa.int16(), -5, 5))),
        "vec8": fsl(pa.float32(), np.float32, 8)(),
        "vec_items_null": fsl(pa.float64(), np.float64, 3, item_p=0.2)(),
        "vec128": fsl(pa.float32(), np.float32, 128)(),
        "struct": _struct(rng, n, p, a=ints(pa.int32(), 0, 9), b=strings()),
        "nested": _list(rng, n, p, lambda k: _struct(rng, k, p, x=lambda kk: _list(rng, kk, p, ints(pa.int64(), 0, 9)),
                                                      y=lambda kk: pa.array(rng.random(kk) < 0.5,
                                                                            mask=_mask(rng, kk, p)))),
        "map": pa.array([None if rng.random() < p else
                         [(f"k{j}", int(v)) for j, v in enumerate(rng.integers(0, 9, int(rng.integers(0, 4))))]
                         for _ in range(n)], pa.map_(pa.string(), pa.int32())),
    }
    if version == "2.1":
        del cols["map"]  # maps need file version 2.2 (pylance refuses them in 2.1 too)
    return pa.table(cols)


def _write_ipc(path, table, batch_rows):
    with ipc.new_file(str(path), table.schema) as w:
        for b in table.to_batches(max_chunksize=batch_rows):
            w.write_batch(b)


def _lance_cpp_write(tmp_path, table, version, batch_rows=1000, *extra):
    src = tmp_path / "in.arrow"
    out = tmp_path / f"cpp-{version}.lance"
    _write_ipc(src, table, batch_rows)
    proc = subprocess.run([str(lance_cpp_binary()), "file", "write", str(src), str(out), "--version", version,
                           *map(str, extra)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out


def _assert_tables_equal(got: pa.Table, want: pa.Table):
    assert got.schema.names == want.schema.names
    for name in want.column_names:
        g, w = got[name].combine_chunks(), want[name].combine_chunks()
        assert g.type == w.type, (name, g.type, w.type)
        assert g.equals(w), f"column {name} differs:\nwant {w.to_pylist()[:8]}\ngot  {g.to_pylist()[:8]}"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pylance_reads_what_we_write(tmp_path, version, seed):
    table = random_table(seed, 2500, version, p=[0.0, 0.2, 0.6][seed - 1])
    out = _lance_cpp_write(tmp_path, table, version, 700)
    _assert_tables_equal(LanceFileReader(str(out)).read_all().to_table(), table)


@pytest.mark.parametrize("version", VERSIONS)
def test_tiny_pages_and_small_cache(tmp_path, version):
    # A 1-byte cache flushes every column at every batch (max_page_bytes does
    # not cut 2.1+ pages, as in the reference).
    table = random_table(4, 1500, version)
    out = _lance_cpp_write(tmp_path, table, version, 300, "--max-page-bytes", 2048, "--data-cache-bytes", 1)
    reader = LanceFileReader(str(out))
    _assert_tables_equal(reader.read_all().to_table(), table)
    pages = [len(c.pages) for c in reader.metadata().columns]
    assert min(pages) >= 5, pages


def test_maps_need_2_2(tmp_path):
    table = pa.table({"m": pa.array([[("a", 1)], None], pa.map_(pa.string(), pa.int32()))})
    src = tmp_path / "in.arrow"
    _write_ipc(src, table, 10)
    proc = subprocess.run([str(lance_cpp_binary()), "file", "write", str(src), str(tmp_path / "o.lance"),
                           "--version", "2.1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "2.2" in proc.stderr, proc.stderr
    out = _lance_cpp_write(tmp_path, table, "2.2")
    _assert_tables_equal(LanceFileReader(str(out)).read_all().to_table(), table)


@pytest.mark.parametrize("version", VERSIONS)
def test_zero_rows(tmp_path, version):
    table = random_table(5, 10, version).slice(0, 0)
    out = _lance_cpp_write(tmp_path, table, version)
    got = LanceFileReader(str(out)).read_all().to_table()
    assert got.num_rows == 0
    assert got.schema.names == table.schema.names


# --------------------------------------------------------------------------
# Which layouts and compressions we pick, compared with pylance.


def page_signature(page) -> str:
    """The layout and the encoding tree of a page, without sizes or counts:
    e.g. 'MiniBlockLayout(def:OutOfLineBitpacking(Flat) value:InlineBitpacking)'."""
    text = re.sub(r"\s+", "", str(page.encoding))
    names = re.findall(r"(\w+):Some\(|([A-Z]\w*)\(", text)
    out = []
    for field, variant in names:
        if field:
            out.append(field.replace("_compression", "") + ":")
        elif variant not in ("Some", "CompressiveEncoding", "PageLayout"):
            out.append(variant + " ")
    return "".join(out).strip()


def column_signatures(path):
    return [sorted({page_signature(p) for p in c.pages}) for c in LanceFileReader(str(path)).metadata().columns]


# Columns whose encodings we expect to match pylance's (by leaf column index
# order); the rest are reported by test_report_encoding_differences.
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("which", ["random", "choices", "requested", "wide"])
def test_encodings_match_pylance(tmp_path, version, which):
    table = {"random": lambda: random_table(6, 3000, version, p=0.1), "choices": choices_table,
             "requested": requested_table, "wide": wide_table}[which]()
    ours_path = _lance_cpp_write(tmp_path, table, version, 1000)
    _assert_tables_equal(LanceFileReader(str(ours_path)).read_all().to_table(), table)
    ours = column_signatures(ours_path)
    ref_path = tmp_path / f"py-{version}.lance"
    with LanceFileWriter(str(ref_path), version=version) as w:
        for b in table.to_batches(max_chunksize=1000):
            w.write_batch(b)
    theirs = column_signatures(ref_path)
    assert len(ours) == len(theirs)
    leaf_names = _leaf_names(table.schema)
    diffs = {leaf_names[i]: (o, t) for i, (o, t) in enumerate(zip(ours, theirs)) if o != t}
    for name, (o, t) in sorted(diffs.items()):
        print(f"{version} {name}:\n  ours   {o}\n  pylance {t}")
    unexpected = {k: v for k, v in diffs.items() if k not in KNOWN_DIFFERENCES}
    assert not unexpected, unexpected


def choices_table(n: int = 3000) -> pa.Table:
    """Columns at the edges of the reference's choices: dictionary or not,
    RLE or bitpacking, FSST or not, dictionary bitpacked or lz4."""
    rng = np.random.default_rng(0)
    ints = lambda hi, dt, scale=1: pa.array(rng.integers(0, hi, n) * scale, dt, mask=_mask(rng, n, 0.05))
    table = pa.table({
        "i64_lo": ints(10, pa.int64()),
        "i64_300": ints(300, pa.int64()),
        "i64_500": ints(500, pa.int64(), 1000003),
        "i32_lo": ints(10, pa.int32()),
        "i16_lo": ints(10, pa.int16()),
        "f64_lo": pa.array(rng.integers(0, 10, n) * 0.5, pa.float64()),
        "dec_lo": pa.array([Decimal(int(v)) for v in rng.integers(0, 10, n)], pa.decimal128(10, 0)),
        "str_lo": pa.array([f"value-{v}" for v in rng.integers(0, 10, n)]),
        "lstr_lo": pa.array([f"value-{v}" for v in rng.integers(0, 10, n)], pa.large_string()),
        "str_mid": pa.array([f"v{v}" for v in rng.integers(0, 600, n)]),
        "str_hi": pa.array([f"value-{v}" for v in rng.integers(0, 2000, n)]),
        "runs8": pa.array(np.repeat(rng.integers(0, 3, n // 700 + 1), 700)[:n], pa.uint8()),
        "list_lo": _list(rng, n, 0.1, lambda k: pa.array(rng.integers(0, 4, k), pa.int64())),
        "packed": pa.StructArray.from_arrays(
            [pa.array(rng.integers(0, 100, n), pa.int32()), pa.array(rng.random(n)),
             pa.array(rng.integers(0, 9, n), pa.uint8())], names=["a", "b", "c"], mask=_pmask(rng, n, 0.1)),
    })
    # A packed struct: one column of rows, as field metadata asks.
    fields = [f.with_metadata({"packed": "true"}) if f.name == "packed" else f for f in table.schema]
    return table.cast(pa.schema(fields))


def requested_table(n: int = 3000) -> pa.Table:
    """Compression asked for through field metadata."""
    rng = np.random.default_rng(1)
    cols = {
        "i32_zstd": (pa.array(rng.integers(0, 1000, n), pa.int32()), {"compression": "zstd"}),
        "i32_lz4": (pa.array(rng.integers(0, 1000, n), pa.int32(), mask=_mask(rng, n, 0.1)), {"compression": "lz4"}),
        "i32_level": (pa.array(rng.integers(0, 1000, n), pa.int32()), {"compression": "zstd",
                                                                       "compression-level": "9"}),
        "f32_zstd": (pa.array(rng.standard_normal(n).astype(np.float32)), {"compression": "zstd"}),
        "f64_bss_on": (pa.array(rng.standard_normal(n)), {"compression": "zstd", "bss": "on"}),
        "i64_bss_off": (pa.array(rng.integers(0, 10**6, n), pa.int64()), {"compression": "zstd", "bss": "off"}),
        "str_zstd": (pa.array([f"value-{v}" for v in rng.integers(0, 2000, n)]), {"compression": "zstd"}),
        "str_fsst": (pa.array([f"value-{v}" for v in rng.integers(0, 2000, n)]), {"compression": "fsst"}),
        "str_none": (pa.array([f"value-{v}" for v in rng.integers(0, 2000, 3 * n)])[:n], {"compression": "none"}),
        "i64_none": (pa.array(rng.integers(0, 10, n), pa.int64()), {"compression": "none"}),
        "bool_lz4": (pa.array(rng.random(n) < 0.5), {"compression": "lz4"}),
        "runs_zstd": (pa.array(np.repeat(rng.integers(0, 5, n // 100 + 1), 100)[:n], pa.int32()),
                      {"compression": "zstd"}),
        "rle_strict": (pa.array(np.repeat(rng.integers(0, 5, n // 3 + 1), 3)[:n], pa.int32()),
                       {"rle-threshold": "0.1"}),
        "full_zip": (pa.array([f"v{v}" for v in rng.integers(0, 2000, n)]), {"structural-encoding": "fullzip"}),
        "dict_strict": (pa.array([f"v{v}" for v in rng.integers(0, 600, n)]), {"dict-size-ratio": "0.3"}),
    }
    fields = [pa.field(k, a.type, metadata={f"lance-encoding:{mk}": mv for mk, mv in m.items()})
              for k, (a, m) in cols.items()]
    return pa.Table.from_arrays([a for a, _ in cols.values()], schema=pa.schema(fields))


def wide_table(n: int = 200) -> pa.Table:
    """Full-zip values: per-value zstd when requested or huge, FSST or not."""
    rng = np.random.default_rng(2)
    letters = np.array(list("abcdefghijklmnop"))
    rs = lambda lo, hi, count=n: ["".join(rng.choice(letters, int(k))) for k in rng.integers(lo, hi, count)]
    huge = rs(300, 600)
    huge[3] = "q" * 40000
    cols = {
        "long_zstd": (pa.array(rs(300, 600)), {"compression": "zstd"}),
        "long_lz4_bin": (pa.array([s.encode() for s in rs(300, 600)]), {"compression": "lz4"}),
        "huge": (pa.array(huge), {}),
        "long_bin": (pa.array([s.encode() for s in rs(300, 600)]), {}),
        "long_none": (pa.array(rs(300, 600)), {"compression": "none"}),
        "long_list": (_list(rng, n, 0.2, lambda k: pa.array(rs(300, 600, k))), {}),
    }
    fields = [pa.field(k, a.type, metadata={f"lance-encoding:{mk}": mv for mk, mv in m.items()})
              for k, (a, m) in cols.items()]
    return pa.Table.from_arrays([a for a, _ in cols.values()], schema=pa.schema(fields))


def _leaf_names(schema):
    out = []

    def walk(name, t):
        if pa.types.is_struct(t):
            for f in t:
                walk(f"{name}.{f.name}", f.type)
        elif pa.types.is_map(t):
            walk(f"{name}.key", t.key_type)
            walk(f"{name}.value", t.item_type)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(f"{name}.item", t.value_type)
        else:
            out.append(name)

    for f in schema:
        if (f.metadata or {}).get(b"packed") == b"true":
            out.append(f.name)  # a packed struct is one column
        else:
            walk(f.name, f.type)
    return out


# Leaf columns where our choice still differs from pylance's (see the report).
KNOWN_DIFFERENCES: set[str] = set()


def runs_table(n: int = 20000) -> pa.Table:
    rng = np.random.default_rng(3)
    return pa.table({
        "r32": pa.array(np.repeat(rng.integers(0, 5, n // 37 + 1), 37)[:n], pa.int32()),
        "r8": pa.array(np.repeat(rng.integers(0, 5, n // 300 + 1), 300)[:n], pa.uint8()),
        "r64": pa.array(np.repeat(rng.integers(0, 10**12, n // 5 + 1), 5)[:n], pa.int64()),
    })


# Byte identity with pylance is a later goal; these inputs already get it
# (no FSST, no general compression, no 128-bit dictionary estimate, one page
# per column) and must keep it.
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("which", ["choices", "runs"])
def test_same_bytes_as_pylance(tmp_path, version, which):
    table = {"choices": choices_table, "runs": runs_table}[which]()
    out = _lance_cpp_write(tmp_path, table, version, 5000)
    ref = tmp_path / f"py-{version}.lance"
    with LanceFileWriter(str(ref), table.schema, version=version) as w:
        for b in table.to_batches(max_chunksize=5000):
            w.write_batch(b)
    assert out.read_bytes() == ref.read_bytes()


# Runs, constant and all-zero columns, single-column tables of 1000-5000
# rows: pylance 14 run-length encodes runs (run count below half the
# values) but bitpacks a page whose values are all zero (dictionary
# indices of a one-value column included), and dictionary-encodes strings
# when items (average length, unrounded) + offsets + 32-bit indices stay
# below 0.8 of the raw size (bytes + one offset per value).
def _uneven_strings(n, k):
    pool = ["abcdefghijklm"[: 1 + (j * 5) % 9] + "z" * (j % 2) + str(j) for j in range(k)]
    return [pool[i % k] for i in range(n)]


def _same_bytes_cases():
    def runs(dt, k, rl, conv=int):
        return pa.array([conv(i) for i in range(k) for _ in range(rl)], dt)
    s4 = [f"{i % 250:04d}" for i in range(1000)]  # 250 distinct: dictionary by the new estimate
    return {
        "const_str_x": pa.array(["x"] * 1000),
        "const_str_hello": pa.array(["hello"] * 1000),
        "const_large_str_x": pa.array(["x"] * 1000, pa.large_string()),
        "const_large_str_empty": pa.array([""] * 5000, pa.large_string()),
        "const_binary": pa.array([b"hello"] * 5000, pa.binary()),
        "const_str_nulls": pa.array(["x", None] * 500),
        "const_str_one_null": pa.array(["aaaa"] * 999 + [None]),
        "str_250_of_1000": pa.array(s4),
        "large_str_250_of_1000": pa.array(s4, pa.large_string()),
        # at the 0.8 boundary: 299 distinct passes, 300 does not (raw size
        # counts n offsets, not n + 1)
        "str_299_of_1000": pa.array([f"{i % 299:04d}" for i in range(1000)]),
        "str_300_of_1000": pa.array([f"{i % 300:04d}" for i in range(1000)]),
        # uneven lengths: the average length is not rounded
        "str_uneven_952_of_2000": pa.array(_uneven_strings(2000, 952)),  # 0.8004: no dictionary
        "str_uneven_930_of_2000": pa.array(_uneven_strings(2000, 930)),
        "fixed16_const": pa.array([b"0123456789abcdef"] * 1000, pa.binary(16)),
        "runs_i32_500": runs(pa.int32(), 4, 500),
        "runs_i64_500": runs(pa.int64(), 8, 500),
        "runs_f64_500": runs(pa.float64(), 8, 500, float),
        "runs_u8_1000": runs(pa.uint8(), 3, 1000),
        "zeros_i32": pa.array([0] * 1000, pa.int32()),
        "zeros_i8": pa.array([0] * 1000, pa.int8()),
        "zeros_u16": pa.array([0] * 5000, pa.uint16()),
        "zeros_f64": pa.array([0.0] * 1000, pa.float64()),
        "zeros_i32_null": pa.array([0] * 999 + [None], pa.int32()),
        "zeros_then_ones": pa.array([0] * 3000 + [1] * 10, pa.int32()),
        "sevens_i32": pa.array([7] * 1000, pa.int32()),
        "const_i64": pa.array([7] * 1000, pa.int64()),
        "short_runs_i64": runs(pa.int64(), 500, 2),  # 500 runs of 1000: not RLE
        "short_runs_i32": runs(pa.int32(), 400, 3),
    }


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("which", sorted(_same_bytes_cases()))
@pytest.mark.parametrize("batches", [1, 3])
def test_same_bytes_runs_and_constants(tmp_path, version, which, batches):
    arr = _same_bytes_cases()[which]
    table = pa.table({"a": arr})
    rows = -(-len(arr) // batches)
    out = _lance_cpp_write(tmp_path, table, version, rows)
    ref = tmp_path / f"py-{version}.lance"
    with LanceFileWriter(str(ref), table.schema, version=version) as w:
        for b in table.to_batches(max_chunksize=rows):
            w.write_batch(b)
    assert out.read_bytes() == ref.read_bytes()
    # and the values come back through pylance
    got = LanceFileReader(str(out)).read_all().to_table()
    assert got.column("a").combine_chunks().equals(arr)


# --------------------------------------------------------------------------
# Blob columns (lance-encoding:blob on a large_binary field): values out of
# line, a BlobLayout page of {position, size} descriptions.

BLOB_META = {"lance-encoding:blob": "true"}


def _blob_table(values, name="b"):
    schema = pa.schema([pa.field(name, pa.large_binary(), metadata=BLOB_META)])
    return pa.table({name: pa.array(values, pa.large_binary())}, schema=schema)


def _pylance_write(path, batches, version, **kw):
    with LanceFileWriter(str(path), batches[0].schema, version=version, **kw) as w:
        for b in batches:
            w.write_batch(b)
    return path


def _lance_cpp_write_batches(tmp_path, batches, version, *extra):
    src = tmp_path / "in.arrow"
    out = tmp_path / f"cpp-{version}.lance"
    with ipc.new_file(str(src), batches[0].schema) as w:
        for b in batches:
            w.write(b)
    proc = subprocess.run([str(lance_cpp_binary()), "file", "write", str(src), str(out), "--version", version,
                           *map(str, extra)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out


def _lance_cpp_read(tmp_path, path) -> pa.Table:
    out = tmp_path / f"read-{path.stem}.arrow"
    proc = subprocess.run([str(lance_cpp_binary()), "file", "read", str(path), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return ipc.open_file(str(out)).read_all()


def _blob_batches(which):
    rng = np.random.default_rng(7)
    big = bytes(rng.integers(0, 256, 3 * 1024 * 1024 + 5, dtype=np.uint8))  # beyond a page and the cache
    if which == "simple":
        return [_blob_table([b"hello", b"world!!", b"x" * 100, b"y" * 64, b"z" * 65])]
    if which == "nulls_empty":
        return [_blob_table([b"a", None, b"", b"bb", None, b""]), _blob_table([None, None]),
                _blob_table([b"", b""])]
    if which == "nulls_change":
        # all-valid, then nullable, then all-valid batches: a page each time the layer changes
        return [_blob_table([b"a", b"b"]), _blob_table([b"c", b"d"]), _blob_table([None, b"e", b""]),
                _blob_table([b"f" * 70]), _blob_table([b"g", None])]
    if which == "large":
        vals = [bytes(rng.integers(0, 256, int(k), dtype=np.uint8)) for k in rng.integers(0, 5000, 300)]
        vals[10] = big
        vals[20] = None
        return [_blob_table(vals[i:i + 70]) for i in range(0, 300, 70)]
    raise ValueError(which)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("which", ["simple", "nulls_empty", "nulls_change", "large"])
def test_blob_columns(tmp_path, version, which):
    batches = _blob_batches(which)
    want = pa.concat_tables(batches)
    ours = _lance_cpp_write_batches(tmp_path, batches, version)
    ref = _pylance_write(tmp_path / f"py-{version}.lance", batches, version)
    # pylance reads ours; we read pylance's; the reference is deterministic here
    _assert_tables_equal(LanceFileReader(str(ours)).read_all().to_table(), want)
    _assert_tables_equal(_lance_cpp_read(tmp_path, ref), want)
    assert column_signatures(ours) == column_signatures(ref)
    assert ours.read_bytes() == ref.read_bytes()


@pytest.mark.parametrize("version", VERSIONS)
def test_blob_with_small_cache_and_other_columns(tmp_path, version):
    cache = 1024
    rng = np.random.default_rng(8)
    n = 900
    vals = [None if rng.random() < 0.1 else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
            for k in rng.integers(0, 300, n)]
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("b", pa.large_binary(), metadata=BLOB_META),
                        pa.field("s", pa.string())])
    table = pa.table({"id": pa.array(range(n), pa.int64()), "b": pa.array(vals, pa.large_binary()),
                      "s": pa.array([f"value-{i * 7919 % 1000}" for i in range(n)])}, schema=schema)
    batches = table.to_batches(max_chunksize=200)
    ours = _lance_cpp_write_batches(tmp_path, batches, version, "--data-cache-bytes", cache)
    ref = tmp_path / f"py-{version}.lance"
    with LanceFileWriter(str(ref), schema, version=version, data_cache_bytes=cache) as w:
        for b in batches:
            w.write_batch(b)
    _assert_tables_equal(LanceFileReader(str(ours)).read_all().to_table(), table)
    assert min(len(c.pages) for c in LanceFileReader(str(ours)).metadata().columns) > 1
    assert ours.read_bytes() == ref.read_bytes()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("cache", [3000, 9999, 40000])
def test_blob_pages_cut_where_pylance_cuts_them(tmp_path, version, cache):
    # The descriptions count against the cache as the reference counts them.
    rng = np.random.default_rng(9)
    vals = [None if rng.random() < 0.1 else bytes(rng.integers(0, 256, int(k), dtype=np.uint8))
            for k in rng.integers(0, 50, 3000)]
    batches = _blob_table(vals).to_batches(max_chunksize=100)
    ours = _lance_cpp_write_batches(tmp_path, batches, version, "--data-cache-bytes", cache)
    ref = _pylance_write(tmp_path / f"py-{version}.lance", batches, version, data_cache_bytes=cache)
    assert len(LanceFileReader(str(ours)).metadata().columns[0].pages) > 1
    assert ours.read_bytes() == ref.read_bytes()


def test_blob_needs_large_binary(tmp_path):
    schema = pa.schema([pa.field("b", pa.binary(), metadata=BLOB_META)])
    src = tmp_path / "in.arrow"
    _write_ipc(src, pa.table({"b": pa.array([b"x"], pa.binary())}, schema=schema), 10)
    proc = subprocess.run([str(lance_cpp_binary()), "file", "write", str(src), str(tmp_path / "o.lance"),
                           "--version", "2.1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.startswith("error: ") and "large_binary" in proc.stderr, proc.stderr


def _struct_blob_batches():
    st = pa.struct([pa.field("x", pa.int32()), pa.field("b", pa.large_binary(), metadata=BLOB_META)])
    schema = pa.schema([pa.field("s", st)])
    rows = [[{"x": 1, "b": b"abc"}, {"x": 2, "b": None}, None, {"x": 4, "b": b""}],
            [{"x": 5, "b": b"q" * 100}, {"x": 6, "b": b"r"}],
            [None, {"x": 8, "b": None}]]
    return [pa.table({"s": pa.array(r, st)}, schema=schema) for r in rows]


@pytest.mark.parametrize("version", VERSIONS)
def test_blob_inside_struct(tmp_path, version):
    batches = _struct_blob_batches()
    want = pa.concat_tables(batches)
    ours = _lance_cpp_write_batches(tmp_path, batches, version)
    ref = _pylance_write(tmp_path / f"py-{version}.lance", batches, version)
    _assert_tables_equal(LanceFileReader(str(ours)).read_all().to_table(), want)
    _assert_tables_equal(_lance_cpp_read(tmp_path, ref), want)
    assert ours.read_bytes() == ref.read_bytes()


# --------------------------------------------------------------------------
# Struct shapes: packed structs with string children (2.2), fixed-size lists
# of structs (2.2), and what the reference refuses.

def _packed_table(rows, type_, name="p"):
    schema = pa.schema([pa.field(name, type_, metadata={"lance-encoding:packed": "true"})])
    return pa.table({name: pa.array(rows, type_)}, schema=schema)


def _packed_variable_batches(n=3000, child_meta=None):
    rng = np.random.default_rng(11)
    meta = child_meta or {}
    t = pa.struct([pa.field("a", pa.int32()), pa.field("s", pa.string(), metadata=meta.get("s")),
                   pa.field("f", pa.float64()), pa.field("lb", pa.large_binary(), metadata=meta.get("lb"))])
    words = _strings(rng, n, 0.0, 0, 20)
    rows = [None if rng.random() < 0.1 else
            {"a": int(rng.integers(0, 1000)), "s": words[i], "f": float(rng.standard_normal()),
             "lb": bytes(rng.integers(0, 256, int(rng.integers(0, 9)), dtype=np.uint8))} for i in range(n)]
    return [_packed_table(rows[i:i + 1000], t) for i in range(0, n, 1000)]


def _fsl_struct_table(n=500, p=0.2, dim=3):
    rng = np.random.default_rng(12)
    item = pa.struct([pa.field("a", pa.int32()), pa.field("s", pa.string()), pa.field("v", pa.float32())])
    items = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 100, n * dim), pa.int32(), mask=_mask(rng, n * dim, p)),
         pa.array(_strings(rng, n * dim, p)),
         pa.array(rng.standard_normal(n * dim).astype(np.float32), mask=_mask(rng, n * dim, p))],
        fields=list(item), mask=_pmask(rng, n * dim, p))
    return pa.table({"f": pa.FixedSizeListArray.from_arrays(items, dim, mask=_pmask(rng, n, p))})


@pytest.mark.parametrize("which", ["packed_variable", "packed_child_metadata", "fsl_struct"])
def test_struct_shapes_same_bytes_as_pylance_2_2(tmp_path, which):
    if which == "packed_variable":
        batches = _packed_variable_batches()
    elif which == "packed_child_metadata":
        # a child's own metadata steers its compression (not the struct's)
        batches = _packed_variable_batches(6000, {"s": {"lance-encoding:compression": "none"},
                                                  "lb": {"lance-encoding:compression": "zstd"}})
    else:
        batches = [_fsl_struct_table()]  # pylance 14.0.2 panics on a second batch of these
    want = pa.concat_tables(batches)
    ours = _lance_cpp_write_batches(tmp_path, batches, "2.2")
    ref = _pylance_write(tmp_path / "py-2.2.lance", batches, "2.2")
    _assert_tables_equal(LanceFileReader(str(ours)).read_all().to_table(), want)
    _assert_tables_equal(_lance_cpp_read(tmp_path, ref), want)
    assert column_signatures(ours) == column_signatures(ref)
    assert ours.read_bytes() == ref.read_bytes()


def test_fsl_struct_inside_struct_same_bytes_as_pylance(tmp_path):
    # Struct nulls reach the fixed-size list (pushed down) but not its items.
    rng = np.random.default_rng(5)
    n = 400
    f = _fsl_struct_table(n, p=0.2, dim=2)["f"].combine_chunks()
    outer = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 9, n), pa.int32(), mask=_mask(rng, n, 0.1)), f,
         pa.StructArray.from_arrays([pa.array(_strings(rng, n, 0.3))], names=["t"], mask=_pmask(rng, n, 0.2))],
        names=["x", "f", "inner"], mask=_pmask(rng, n, 0.25))
    table = pa.table({"s": outer})
    ours = _lance_cpp_write(tmp_path, table, "2.2")
    ref = _pylance_write(tmp_path / "py-2.2.lance", table.to_batches(), "2.2")
    assert ours.read_bytes() == ref.read_bytes()
    # (pylance 14.0.2 cannot read a fixed-size list of structs inside a struct back)
    _assert_tables_equal(_lance_cpp_read(tmp_path, ref), table)


def test_fsl_struct_many_batches_and_pages(tmp_path):
    table = _fsl_struct_table(2000, dim=2)
    ours = _lance_cpp_write(tmp_path, table, "2.2", 300, "--data-cache-bytes", 1)
    reader = LanceFileReader(str(ours))
    _assert_tables_equal(reader.read_all().to_table(), table)
    assert min(len(c.pages) for c in reader.metadata().columns) > 3
    _assert_tables_equal(_lance_cpp_read(tmp_path, ours), table)


def _refused(tmp_path, table, version, *needles):
    src = tmp_path / "in.arrow"
    _write_ipc(src, table, 1000)
    proc = subprocess.run([str(lance_cpp_binary()), "file", "write", str(src), str(tmp_path / "o.lance"),
                           "--version", version], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert not (tmp_path / "o.lance").exists()
    # pylance refuses the same input
    with pytest.raises(BaseException):
        _pylance_write(tmp_path / "py.lance", table.to_batches(), version)


def test_refused_struct_shapes(tmp_path):
    t = pa.struct([pa.field("a", pa.int32()), pa.field("s", pa.string())])
    _refused(tmp_path, _packed_table([{"a": 1, "s": "x"}], t), "2.1", "2.2")
    _refused(tmp_path, _packed_table([{"a": 1, "s": None}, {"a": 2, "s": "y"}], t), "2.2", "'s'", "null")
    wide = pa.struct([pa.field("a", pa.binary(300)), pa.field("b", pa.int32())])
    for version in VERSIONS:
        _refused(tmp_path, _packed_table([{"a": b"x" * 300, "b": 1}], wide), version, "256")
    _refused(tmp_path, _fsl_struct_table(10), "2.1", "2.2")
