"""lance_cpp's reads and writes against pylance's: each side writes, the other reads."""
import pathlib

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import lance_cpp


def test_lance_cpp_writes_pylance_reads(tmp_path, table):
    for dsv in (None, "2.0", "2.1", "legacy"):
        uri = tmp_path / f"ds-{dsv}"
        ds = lance_cpp.write_dataset(table, uri, data_storage_version=dsv, max_rows_per_file=300)
        assert isinstance(ds, lance_cpp.LanceDataset)
        assert ds.version == 1
        ref = lance.dataset(uri)
        assert ref.to_table() == table
        assert len(ref.get_fragments()) == 4
        if dsv is not None:
            assert ref.data_storage_version == {"legacy": "0.1"}.get(dsv, dsv)


def test_pylance_writes_lance_cpp_reads(tmp_path, table):
    uri = tmp_path / "ds"
    ref = lance.write_dataset(table, uri, max_rows_per_file=400)
    ref.delete("id % 7 = 0")
    ds = lance_cpp.dataset(uri)
    assert ds.schema == ref.schema
    assert ds.uri == ref.uri
    assert ds.version == ref.version == 2
    assert ds.latest_version == 2
    assert ds.to_table() == ref.to_table()
    assert ds.count_rows() == ref.count_rows()
    assert ds.count_rows("score > 100") == ref.count_rows("score > 100")
    args = dict(columns=["name", "point"], filter="id > 10 AND array_has(tags, 'u1')", limit=20, offset=5)
    assert ds.to_table(**args) == ref.to_table(**args)
    assert ds.to_table(columns=["id"], with_row_id=True) == ref.to_table(columns=["id"], with_row_id=True)
    assert ds.take([0, 5, 3, 999 - 143], columns=["id", "name"]) == ref.take([0, 5, 3, 999 - 143], columns=["id", "name"])
    assert ds.take([2, 1]) == ref.take([2, 1])
    # a dict of columns that only renames
    assert ds.to_table(columns={"n": "name", "i": "id"}, limit=3) == ref.to_table(columns={"n": "name", "i": "id"}, limit=3)
    # an older version, by number
    assert lance_cpp.dataset(str(uri), version=1).to_table() == table
    assert ds.checkout_version(1).count_rows() == 1000


def test_versions_shape(tmp_path, table):
    uri = tmp_path / "ds"
    lance.write_dataset(table, uri)
    lance.write_dataset(table, uri, mode="append")
    lance.dataset(uri).delete("id < 10")
    ours, theirs = lance_cpp.dataset(uri).versions(), lance.dataset(uri).versions()
    assert [v["version"] for v in ours] == [1, 2, 3]
    assert ours == theirs  # timestamps and summaries too


def test_scanner(tmp_path, table):
    uri = tmp_path / "ds"
    lance_cpp.write_dataset(table, uri, max_rows_per_file=250)
    ds, ref = lance_cpp.dataset(uri), lance.dataset(uri)
    sc = ds.scanner(columns=["id", "score"], filter="id >= 100", limit=500, batch_size=64)
    expected = ref.scanner(columns=["id", "score"], filter="id >= 100", limit=500).to_table()
    assert sc.to_table() == expected
    assert sc.count_rows() == 500
    reader = sc.to_reader()
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.read_all() == expected
    batches = list(sc.to_batches())
    assert all(b.num_rows <= 64 for b in batches)
    assert pa.Table.from_batches(batches) == expected
    assert pa.Table.from_batches(list(ds.to_batches(filter="id < 10"))) == ref.to_table(filter="id < 10")
    frag = ds.get_fragments()[1]
    assert frag.fragment_id == ref.get_fragments()[1].fragment_id
    assert frag.count_rows() == 250
    assert frag.to_table(columns=["id"]) == ref.get_fragments()[1].to_table(columns=["id"])
    assert "id" in sc.explain_plan()


def test_input_kinds(tmp_path, table):
    import pandas as pd
    import polars as pl

    batches = table.to_batches(max_chunksize=100)
    inputs = {
        "table": table,
        "batch": table.combine_chunks().to_batches()[0],
        "reader": pa.RecordBatchReader.from_batches(table.schema, batches),
        "batches": batches,
    }
    for name, data in inputs.items():
        ds = lance_cpp.write_dataset(data, tmp_path / name)
        assert lance.dataset(tmp_path / name).to_table() == table, name
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", None]})
    lance_cpp.write_dataset(df, str(tmp_path / "pandas"))
    lance.write_dataset(df, str(tmp_path / "pandas-ref"))
    assert lance.dataset(tmp_path / "pandas").to_table() == lance.dataset(tmp_path / "pandas-ref").to_table()
    pdf = pl.from_arrow(table)
    lance_cpp.write_dataset(pdf, tmp_path / "polars")
    lance.write_dataset(pdf, tmp_path / "polars-ref")
    assert lance.dataset(tmp_path / "polars").to_table() == lance.dataset(tmp_path / "polars-ref").to_table()

    class Stream:  # anything with __arrow_c_stream__
        def __arrow_c_stream__(self, requested_schema=None):
            return table.__arrow_c_stream__(requested_schema)

    lance_cpp.write_dataset(Stream(), tmp_path / "stream")
    assert lance.dataset(tmp_path / "stream").to_table() == table
    with pytest.raises(TypeError, match="data must be"):
        lance_cpp.write_dataset(42, tmp_path / "bad")


def test_write_modes(tmp_path, table):
    uri = tmp_path / "ds"
    lance_cpp.write_dataset(table, uri)
    ds = lance_cpp.write_dataset(table.slice(0, 10), uri, mode="append")
    assert ds.version == 2 and ds.count_rows() == 1010
    ds = lance_cpp.write_dataset(table.slice(0, 5), uri, mode="overwrite")
    assert ds.version == 3
    assert lance.dataset(uri).to_table() == table.slice(0, 5)
    with pytest.raises(OSError, match="already exists"):
        lance_cpp.write_dataset(table, uri)
    with pytest.raises(ValueError, match="mode"):
        lance_cpp.write_dataset(table, uri, mode="bogus")


def test_stable_row_ids(tmp_path, table):
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri, enable_stable_row_ids=True)
    ds.delete("id < 10")
    ds.update({"name": "'changed'"}, where="id = 500")
    ref = lance.dataset(uri)
    assert ref.to_table(with_row_id=True) == ds.to_table(with_row_id=True)
    row = ds.to_table(filter="id = 500", with_row_id=True)
    assert row["_rowid"].to_pylist() == [500]
    assert ds._take_rows([500, 11])["id"].to_pylist() == [500, 11]


def test_insert_delete_update(tmp_path, table):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ds = lance_cpp.write_dataset(table, ours)
    ref = lance.write_dataset(table, theirs)
    extra = table.slice(0, 3)
    ds.insert(extra)
    ref.insert(extra)
    assert ds.version == 2
    assert ds.delete("id >= 990") == ref.delete("id >= 990") == {"num_deleted_rows": 10}
    assert ds.update({"score": "score * 2", "name": "'x'"}, where="id < 5") == ref.update(
        {"score": "score * 2", "name": "'x'"}, where="id < 5"
    )
    assert ds.update({"score": "0"}) == ref.update({"score": "0"})
    assert ds.version == ref.version == 5
    # pylance reads lance_cpp's result and the other way round, same rows
    assert lance.dataset(ours).to_table() == ref.to_table()
    assert lance_cpp.dataset(theirs).to_table() == ds.to_table()
    ds.insert(table.slice(0, 2), mode="overwrite")
    assert lance.dataset(ours).to_table() == table.slice(0, 2)


def test_merge_insert(tmp_path, table):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ds = lance_cpp.write_dataset(table, ours)
    ref = lance.write_dataset(table, theirs)
    src = table.slice(990, 10).set_column(1, "name", pa.array(["new"] * 10))
    src = pa.concat_tables([src, src.set_column(0, "id", pa.array(range(2000, 2010), pa.int64()))])
    got = ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(src)
    want = ref.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(src)
    assert got == want == {"num_inserted_rows": 10, "num_updated_rows": 10, "num_deleted_rows": 0}
    assert lance.dataset(ours).to_table().sort_by("id") == ref.to_table().sort_by("id")
    # by-source delete with a predicate, a reader as the source
    src2 = table.slice(0, 5)
    got = (ds.merge_insert(["id"]).when_matched_update_all().when_not_matched_by_source_delete("id > 1500")
           .execute(src2.to_reader()))
    want = (ref.merge_insert(["id"]).when_matched_update_all().when_not_matched_by_source_delete("id > 1500")
            .execute(src2.to_reader()))
    assert got == want
    assert lance_cpp.dataset(theirs).to_table().sort_by("id") == ds.to_table().sort_by("id")


def test_duckdb_and_polars_read(tmp_path, table):
    import duckdb
    import polars as pl

    ds = lance_cpp.write_dataset(table.select(["id", "name", "score"]), tmp_path / "ds", max_rows_per_file=300)
    con = duckdb.connect()
    got = con.sql("SELECT count(*), sum(id), max(name) FROM ds WHERE score > 10").fetchall()
    assert got == [(979, sum(range(21, 1000)), "name-999")]
    df = pl.DataFrame(ds)  # reads the dataset's __arrow_c_stream__
    assert df.height == 1000 and df["id"].sum() == sum(range(1000))
    assert pa.table(ds) == table.select(["id", "name", "score"])
    reader = pa.RecordBatchReader.from_stream(ds.scanner(filter="id < 3"))
    assert reader.read_all()["id"].to_pylist() == [0, 1, 2]


def test_errors(tmp_path, table):
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri)
    with pytest.raises(ValueError, match="nonexistent"):
        lance_cpp.dataset(tmp_path / "nonexistent")
    with pytest.raises(ValueError, match="nosuch"):
        ds.to_table(filter="nosuch = 1")
    with pytest.raises(ValueError, match="nosuch"):
        ds.to_table(columns=["nosuch"])
    with pytest.raises(ValueError):
        ds.to_table(filter="id = ")
    with pytest.raises(TypeError, match="is_in"):
        ds.to_table(filter=pc.field("id").isin([]))
    with pytest.raises(TypeError, match="list_value_length"):
        ds.to_table(filter=pc.list_value_length(pc.field("tags")) > 1)
    with pytest.raises(TypeError, match="expression"):
        ds.to_table(columns={"x": "id + 1"})
    with pytest.raises(OSError, match="99"):
        ds.checkout_version(99)
    with pytest.raises(OSError, match="1000"):
        ds.take([1000])
    with pytest.raises(ValueError, match="nosuch"):
        ds.update({"nosuch": "1"})
    with pytest.raises(OSError, match="nosuch"):  # as pylance's delete
        ds.delete("nosuch = 1")
    with pytest.raises(TypeError, match="uri"):
        lance_cpp.dataset(42)
    # a storage option lance-cpp does not implement is refused by name; one
    # pylance ignores on a local path is ignored (tests/interop/test_s3.py
    # covers s3://)
    with pytest.raises(NotImplementedError, match="aws_profile"):
        lance_cpp.dataset(uri, storage_options={"aws_profile": "x"})
    assert lance_cpp.dataset(uri, storage_options={"aws_region": "x"}).count_rows() == ds.count_rows()
    # nothing was committed by the failures
    assert lance_cpp.dataset(uri).version == 1


def test_unimplemented_arguments_refused(tmp_path, table):
    # pylance's arguments lance_cpp does not implement are refused by name,
    # never ignored; nothing is committed.
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table, uri)
    calls = [
        ("commit_lock", lambda: lance_cpp.dataset(uri, commit_lock=object())),
        ("asof", lambda: lance_cpp.dataset(uri, asof="2026-01-01")),
        ("commit_message", lambda: lance_cpp.write_dataset(table, uri, mode="append", commit_message="m")),
        ("order_by", lambda: ds.to_table(order_by=["id"])),
        ("index_segments", lambda: ds.scanner(index_segments=[1])),
        ("fast_search", lambda: ds.count_rows(fast_search=True)),
        ("conflict_retries", lambda: ds.delete("id < 3", conflict_retries=1)),
        ("conflict_retries", lambda: ds.update({"score": "0"}, conflict_retries=1)),
        ("commit_message", lambda: ds.insert(table, commit_message="m")),
        ("retain_versions", lambda: ds.cleanup_old_versions(retain_versions=1)),
        ("stem", lambda: ds.create_scalar_index("name", "INVERTED", stem=False)),
        ("num_sub_vectors", lambda: ds.create_index("point", "IVF_FLAT", num_sub_vectors=4)),
        ("max_source_fragments", lambda: ds.optimize.compact_files(max_source_fragments=2)),
        ("ef", lambda: ds.to_table(nearest={"column": "score", "q": [1.0], "ef": 10})),
    ]
    for name, call in calls:
        with pytest.raises(NotImplementedError, match=name):
            call()
    assert lance_cpp.dataset(uri).version == 1
    assert lance_cpp.dataset(uri).to_table() == table


def test_expression_filters(tmp_path, table):
    uri = tmp_path / "ds"
    ds = lance_cpp.write_dataset(table.append_column("maybe", pa.array([None, 1.5] * 500)), uri)
    ref = lance.dataset(uri)
    f = pc.field
    for expr in [
        (f("id") > 3) & (f("name") != "name-7"),
        ~(f("score") <= 250.5) | (f("id") == 0),
        f("maybe").is_null() & (f("id") < 10),
        f("maybe").is_valid(),
        f("name") == "it's",
        f("id").isin([1, 5, 999]) | f("name").isin(["name-7", "b,c", "it's"]),
        ~f("maybe").isin([1.5]),
    ]:
        assert ds.to_table(filter=expr) == ref.to_table(filter=expr), str(expr)
        assert ds.count_rows(expr) == ref.count_rows(expr)
    n = ds.delete(f("id") >= 990)["num_deleted_rows"]
    assert n == 10


def test_path_and_str_uris(tmp_path, table):
    lance_cpp.write_dataset(table, str(tmp_path / "a"))
    lance_cpp.write_dataset(table, pathlib.Path(tmp_path / "b"))
    assert lance_cpp.dataset(pathlib.Path(tmp_path / "a")).count_rows() == 1000
    assert lance_cpp.dataset(str(tmp_path / "b")).count_rows() == 1000


def test_stream_outlives_dataset(tmp_path):
    import gc

    lance_cpp.write_dataset(pa.table({"id": list(range(100000))}), tmp_path / "ds", max_rows_per_file=10000)
    reader = lance_cpp.dataset(tmp_path / "ds").scanner(filter="id > 5", batch_size=100).to_reader()
    capsule = lance_cpp.dataset(tmp_path / "ds").__arrow_c_stream__()
    gc.collect()
    assert reader.read_all()["id"].to_pylist() == list(range(6, 100000))
    assert pa.RecordBatchReader._import_from_c_capsule(capsule).read_all().num_rows == 100000
    del capsule  # a capsule never imported releases its stream
    gc.collect()


def test_write_with_schema(tmp_path, table):
    import pandas as pd

    schema = pa.schema([("id", pa.int32()), ("name", pa.large_string())])
    small = table.select(["id", "name"]).slice(0, 10)
    ds = lance_cpp.write_dataset(small, tmp_path / "ds", schema=schema, storage_options={})
    assert lance.dataset(tmp_path / "ds").schema == schema
    lance_cpp.write_dataset(small.to_pandas(), ds, schema=schema, mode="append")  # a dataset as the uri
    ref = lance.write_dataset(small.to_pandas(), tmp_path / "ref", schema=schema)
    assert lance_cpp.dataset(tmp_path / "ds").to_table() == pa.concat_tables([ref.to_table()] * 2)
    assert isinstance(small.to_pandas(), pd.DataFrame)
