"""SkyPilot's public catalogs (skypilot-org/skypilot-catalog ``catalogs/v*/<cloud>/vms.csv``): the reader.

One CSV per cloud, one line per (instance type, region). The files share column names but not their
order, and each has its own traps, read here once for all of them:

- columns are found by name; a file's own extra columns (StorageGiB, UpstreamCloudId,
  AvailabilityZone) are kept with the row;
- counts are floats ("8.0"); prices may be empty, a placeholder (700.0 for an unavailable TPU) or
  0.00 for "no spot market": none of those is a price;
- ``GpuInfo`` is a Python repr (single quotes, read with a literal-only evaluator, never ``eval``),
  JSON (its quotes doubled inside the CSV cell), a Python repr with JSON's ``null``, or a bare GPU
  name; its keys may be lower-case;
- ``MemoryInfo.SizeInMiB`` is one GPU's memory in MiB, all GPUs' together, or one GPU's in GB
  despite its name, depending on the file (``MemoryReading``), and ``TotalGpuMemoryInMiB`` is often
  wrong: each provider module says how its file is written and ``catalog_memory`` checks it;
- lines end in CRLF or LF and region names are UTF-8 ("Hafnarfjarðarkaupstaður, IS, EU").

Every record keeps its raw line, so a claim or a price quotes the exact CSV line it was read from.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import logging
import math
from dataclasses import dataclass
from typing import Any

from normalize.errors import LayoutError, ParseError
from normalize.units import MAX_NUMBER, to_number
from records.frozen import direct_init
from records.prices import MAX_USD_PER_HOUR, Price

log = logging.getLogger(__name__)

CATALOGS = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/"
REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "GpuInfo", "Region", "Price")
CSV_LAYOUT = "CSV columns " + ", ".join(REQUIRED_COLUMNS)
# Columns that must agree across the regions of one instance type (Price and Region may differ).
SAME_IN_EVERY_REGION = ("AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo")
# SkyPilot's price for a row it has no price for (unavailable TPU slices in the GCP catalog).
PLACEHOLDER_USD_PER_HOUR = 700.0
NO_NETWORK_NOTE = (
    "SkyPilot's catalog states no network: fabric and bandwidth come from the provider's own documents "
    "or stay missing"
)


def file_label(url: str) -> str:
    """'v8/lambda/vms.csv' for a catalog URL: how claims name the file in their context."""
    return url.removeprefix(CATALOGS)


@direct_init
@dataclass(frozen=True)
class Row:
    """One CSV record: its cells by header, its raw text (verbatim, without the line ending) and
    the line it starts on (the header is line 1)."""

    cells: dict[str, str]
    line: str
    number: int

    def cell(self, column: str) -> str:
        """The cell of ``column`` stripped ('' when the file has no such column)."""
        return self.cells.get(column, "").strip()


def csv_rows(text: str, file: str, required: tuple[str, ...] = REQUIRED_COLUMNS) -> list[Row]:
    """Every record of a catalog CSV with its raw line; LayoutError when a needed column is missing.

    A record with the wrong number of cells is skipped with a warning naming it.
    """
    lines = io.StringIO(text, newline="").readlines()  # keeps "\r\n", splits only on line endings
    reader = csv.reader(lines)
    try:
        header = [h.strip().lstrip("\ufeff") for h in next(reader, [])]
    except csv.Error as exc:
        raise LayoutError(f"{file}: unreadable header: {exc}") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise LayoutError(f"{file}: no column {missing}; header is {header}")
    rows, start = [], reader.line_num
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            log.warning("Skipping %s line %d: %s", file, start + 1, exc)
            start = reader.line_num
            continue
        raw = "".join(lines[start : reader.line_num]).rstrip("\r\n")
        number, start = start + 1, reader.line_num
        if not any(map(str.strip, cells)):
            continue
        if len(cells) != len(header):
            log.warning(
                "Skipping %s line %d %s: %d cells, header has %d",
                file,
                number,
                raw[:60],
                len(cells),
                len(header),
            )
            continue
        rows.append(Row(dict(zip(header, cells, strict=True)), raw, number))
    return rows


def is_gpu_row(row: Row) -> bool:
    """Whether the record is a GPU instance (CPU-only types have no accelerator and a 0 or empty count)."""
    return bool(row.cell("AcceleratorName")) or row.cell("AcceleratorCount") not in ("", "0", "0.0")


# ------------------------------------------------------------------------------------------------
# GpuInfo


@direct_init
@dataclass(frozen=True)
class GpuInfo:
    """The ``GpuInfo`` cell, whatever way it is written (``written``: python, json or bare).

    ``size`` is ``MemoryInfo.SizeInMiB`` and ``total`` is ``TotalGpuMemoryInMiB`` as written (in
    whatever unit the file really uses); ``total_in_entry`` marks a total put inside the Gpus entry.
    """

    written: str
    name: str | None
    count: float | None = None
    size: float | None = None
    total: float | None = None
    total_in_entry: bool = False


_LITERAL_NAMES = {"None": None, "True": True, "False": False, "null": None, "true": True, "false": False}


def _literal(node: ast.AST) -> Any:
    """The value of a literal expression: constants, dicts, lists, tuples, signed numbers and the
    names None/True/False with their JSON spellings. Anything else (a call, a name) is a ParseError."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | None):
        return node.value
    if isinstance(node, ast.Name) and node.id in _LITERAL_NAMES:
        return _LITERAL_NAMES[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        keys = [_literal(key) for key in node.keys if key is not None]
        if all(isinstance(key, str | int | float | bool | None) for key in keys):
            return dict(zip(keys, (_literal(v) for v in node.values), strict=True))
    raise ParseError(f"not a literal: {ast.dump(node)[:60]}")


def _structure(cell: str) -> tuple[Any, str]:
    """The cell as data and how it was written: JSON first, then a Python-style literal."""
    try:
        return json.loads(cell), "json"
    except (ValueError, RecursionError):
        pass
    try:
        return _literal(ast.parse(cell, mode="eval").body), "python"
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ParseError(f"GpuInfo is neither JSON nor a Python literal: {exc}") from None


def _lower_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value


def _number(value: Any) -> float | None:
    """A plausible positive figure, or None (a missing, textual, non-finite or huge value)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not 0 < value <= MAX_NUMBER:  # float() overflows past 1e308
        return None
    return float(value) if math.isfinite(value) and 0 < value <= MAX_NUMBER else None


def gpu_info(cell: str) -> GpuInfo | None:
    """The GpuInfo cell read (None when empty). A cell that is not a braced structure is a bare GPU
    name; a structure must hold exactly one Gpus entry. ParseError otherwise."""
    text = cell.strip()
    if not text:
        return None
    if not text.startswith("{"):
        return GpuInfo("bare", text)
    data, written = _structure(text)
    data = _lower_keys(data)
    gpus = data.get("gpus") if isinstance(data, dict) else None
    if not isinstance(gpus, list) or len(gpus) != 1 or not isinstance(gpus[0], dict):
        raise ParseError(f"GpuInfo has not exactly one Gpus entry: {text[:80]!r}")
    entry = gpus[0]
    memory = entry.get("memoryinfo")
    size = memory.get("sizeinmib") if isinstance(memory, dict) else None
    in_entry = "totalgpumemoryinmib" in entry
    total = entry.get("totalgpumemoryinmib") if in_entry else data.get("totalgpumemoryinmib")
    name = entry.get("name")
    return GpuInfo(
        written,
        str(name).strip() if isinstance(name, str | int | float) and str(name).strip() else None,
        _number(entry.get("count")),
        _number(size),
        _number(total),
        in_entry,
    )


# ------------------------------------------------------------------------------------------------
# Prices


def _usd(row: Row, column: str, notes: list[str]) -> float | None:
    """One price cell in USD per hour; None (with a note saying why) when it is no price."""
    text = row.cell(column)
    if not text:
        return None
    value = to_number(text)
    if value == PLACEHOLDER_USD_PER_HOUR:
        notes.append(f"{column} {text} is SkyPilot's placeholder for an unavailable price, not a price")
        return None
    if value <= 0:
        notes.append(f"{column} {text} is not a price (no {'spot market' if 'Spot' in column else 'price'})")
        return None
    if value > MAX_USD_PER_HOUR:
        raise ParseError(f"{column} {text} is not a plausible hourly price")
    return value


def row_price(provider: str, instance_type: str, row: Row, url: str) -> Price | None:
    """The price one record publishes (on-demand and spot, in its region), or None when it has no
    price at all. ParseError for a price cell that is not a number."""
    notes: list[str] = []
    usd = _usd(row, "Price", notes)
    spot = _usd(row, "SpotPrice", notes)
    region = row.cell("Region")
    if usd is None and spot is None:
        log.debug("%s %s line %d: no price (%s)", provider, instance_type, row.number, "; ".join(notes))
        return None
    if not region:
        raise ParseError(f"line {row.number}: a price with no region")
    context = f"{file_label(url)} › line {row.number}"
    if row.cell("AvailabilityZone"):
        context += f" › AvailabilityZone {row.cell('AvailabilityZone')}"
    return Price(provider, instance_type, region, usd, spot, url, row.line, context, "; ".join(notes))
