"""NCCL topology files (``NCCL_TOPO_FILE``), as AWS, Azure and Nebius publish them for their VMs:
which GPUs and NICs sit together, and for NICs NCCL is told about, their speed.

A ``<net speed="400000" gdr="1">`` is one NIC port at 400,000 Mbit/s that NCCL may use for GPUDirect
RDMA: an RDMA port of the GPU fabric (EFA counts: it is RDMA). ``gdr="0"`` nets are plain Ethernet.
Where a file lists only PCI devices, class 0x020700 is an InfiniBand controller, vendor 0x1d0f
device 0xefa0 an EFA NIC and class 0x030200 a GPU; they give counts, never a speed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable

from measure.common import Origin, measurement
from normalize.errors import ParseError
from normalize.units import GBIT_PER_S, Quantity, to_number
from records.measurements import Measurement

GPU_CLASS = "0x030200"
IB_CLASS = "0x020700"
EFA = ("0x1d0f", "0xefa0")


def topology_readings(text: str, origin: Origin, *, tool: str = "NCCL topology file") -> list[Measurement]:
    """Expected NIC ports (by speed) and the NIC count of one topology file; [] when it lists
    neither NICs nor speeds. ParseError (with the line) when it is not XML."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ParseError(f"line {exc.position[0]}: not an NCCL topology file: {exc}") from None
    lines = text.splitlines()
    gpus = len(root.findall(".//gpu")) or _count(root, lambda p: p.get("class") == GPU_CLASS)
    nets = root.findall(".//net")
    readings = [_port_group(origin, lines, group, gpus, tool) for group in _by_speed(nets).items()]
    rdma = [n for n in nets if n.get("gdr") == "1"]
    ib = [p for p in root.iter("pci") if p.get("class") == IB_CLASS]
    efa = [p for p in root.iter("pci") if (p.get("vendor"), p.get("device")) == EFA]
    counted = rdma or ib or efa
    if counted:
        kind = (
            "GPUDirect-capable <net> ports"
            if rdma
            else ("InfiniBand PCI devices" if ib else "EFA PCI devices")
        )
        first = _line_of(lines, counted[0])
        readings.append(
            measurement(
                origin,
                "nic_count",
                float(len(counted)),
                locator=f"line {first[0]} (first of {len(counted)} {kind})",
                quote=first[1],
                tool=tool,
                gpus=gpus or None,
                notes=f"{len(counted)} {kind}" + _pairing(gpus, len(counted)),
            )
        )
    return readings


def _by_speed(nets: list[ET.Element]) -> dict[tuple[float, bool], list[ET.Element]]:
    groups: dict[tuple[float, bool], list[ET.Element]] = defaultdict(list)
    for net in nets:
        speed = net.get("speed")
        if speed is None:
            continue
        try:
            mbits = to_number(speed)
        except ParseError:
            raise ParseError(f"<net name={net.get('name')!r}>: speed {speed!r} is not a number") from None
        if mbits > 0:
            groups[(mbits, net.get("gdr") == "1")].append(net)
    return groups


def _port_group(
    origin: Origin,
    lines: list[str],
    group: tuple[tuple[float, bool], list[ET.Element]],
    gpus: int,
    tool: str,
) -> Measurement:
    (mbits, rdma), nets = group
    gbits = float(f"{Quantity(mbits, 'megabit / second').to(GBIT_PER_S).magnitude:.12g}")
    number, quote = _line_of(lines, nets[0])
    names = ", ".join(n.get("name", "?") for n in nets)
    what = "GPUDirect RDMA ports (gdr=1)" if rdma else "NICs without GPUDirect RDMA (gdr=0)"
    return measurement(
        origin,
        "ib_port_gbits_per_s" if rdma else "nic_gbits_per_s",
        gbits,
        locator=f'line {number} (first of {len(nets)} <net speed="{nets[0].get("speed")}">)',
        quote=quote,
        tool=tool,
        port_count=len(nets),
        gpus=gpus or None,
        notes=f"{len(nets)} {what} at {mbits:g} Mbit/s: {names}" + _pairing(gpus, len(nets) if rdma else 0),
    )


def _pairing(gpus: int, nics: int) -> str:
    if not gpus or not nics:
        return ""
    if nics >= gpus:
        return f"; {gpus} GPUs: {nics / gpus:g} per GPU"
    return f"; {gpus} GPUs: {gpus / nics:g} GPUs per NIC"


def _count(root: ET.Element, keep: Callable[[ET.Element], bool]) -> int:
    return sum(1 for element in root.iter("pci") if keep(element))


def _line_of(lines: list[str], element: ET.Element) -> tuple[int, str]:
    """The first source line holding this element's identifying attribute (its exact text)."""
    key = element.get("name") or element.get("busid") or ""
    attribute = "name" if element.get("name") else "busid"
    for number, line in enumerate(lines, start=1):
        if f'{attribute}="{key}"' in line:
            return number, line
    raise ParseError(f"<{element.tag} {attribute}={key!r}> not found on any line")
