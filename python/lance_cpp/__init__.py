"""lance_cpp: the Lance format from lance-cpp, with pylance's API.

    import lance_cpp
    ds = lance_cpp.write_dataset(table, "/tmp/ds")
    ds.to_table(columns=["id"], filter="id > 10")

Results are pyarrow objects; data crosses the Arrow C stream interface
without copies. No pylance and no Rust inside.
"""

import pyarrow  # noqa: F401  (loads libarrow before the extension needs it)

from .dataset import (
    CleanupStats,
    CompactionMetrics,
    LanceDataset,
    LanceFragment,
    LanceScanner,
    MergeInsertBuilder,
    Tags,
    dataset,
    write_dataset,
)

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
