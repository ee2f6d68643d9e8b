"""What every tool-output parser shares: whom the readings are about, the lines of the output with
launcher prefixes and ANSI escapes stripped, numbers, sizes and the median pair of a matrix.

A quote is always the source's own line, byte for byte (launcher prefix included), so it stays a
substring of the document at ``source_url``; only the text handed to the parsers is cleaned.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Required, Unpack

from normalize.errors import InvalidOffer, ParseError
from normalize.units import Quantity, to_number
from records.frozen import direct_init
from records.measurements import Measurement, MeasurementDetails

# Prefixes launchers put before every line of a program's output: Open MPI's --tag-output
# ("[1,0]<stdout>:"), srun --label ("0: "), SkyPilot's "(worker1, rank=1, pid=33870, ip=...)".
_LAUNCHER = re.compile(
    r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: (?=\s*[#\d])|\(\w+, rank=\d+, pid=\d+, ip=[\d.]+\) ?)"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Sizes the tools print with binary prefixes ("16G" for nccl-tests -b/-e, "1GB" for torch benches).
_BINARY = {"": "byte", "B": "byte", "K": "kibibyte", "M": "mebibyte", "G": "gibibyte", "T": "tebibyte"}
_SIZE = re.compile(r"^(?P<n>\d+)(?P<unit>[KMGT]?)B?$")


@direct_init
@dataclass(frozen=True)
class Origin:
    """Whom the readings of one document are about and where the document is.

    ``provider``/``instance_type`` are None when nobody says (the reading is kept, unmatched).
    """

    source: str
    source_url: str
    kind: str = "measured"
    provider: str | None = None
    instance_type: str | None = None
    run_at: datetime | None = None


@direct_init
@dataclass(frozen=True)
class Line:
    """One line of an output: its 1-based number, the source's exact text, and the cleaned text."""

    number: int
    raw: str
    text: str


# No tool prints a line this long (the longest in ../shared's 1,500 real outputs is 227 characters;
# an NCCL ring line for 1,024 ranks is about 5,000): past it the output is refused, so that no
# pattern ever sees more than this much text at once.
MAX_LINE_CHARS = 16_384
# One tool's output: at most what probe keeps of it (catalog.probe.MAX_STDOUT_BYTES; nvbandwidth -j,
# the largest real output, is about 100 kB) and 200,000 lines (a real log has hundreds; NCCL_DEBUG=INFO
# on hundreds of ranks, tens of thousands). Past either it is refused before a parser reads it: every
# parser is linear, but 62 MB of 16,000-character lines once took 134 s, 10 MB of empty lines 63 s and
# 1.7 GB, and 60 MB of them passed 9 GB.
MAX_OUTPUT_CHARS = 8_000_000
MAX_OUTPUT_LINES = 200_000
# GPUs in one bandwidth matrix (its rows or columns): the largest NVLink domain announced is 576
# GPUs, a p2pBandwidthLatencyTest matrix is one node's. One row of 2,500,000 cells once took 45 s and
# 1.3 GB and published a reading of 2,500,000 GPUs.
MAX_MATRIX_GPUS = 576


@dataclass
class Output:
    """A tool's output as lines, cleaned for parsing, with the raw text kept for quotes. ParseError
    naming the line and the cap when one is longer than MAX_LINE_CHARS, and naming the cap when the
    output is longer than MAX_OUTPUT_CHARS or MAX_OUTPUT_LINES."""

    text: str
    lines: list[Line] = field(init=False)

    def __post_init__(self) -> None:
        check_output_size(self.text)
        raws = self.text.splitlines()
        if len(raws) > MAX_OUTPUT_LINES:
            cap = f"over the {MAX_OUTPUT_LINES:,}-line cap on one tool output"
            raise ParseError(f"line {MAX_OUTPUT_LINES + 1:,}: {len(raws):,} lines, {cap}")
        self.lines = []
        for i, raw in enumerate(raws, start=1):
            if len(raw) > MAX_LINE_CHARS:
                cap = f"over the {MAX_LINE_CHARS:,}-character cap on one line"
                raise ParseError(f"line {i}: {len(raw):,} characters, {cap}")
            self.lines.append(Line(i, raw, clean(raw)))

    def __iter__(self) -> Iterator[Line]:
        return iter(self.lines)

    def find(self, pattern: re.Pattern[str]) -> Iterator[tuple[Line, re.Match[str]]]:
        """Every line whose cleaned text matches ``pattern`` (search), with the match."""
        for line in self.lines:
            match = pattern.search(line.text)
            if match:
                yield line, match


def check_output_size(text: str) -> None:
    """ParseError naming the cap when ``text`` is longer than one tool's output may be
    (MAX_OUTPUT_CHARS), before anything reads it."""
    if len(text) > MAX_OUTPUT_CHARS:
        cap = f"over the {MAX_OUTPUT_CHARS:,}-character cap on one tool output"
        raise ParseError(f"line 1: {len(text):,} characters, {cap}")


def check_matrix(count: int, what: str, where: str, *, stacked: int = 1) -> None:
    """ParseError naming ``where`` when a bandwidth matrix has more than MAX_MATRIX_GPUS ``what``
    (cells in a row, or rows; ``stacked`` matrices in one, as nvbandwidth v0.8's total, have that
    many times the rows)."""
    most = MAX_MATRIX_GPUS * stacked
    if count > most:
        gpus = f"{MAX_MATRIX_GPUS} GPUs" + (f", {stacked} matrices stacked" if stacked > 1 else "")
        raise ParseError(f"{where}: {count:,} {what}, over the cap of {most:,} in one matrix ({gpus})")


def clean(raw: str) -> str:
    """A line without ANSI escapes and without a launcher's prefix."""
    return _LAUNCHER.sub("", _ANSI.sub("", raw), count=1)


def number(text: str, where: str) -> float:
    """A plain decimal number; ParseError naming ``where`` otherwise."""
    try:
        return to_number(text)
    except ParseError:
        raise ParseError(f"{where}: not a number: {text!r}") from None


def binary_size_bytes(text: str, where: str) -> int:
    """'16G' or '1GB' (binary prefixes, as nccl-tests and torch benches print them) in bytes."""
    match = _SIZE.match(text.strip())
    if match is None:
        raise ParseError(f"{where}: not a message size: {text!r}")
    size = Quantity(int(match.group("n")), _BINARY[match.group("unit")]).to("byte").magnitude
    return round(size)


def median_cell(cells: list[tuple[float, str, str]]) -> tuple[float, str, str]:
    """The lower median of (value, quote, locator) cells: a real cell, never an average."""
    if not cells:
        raise ParseError("no cell to take a median of")
    ordered = sorted(cells, key=lambda cell: cell[0])
    return ordered[(len(ordered) - 1) // 2]


def spread_note(values: list[float], what: str) -> str:
    """'median of 56 GPU pairs (min 369.7, max 372.1)'."""
    return f"median of {len(values)} {what} (min {min(values):g}, max {max(values):g})"


class Reading(MeasurementDetails):
    """The keywords of one reading: where it stands in the source (its ``locator`` and the source's
    ``quote`` there) and any of Measurement's optional fields."""

    locator: Required[str]
    quote: Required[str]


def measurement(origin: Origin, metric: str, value: float | None, **reading: Unpack[Reading]) -> Measurement:
    """One reading of ``origin``'s document. A figure no real link has (past Measurement's bounds) is
    a ParseError naming where it stands."""
    fields: Reading = {"run_at": origin.run_at, **reading}
    try:
        return Measurement(
            origin.provider,
            origin.instance_type,
            origin.kind,
            metric,
            value,
            origin.source,
            origin.source_url,
            **fields,
        )
    except InvalidOffer as exc:
        raise ParseError(f"{reading['locator']}: {exc}") from None
