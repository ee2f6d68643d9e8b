"""Names a user types on the command line (a provider, an instance type, a region), checked against
the catalog before a command runs, with a "did you mean" for a near miss: ``cheapest --provider awz``
is a typo, not a question with no answer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from normalize.safe_text import escaped

if TYPE_CHECKING:
    import duckdb


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """'; did you mean aws' for the closest of ``known``, or '' when none is close. Case is ignored in
    the comparison (``AWS`` is aws's, not too far from every name to suggest one); the name
    suggested is spelt as ``known`` spells it."""
    import difflib  # only when a name is unknown

    spelt: dict[str, str] = {}
    for known_name in known:
        spelt.setdefault(known_name.lower(), known_name)
    found = difflib.get_close_matches(name.lower(), list(spelt), n=1, cutoff=0.5)
    return f"; did you mean {spelt[found[0]]}" if found else ""


def unknown(kind: str, names: Iterable[str], known: Iterable[str]) -> str | None:
    """The error for the first of ``names`` not in ``known`` ("unknown provider awz; did you mean
    aws"), or None when every one is known. Regions compare without case."""
    pool = list(known)
    lowered = {k.lower() for k in pool}
    for name in names:
        if name not in pool and not (kind == "region" and name.lower() in lowered):
            return f"unknown {kind} {escaped(name[:100])}{did_you_mean(name[:100], pool)}"
    return None


def names_problem(
    con: duckdb.DuckDBPyConnection,
    providers: list[str] | None,
    instance: str | None,
    regions: list[str] | None = None,
) -> str | None:
    """The error for a provider, instance type or region the catalog does not have, with a "did you
    mean"; None when all are known."""
    from catalog.read.queries import providers as catalog_providers

    problem = unknown("provider", providers, catalog_providers(con)) if providers else None
    if problem is None and instance:
        types = [t for (t,) in con.execute("SELECT DISTINCT instance_type FROM instances").fetchall()]
        problem = unknown("instance type", [instance], types)
    if problem is None and regions:
        from catalog.read.prices import regions as price_regions  # only when a region is named

        problem = unknown("region", regions, price_regions(con))
    return problem
