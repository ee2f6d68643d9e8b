"""interconnect-catalog's catalog: the DuckDB schema, the refresh pipeline, the CLI, and the Python API.

``from catalog import Catalog`` is the API (``catalog.api``); it is imported on first use, so
``import catalog`` (and the CLI's start-up) loads nothing of pandas or DuckDB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog.api import Catalog

__all__ = ["Catalog"]


def __getattr__(name: str) -> Any:
    if name == "Catalog":
        from catalog.api import Catalog

        return Catalog
    raise AttributeError(f"module 'catalog' has no attribute {name!r}")
