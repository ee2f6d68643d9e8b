"""Pure parsers of the outputs of the tools people run to see what an instance delivers.

``parse_output(text, origin)`` recognises the tool from the text and returns its readings as
``records.measurements.Measurement``s; each quote is the tool's own line and each locator says where
it stands. Recognised: nccl-tests / rccl-tests tables (and NCCL_DEBUG=INFO transport lines),
torch.distributed all-reduce benchmark tables, ncclscout pair summaries, nvbandwidth (JSON and
text), the CUDA p2pBandwidthLatencyTest, ``nvidia-smi topo -m`` / ``topo -p2p``, ``nvidia-smi nvlink
-s``, perftest's ib_write_bw / ib_read_bw / ib_send_bw, ``fi_info -p efa``, ``ibv_devinfo -v`` and
``/sys/class/net`` speed dumps, and ``nvidia-smi -q -x`` XML (product names, PCIe links, fabric
state). Anything else, and any tool output these cannot read, is a
``ParseError`` naming the line.

This package sits above ``records`` and below ``scrapers``: it imports ``normalize`` and ``records``
only, does no I/O, and is used by the refresh's measurement sources and by ``catalog measurements
import``.
"""

from __future__ import annotations

from collections.abc import Callable

from measure import (
    fabric,
    nccl,
    nccl_bench,
    nccl_transport,
    nvbandwidth,
    nvidia_smi_xml,
    nvlink,
    p2p,
    perftest,
    topo,
)
from measure.common import Origin, Output
from normalize.errors import ParseError
from records.measurements import Measurement

__all__ = ["FORMATS", "Origin", "detect", "parse_output"]

Parser = Callable[[Output, Origin, "str | None"], list[Measurement]]

# (format, recognises it, reads it). nccl-tests tables and NCCL transport lines may share a log;
# every other format is read alone, the first that recognises the text.
FORMATS: tuple[tuple[str, Callable[[Output], bool], Parser], ...] = (
    ("nccl-tests", nccl.has_table, nccl.parse_tables),
    ("torch-benchmark", nccl_bench.is_torch_bench, nccl_bench.parse_torch_bench),
    ("ncclscout", nccl_bench.is_ncclscout, nccl_bench.parse_ncclscout),
    ("nvbandwidth", nvbandwidth.is_text, lambda o, origin, _: nvbandwidth.parse_text(o, origin)),
    ("p2pBandwidthLatencyTest", p2p.is_p2p, lambda o, origin, _: p2p.parse_p2p(o, origin)),
    ("nvidia-smi topo", topo.is_topo, lambda o, origin, _: topo.parse_topo(o, origin)),
    ("nvidia-smi nvlink", nvlink.is_nvlink, lambda o, origin, _: nvlink.parse_nvlink(o, origin)),
    ("perftest", perftest.is_perftest, lambda o, origin, _: perftest.parse_perftest(o, origin)),
    ("fi_info", fabric.is_fi_info, lambda o, origin, _: fabric.parse_fi_info(o, origin)),
    ("ibv_devinfo", fabric.is_ibv_devinfo, lambda o, origin, _: fabric.parse_ibv_devinfo(o, origin)),
    ("sysfs net speed", fabric.is_sysfs_speed, lambda o, origin, _: fabric.parse_sysfs_speed(o, origin)),
)
TRANSPORT = "nccl-transport"
SMI_XML = "nvidia-smi XML"
KNOWN = ", ".join([*(name for name, _, _ in FORMATS), TRANSPORT, "nvbandwidth JSON", SMI_XML])


def detect(text: str) -> list[str]:
    """The formats recognised in ``text``, in the order they are read ([] when none)."""
    if nvbandwidth.is_json(text):
        return ["nvbandwidth JSON"]
    if nvidia_smi_xml.is_xml(text):
        return [SMI_XML]
    output = Output(text)
    found = next((name for name, recognises, _ in FORMATS if recognises(output)), None)
    formats = [found] if found else []
    if (found in (None, "nccl-tests", "torch-benchmark")) and nccl_transport.has_transport(output):
        formats.append(TRANSPORT)
    return formats


def parse_output(
    text: str, origin: Origin, *, collective: str | None = None, version: str | None = None
) -> list[Measurement]:
    """Every reading of one tool output. ``collective`` says which NCCL collective ran when the log
    does not; ``version`` is the tool version when the output lacks it (nvbandwidth JSON)."""
    formats = detect(text)
    if not formats:
        raise ParseError(f"line 1: not the output of a tool this importer reads ({KNOWN})")
    if formats == ["nvbandwidth JSON"]:
        return nvbandwidth.parse_json(text, origin, version)
    if formats == [SMI_XML]:
        return nvidia_smi_xml.parse_xml(text, origin)
    output = Output(text)
    parsers = {name: parse for name, _, parse in FORMATS}
    readings: list[Measurement] = []
    for name in formats:
        if name == TRANSPORT:
            readings.extend(nccl_transport.parse_transport(output, origin))
        else:
            readings.extend(parsers[name](output, origin, collective))
    return readings
