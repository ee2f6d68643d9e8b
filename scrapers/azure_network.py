"""Azure's per-size network tables: front-end Ethernet, and the GB200/GB300 scale-up/scale-out columns.

The "Max Bandwidth (Mbps)" column is the FRONT-END network, never the GPU fabric; it is checked
against the host specifications table, whose unit wins when the column's own header is implausible
(GB200: "160" under "(Mbps)" beside "160 Gbps Ethernet"). The GB200 table prints the NVLink figure
under "Scale-Out" and the InfiniBand one under "Scale-Up": the columns are sorted by magnitude, and a
claim whose column label contradicts it is unit-suspect.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from catalog.models import Claim
from normalize.bounds import FRONTEND_MIN_GBITS_PER_S
from normalize.errors import ParseError
from normalize.units import parse_bandwidth, parse_count
from normalize.vocab import Basis, Fabric
from scrapers.claims import bandwidth_claim, fact
from scrapers.markdown import Table, clean

if TYPE_CHECKING:
    from scrapers.azure import Series

HEADER_UNIT = re.compile(r"\((?P<unit>[A-Za-z/]+)\)\s*$")


def column_unit(table: Table, pattern: str) -> str:
    """The unit printed in the header of the column matching ``pattern``; ParseError if none."""
    header = table.clean_headers[table.column(pattern)]
    match = HEADER_UNIT.search(header)
    if match is None:
        raise ParseError(f"no unit in header {header!r}")
    return match.group("unit")


def frontend_claims(series: Series, table: Table, row: tuple[str, ...]) -> list[Claim]:
    """Front-end Ethernet: the network table's bandwidth, checked against the specs table."""
    claims = []
    nic_pattern = r"Front-end NICs|^Max NICs"
    if table.has_column(nic_pattern) and re.fullmatch(r"[0-9]+", clean(table.cell(row, nic_pattern))):
        raw = table.cell(row, nic_pattern)
        claims.append(
            fact(
                "frontend_nic_count",
                parse_count(clean(raw)),
                quote=raw,
                source_url=series.url,
                context=f"{series.name} › Network",
            )
        )
    pattern = r"^Max (?:Front-end |Network )?Bandwidth"
    if not table.has_column(pattern) or not clean(table.cell(row, pattern)):
        return claims
    raw = table.cell(row, pattern)
    header = table.clean_headers[table.column(pattern)]
    printed = parse_bandwidth(clean(raw), default_unit=column_unit(table, pattern))
    context = f"{series.name} › Network › {header}"
    spec = _spec_network(series)
    if spec is not None and printed.gbits_per_s < FRONTEND_MIN_GBITS_PER_S:
        reread = printed.reread_in(spec[0].each.units)
        if abs(reread.gbits_per_s - spec[0].gbits_per_s) < 1e-9:
            claims.append(
                bandwidth_claim(
                    "frontend_gbits_per_s",
                    reread,
                    quote=raw,
                    source_url=series.url,
                    context=context,
                    unit_suspect=True,
                    extra_qualifiers=f"header says {header}; read in the specs table's unit",
                )
            )
            printed = None  # type: ignore[assignment]
    if printed is not None:
        claims.append(
            bandwidth_claim(
                "frontend_gbits_per_s", printed, quote=raw, source_url=series.url, context=context
            )
        )
    if spec is not None:
        claims.append(
            bandwidth_claim(
                "frontend_gbits_per_s",
                spec[0],
                quote=spec[1],
                source_url=series.specs_url or series.url,
                context=f"{series.name} › Host specifications › Network",
            )
        )
    return claims


def _spec_network(series: Series):
    """The specs table's network figure when it is one figure (not a range), with its quote."""
    raw = series.spec_cell("Network", 2)
    if not clean(raw):
        return None
    text = clean(raw).split(" Interfaces:")[0]
    try:
        return parse_bandwidth(text), raw.strip()
    except ParseError:
        return None


def scale_claims(series: Series, table: Table, row: tuple[str, ...]) -> list[Claim]:
    """GB200/GB300 scale-up and scale-out columns, sorted by magnitude, not by their labels."""
    claims = []
    for label, bw_pattern, nic_pattern in (
        ("Scale-Up", r"Scale-Up Bandwidth", r"Scale-up NICS"),
        ("Scale-Out", r"Scale-Out Bandwidth", r"Scale-out NICS"),
    ):
        if not table.has_column(bw_pattern) or not clean(table.cell(row, bw_pattern)):
            continue
        raw = table.cell(row, bw_pattern)
        header = table.clean_headers[table.column(bw_pattern)]
        figure = parse_bandwidth(clean(raw), default_unit=column_unit(table, bw_pattern))
        nics = parse_count(clean(table.cell(row, nic_pattern))) if table.has_column(nic_pattern) else 1
        context = f"{series.name} › Network › {header}"
        if figure.each.to("gigabyte / second").magnitude >= 200:  # NVLink-class: a scale-up link
            claims.append(
                bandwidth_claim(
                    "intra_node_gbytes_per_s",
                    figure,
                    quote=raw,
                    source_url=series.url,
                    context=context,
                    unit_suspect=label != "Scale-Up",
                    extra_qualifiers="per GPU"
                    + ("" if label == "Scale-Up" else f"; printed under {label}, NVLink by magnitude"),
                )
            )
            continue
        total = (
            figure
            if figure.count > 1
            else parse_bandwidth(f"{nics} x {clean(raw)}", default_unit=column_unit(table, bw_pattern))
        )
        claims.append(
            bandwidth_claim(
                "inter_node_gbits_per_s",
                total,
                quote=raw,
                source_url=series.url,
                context=context,
                unit_suspect=label != "Scale-Out",
                extra_qualifiers=f"{nics} NICs"
                + ("" if label == "Scale-Out" else f"; printed under {label}, InfiniBand by magnitude"),
            )
        )
        claims.append(
            fact(
                "nic_count",
                nics,
                quote=table.cell(row, nic_pattern),
                source_url=series.url,
                context=f"{series.name} › Network",
            )
        )
    return claims


def ethernet_claims(series: Series, size: str, frontend: list[Claim]) -> list[Claim]:
    """A size without RDMA reaches other VMs over its front-end Ethernet only."""
    claims = [
        fact(
            "inter_node_fabric",
            Fabric.ETHERNET.value,
            quote=size,
            source_url=series.url,
            context="size name without the 'r' (RDMA) capability letter",
            qualifiers="front-end Ethernet only",
        )
    ]
    stated = [c for c in frontend if c.field == "frontend_gbits_per_s"]
    if stated:
        first = stated[0]
        claims.append(
            Claim(
                "inter_node_gbits_per_s",
                first.value,
                first.quote,
                first.source_url,
                first.context,
                Basis.STATED,
                "front-end Ethernet; no RDMA fabric",
                first.unit_suspect,
            )
        )
    return claims
