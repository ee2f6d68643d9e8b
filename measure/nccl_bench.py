"""Two NCCL result formats that are not nccl-tests tables: a torch.distributed all-reduce benchmark
(columns ``size count time_ms algbw_GBps busbw_GBps``, sizes like "1GB") and OCI's ``ncclscout.py``
pair summaries ("Testing a <-> b... 448.35 GB/s").

Neither names its collective in the output. The torch benchmark's busbw above its algbw says
all_reduce (the only collective whose bus factor exceeds 1); ncclscout's summary says nothing, so it
needs the caller to say which collective ran.
"""

from __future__ import annotations

import re
from datetime import datetime

from measure.common import Origin, Output, binary_size_bytes, measurement, number
from normalize.errors import ParseError
from records.measurements import NCCL_METRICS, Measurement

_TORCH_HEADER = re.compile(r"^\s*(?:#\s*)?size\s+count\s+time_ms\s+algbw_GBps\s+busbw_GBps\s*$")
_TORCH_ROW = re.compile(
    r"^\s*(?P<size>\d+[KMG]?B)\s+(?P<count>\d+)\s+(?P<time>[\d.]+)\s+(?P<algbw>[\d.]+)\s+(?P<busbw>[\d.]+)\s*$"
)
_WORLD = re.compile(r"\bworld_size=(?P<n>\d+)")
_CAPTURED = re.compile(r"\bcaptured (?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")
_SCOUT = re.compile(
    r"Testing (?:unpaired node )?(?P<a>\S+) (?:<->|with) (?P<b>\S+?)\.\.\. (?P<bw>[\d.]+) GB/s"
)
_SCOUT_DONE = re.compile(r"Test completed at: (?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")


def is_torch_bench(output: Output) -> bool:
    return any(_TORCH_HEADER.match(line.text) for line in output)


def is_ncclscout(output: Output) -> bool:
    return any(_SCOUT.search(line.text) for line in output)


def parse_torch_bench(output: Output, origin: Origin, collective: str | None = None) -> list[Measurement]:
    """The largest-size row of a torch.distributed all-reduce benchmark table."""
    rows = [(line, m) for line, m in output.find(_TORCH_ROW)]
    if not rows:
        raise ParseError("no row of the torch benchmark table found")
    line, row = max(rows, key=lambda r: binary_size_bytes(r[1].group("size"), f"line {r[0].number}"))
    where = f"line {line.number}"
    algbw, busbw = number(row.group("algbw"), where), number(row.group("busbw"), where)
    if collective is None:
        if not busbw > algbw * 1.05:
            raise ParseError(f"{where}: the benchmark does not name its collective: say which one ran")
        collective, how = (
            "all_reduce",
            "collective inferred: busbw > algbw, only all_reduce's factor exceeds 1",
        )
    elif busbw > algbw * 1.05 and collective != "all_reduce":
        raise ParseError(f"{where}: busbw > algbw can only be an all_reduce, not {collective}")
    else:
        how = "collective given by the user"
    world = next((int(m.group("n")) for _, m in output.find(_WORLD)), None)
    captured = next((m.group("at") for _, m in output.find(_CAPTURED)), None)
    return [
        measurement(
            origin,
            _metric(collective, where),
            busbw,
            locator=where,
            quote=line.raw,
            tool="torch.distributed benchmark",
            gpus=world,
            message_bytes=binary_size_bytes(row.group("size"), where),
            run_at=datetime.fromisoformat(captured.replace("Z", "")) if captured else origin.run_at,
            notes=f"{how}; sizes printed with binary prefixes (1KB = 1,024 B = 256 x 4-byte elements)",
        )
    ]


def parse_ncclscout(output: Output, origin: Origin, collective: str | None = None) -> list[Measurement]:
    """One reading per node pair of an ncclscout.py summary (the collective must be given)."""
    found = list(output.find(_SCOUT))
    first = f"line {found[0][0].number}" if found else "line 1"
    if collective is None:
        raise ParseError(f"{first}: ncclscout does not say which NCCL collective it ran: say which one")
    done = next((m.group("at") for _, m in output.find(_SCOUT_DONE)), None)
    run_at = datetime.fromisoformat(done) if done else origin.run_at
    return [
        measurement(
            origin,
            _metric(collective, f"line {line.number}"),
            number(m.group("bw"), f"line {line.number}"),
            locator=f"line {line.number}",
            quote=line.raw,
            tool="ncclscout.py",
            nodes=2,
            run_at=run_at,
            notes=f"node pair {m.group('a')} / {m.group('b')}; collective given by the user",
        )
        for line, m in found
    ]


def _metric(collective: str, where: str) -> str:
    if collective not in NCCL_METRICS:
        raise ParseError(f"{where}: no metric for {collective!r}; one of {sorted(NCCL_METRICS)}")
    return NCCL_METRICS[collective]
