"""How numbers read in a sentence or a table cell: the read side's one formatting rule."""

from __future__ import annotations

import pandas as pd


def fmt(number: float) -> str:
    """A bandwidth for a sentence: ``3,200``, ``50``, ``12.5``, ``1.56``."""
    if number >= 100:
        return f"{number:,.0f}"
    return f"{number:.3g}"


def known(value: object) -> bool:
    """Whether a cell holds a value (not None, NaN or NA)."""
    return value is not None and not pd.isna(value)
