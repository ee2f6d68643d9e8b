"""Azure's per-size network tables: front-end Ethernet, and the GB200/GB300 scale-up/scale-out columns.

The "Max Bandwidth (Mbps)" column is the FRONT-END network, never the GPU fabric; it is checked
against the host specifications table, whose unit wins when the column's own header is implausible
(GB200: "160" under "(Mbps)" beside "160 Gbps Ethernet"); without that table such a figure is left
missing, not read as 0.16 Gbit/s. The GB200 table prints the NVLink figure
under "Scale-Out" and the InfiniBand one under "Scale-Up": when "Scale-Up" holds the smaller link, the
two are read the other way round and both claims are unit-suspect. A lone column is read by its label.
"""

from __future__ import annotations

import re
from dataclasses import replace

from normalize.bounds import FRONTEND_MIN_GBITS_PER_S
from normalize.errors import ParseError
from normalize.units import Bandwidth, parse_bandwidth, parse_count
from normalize.vocab import Basis, Fabric
from records.offers import Claim
from scrapers.claims import bandwidth_claim, fact
from scrapers.documents.azure.series import Series
from scrapers.tables import Table, clean


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
    header = table.header(pattern)
    printed = parse_bandwidth(clean(raw), default_unit=table.header_unit(pattern))
    context = f"{series.name} › Network › {header}"
    spec = _spec_network(series)
    reread = _reread_in_spec_unit(printed, spec)
    if spec is None and printed.gbits_per_s < FRONTEND_MIN_GBITS_PER_S:
        # Implausibly small in its header's unit (GB200/GB300's "160 (Mbps)"), and no specs table
        # (an include that did not arrive: the row's notes name it) says which unit it is in.
        return claims
    if reread is not None:
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
    else:
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


def _reread_in_spec_unit(printed: Bandwidth, spec: tuple[Bandwidth, str] | None) -> Bandwidth | None:
    """The printed figure read in the specs table's unit, when its header's unit makes it implausibly
    small for a front-end network and the specs table states exactly that re-reading; else None."""
    if spec is None or printed.gbits_per_s >= FRONTEND_MIN_GBITS_PER_S:
        return None
    reread = printed.reread_in(spec[0].unit)
    return reread if abs(reread.gbits_per_s - spec[0].gbits_per_s) < 1e-9 else None


def _spec_network(series: Series) -> tuple[Bandwidth, str] | None:
    """The specs table's network figure when it is one figure (not a range), with its quote."""
    raw = series.spec_cell("Network", 2)
    if not clean(raw):
        return None
    text = clean(raw).split(" Interfaces:")[0]
    try:
        return parse_bandwidth(text), raw.strip()
    except ParseError:
        return None


SCALE_COLUMNS = (  # label, bandwidth column, NIC-count column
    ("Scale-Up", r"Scale-Up Bandwidth", r"Scale-up NICS"),
    ("Scale-Out", r"Scale-Out Bandwidth", r"Scale-out NICS"),
)


def scale_claims(series: Series, table: Table, row: tuple[str, ...]) -> list[Claim]:
    """GB200/GB300 scale-up (NVLink, per GPU) and scale-out (InfiniBand) columns. A column is read by
    its label, unless both are printed and "Scale-Up" holds the smaller link: then the labels are
    swapped (GB200's table), each figure is read as the other, and both claims are unit-suspect."""
    printed = {
        label: (table.cell(row, bw_pattern), bw_pattern, nic_pattern)
        for label, bw_pattern, nic_pattern in SCALE_COLUMNS
        if table.has_column(bw_pattern) and clean(table.cell(row, bw_pattern))
    }
    figures = {
        label: parse_bandwidth(clean(raw), default_unit=table.header_unit(bw_pattern))
        for label, (raw, bw_pattern, _) in printed.items()
    }
    up, out = figures.get("Scale-Up"), figures.get("Scale-Out")
    swapped = up is not None and out is not None and up.each_gbits_per_s < out.each_gbits_per_s
    claims = []
    for label, (raw, bw_pattern, nic_pattern) in printed.items():
        header = table.header(bw_pattern)
        context = f"{series.name} › Network › {header}"
        if (label == "Scale-Up") != swapped:
            qualifiers = "per GPU" + (f"; printed under {label}, the larger link: NVLink" if swapped else "")
            claims.append(
                bandwidth_claim(
                    "intra_node_gbytes_per_s",
                    figures[label],
                    quote=raw,
                    source_url=series.url,
                    context=context,
                    unit_suspect=swapped,
                    extra_qualifiers=qualifiers,
                )
            )
        else:
            nic_raw = table.cell(row, nic_pattern) if table.has_column(nic_pattern) else ""
            unit = table.header_unit(bw_pattern)
            claims += _scale_out_claims(series, figures[label], unit, raw, nic_raw, context, swapped=swapped)
    return claims


def _scale_out_claims(
    series: Series, figure: Bandwidth, unit: str, raw: str, nic_raw: str, context: str, *, swapped: bool
) -> list[Claim]:
    """The fabric figure times its NIC count (when the figure is per NIC and the count is printed)."""
    nics = parse_count(clean(nic_raw)) if clean(nic_raw) else None
    per_nic = figure.count == 1 and nics is not None
    total = parse_bandwidth(f"{nics} x {figure.text}", default_unit=unit) if per_nic else figure
    qualifiers = f"{nics} NICs" if nics else "as printed; NIC count not stated"
    if swapped:
        qualifiers += "; printed under Scale-Up, the smaller link: InfiniBand"
    claims = [
        bandwidth_claim(
            "inter_node_gbits_per_s",
            total,
            quote=raw,
            source_url=series.url,
            context=context,
            unit_suspect=swapped,
            extra_qualifiers=qualifiers,
        )
    ]
    if nics is not None:
        claims.append(
            fact("nic_count", nics, quote=nic_raw, source_url=series.url, context=f"{series.name} › Network")
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
            basis=Basis.INFERRED,
            qualifiers="front-end Ethernet only: read from the size's name",
        )
    ]
    stated = [c for c in frontend if c.field == "frontend_gbits_per_s"]
    if stated:
        claims.append(
            replace(
                stated[0],
                field="inter_node_gbits_per_s",
                basis=Basis.STATED,
                qualifiers="front-end Ethernet; no RDMA fabric",
            )
        )
    return claims
