"""nvbandwidth results, from its JSON (``nvbandwidth -j``) or its text output.

Each test case gives one reading: the lower median over its cells (GPU pairs for device-to-device
tests, GPUs for host copies), a real cell with its place in the output. Versions differ in what a
bidirectional test reports, and the two are never mixed:

- v0.5 (and any output whose bidirectional matrix is not labelled "Total"): each cell is the
  bandwidth of ONE direction while both directions copy → ``gpu_to_gpu_each_way_gbytes_per_s``.
- v0.8 labels it "Total bandwidth" and stacks three matrices in one (direction 1, direction 2,
  total) → the first two as each-way readings, the third as ``gpu_to_gpu_gbytes_per_s`` two-way.

"Waived" test cases did not run (one GPU, or GPUs without peer access) and give no bandwidth; a run
of two or more GPUs whose every device-to-device test was waived is evidence of its own: those GPUs
have no peer-to-peer path (nvbandwidth waives peer copies the driver cannot do), kept as one
``gpu_p2p_status`` reading "Waived" that quotes the first waived status. A run that failed ("error")
gives no reading and is refused with the line.

One more trap: in v0.5 output the SM (kernel) bidirectional tests print about twice the CE ones
(670 vs 365 GB/s on an a3-highgpu-8g, while v0.8 prints 339 per direction for SM): v0.5's SM
bidirectional figures look like totals, its CE ones like per-direction values, and neither says so.
So an unlabelled bidirectional matrix is read only from the copy engine (CE), whose per-direction
reading matches its own one-way figure; unlabelled SM bidirectional matrices are not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import Any

from measure.common import (
    MAX_MATRIX_GPUS,
    Origin,
    Output,
    check_matrix,
    check_output_size,
    measurement,
    number,
    spread_note,
)
from normalize.errors import ParseError
from normalize.units import MAX_NUMBER, to_number
from records.frozen import direct_init
from records.measurements import Measurement

# test-case name → (metric, direction) for the tests that measure a link; others are not read.
_LINKS = {
    "host_to_device_memcpy": ("host_to_gpu_gbytes_per_s", "one-way"),
    "device_to_host_memcpy": ("gpu_to_host_gbytes_per_s", "one-way"),
    "host_to_device_bidirectional_memcpy": ("host_to_gpu_gbytes_per_s", "two-way"),
    "device_to_host_bidirectional_memcpy": ("gpu_to_host_gbytes_per_s", "two-way"),
    "device_to_device_memcpy_read": ("gpu_to_gpu_gbytes_per_s", "one-way"),
    "device_to_device_memcpy_write": ("gpu_to_gpu_gbytes_per_s", "one-way"),
    "device_to_device_bidirectional_memcpy_read": ("gpu_to_gpu_each_way_gbytes_per_s", "two-way"),
    "device_to_device_bidirectional_memcpy_write": ("gpu_to_gpu_each_way_gbytes_per_s", "two-way"),
}
_TEST = re.compile(r"^(?P<multinode>multinode_)?(?P<base>\w+?)_(?P<engine>ce|sm)$")
_RUNNING = re.compile(r"^Running (?P<test>\w+)\.\s*$")
_DESCRIPTION = re.compile(r"bandwidth \(GB/s\)\s*$")
# Each cell after mandatory whitespace: no two ways to split a run of digits (no backtracking blow-up).
_ROW = re.compile(r"^\s*(?P<row>\d+)(?P<cells>(?:\s+(?:[\d.]+|N/A))+)\s*$")
_VERSION = re.compile(r"nvbandwidth Version: (?P<v>\S+)")
_PROCESS = re.compile(r"^Process \d+ \((?P<host>[^)]+)\): device \d+:")


#: ASCII digits with at most one decimal point followed by a digit: a subset of what ``to_number``
#: reads, read to the same float.
_PLAIN_DECIMAL = re.compile(r"[0-9]*\.[0-9]+|[0-9]+")
#: The types ``json.loads`` makes of a cell that is not an object, an array or a boolean: a row of
#: these alone needs no cell checked on its own.
_SCALARS = frozenset({float, int, str, type(None)})

#: One cell of a text matrix: (cell text, quote, locator), or None where the tool printed no figure.
Cell = tuple[str, str, str] | None


@direct_init
@dataclass(frozen=True)
class Matrix:
    """One bandwidth matrix of one test case: rows of cells. A text matrix's cells are ``Cell``s; a
    JSON matrix's (``json_path`` set: where its test case stands) are the JSON values themselves, and
    only the median cell's quote and locator are ever written out (``place``)."""

    test: str
    description: str
    rows: list[list[Any]]
    json_path: str | None = None

    def value(self, r: int, c: int) -> float | None:
        """The figure of row ``r``, column ``c``; None where the tool printed none. ParseError naming
        the cell for anything but a plain decimal number."""
        cell = self.rows[r][c]
        if self.json_path is None:
            return None if cell is None else number(cell[0], cell[2])
        kind = type(cell)
        if kind is str and _PLAIN_DECIMAL.fullmatch(cell) and (value := float(cell)) <= MAX_NUMBER:
            return value  # to_number's commonest case, without its regular expression
        plain = kind is float and 1e-4 <= cell <= MAX_NUMBER  # printed with no exponent, no sign
        if plain or (kind is int and 0 < cell <= MAX_NUMBER):
            return float(cell)  # what to_number makes of its text
        if cell is None or cell == "N/A":
            return None
        try:
            return to_number(str(cell))
        except ParseError:  # named where it stands (the locator is written only then)
            raise ParseError(f"{self.place(r, c)[1]}: not a number: {str(cell)!r}") from None

    def place(self, r: int, c: int) -> tuple[str, str]:
        """The quote and the locator of row ``r``, column ``c``."""
        cell = self.rows[r][c]
        if self.json_path is None:
            return cell[1], cell[2]
        quote = encode_basestring_ascii(cell) if type(cell) is str else json.dumps(cell)  # as dumps writes it
        return quote, f"{self.json_path}.bandwidth_matrix[{r}][{c}]"


def is_json(text: str) -> bool:
    return text.lstrip().startswith("{") and '"nvbandwidth"' in text[:400]


def is_text(output: Output) -> bool:
    return any(_RUNNING.match(line.text) for line in output) or any(
        _VERSION.search(line.text) for line in output
    )


def _shaped(value: object, kind: type, path: str) -> Any:
    """``value`` when it is a ``kind`` (a JSON object, array or string); ParseError naming the path
    and what is there instead."""
    if not isinstance(value, kind):
        names: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
        raise ParseError(f"line 1: {path} is {type(value).__name__}, not {names.get(kind, kind.__name__)}")
    return value


def parse_json(
    text: str, origin: Origin, version: str | None = None, *, attribution: str = ""
) -> list[Measurement]:
    """Readings of an ``nvbandwidth -j`` run; ``version`` stands in when the JSON has none;
    ``attribution`` ends every reading's notes (a source's licence: each reading made once, not
    copied to add it). ParseError naming the JSON path for any other shape than nvbandwidth's own."""
    check_output_size(text)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"line {exc.lineno}: not nvbandwidth JSON: {exc.msg}") from None
    except RecursionError:
        raise ParseError("line 1: JSON nested too deeply to be nvbandwidth output") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise ParseError(f"line 1: not nvbandwidth JSON: {str(exc).split(';')[0]}") from None
    if not isinstance(document, dict) or "nvbandwidth" not in document:
        raise ParseError("line 1: JSON without an 'nvbandwidth' object")
    run = _shaped(document["nvbandwidth"], dict, "$.nvbandwidth")
    if "error" in run:
        line = next((i for i, ln in enumerate(text.splitlines(), 1) if '"error"' in ln), 1)
        raise ParseError(
            f"line {line}: nvbandwidth reported an error, no result: {str(run['error']).strip()[:200]}"
        )
    found = run.get("version")
    version = _shaped(found, str, "$.nvbandwidth.version") if found else version
    matrices, waived, peer_waived = [], 0, []
    for i, case in enumerate(_shaped(run.get("testcases") or [], list, "$.nvbandwidth.testcases")):
        where = f"$.nvbandwidth.testcases[{i}]"
        if not isinstance(case, dict):  # each path below is written out only for a refusal
            _shaped(case, dict, where)
        status = case.get("status")
        if status != "Passed":
            waived += status == "Waived"
            if status == "Waived" and str(case.get("name", "")).startswith("device_to_device"):
                peer_waived.append((i, str(case.get("name"))))
            continue
        matrix = case.get("bandwidth_matrix") or []
        if not isinstance(matrix, list):
            _shaped(matrix, list, f"{where}.bandwidth_matrix")
        if len(matrix) > 3 * MAX_MATRIX_GPUS:
            check_matrix(len(matrix), "rows", f"line 1: {where}.bandwidth_matrix", stacked=3)
        for r, cells in enumerate(matrix):
            if type(cells) is not list or len(cells) > MAX_MATRIX_GPUS:  # a row's place named only then
                _shaped(cells, list, f"{where}.bandwidth_matrix[{r}]")
                check_matrix(len(cells), "cells", f"line 1: {where}.bandwidth_matrix[{r}]")
            if not _SCALARS.issuperset(map(type, cells)):  # the row's types at once, a cell named if not
                for c, cell in enumerate(cells):
                    if isinstance(cell, (dict, list, bool)):
                        locator = f"{where}.bandwidth_matrix[{r}][{c}]"
                        raise ParseError(f"line 1: {locator} is {type(cell).__name__}, not a bandwidth")
        name, described = case.get("name", ""), case.get("bandwidth_description", "")
        if not isinstance(name, str):
            _shaped(name, str, f"{where}.name")
        if not isinstance(described, str):
            _shaped(described, str, f"{where}.bandwidth_description")
        matrices.append(Matrix(name, described, matrix, json_path=where))
    notes = f"{waived} test cases waived (one GPU, or no peer access)" if waived else ""
    extra = "; ".join(filter(None, [notes, attribution]))
    readings = _readings(matrices, origin, version, nodes=None, extra=extra)
    return readings + _no_peer_access(text, matrices, peer_waived, origin, version, attribution)


def _no_peer_access(
    text: str,
    matrices: list[Matrix],
    waived: list[tuple[int, str]],
    origin: Origin,
    version: str | None,
    attribution: str,
) -> list[Measurement]:
    """A "Waived" gpu_p2p_status reading when a run of two or more GPUs waived every device-to-device
    test and passed none; nothing otherwise (one GPU waives them too, and proves nothing)."""
    if not waived:  # most runs: no matrix to look through
        return []
    gpus = max(
        (len(row) for m in matrices if m.test.startswith("host_to_device") for row in m.rows), default=0
    )
    passed = any(m.test.startswith("device_to_device") for m in matrices)
    if gpus < 2 or passed:
        return []
    quote = next((ln.strip() for ln in text.splitlines() if '"Waived"' in ln), '"status" : "Waived"')
    index, _ = waived[0]
    names = ", ".join(name for _, name in waived)
    why = (
        f"every device-to-device test waived on {gpus} GPUs ({names}): no GPU peer-to-peer access; "
        "GPU-to-GPU traffic is staged through host memory"
    )
    reading = measurement(
        origin,
        "gpu_p2p_status",
        None,
        value_text="Waived",
        locator=f"$.nvbandwidth.testcases[{index}].status",
        quote=quote,
        tool="nvbandwidth",
        tool_version=version,
        gpus=gpus,
        notes="; ".join(filter(None, [why, attribution])),
    )
    return [reading]


def parse_text(output: Output, origin: Origin) -> list[Measurement]:
    """Readings of nvbandwidth's text output (matrices under 'Running <test>.' lines)."""
    version = next((m.group("v") for _, m in output.find(_VERSION)), None)
    hosts = {m.group("host") for _, m in output.find(_PROCESS)}
    matrices: list[Matrix] = []
    test = None
    for line in output:
        running = _RUNNING.match(line.text)
        if running:
            test = running.group("test")
        elif test and _DESCRIPTION.search(line.text):
            matrices.append(Matrix(test, line.text.strip(), []))
        elif test and matrices and matrices[-1].test == test and (row := _ROW.match(line.text)):
            cells = row.group("cells").split()
            check_matrix(len(cells), "cells", f"line {line.number}")
            if not any("." in c or c == "N/A" for c in cells):
                continue  # the header of column numbers
            check_matrix(len(matrices[-1].rows) + 1, "rows", f"line {line.number}", stacked=3)
            matrices[-1].rows.append(
                [None if c == "N/A" else (c, line.raw, f"line {line.number}") for c in cells]
            )
    return _readings(matrices, origin, version, nodes=len(hosts) or None, extra="")


def _readings(
    matrices: list[Matrix], origin: Origin, version: str | None, *, nodes: int | None, extra: str
) -> list[Measurement]:
    readings = []
    for matrix in matrices:
        parts = _test_parts(matrix.test)
        if parts is None:
            continue
        base, engine = parts
        link = _LINKS.get(base)
        if link is None or not matrix.rows or "(ns)" in matrix.description:
            continue
        columns = max(len(row) for row in matrix.rows)
        for metric, direction, rows, semantics in _split(matrix, *link, engine=engine, columns=columns):
            read_as = (metric, direction, semantics)
            reading = _median(matrix, rows, columns, origin, read_as, version, nodes, extra)
            if reading is not None:
                readings.append(reading)
    if not readings:
        raise ParseError("line 1: no nvbandwidth test case with a bandwidth result")
    return readings


@lru_cache(maxsize=256)
def _test_parts(name: str) -> tuple[str, str] | None:
    """A test case's base name and engine (ce, sm), or None: matched once per name (a lazy ``\\w+?``
    tries every underscore, and 168 runs repeat the same dozen names)."""
    test = _TEST.match(name)
    return (test.group("base"), test.group("engine")) if test else None


def _split(
    matrix: Matrix, metric: str, direction: str, *, engine: str, columns: int
) -> Iterator[tuple[str, str, range, str]]:
    """The matrix's readings: v0.8 stacks direction 1, direction 2 and their total; an unlabelled
    (v0.5) bidirectional copy-engine matrix is per direction, an SM one is not read. ``columns``: its
    widest row."""
    every = range(len(matrix.rows))
    total = "Total" in matrix.description
    if direction == "two-way" and total and len(matrix.rows) == 3 * columns:
        each = "v0.8 direction matrices: one direction while both copy"
        yield metric, direction, range(2 * columns), each
        yield (
            "gpu_to_gpu_gbytes_per_s",
            direction,
            range(2 * columns, 3 * columns),
            "total of both directions",
        )
    elif direction == "two-way" and not metric.startswith("gpu_to_gpu"):
        yield metric, direction, every, "this direction's bandwidth while both directions copy"
    elif direction == "two-way" and total:
        yield "gpu_to_gpu_gbytes_per_s", direction, every, "total of both directions"
    elif direction == "two-way" and engine == "ce":
        yield (
            metric,
            direction,
            every,
            "one direction while both copy (no 'Total' label: v0.5 semantics)",
        )
    elif direction == "one-way":
        yield metric, direction, every, "one direction copies"


def _median(
    matrix: Matrix,
    rows: range,
    columns: int,
    origin: Origin,
    read_as: tuple[str, str, str],
    version: str | None,
    nodes: int | None,
    extra: str,
) -> Measurement | None:
    """The lower median reading of ``rows`` of ``matrix`` (``columns`` wide) as ``read_as`` says: its
    metric, direction and semantics; None when no cell holds a figure."""
    metric, direction, semantics = read_as
    device_pairs = metric.startswith("gpu_to_gpu")
    json_cells = matrix.json_path is not None
    plain = _PLAIN_DECIMAL.fullmatch
    cells = []
    value: float | None
    for r in rows:
        row = matrix.rows[r]
        own = r % columns if device_pairs and columns else -1  # a GPU to itself: not a pair
        for c, cell in enumerate(row):
            if c == own:
                continue
            kind = type(cell)
            # what ``value`` makes of the commonest JSON cells, without the call
            if json_cells and kind is str and plain(cell) and (value := float(cell)) <= MAX_NUMBER:
                pass
            elif json_cells and kind is float and 1e-4 <= cell <= MAX_NUMBER:
                value = cell
            else:
                value = matrix.value(r, c)
            if value is not None and value > 0:
                cells.append((value, r, c))
    if not cells:
        return None
    # Lower median, a real cell. Cells were added in (row, column) order, so sorting the tuples
    # orders equal figures as a stable sort on the figure alone would.
    ordered = sorted(cells)
    value, r, c = ordered[(len(cells) - 1) // 2]
    quote, locator = matrix.place(r, c)
    what = "GPU pairs" if device_pairs else "GPUs"
    notes = [f"{matrix.test}: {matrix.description}", semantics, spread_note([c[0] for c in ordered], what)]
    return measurement(
        origin,
        metric,
        value,
        locator=f"{locator} ({matrix.test})",
        quote=quote,
        tool="nvbandwidth",
        tool_version=version,
        direction=direction,
        gpus=columns,
        nodes=nodes,
        notes="; ".join(filter(None, [*notes, extra])),
    )
