"""LanceDataset and friends: pylance 14's names, arguments and result shapes
over lance-cpp's C++ API (the private module _lance_cpp).

Thread-safety: a LanceDataset may be read from many threads; operations
that modify it (delete, update, insert, merge_insert, restore, ...) move the
object to the new version, as pylance's do, and must not race with each
other on one object. Fork-safety: between calls the native code runs no
threads of its own (a scan's read-ahead threads live while its stream is
read; Arrow resets its thread pool in a forked child), so a child may open
and read datasets, also through handles its parent opened. Do not fork while
another thread is inside a lance_cpp call, nor go on reading in the child a
stream (to_reader, to_batches) the parent had started: locks held then by
threads that do not exist in the child could never be released.
"""

from __future__ import annotations

import dataclasses
import os
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

import pyarrow as pa
import pyarrow.compute as pc

from . import _lance_cpp

__all__ = [
    "CleanupStats",
    "CompactionMetrics",
    "LanceDataset",
    "LanceFragment",
    "LanceScanner",
    "MergeInsertBuilder",
    "Tags",
    "dataset",
    "write_dataset",
]


def _uri(uri: Union[str, Path]) -> str:
    if isinstance(uri, Path):
        return str(uri)
    if isinstance(uri, str):
        return uri
    if hasattr(uri, "__fspath__"):
        return os.fspath(uri)
    raise TypeError(f"uri must be a str or a pathlib.Path, not {type(uri).__name__}")


def _refuse_unsupported(call: str, given: Dict[str, Any]) -> None:
    """pylance's arguments of `call` that lance_cpp does not implement:
    refused when given (not None), never silently ignored."""
    names = sorted(k for k, v in given.items() if v is not None)
    if names:
        raise NotImplementedError(f"lance_cpp {call}: {', '.join(names)} not supported yet")


def _storage_options(storage_options: Optional[Dict[str, str]]) -> Dict[str, str]:
    """pylance's storage_options as str -> str; keys lance-cpp does not
    implement are refused by the native code, by name."""
    if not storage_options:
        return {}
    return {str(k): str(v) for k, v in storage_options.items()}


def _filter_sql(filter: Any) -> str:
    if filter is None:
        return ""
    if isinstance(filter, str):
        return filter
    if isinstance(filter, pc.Expression):
        return _expression_sql(filter)
    raise TypeError(f"filter must be a SQL string, not {type(filter).__name__}")


_TOKEN = re.compile(
    r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"""
    r"""|(?P<op>==|!=|<=|>=|<|>)|(?P<paren>[(),])|(?P<name>[A-Za-z_][A-Za-z0-9_]*))"""
)
_IS_NULL = re.compile(r"is_null\(([A-Za-z_][A-Za-z0-9_]*), \{nan_is_null=false\}\)")
_IS_VALID = re.compile(r"is_valid\(([A-Za-z_][A-Za-z0-9_]*)\)")
_IS_IN = re.compile(
    r"is_in\(([A-Za-z_][A-Za-z0-9_]*), \{value_set=[a-z0-9_]+:\[\n(.*?)\n\], null_matching_behavior=MATCH\}\)",
    re.DOTALL,
)
_IS_IN_ITEM = re.compile(r'\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*(?:,|$)')


def _is_in_sql(m: "re.Match[str]") -> str:
    items, pos, body = [], 0, m.group(2)
    while pos < len(body):
        item = _IS_IN_ITEM.match(body, pos)
        if item is None or item.end() == pos:
            return m.group(0)  # left as it is: refused below, naming is_in
        items.append(item.group(1))
        pos = item.end()
    return f"({m.group(1)} IN ({', '.join(items)}))"


def _expression_sql(expr: pc.Expression) -> str:
    """SQL for a simple pyarrow compute Expression: comparisons of columns with
    literals, and / or / ~, is_null / is_valid, isin of numbers or strings.
    Anything else is a TypeError."""
    text = str(expr)
    text = _IS_NULL.sub(r"(\1 IS NULL)", text)
    text = _IS_VALID.sub(r"(\1 IS NOT NULL)", text)
    text = _IS_IN.sub(_is_in_sql, text)
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise TypeError(
                f"lance_cpp cannot translate the pyarrow.compute.Expression {expr} to SQL "
                f"(near {text[pos:pos + 20]!r}); pass the filter as a SQL string"
            )
        pos = m.end()
        if m.group("str") is not None:
            body = m.group("str")[1:-1].replace('\\"', '"').replace("'", "''")
            if "\\" in body:
                raise TypeError(f"lance_cpp cannot translate the string literal in {expr}; use a SQL string")
            out.append(f"'{body}'")
        elif m.group("num") is not None:
            out.append(m.group("num"))
        elif m.group("op") is not None:
            out.append("=" if m.group("op") == "==" else m.group("op"))
        elif m.group("paren") is not None:
            out.append(m.group("paren"))
        else:
            name = m.group("name")
            following = text[pos:].lstrip()[:1]
            if name == "invert" and following == "(":
                out.append("NOT")
            elif name in ("and", "or", "true", "false", "null", "IS", "NOT", "NULL", "IN"):
                out.append(name.upper())
            elif following == "(":
                raise TypeError(
                    f"lance_cpp cannot translate the pyarrow.compute.Expression {expr} to SQL "
                    f"(function {name}); pass the filter as a SQL string"
                )
            else:
                out.append(name)
    return " ".join(out)


def _columns(columns: Any) -> "tuple[List[str], Optional[List[str]]]":
    """Names to scan and, for a dict of projections, the output names."""
    if columns is None:
        return [], None
    if isinstance(columns, str):
        raise TypeError("columns must be a list of column names, not a str")
    if isinstance(columns, dict):
        names, paths = [], []
        for name, expr in columns.items():
            if not isinstance(expr, str) or not _is_column_path(expr):
                raise TypeError(
                    "lance_cpp takes a dict of columns only when each value names a "
                    f"column (\"a\" or \"a.b\"); {name!r}: {expr!r} is an expression "
                    "it does not evaluate yet"
                )
            names.append(name)
            paths.append(expr.strip())
        return paths, names
    return [str(c) for c in columns], None


def _is_column_path(expr: str) -> bool:
    parts = expr.strip().split(".")
    return all(p.isidentifier() for p in parts)


def _stream_capsule(data: Any) -> Any:
    """An arrow_array_stream capsule over what pylance's write_dataset takes."""
    if isinstance(data, LanceDataset):
        return data.__arrow_c_stream__()
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    elif isinstance(data, (list, tuple)) and data and all(isinstance(b, pa.RecordBatch) for b in data):
        data = pa.Table.from_batches(list(data))
    elif type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame":
        data = pa.Table.from_pandas(data)
    elif type(data).__module__.startswith("polars") and type(data).__name__ == "DataFrame":
        data = data.to_arrow()  # as pylance: large strings, not the stream's string views
    if hasattr(data, "__arrow_c_stream__"):
        return data.__arrow_c_stream__()
    raise TypeError(
        "data must be a pyarrow Table, RecordBatch, RecordBatchReader, a list of "
        "RecordBatches, a pandas DataFrame or an object with __arrow_c_stream__, "
        f"not {type(data).__name__}"
    )


class _OSErrors:
    """Re-raises the library's ValueError as OSError, for the calls whose
    refusals pylance raises as OSError (writes, delete, cleanup, checkout of a
    missing version, take out of range)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, value, tb) -> bool:
        if kind is not None and issubclass(kind, ValueError) and type(value) is ValueError:
            raise OSError(str(value)) from value
        return False


def _reader(capsule: Any) -> pa.RecordBatchReader:
    return pa.RecordBatchReader._import_from_c_capsule(capsule)


def _table(capsule: Any) -> pa.Table:
    return _reader(capsule).read_all()


def dataset(
    uri: Union[str, Path],
    version: Optional[Union[int, str]] = None,
    asof: Any = None,
    block_size: Optional[int] = None,
    commit_lock: Any = None,
    index_cache_size: Optional[int] = None,
    storage_options: Optional[Dict[str, str]] = None,
    **kwargs: Any,
) -> "LanceDataset":
    """Opens the dataset at `uri`, at `version` (a number or a tag; None = latest)."""
    # block_size and index_cache_size only tune I/O and caching.
    _refuse_unsupported("dataset()", dict(kwargs, asof=asof, commit_lock=commit_lock))
    return LanceDataset(uri, version, storage_options=storage_options)


def write_dataset(
    data: Any,
    uri: Union[str, Path, "LanceDataset"],
    schema: Optional[pa.Schema] = None,
    mode: str = "create",
    *,
    max_rows_per_file: int = 1024 * 1024,
    max_rows_per_group: int = 1024,
    max_bytes_per_file: int = 90 * 1024 * 1024 * 1024,
    data_storage_version: Optional[str] = None,
    use_legacy_format: Optional[bool] = None,
    enable_stable_row_ids: bool = False,
    storage_options: Optional[Dict[str, str]] = None,
    **kwargs: Any,
) -> "LanceDataset":
    """Writes `data` to `uri` ("create", "append" or "overwrite"), as pylance's."""
    _refuse_unsupported("write_dataset()", kwargs)
    if isinstance(uri, LanceDataset):
        uri = uri.uri
    if use_legacy_format is not None and data_storage_version is None:
        data_storage_version = "legacy" if use_legacy_format else "stable"
    if schema is not None:
        data = _cast_to_schema(data, schema)
    if mode not in ("create", "append", "overwrite"):
        raise ValueError(f"mode must be 'create', 'append' or 'overwrite', not {mode!r}")
    capsule = _stream_capsule(data)
    with _OSErrors():
        handle = _lance_cpp.write_dataset(
            capsule,
            _uri(uri),
            mode,
            data_storage_version,
            bool(enable_stable_row_ids),
            int(max_rows_per_file),
            int(max_rows_per_group),
            int(max_bytes_per_file),
            _storage_options(storage_options),
        )
    return LanceDataset._from_handle(handle)


def _cast_to_schema(data: Any, schema: pa.Schema) -> Any:
    if type(data).__module__.startswith("pandas"):
        return pa.Table.from_pandas(data, schema=schema)
    return _reader(_stream_capsule(data)).cast(schema)


@dataclasses.dataclass
class CompactionMetrics:
    """What optimize.compact_files did, as pylance's CompactionMetrics."""

    fragments_removed: int
    fragments_added: int
    files_removed: int
    files_added: int


@dataclasses.dataclass
class CleanupStats:
    """What cleanup_old_versions removed, as pylance's CleanupStats."""

    bytes_removed: int
    old_versions: int
    data_files_removed: int
    transaction_files_removed: int
    index_files_removed: int
    deletion_files_removed: int


class LanceDataset:
    """One version of a Lance dataset (pylance's LanceDataset)."""

    def __init__(
        self,
        uri: Union[str, Path],
        version: Optional[Union[int, str]] = None,
        storage_options: Optional[Dict[str, str]] = None,
    ):
        version = "" if version is None else str(version)
        try:
            self._handle = _lance_cpp.Dataset.open(_uri(uri), version, _storage_options(storage_options))
        except OSError as e:
            if "dataset not found" in str(e):  # pylance: ValueError "Dataset at path ... was not found"
                raise ValueError(str(e)) from e
            raise
        self._uri = self._handle.uri

    @classmethod
    def _from_handle(cls, handle: Any) -> "LanceDataset":
        ds = cls.__new__(cls)
        ds._handle = handle
        ds._uri = handle.uri
        return ds

    def __repr__(self) -> str:
        return f"lance_cpp.LanceDataset(uri={self.uri!r}, version={self.version})"

    # ---- metadata
    @property
    def uri(self) -> str:
        return self._uri

    @property
    def schema(self) -> pa.Schema:
        return pa.Schema._import_from_c_capsule(self._handle.schema_capsule())

    @property
    def version(self) -> int:
        return self._handle.version

    @property
    def latest_version(self) -> int:
        return self._handle.checkout("").version

    @property
    def data_storage_version(self) -> str:
        return self._handle.data_storage_version()

    def versions(self) -> List[Dict[str, Any]]:
        """Every version: [{"version", "timestamp", "metadata"}], as pylance
        (metadata: the version's summary, its values as strings)."""
        out = []
        for version, nanos, operation in self._handle.versions():
            ts = None
            if nanos is not None:  # pylance's conversion, float rounding included
                ts = datetime.fromtimestamp(nanos // 1e9) + timedelta(microseconds=(nanos % 1e9) // 1e3)
            summary = self._handle.checkout(str(version)).summary()
            out.append({"version": version, "timestamp": ts, "metadata": {k: str(v) for k, v in summary.items()}})
        return out

    @property
    def tags(self) -> "Tags":
        return Tags(self)

    @property
    def optimize(self) -> "DatasetOptimizer":
        return DatasetOptimizer(self)

    @property
    def has_index(self) -> bool:
        return len(self.list_indices()) > 0

    def list_indices(self) -> List[Dict[str, Any]]:
        """One dict per index segment: name, type, uuid, fields, version, fragment_ids."""
        types = {}
        for d in self._handle.describe_indices():
            for u in d["uuids"]:
                types[u] = (d["type"], d["field_names"])
        out = []
        for seg in self._handle.index_segments():
            if seg["uuid"] not in types:
                continue  # system indices (pylance lists them neither)
            type_name, fields = types[seg["uuid"]]
            out.append(
                {
                    "name": seg["name"],
                    "type": type_name,
                    "uuid": seg["uuid"],
                    "fields": list(fields),
                    "version": seg["version"],
                    "fragment_ids": set(seg["fragment_ids"] or []),
                    "base_id": None,
                }
            )
        return out

    def describe_indices(self) -> List[Dict[str, Any]]:
        return self._handle.describe_indices()

    def get_fragments(self, filter: Any = None) -> List["LanceFragment"]:
        if filter is not None:
            raise NotImplementedError("get_fragments(filter=...) is not supported yet")
        return [LanceFragment(self, f) for f in self._handle.fragments()]

    def get_fragment(self, fragment_id: int) -> Optional["LanceFragment"]:
        for f in self.get_fragments():
            if f.fragment_id == fragment_id:
                return f
        return None

    # ---- reads
    def scanner(
        self,
        columns: Optional[Union[List[str], Dict[str, str]]] = None,
        filter: Any = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
        nearest: Optional[Dict[str, Any]] = None,
        batch_size: Optional[int] = None,
        batch_size_bytes: Optional[int] = None,
        batch_readahead: Optional[int] = None,
        fragment_readahead: Optional[int] = None,
        scan_in_order: Optional[bool] = None,
        fragments: Optional[Iterable["LanceFragment"]] = None,
        index_segments: Any = None,
        full_text_query: Optional[Union[str, Dict[str, Any]]] = None,
        *,
        prefilter: Optional[bool] = None,
        with_row_id: Optional[bool] = None,
        with_row_address: Optional[bool] = None,
        use_scalar_index: Optional[bool] = None,
        **kwargs: Any,
    ) -> "LanceScanner":
        # batch_size_bytes and the read-ahead settings only tune the scan;
        # rows always come in order, which scan_in_order=False allows too.
        _refuse_unsupported("scanner()", dict(kwargs, index_segments=index_segments))
        return LanceScanner(
            self,
            columns=columns,
            filter=filter,
            limit=limit,
            offset=offset,
            nearest=nearest,
            batch_size=batch_size,
            fragments=fragments,
            full_text_query=full_text_query,
            prefilter=bool(prefilter),
            with_row_id=bool(with_row_id),
            with_row_address=bool(with_row_address),
            use_scalar_index=True if use_scalar_index is None else bool(use_scalar_index),
        )

    def to_table(self, columns=None, filter=None, limit=None, offset=None, nearest=None, batch_size=None,
                 *args: Any, **kwargs: Any) -> pa.Table:
        return self.scanner(columns, filter, limit, offset, nearest, batch_size, *args, **kwargs).to_table()

    def to_batches(self, columns=None, filter=None, limit=None, offset=None, nearest=None, batch_size=None,
                   *args: Any, **kwargs: Any) -> Iterator[pa.RecordBatch]:
        return self.scanner(columns, filter, limit, offset, nearest, batch_size, *args, **kwargs).to_batches()

    def count_rows(self, filter: Any = None, **kwargs: Any) -> int:
        return self.scanner(filter=filter, **kwargs).count_rows()

    def take(self, indices: Iterable[int], columns: Optional[Union[List[str], Dict[str, str]]] = None) -> pa.Table:
        """Rows at these offsets among the live rows, in the order asked."""
        names, renames = _columns(columns)
        with _OSErrors():  # as pylance's, for an index out of range
            table = _table(self._handle.take([int(i) for i in indices], names))
        return table.rename_columns(renames) if renames else table

    def _take_rows(self, row_ids: Iterable[int], columns: Optional[List[str]] = None) -> pa.Table:
        names, renames = _columns(columns)
        table = _table(self._handle.take_rows([int(i) for i in row_ids], names))
        return table.rename_columns(renames) if renames else table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The whole dataset as an Arrow C stream (DuckDB, Polars, pyarrow read it)."""
        return self.scanner().__arrow_c_stream__(requested_schema)

    def explain_plan(self, columns: Optional[List[str]] = None, filter: Any = None) -> str:
        names, _ = _columns(columns)
        return self._handle.explain_plan(names, _filter_sql(filter))

    # ---- versions
    def checkout_version(self, version: Union[int, str]) -> "LanceDataset":
        """This dataset at another version (a number or a tag)."""
        with _OSErrors():  # as pylance's, for a version that does not exist
            return LanceDataset._from_handle(self._handle.checkout(str(version)))

    def checkout_latest(self) -> "LanceDataset":
        self._handle = self._handle.checkout("")
        return self

    def restore(self) -> None:
        """Makes this version the latest, as a new version."""
        self._handle = self._handle.restore(self.version)

    def cleanup_old_versions(
        self,
        older_than: Optional[timedelta] = None,
        retain_versions: Optional[int] = None,
        *,
        delete_unverified: bool = False,
        error_if_tagged_old_versions: bool = True,
        **kwargs: Any,
    ) -> CleanupStats:
        _refuse_unsupported("cleanup_old_versions()", dict(kwargs, retain_versions=retain_versions))
        if older_than is None:
            older_than = timedelta(days=14)
        with _OSErrors():
            stats = self._handle.cleanup_old_versions(
                int(older_than.total_seconds()), bool(delete_unverified), bool(error_if_tagged_old_versions)
            )
        return CleanupStats(**stats)

    # ---- writes
    def insert(self, data: Any, *, mode: str = "append", **kwargs: Any) -> None:
        """Appends `data` (mode "append") or replaces the content ("overwrite")."""
        if mode not in ("append", "overwrite"):
            raise ValueError(f"insert mode must be 'append' or 'overwrite', not {mode!r}")
        used = ("data_storage_version", "max_rows_per_file", "max_rows_per_group", "max_bytes_per_file")
        _refuse_unsupported("insert()", {k: v for k, v in kwargs.items() if k not in used})
        capsule = _stream_capsule(data)
        with _OSErrors():
            self._handle = self._handle.write(
                capsule,
                mode,
                kwargs.get("data_storage_version"),
                int(kwargs.get("max_rows_per_file", 1024 * 1024)),
                int(kwargs.get("max_rows_per_group", 1024)),
                kwargs.get("max_bytes_per_file"),
            )

    def delete(self, predicate: Any, **kwargs: Any) -> Dict[str, int]:
        """Deletes the rows where `predicate` holds; {"num_deleted_rows": N}."""
        _refuse_unsupported("delete()", kwargs)
        sql = _filter_sql(predicate)
        if not sql:
            raise ValueError("delete needs a predicate")
        with _OSErrors():
            self._handle, n = self._handle.delete(sql)
        return {"num_deleted_rows": n}

    def update(self, updates: Dict[str, str], where: Any = None, **kwargs: Any) -> Dict[str, int]:
        """SET column = SQL expression for the rows where `where` holds; {"num_rows_updated": N}."""
        _refuse_unsupported("update()", kwargs)
        if not isinstance(updates, dict) or not updates:
            raise ValueError("updates must be a non-empty dict of column name to SQL expression")
        pairs = [(str(k), str(v)) for k, v in updates.items()]
        self._handle, n = self._handle.update(pairs, _filter_sql(where))
        return {"num_rows_updated": n}

    def merge_insert(self, on: Union[str, Iterable[str]]) -> "MergeInsertBuilder":
        return MergeInsertBuilder(self, on)

    def create_scalar_index(
        self,
        column: str,
        index_type: str,
        name: Optional[str] = None,
        *,
        replace: bool = True,
        **kwargs: Any,
    ) -> "LanceDataset":
        """A BTREE, BITMAP, LABEL_LIST, ZONEMAP, BLOOMFILTER, NGRAM or INVERTED index."""
        used = ("with_position", "base_tokenizer", "rows_per_zone")
        _refuse_unsupported("create_scalar_index()", {k: v for k, v in kwargs.items() if k not in used})
        self._handle = self._handle.create_index(
            column,
            str(index_type).upper(),
            name,
            bool(replace),
            None,
            None,
            None,
            None,
            kwargs.get("with_position"),
            kwargs.get("base_tokenizer"),
            kwargs.get("rows_per_zone"),
        )
        return self

    def create_index(
        self,
        column: Union[str, List[str]],
        index_type: str,
        name: Optional[str] = None,
        metric: str = "L2",
        replace: bool = False,
        num_partitions: Optional[int] = None,
        *,
        sample_rate: Optional[int] = None,
        max_iterations: Optional[int] = None,
        **kwargs: Any,
    ) -> "LanceDataset":
        """A vector index (IVF_FLAT, IVF_SQ) or, by its type name, a scalar one."""
        if isinstance(column, (list, tuple)):
            if len(column) != 1:
                raise ValueError("create_index takes one column")
            column = column[0]
        index_type = str(index_type).upper()
        if not index_type.startswith("IVF"):
            return self.create_scalar_index(column, index_type, name, replace=replace, **kwargs)
        _refuse_unsupported("create_index()", kwargs)
        self._handle = self._handle.create_index(
            column,
            index_type,
            name,
            bool(replace),
            str(metric).lower(),
            num_partitions,
            sample_rate,
            max_iterations,
            None,
            None,
            None,
        )
        return self


class LanceScanner:
    """A scan built by LanceDataset.scanner (pylance's LanceScanner)."""

    def __init__(self, ds: LanceDataset, *, columns, filter, limit, offset, nearest, batch_size, fragments,
                 full_text_query, prefilter, with_row_id, with_row_address, use_scalar_index):
        self._ds = ds
        self._names, self._renames = _columns(columns)
        self._filter = _filter_sql(filter)
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be non-negative, got {limit}")
        if offset is not None and offset < 0:
            raise ValueError(f"offset must be non-negative, got {offset}")
        self._limit = limit
        self._offset = offset or 0
        self._nearest = nearest
        self._batch_size = batch_size
        self._fragments = None if fragments is None else [int(f.fragment_id) for f in fragments]
        self._fts = full_text_query
        self._prefilter = prefilter
        self._with_row_id = with_row_id
        self._with_row_address = with_row_address
        self._use_scalar_index = use_scalar_index
        if nearest is not None and full_text_query is not None:
            raise ValueError("nearest and full_text_query cannot be used together")

    def _search(self) -> Optional[pa.Table]:
        """The result of a vector or full-text search; None for a plain scan."""
        if self._nearest is None and self._fts is None:
            return None
        if self._offset or self._fragments is not None or self._with_row_address:
            raise NotImplementedError("offset, fragments and with_row_address are not supported with a search yet")
        h = self._ds._handle
        if self._nearest is not None:
            n = dict(self._nearest)
            known = ("column", "q", "k", "nprobes", "refine_factor", "metric", "use_index")
            _refuse_unsupported("nearest", {k: v for k, v in n.items() if k not in known})
            q = n.get("q")
            if q is None or "column" not in n:
                raise ValueError("nearest needs 'column' and 'q'")
            k = n.get("k", 10) if self._limit is None else self._limit
            capsule = h.vector_search(
                n["column"],
                [float(x) for x in (q.to_pylist() if hasattr(q, "to_pylist") else list(q))],
                int(k if k is not None else 10),
                n.get("nprobes"),
                n.get("refine_factor"),
                str(n.get("metric") or "").lower(),
                bool(n.get("use_index", True)),
                self._filter,
                self._prefilter,
                self._names,
                self._with_row_id,
            )
        else:
            fts = self._fts
            if isinstance(fts, dict):
                query, search_columns = fts.get("query"), list(fts.get("columns") or [])
            elif isinstance(fts, str):
                query, search_columns = fts, []
            else:
                raise TypeError("full_text_query must be a str or {'query': ..., 'columns': [...]} so far")
            capsule = h.full_text_search(
                query, search_columns, self._limit, self._filter, self._prefilter, self._names, self._with_row_id
            )
        return _table(capsule)

    def _rename(self, table: pa.Table) -> pa.Table:
        if not self._renames:
            return table
        names = list(self._renames) + table.column_names[len(self._renames):]
        return table.rename_columns(names)

    def _capsule(self) -> Any:
        return self._ds._handle.scan(
            self._names,
            self._filter,
            self._offset,
            self._limit,
            self._with_row_id,
            self._with_row_address,
            self._batch_size,
            self._fragments,
            self._use_scalar_index,
        )

    def to_reader(self) -> pa.RecordBatchReader:
        searched = self._search()
        if searched is not None:
            return self._rename(searched).to_reader()
        reader = _reader(self._capsule())
        if not self._renames:
            return reader
        schema = reader.schema
        names = list(self._renames) + schema.names[len(self._renames):]
        out = pa.schema([f.with_name(n) for f, n in zip(schema, names)], schema.metadata)
        return pa.RecordBatchReader.from_batches(
            out, (pa.RecordBatch.from_arrays(b.columns, schema=out) for b in reader)
        )

    def to_table(self) -> pa.Table:
        searched = self._search()
        if searched is not None:
            return self._rename(searched)
        return self._rename(_table(self._capsule()))

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        return iter(self.to_reader())

    def count_rows(self) -> int:
        if self._nearest is not None or self._fts is not None:
            return self.to_table().num_rows
        return self._ds._handle.count_rows(
            self._names, self._filter, self._offset, self._limit, self._fragments, self._use_scalar_index
        )

    @property
    def projected_schema(self) -> pa.Schema:
        return self.to_reader().schema

    def explain_plan(self, verbose: bool = False) -> str:
        return self._ds._handle.explain_plan(self._names, self._filter)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        if requested_schema is None and self._nearest is None and self._fts is None and not self._renames:
            return self._capsule()
        return self.to_reader().__arrow_c_stream__(requested_schema)


class MergeInsertBuilder:
    """pylance's MergeInsertBuilder: merge_insert(on).when_...().execute(source)."""

    def __init__(self, ds: LanceDataset, on: Union[str, Iterable[str]]):
        if on is None:
            raise ValueError("merge_insert needs the key column(s) `on`")
        self._ds = ds
        self._on = [on] if isinstance(on, str) else [str(c) for c in on]
        self._update_all = False
        self._insert_all = False
        self._delete_by_source = False
        self._delete_predicate = ""

    def when_matched_update_all(self, condition: Optional[str] = None) -> "MergeInsertBuilder":
        if condition is not None:
            raise NotImplementedError("when_matched_update_all(condition) is not supported yet")
        self._update_all = True
        return self

    def when_not_matched_insert_all(self) -> "MergeInsertBuilder":
        self._insert_all = True
        return self

    def when_not_matched_by_source_delete(self, expr: Optional[str] = None) -> "MergeInsertBuilder":
        self._delete_by_source = True
        self._delete_predicate = _filter_sql(expr)
        return self

    def execute(self, data_obj: Any, *, schema: Optional[pa.Schema] = None) -> Dict[str, int]:
        """Runs the merge; {"num_inserted_rows", "num_updated_rows", "num_deleted_rows"}."""
        if schema is not None:
            data_obj = _cast_to_schema(data_obj, schema)
        handle, inserted, updated, deleted = self._ds._handle.merge_insert(
            self._on,
            self._update_all,
            self._insert_all,
            self._delete_by_source,
            self._delete_predicate,
            _stream_capsule(data_obj),
        )
        self._ds._handle = handle
        return {"num_inserted_rows": inserted, "num_updated_rows": updated, "num_deleted_rows": deleted}


class Tags:
    """pylance's dataset.tags: list, create, delete, update."""

    def __init__(self, ds: LanceDataset):
        self._ds = ds

    def list(self) -> Dict[str, Dict[str, Any]]:
        return {
            name: {"branch": branch, "version": version}
            for name, (version, branch) in self._ds._handle.tags().items()
        }

    def get_version(self, tag: str) -> int:
        tags = self.list()
        if tag not in tags:
            raise ValueError(f"Ref not found error: tag {tag} does not exist")
        return tags[tag]["version"]

    def create(self, tag: str, version: int, branch: Optional[str] = None) -> None:
        if branch is not None:
            raise NotImplementedError("tags.create(branch=...) is not supported yet")
        self._ds._handle.create_tag(tag, int(version))

    def delete(self, tag: str) -> None:
        self._ds._handle.delete_tag(tag)

    def update(self, tag: str, version: int, branch: Optional[str] = None) -> None:
        """Points `tag` at `version` (not atomic: the tag is deleted, then created)."""
        if branch is not None:
            raise NotImplementedError("tags.update(branch=...) is not supported yet")
        self.get_version(tag)
        self._ds.checkout_version(int(version))  # refuses a missing version before the tag goes
        self._ds._handle.delete_tag(tag)
        self._ds._handle.create_tag(tag, int(version))


class DatasetOptimizer:
    """pylance's dataset.optimize."""

    def __init__(self, ds: LanceDataset):
        self._ds = ds

    def compact_files(
        self,
        *,
        target_rows_per_fragment: int = 1024 * 1024,
        max_rows_per_group: int = 1024,
        max_bytes_per_file: Optional[int] = None,
        materialize_deletions: bool = True,
        materialize_deletions_threshold: float = 0.1,
        num_threads: Optional[int] = None,
        batch_size: Optional[int] = None,
        defer_index_remap: bool = False,
        **kwargs: Any,
    ) -> CompactionMetrics:
        _refuse_unsupported("compact_files()", kwargs)
        handle, metrics = self._ds._handle.compact_files(
            int(target_rows_per_fragment),
            int(max_rows_per_group),
            max_bytes_per_file,
            bool(materialize_deletions),
            float(materialize_deletions_threshold),
            num_threads,
            batch_size,
            bool(defer_index_remap),
        )
        self._ds._handle = handle
        return CompactionMetrics(**metrics)


class LanceFragment:
    """One fragment of a dataset version (pylance's LanceFragment)."""

    def __init__(self, ds: LanceDataset, info: Dict[str, Any]):
        self._ds = ds
        self._info = info

    def __repr__(self) -> str:
        return f"LanceFragment(id={self.fragment_id}, data_files={self._info['files']})"

    @property
    def fragment_id(self) -> int:
        return self._info["id"]

    @property
    def physical_rows(self) -> int:
        return self._info["physical_rows"]

    @property
    def num_deletions(self) -> int:
        return self._info["num_deletions"]

    def data_files(self) -> List[str]:
        return list(self._info["files"])

    def count_rows(self, filter: Any = None) -> int:
        return self._ds.scanner(filter=filter, fragments=[self]).count_rows()

    def scanner(self, **kwargs: Any) -> LanceScanner:
        return self._ds.scanner(fragments=[self], **kwargs)

    def to_table(self, **kwargs: Any) -> pa.Table:
        return self.scanner(**kwargs).to_table()
