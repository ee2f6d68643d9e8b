"""Opening the catalog for reading: always read-only, so a refresh can swap the file underneath."""

from __future__ import annotations

from pathlib import Path

import duckdb


def connect_readonly(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection; FileNotFoundError with a hint if there is no catalog yet."""
    if not Path(path).exists():
        raise FileNotFoundError(f"no catalog at {path}; run `make refresh` or `python -m catalog seed`")
    return duckdb.connect(str(path), read_only=True)
