"""nccl-tests (and rccl-tests) result tables: one reading per table, at its largest message size.

The tables come in two formats (2019-era: ``size count type redop time algbw busbw error ...``;
current: ``... redop root time algbw busbw #wrong ...``), with or without the leading ``#``, behind
launcher prefixes, with rows elided as ``...`` and several collectives in one log. Which collective
ran is read from the file ("Collective test starting: all_gather_perf", or the binary named on a
command line); when the file names none, it is inferred only where the table leaves no doubt:
a reduction (``redop`` sum) whose busbw exceeds its algbw is an all_reduce, because no other
collective's bus factor exceeds 1. Anything else (all_gather and alltoall print identical rows) is
refused with the line, and the caller can say which collective it ran.

A bus bandwidth is what nccl-tests computes from the algorithm bandwidth, not a link rate: a
multi-node all_reduce keeps part of its traffic on NVLink, so its busbw can exceed the NICs' rate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from measure.common import Line, Origin, Output, measurement, number
from normalize.errors import ParseError
from records.measurements import NCCL_METRICS, Measurement

COLLECTIVES = (*NCCL_METRICS, "broadcast", "reduce", "gather", "scatter", "hypercube")
_NAMED = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")_perf\b")
_HEADER = re.compile(r"^\s*(?:#\s*)?size\s+count\s+type\b.*\balgbw\s+busbw\b")
_TYPES = r"float|double|half|bfloat16|int8|uint8|int32|uint32|int64|uint64|fp8_e4m3|fp8_e5m2"
_ROW = re.compile(rf"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>{_TYPES})\s+(?P<rest>\S(?:.*\S)?)\s*$")
_END = re.compile(r"Out of bounds values|Avg bus bandwidth")
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*(?P<avg>[\d.]+)")
_RANK = re.compile(r"Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device")
_NRANKS = re.compile(r"\bnranks (?P<n>\d+)\b")
_TESTS_VERSION = re.compile(r"nccl-tests version (?P<v>\S+)")
_RCCL = re.compile(r"rccl-tests: Version (?P<v>\S+)")
_NCCL_VERSION = re.compile(r"\bNCCL version (?P<v>\S+)")
_REDUCTIONS = frozenset({"sum", "prod", "min", "max", "avg"})
# busbw/algbw above this is an all_reduce's 2(n-1)/n; printed values have two decimals.
_ALLREDUCE_RATIO = 1.05


@dataclass
class Row:
    line: Line
    size_bytes: int
    redop: str | None
    algbw: float
    busbw: float
    inplace_busbw: float


@dataclass
class Table:
    """One result table and the text around it that belongs to it."""

    header: Line | None
    rows: list[Row] = field(default_factory=list)
    named: set[str] = field(default_factory=set)
    avg: str | None = None


def has_table(output: Output) -> bool:
    """Whether the output holds an nccl-tests result row."""
    return any(_ROW.match(line.text) and len(line.text.split()) >= 11 for line in output)


def parse_tables(output: Output, origin: Origin, collective: str | None = None) -> list[Measurement]:
    """One reading per result table (its largest message size). ParseError naming the line when a
    row is malformed or the collective cannot be told."""
    tables = _tables(output)
    ranks, hosts = _ranks(output)
    tool, version, nccl = _tool(output)
    readings = []
    for table in tables:
        if not table.rows:
            continue
        name, how = _collective(table, collective)
        readings.append(_reading(table, name, how, origin, ranks, hosts, (tool, version, nccl)))
    if not readings:
        raise ParseError("no nccl-tests result row found")
    return readings


def _tables(output: Output) -> list[Table]:
    """The result tables in order; each collects the collective names said before it (since the
    previous table ended), in it, and in its closing 'Collective test concluded' line."""
    tables: list[Table] = []
    pending: set[str] = set()
    current: Table | None = None
    for line in output:
        names = {m.group(1) for m in _NAMED.finditer(line.text)}
        if _HEADER.match(line.text):
            current = Table(line, named=pending | names)
            tables.append(current)
            pending = set()
        elif (row := _ROW.match(line.text)) is not None:
            if current is None:  # a log cut before its header: the rows still count
                current = Table(None, named=pending)
                tables.append(current)
                pending = set()
            current.rows.append(_row(line, row))
        elif tables and ("concluded" in line.text or (current is not None and _END.search(line.text))):
            tables[-1].named |= names
            avg = _AVG.search(line.text)
            if avg and current is not None:
                current.avg, current = avg.group("avg"), None
        else:
            pending |= names
    return tables


def _row(line: Line, match: re.Match[str]) -> Row:
    where = f"line {line.number}"
    tokens = match.group("rest").split()
    if len(tokens) not in (8, 9, 10):
        raise ParseError(f"{where}: a result row has {len(tokens) + 3} columns, expected 11 to 13")
    redop = tokens[0] if len(tokens) >= 9 else None
    return Row(
        line=line,
        size_bytes=int(match.group("size")),
        redop=redop,
        algbw=number(tokens[-7], where),
        busbw=number(tokens[-6], where),
        inplace_busbw=number(tokens[-2], where),
    )


def _collective(table: Table, given: str | None) -> tuple[str, str]:
    """The collective a table measured and how we know it."""
    where = f"line {(table.header or table.rows[0].line).number}"
    if len(table.named) > 1:
        raise ParseError(f"{where}: the log names several collectives for one table: {sorted(table.named)}")
    if table.named:
        (named,) = table.named
        if given and given != named:
            raise ParseError(f"{where}: the log says {named}_perf ran, not {given}")
        return named, "named in the log"
    if given:
        _refuse_contradiction(table, given, where)
        return given, "collective given by the user (the log does not name it)" + _misfit(table, given)
    return _inferred(table, where)


def _refuse_contradiction(table: Table, given: str, where: str) -> None:
    best = max(table.rows, key=lambda row: row.algbw)
    if given != "all_reduce" and best.algbw > 0 and best.busbw > best.algbw * _ALLREDUCE_RATIO:
        raise ParseError(
            f"{where}: busbw/algbw = {best.busbw / best.algbw:.3f} > 1 (line {best.line.number}) can only "
            f"be an all_reduce, not {given}"
        )


def _misfit(table: Table, given: str) -> str:
    """A note when the rows cannot come from the collective the user named."""
    best = max(table.rows, key=lambda row: row.algbw)
    ratio = best.busbw / best.algbw if best.algbw > 0 else None
    # busbw >= algbw for every all_reduce of 2+ ranks; the table prints two decimals
    if given == "all_reduce" and ratio is not None and best.busbw < best.algbw - 0.01:
        return (
            f"; busbw/algbw = {ratio:.3f} (line {best.line.number}) does not fit all_reduce, whose bus "
            "factor 2(n-1)/n is at least 1: the figures are not self-consistent"
        )
    return ""


def _inferred(table: Table, where: str) -> tuple[str, str]:
    best = max(table.rows, key=lambda row: row.algbw)
    ratio = best.busbw / best.algbw if best.algbw > 0 else 0.0
    if best.redop in _REDUCTIONS | {None} and ratio > _ALLREDUCE_RATIO:
        return "all_reduce", (
            f"collective inferred: the log does not name it; busbw/algbw = {ratio:.3f} > 1 (line "
            f"{best.line.number}), and only all_reduce's bus factor 2(n-1)/n exceeds 1"
        )
    shape = f"redop {best.redop or 'none'}, busbw/algbw {ratio:.3f}"
    raise ParseError(
        f"{where}: the log does not name the collective and the table ({shape}) fits more than one "
        f"(all_gather and alltoall print identical rows; a sum may be reduce_scatter or sendrecv): "
        "say which one ran (--collective)"
    )


def _ranks(output: Output) -> tuple[int | None, dict[int, str]]:
    hosts = {int(m.group("rank")): m.group("host") for _, m in output.find(_RANK)}
    nranks = [int(m.group("n")) for _, m in output.find(_NRANKS)]
    if hosts:
        return max(hosts) + 1, hosts
    return (max(nranks) if nranks else None), {}


def _tool(output: Output) -> tuple[str, str | None, str | None]:
    rccl = next((m.group("v") for _, m in output.find(_RCCL)), None)
    version = next((m.group("v") for _, m in output.find(_TESTS_VERSION)), None)
    nccl = next((m.group("v") for _, m in output.find(_NCCL_VERSION)), None)
    return ("rccl-tests", rccl, nccl) if rccl else ("nccl-tests", version, nccl)


def _reading(
    table: Table,
    name: str,
    how: str,
    origin: Origin,
    ranks: int | None,
    hosts: dict[int, str],
    tool: tuple[str, str | None, str | None],
) -> Measurement:
    metric = NCCL_METRICS.get(name)
    if metric is None:
        raise ParseError(f"line {table.rows[0].line.number}: no metric for {name}_perf results")
    largest = max(table.rows, key=lambda row: row.size_bytes)
    if largest.busbw <= 0:
        raise ParseError(f"line {largest.line.number}: busbw is 0 at the largest message size")
    peak = max(table.rows, key=lambda row: row.busbw)
    complete = bool(hosts) and set(hosts) == set(range(len(hosts)))
    notes = [
        how,
        f"out-of-place busbw at {largest.size_bytes:,} B; in-place {largest.inplace_busbw:g} GB/s",
        f"peak {peak.busbw:g} GB/s at {peak.size_bytes:,} B",
    ]
    if table.avg:
        notes.append(f"Avg bus bandwidth {table.avg} GB/s over the sizes run")
    if hosts and not complete:
        notes.append(f"rank list abridged ({len(hosts)} of {ranks} ranks shown): node count not stated")
    if tool[2]:
        notes.append(f"NCCL {tool[2]}")
    return measurement(
        origin,
        metric,
        largest.busbw,
        locator=f"line {largest.line.number}",
        quote=largest.line.raw,
        tool=tool[0],
        tool_version=tool[1],
        nodes=len(set(hosts.values())) if complete else None,
        gpus=ranks,
        message_bytes=largest.size_bytes,
        notes="; ".join(notes),
    )
