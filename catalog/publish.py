"""The last gate: every row about to be published, as written (finished by catalog.finish: expectations,
conflicts and prices joined in), passes the same invariants a fresh row passes, or the refresh aborts
and the old catalog stays."""

from __future__ import annotations

import duckdb

from catalog.previous import row_offer
from catalog.validate import problems
from normalize.errors import InvalidOffer, Unpublishable

MAX_NAMED = 3
CHUNK_ROWS = 2_000


def published_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every invariant a published row breaks, as "provider/instance_type: what"."""
    cursor = con.execute("SELECT * FROM instances ORDER BY provider, instance_type")
    names = [d[0] for d in cursor.description]
    found = []
    while chunk := cursor.fetchmany(CHUNK_ROWS):  # a 100x catalog is 50,000 rows: never all at once
        found += _problems(names, chunk)
    return found


def _problems(names: list[str], chunk: list[tuple]) -> list[str]:
    found = []
    for values in chunk:
        row = dict(zip(names, values, strict=True))
        where = f"{row['provider']}/{row['instance_type']}"
        try:  # InstanceOffer checks what the columns say about each other (bases, bits and bytes, prices)
            offer = row_offer(row, ())
        except (InvalidOffer, ValueError) as exc:
            found.append(str(exc) if str(exc).startswith(where) else f"{where}: {exc}")
            continue
        found += [f"{where}: {p}" for p in problems(offer)]  # and the fresh-row bounds
    return found


def check_published(con: duckdb.DuckDBPyConnection) -> None:
    """Raise Unpublishable, naming the first rows, if any row about to be published breaks an invariant."""
    found = published_problems(con)
    if found:
        shown = "; ".join(found[:MAX_NAMED]) + (
            f" (+{len(found) - MAX_NAMED} more)" if len(found) > MAX_NAMED else ""
        )
        raise Unpublishable(f"the catalog about to be published breaks its invariants: {shown}")
