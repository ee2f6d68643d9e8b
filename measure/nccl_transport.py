"""The transports NCCL chose, from its NCCL_DEBUG=INFO lines.

``Using network IB`` says which network plugin NCCL loaded; the channel lines (``Channel 00/0 :
0[0] -> 8[0] [send] via NET/IB/0/GDRDMA``) say what the data path is. ``/GDRDMA`` on a NET
channel means GPUDirect RDMA: the NIC reads GPU memory directly; without it the bytes go through
host memory. ``NET/Socket`` is plain TCP: no RDMA at all, whatever NICs the instance has.
Intra-node channels name ``P2P/IPC``, ``P2P/CUMEM``, ``P2P/direct pointer`` or ``SHM``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from measure.common import Line, Origin, Output, measurement
from records.measurements import Measurement

# Each is tried only after a line's first "NCCL INFO " (see _info), never from every occurrence of it:
# "NCCL INFO .*\bvia ..." searched from each of 20,000 repeats was 86 s on one line.
_INFO = "NCCL INFO "
_USING = re.compile(r"Using network (?P<net>[A-Za-z]\w*(?: \w+)*)\s*$")  # matched right after it
_VIA_NET = re.compile(r"\bvia NET/(?P<net>[A-Za-z]\w*(?: \w+)*)/\d+(?P<gdr>/GDRDMA)?")
_VIA_LOCAL = re.compile(r"\bvia (?P<kind>P2P/[A-Za-z]+(?: [A-Za-z]+)*|SHM)(?:/[\w/]+)?\s*$")
_NCCL_VERSION = re.compile(r"NCCL INFO NCCL version (?P<v>\S+)|^NCCL version (?P<v2>\S+)")
_NO_IB = re.compile(r"NET/IB : No device found")
_OFI = re.compile(r"NET/OFI Selected Provider is (?P<p>\S+)")


def _info(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """``pattern`` in the part of ``text`` after its first "NCCL INFO " (matched right there for
    _USING, searched for the others), or None."""
    start = text.find(_INFO)
    if start < 0:
        return None
    start += len(_INFO)
    return pattern.match(text, start) if pattern is _USING else pattern.search(text, start)


def _find(output: Output, pattern: re.Pattern[str]) -> Iterator[tuple[Line, re.Match[str]]]:
    for line in output:
        if (match := _info(pattern, line.text)) is not None:
            yield line, match


def has_transport(output: Output) -> bool:
    """Whether the output has NCCL INFO lines naming a network or a channel's transport."""
    return any(_info(p, line.text) for p in (_USING, _VIA_NET, _VIA_LOCAL) for line in output)


def parse_transport(output: Output, origin: Origin) -> list[Measurement]:
    """One reading per network NCCL used between nodes and per transport it used inside a node."""
    version = _version(output)
    readings = _network(output, origin, version)
    local: dict[str, tuple[Line, int]] = {}
    for line, match in _find(output, _VIA_LOCAL):
        first, count = local.get(match.group("kind"), (line, 0))
        local[match.group("kind")] = (first, count + 1)
    for kind, (line, count) in local.items():
        readings.append(
            measurement(
                origin,
                "nccl_intra_node_transport",
                None,
                value_text=kind,
                locator=f"line {line.number} (first of {count} channel lines)",
                quote=line.raw,
                tool="NCCL",
                tool_version=version,
                notes=f"{count} channel lines between GPUs of one node via {kind}",
            )
        )
    return readings


def _network(output: Output, origin: Origin, version: str | None) -> list[Measurement]:
    channels: dict[str, list[tuple[Line, bool]]] = {}
    for line, match in _find(output, _VIA_NET):
        channels.setdefault(match.group("net").strip(), []).append((line, bool(match.group("gdr"))))
    used = Counter(m.group("net").strip() for _, m in _find(output, _USING))
    context = _context(output)
    readings = []
    for net, lines in channels.items():
        gdr = sum(flag for _, flag in lines)
        how = (
            f"GPUDirect RDMA (GDRDMA) on {gdr} of {len(lines)} channel lines"
            if gdr
            else f"no GDRDMA on any of its {len(lines)} channel lines: no GPUDirect RDMA"
        )
        readings.append(_net_reading(origin, net, lines[0][0], len(lines), how, context, version))
    for net, count in used.items():
        if net not in channels:
            line = next(line for line, m in _find(output, _USING) if m.group("net").strip() == net)
            how = f"'Using network {net}' on {count} ranks; no channel line says whether GPUDirect RDMA ran"
            readings.append(_net_reading(origin, net, line, count, how, context, version))
    return readings


def _net_reading(
    origin: Origin, net: str, line: Line, count: int, how: str, context: list[str], version: str | None
) -> Measurement:
    return measurement(
        origin,
        "nccl_transport",
        None,
        value_text=f"NET/{net}",
        locator=f"line {line.number} (first of {count})",
        quote=line.raw,
        tool="NCCL",
        tool_version=version,
        notes="; ".join([how, *context]),
    )


def _context(output: Output) -> list[str]:
    notes = []
    if any(_NO_IB.search(line.text) for line in output):
        notes.append("NCCL found no InfiniBand device (NET/IB : No device found)")
    providers = sorted({m.group("p") for _, m in output.find(_OFI)})
    if providers:
        notes.append(f"libfabric provider {', '.join(providers)} (NET/OFI)")
    return notes


def _version(output: Output) -> str | None:
    for _, match in output.find(_NCCL_VERSION):
        return match.group("v") or match.group("v2")
    return None
