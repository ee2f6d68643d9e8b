"""perftest's ``ib_write_bw``, ``ib_read_bw`` and ``ib_send_bw``: the best average bandwidth of a run.

The table's unit is in its header: ``BW average[Gb/sec]`` (``--report_gbits``: 10^9 bits) or
``BW average[MB/sec]``, which perftest computes with a 0x100000-byte megabyte (perftest_resources.c:
``format_factor = (report_fmt == MBS) ? 0x100000 : 125000000``), so MB/sec here is MiB/s:
23,240.68 MB/sec is 194.95 Gbit/s, not 185.9. The link layer (IB, or Ethernet for RoCE), the device
and the number of queue pairs are kept in the notes.
"""

from __future__ import annotations

import re

from measure.common import Origin, Output, measurement, number
from normalize.errors import ParseError
from normalize.units import GBIT_PER_S, Quantity
from records.measurements import Measurement

_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(?P<unit>[GM]b?B?/sec)\]\s+BW average\[(?P=unit)\]")
_ROW = re.compile(r"^\s*(?P<bytes>\d+)\s+(?P<iters>\d+)\s+(?P<peak>[\d.]+)\s+(?P<avg>[\d.]+)\s+[\d.]+\s*$")
_TESTS = (
    (re.compile(r"RDMA_Write BW Test|ib_write_bw"), "ib_write_bw", "ib_write_gbits_per_s"),
    (re.compile(r"RDMA_Read BW Test|ib_read_bw"), "ib_read_bw", "ib_read_gbits_per_s"),
    (re.compile(r"Send BW Test|ib_send_bw"), "ib_send_bw", "ib_send_gbits_per_s"),
)
_FIELD = re.compile(r"(?P<key>Link type|Device|Number of qps)\s*:\s*(?P<value>\S+)")
# perftest's units, mapped explicitly (pint would read "Gb" as the gilbert).
UNITS = {"Gb/sec": "gigabit / second", "MB/sec": "mebibyte / second"}


def is_perftest(output: Output) -> bool:
    return any(_HEADER.search(line.text) for line in output)


def parse_perftest(output: Output, origin: Origin) -> list[Measurement]:
    """The row with the highest average bandwidth, in Gbit/s."""
    header = next(((line, m) for line, m in output.find(_HEADER)), None)
    test = next(((tool, metric) for pattern, tool, metric in _TESTS if any(output.find(pattern))), None)
    if header is None or test is None:
        raise ParseError("line 1: no perftest bandwidth table (ib_write_bw / ib_read_bw / ib_send_bw)")
    unit = UNITS.get(header[1].group("unit"))
    if unit is None:
        raise ParseError(f"line {header[0].number}: unknown perftest unit {header[1].group('unit')!r}")
    rows = [(line, m) for line, m in output.find(_ROW) if line.number > header[0].number]
    if not rows:
        raise ParseError(f"line {header[0].number}: a perftest header with no result row under it")
    line, row = max(rows, key=lambda r: number(r[1].group("avg"), f"line {r[0].number}"))
    average = number(row.group("avg"), f"line {line.number}")
    gbits = float(f"{Quantity(average, unit).to(GBIT_PER_S).magnitude:.12g}")
    fields = {m.group("key"): m.group("value") for _, m in output.find(_FIELD)}
    notes = [f"BW average {row.group('avg')} {header[1].group('unit')} at {row.group('bytes')} B"]
    notes += [f"{key} {value}" for key, value in fields.items()]
    if unit.startswith("mebibyte"):
        notes.append("perftest's MB is 2^20 bytes")
    return [
        measurement(
            origin,
            test[1],
            gbits,
            locator=f"line {line.number}",
            quote=line.raw,
            tool=test[0],
            message_bytes=int(row.group("bytes")),
            port_count=1,
            notes="; ".join(notes),
        )
    ]
