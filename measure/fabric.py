"""What a node says about its network devices: ``fi_info -p efa`` (EFA devices, no speed),
``ibv_devinfo -v`` (RDMA ports: state, lanes x lane rate, link layer) and a dump of
``/sys/class/net/*/speed`` (Mbit/s per interface, as ethtool reports it).

fi_info lists each EFA device once per endpoint type (``efa_0-rdm``, ``efa_0-dgrm``), so devices are
counted by domain name without the endpoint suffix. Interfaces without a driver (bridges, veths)
are not NICs and are left out of the speed readings.
"""

from __future__ import annotations

import re
from collections import defaultdict

from measure.common import Line, Origin, Output, measurement, number
from normalize.errors import ParseError
from normalize.units import GBIT_PER_S, Quantity
from records.measurements import Measurement

_PROVIDER = re.compile(r"^\s*provider: efa\s*$")
_DOMAIN = re.compile(r"^\s*domain: (?P<domain>\S+?)(?:-(?:rdm|dgrm))?\s*$")
_FI_VERSION = re.compile(r"^\s*version: (?P<v>\S+)\s*$")
_SPEED = re.compile(r"^(?P<iface>\S+) speed=(?P<speed>-?\d+|NA) mtu=\d+ (?i:driver)=(?P<driver>\S+)")
_HCA = re.compile(r"^hca_id:\s*(?P<hca>\S+)")
_PORT = re.compile(r"^\s*port:\s*(?P<port>\d+)")
_KEY = re.compile(r"^\s*(?P<key>state|active_width|active_speed|link_layer):\s*(?P<value>.*\S)\s*$")
_WIDTH = re.compile(r"^(?P<lanes>\d+)X")
_LANE = re.compile(r"^(?P<rate>[\d.]+) Gbps")


def is_fi_info(output: Output) -> bool:
    return any(_PROVIDER.match(line.text) for line in output)


def is_sysfs_speed(output: Output) -> bool:
    return any(_SPEED.match(line.text) for line in output)


def is_ibv_devinfo(output: Output) -> bool:
    return any(_HCA.match(line.text) for line in output)


def parse_fi_info(output: Output, origin: Origin) -> list[Measurement]:
    """The number of EFA devices fi_info lists (a count: fi_info states no speed)."""
    domains: dict[str, Line] = {}
    for line, match in output.find(_DOMAIN):
        domains.setdefault(match.group("domain"), line)
    if not domains:
        raise ParseError("line 1: fi_info lists the efa provider but no domain")
    version = next((m.group("v") for _, m in output.find(_FI_VERSION)), None)
    first = next(iter(domains.values()))
    return [
        measurement(
            origin,
            "nic_count",
            float(len(domains)),
            locator=f"line {first.number} (first of {len(domains)} EFA domains)",
            quote=first.raw,
            tool="fi_info",
            tool_version=version,
            notes=f"EFA devices: {', '.join(domains)}; fi_info gives no link speed; version {version} is the "
            "libfabric efa provider's",
        )
    ]


def parse_sysfs_speed(output: Output, origin: Origin) -> list[Measurement]:
    """Link speed per driver-backed interface, grouped by speed (Mbit/s → Gbit/s)."""
    groups: dict[float, list[tuple[Line, str]]] = defaultdict(list)
    for line, match in output.find(_SPEED):
        if match.group("driver").upper() == "NA" or match.group("speed") in ("NA", "-1"):
            continue
        mbits = number(match.group("speed"), f"line {line.number}")
        gbits = float(f"{Quantity(mbits, 'megabit / second').to(GBIT_PER_S).magnitude:.12g}")
        groups[gbits].append((line, f"{match.group('iface')} ({match.group('driver')})"))
    if not groups:
        raise ParseError("line 1: no interface with a driver and a link speed")
    return [
        measurement(
            origin,
            "nic_gbits_per_s",
            gbits,
            locator=f"line {found[0][0].number}",
            quote=found[0][0].raw,
            tool="sysfs",
            port_count=len(found),
            notes=f"/sys/class/net speed (Mbit/s) of {', '.join(name for _, name in found)}",
        )
        for gbits, found in groups.items()
    ]


def parse_ibv_devinfo(output: Output, origin: Origin) -> list[Measurement]:
    """Active RDMA ports grouped by rate (lanes x lane rate from ``ibv_devinfo -v``)."""
    ports = _ports(output)
    active = [p for p in ports if p["state"].startswith("PORT_ACTIVE")]
    if not active:
        raise ParseError("line 1: ibv_devinfo lists no active port")
    rated: dict[tuple[float, str], list[dict]] = defaultdict(list)
    for port in active:
        width, lane = _WIDTH.match(port.get("active_width", "")), _LANE.match(port.get("active_speed", ""))
        if width and lane:
            rate = int(width.group("lanes")) * number(lane.group("rate"), f"line {port['line'].number}")
            rated[(rate, port.get("link_layer", "?"))].append(port)
    first = active[0]["line"]
    readings = [
        measurement(
            origin,
            "nic_count",
            float(len(active)),
            locator=f"line {first.number}",
            quote=first.raw,
            tool="ibv_devinfo",
            notes="active RDMA ports: " + ", ".join(f"{p['hca']}:{p['port']}" for p in active),
        )
    ]
    for (rate, layer), found in rated.items():
        line = found[0]["line"]
        readings.append(
            measurement(
                origin,
                "ib_port_gbits_per_s",
                rate,
                locator=f"line {line.number}",
                quote=line.raw,
                tool="ibv_devinfo",
                port_count=len(found),
                notes=f"link layer {layer}; {found[0]['active_width']} x {found[0]['active_speed']}",
            )
        )
    return readings


def _ports(output: Output) -> list[dict]:
    ports: list[dict] = []
    hca = None
    for line in output:
        if match := _HCA.match(line.text):
            hca = match.group("hca")
        elif (match := _PORT.match(line.text)) and hca:
            ports.append({"hca": hca, "port": match.group("port"), "line": line, "state": ""})
        elif (match := _KEY.match(line.text)) and ports:
            ports[-1].setdefault(match.group("key"), match.group("value"))
            if match.group("key") == "active_speed":
                ports[-1]["line"] = line
            if match.group("key") == "state":
                ports[-1]["state"] = match.group("value")
    return ports
