"""Where the catalog file is: one helper, read at call time so a changed environment is honoured."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "INTERCONNECT_CATALOG_DB"
DEFAULT_DB = Path("data/catalog.duckdb")


def default_db() -> Path:
    """``$INTERCONNECT_CATALOG_DB`` if set (and not empty), else ``data/catalog.duckdb``."""
    return Path(os.environ.get(ENV_VAR) or DEFAULT_DB)
