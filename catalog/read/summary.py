"""What a catalog file holds, in one line: rows per table, providers, and how old its data is.

``seed`` prints it after building a catalog and ``release`` writes the same figures into its manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import duckdb


@dataclass(frozen=True)
class Summary:
    """Row counts and the span of time the current claims were read in (UTC, ``None`` if no claim)."""

    instances: int
    providers: int
    claims: int
    prices: int
    measurements: int
    first_fetched_at: datetime | None
    last_fetched_at: datetime | None

    def line(self) -> str:
        """``557 instances from 31 providers (3,426 claims, ...); data as of 2026-12-03 13:43 UTC``."""
        counts = (
            f"{self.instances:,} instances from {self.providers} providers ({self.claims:,} current "
            f"claims, {self.prices:,} current prices, {self.measurements:,} measurements)"
        )
        return f"{counts}; data as of {_as_of(self.first_fetched_at, self.last_fetched_at)}"


def _as_of(first: datetime | None, last: datetime | None) -> str:
    if first is None or last is None:
        return "unknown (no current claim)"
    if first == last:
        return f"{last:%Y-%m-%d %H:%M} UTC"
    return f"{first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"


def summary(con: duckdb.DuckDBPyConnection) -> Summary:
    """The catalog's counts: instances and their providers, current claims and prices, measurements."""
    row = con.execute(
        """SELECT (SELECT count(*) FROM instances), (SELECT count(DISTINCT provider) FROM instances),
                  (SELECT count(*) FROM current_claims), (SELECT count(*) FROM current_prices),
                  (SELECT count(*) FROM measurements),
                  (SELECT min(fetched_at) FROM current_claims),
                  (SELECT max(fetched_at) FROM current_claims)"""
    ).fetchone()
    assert row is not None  # a SELECT of scalars always returns one row
    return Summary(*row)
