"""How numbers read in a sentence or a table cell: the read side's one formatting rule, in Python and
in SQL (``fmt_sql`` writes the same rule as a DuckDB expression, so a sentence built in a query reads
like one built here)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard


def fmt(number: float) -> str:
    """A bandwidth for a sentence: ``3,200``, ``50``, ``12.5``, ``1.56``."""
    if number >= 100:
        return f"{number:,.0f}"
    return f"{number:.3g}"


def fmt_sql(expression: str) -> str:
    """``fmt`` as a DuckDB expression over ``expression`` (NULL stays NULL)."""
    return (
        f"CASE WHEN ({expression}) >= 100 THEN format('{{:,.0f}}', ({expression})) "
        f"ELSE format('{{:.3g}}', ({expression})) END"
    )


def known(value: Any) -> TypeGuard[Any]:
    """Whether a cell holds a value (not None, NaN or pandas' NA/NaT), without loading pandas."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return False
    if isinstance(value, float):
        return not math.isnan(value)
    try:
        return bool(value == value)  # NaN-like scalars (numpy's) are not equal to themselves
    except (TypeError, ValueError):
        return True


def sql_text(text: str) -> str:
    """A constant of ours (never user input) as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def label_sql(column: str, labels: Mapping[Any, str]) -> str:
    """A CASE expression naming each vocabulary value of ``column`` the way ``labels`` does."""
    cases = " ".join(f"WHEN {sql_text(str(k))} THEN {sql_text(v)}" for k, v in labels.items())
    return f"CASE {column} {cases} ELSE {column} END"
