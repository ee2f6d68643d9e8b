"""Query results as text: an aligned table, CSV or JSON, straight from DuckDB's rows (no pandas, so
``catalog query`` starts in a fraction of a second)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, TextIO

from normalize.safe_text import csv_cell, escaped


def _plain(value: Any) -> Any:
    """A value JSON can hold: dates and times as ISO text, decimals as floats."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _cell(value: Any) -> str:
    """A value in an aligned table: NULL for a missing value, whole floats without '.0'."""
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"
    if isinstance(value, datetime | date | time):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    return escaped(str(value))  # a NUL or an escape sequence is printed, never obeyed


def write_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, out: TextIO) -> None:
    """Write a result set to ``out`` as ``fmt``: "table" (aligned), "csv" or "json"."""
    if fmt == "json":
        records = [{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows]
        out.write(json.dumps(records, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([["" if v is None else csv_cell(_plain(v)) for v in row] for row in rows])
    elif not rows:
        out.write("(no rows)\n")
    else:
        cells = [[_cell(v) for v in row] for row in rows]
        columns = [escaped(c) for c in columns]  # the user's SQL names them: printed, never obeyed
        widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
        numeric = [
            all(isinstance(row[i], int | float | Decimal) or row[i] is None for row in rows)
            for i in range(len(columns))
        ]

        def line(values: Sequence[str]) -> str:
            return "  ".join(
                v.rjust(w) if right else v.ljust(w)
                for v, w, right in zip(values, widths, numeric, strict=True)
            ).rstrip()

        out.write(line(columns) + "\n" + "\n".join(line(r) for r in cells) + "\n")
