"""lance_cpp: the Lance format from lance-cpp, with pylance's API.

    import lance_cpp
    ds = lance_cpp.write_dataset(table, "/tmp/ds")
    ds.to_table(columns=["id"], filter="id > 10")

Results are pyarrow objects; data crosses the Arrow C stream interface
without copies. No pylance and no Rust inside.
"""

import pyarrow  # noqa: F401  (loads libarrow before the extension needs it)

from . import dataset as _dataset_module
from .dataset import *  # noqa: F401,F403  (the names dataset.py's __all__ lists)

__all__ = list(_dataset_module.__all__)
