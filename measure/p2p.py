"""CUDA sample ``p2pBandwidthLatencyTest``: its P2P=Enabled bandwidth matrices.

"Unidirectional P2P=Enabled Bandwidth (P2P Writes)" is one GPU writing to a peer (one-way);
"Bidirectional P2P=Enabled Bandwidth" copies both ways at once and reports their total (two-way:
26.3 GB/s one-way against 52.1 GB/s two-way on the same PCIe pair). The diagonal is a GPU copying
to itself (its memory, not a link) and is left out. P2P=Disabled matrices stage every copy through
host memory, so they measure no GPU-to-GPU link and are not read; nor are latency matrices.
"""

from __future__ import annotations

import re

from measure.common import (
    Line,
    Origin,
    Output,
    check_matrix,
    measurement,
    median_cell,
    number,
    spread_note,
)
from normalize.errors import ParseError
from records.measurements import Measurement

_TITLE = re.compile(
    r"^(?P<dir>Unidirectional|Bidirectional) P2P=(?P<p2p>Enabled|Disabled) Bandwidth.*Matrix \(GB/s\)"
)
# Each cell after mandatory whitespace: no two ways to split a run of spaces (30,000 spaces took 14 s).
_COLUMNS = re.compile(r"^\s*D\\D(?P<cols>(?:\s+\d+)+)\s*$")
_ROW = re.compile(r"^\s*(?P<row>\d+)(?P<cells>(?:\s+[\d.]+)+)\s*$")


def is_p2p(output: Output) -> bool:
    return any(_TITLE.match(line.text) for line in output)


def parse_p2p(output: Output, origin: Origin) -> list[Measurement]:
    """One reading per P2P=Enabled bandwidth matrix (median over GPU pairs)."""
    readings: list[Measurement] = []
    current: tuple[Line, re.Match[str], list[tuple[float, str, str]]] | None = None

    def close() -> None:
        if current is not None and current[2]:
            readings.append(_reading(origin, current[0], current[1], current[2]))

    rows = 0
    for line in output:
        heading = _TITLE.match(line.text)
        row = _ROW.match(line.text)
        if heading:
            close()
            current = (line, heading, []) if heading.group("p2p") == "Enabled" else None
            rows = 0
        elif current is not None and row:
            rows += 1
            check_matrix(len(row.group("cells").split()), "cells", f"line {line.number}")
            check_matrix(rows, "rows", f"line {line.number}")
            current[2].extend(
                (number(cell, f"line {line.number}"), line.raw, f"line {line.number}")
                for c, cell in enumerate(row.group("cells").split())
                if c != int(row.group("row"))
            )
        elif current is not None and not _COLUMNS.match(line.text):
            close()
            current = None
    close()
    if not readings:
        raise ParseError("line 1: no P2P=Enabled bandwidth matrix found")
    return readings


def _reading(
    origin: Origin, line: Line, heading: re.Match[str], cells: list[tuple[float, str, str]]
) -> Measurement:
    two_way = heading.group("dir") == "Bidirectional"
    value, quote, locator = median_cell(cells)
    gpus = round((1 + (1 + 4 * len(cells)) ** 0.5) / 2)  # n(n-1) off-diagonal cells
    return measurement(
        origin,
        "gpu_to_gpu_gbytes_per_s",
        value,
        locator=f"{locator} (matrix '{line.text.strip()}' at line {line.number})",
        quote=quote,
        tool="p2pBandwidthLatencyTest",
        direction="two-way" if two_way else "one-way",
        gpus=gpus,
        notes="; ".join(
            [
                line.text.strip(),
                "total of both directions" if two_way else "one GPU writes to a peer",
                spread_note([c[0] for c in cells], "GPU pairs"),
            ]
        ),
    )
