"""The catalog's clock: naive UTC timestamps everywhere."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Naive UTC now, the catalog's timestamp convention."""
    return datetime.now(UTC).replace(tzinfo=None)
