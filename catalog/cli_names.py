"""Names a user types on the command line (a provider, an instance type, a region), checked against
the catalog before a command runs, with a "did you mean" for a near miss: ``cheapest --provider awz``
is a typo, not a question with no answer."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """'; did you mean aws' for the closest of ``known``, or '' when none is close."""
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    return f"; did you mean {found[0]}" if found else ""


def unknown(kind: str, names: Iterable[str], known: Iterable[str]) -> str | None:
    """The error for the first of ``names`` not in ``known`` ("unknown provider awz; did you mean
    aws"), or None when every one is known. Regions compare without case."""
    pool = list(known)
    lowered = {k.lower() for k in pool}
    for name in names:
        if name not in pool and not (kind == "region" and name.lower() in lowered):
            return f"unknown {kind} {name}{did_you_mean(name, pool)}"
    return None
