"""Oracle Cloud Infrastructure: the GPU tables of the Compute Shapes reference page (HTML).

A GPU shapes table names each shape with its GPUs ("BM.GPU.H100.8 (8xH100)"), the GPU memory of
the whole shape, and one "Max Network Bandwidth" cell that holds two networks separated by <br>:
the front-end VNIC network ("1 x 100 Gbps") and the RDMA cluster network ("8 x 2 x 200 Gbps RDMA").
Only the part that says RDMA is the GPU fabric; a shape without one has only the front-end
Ethernet. The page never states GPU-to-GPU bandwidth or the GPU form factor.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import ClassVar

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from normalize.errors import LayoutError, ParseError
from normalize.gpus import family_of, identify_gpu
from normalize.units import parse_bandwidth, parse_count, parse_memory_gb
from normalize.vocab import Fabric, fabric_from_text
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from scrapers.base import Scraper
from scrapers.claims import bandwidth_claim, fact
from scrapers.http import ProviderFetcher

log = logging.getLogger(__name__)

SHAPES_URL = "https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm"

# Header texts the parser requires, and the pattern each is found by.
SHAPE_HEADER = "Shape"
MEMORY_HEADER = "GPU Memory (GB)"
NETWORK_HEADER = "Max Network Bandwidth"
_HEADERS = {
    SHAPE_HEADER: re.compile(r"^Shape$", re.I),
    MEMORY_HEADER: re.compile(r"^GPU Memory \((?P<unit>[KMGT]i?B)\)$", re.I),
    NETWORK_HEADER: re.compile(r"^Max Network Bandwidth$", re.I),
}

_SHAPE = re.compile(r"^(?P<shape>[A-Z]+\.[\w.\-]+?)\s*(?:\((?P<gpus>[^)]*)\))?$")
_GPUS = re.compile(r"^(?:GPU:\s*)?(?P<count>\d+)\s*x\s*(?P<name>\S.*)$", re.I)
_SHAPE_COUNT = re.compile(r"\.(?P<count>\d+)$")
_LEADING_COUNTS = re.compile(r"^(?P<first>\d+)\s*x\s*(?:(?P<second>\d+)\s*x\s*)?\d", re.I)
_SEGMENT_BREAKS = frozenset({"br", "p", "div", "li"})


class Oci(Scraper):
    name = "oci"
    title = "Oracle Cloud Infrastructure"
    url_prefixes = ("https://docs.oracle.com/en-us/iaas/Content/Compute/",)
    expected_layout: ClassVar[dict[str, str]] = {
        SHAPES_URL: f"<table>s headed {SHAPE_HEADER} | ... | {MEMORY_HEADER} | ... | {NETWORK_HEADER}"
        " (other columns ignored; network cells split on <br>)",
    }

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(SHAPES_URL)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return parse_shapes(documents.text(SHAPES_URL), SHAPES_URL)


@dataclass(frozen=True)
class GpuTable:
    """One GPU shapes table: where it is, the column of each required header, and its rows."""

    title: str
    columns: dict[str, int]
    memory_unit: str
    rows: tuple[tuple[Tag, ...], ...]


def segments(cell: Tag) -> list[str]:
    """A cell's text split where the page breaks lines (<br>, <p>), each with spaces collapsed."""
    parts: list[list[str]] = [[]]
    for node in cell.descendants:
        if isinstance(node, Tag) and node.name in _SEGMENT_BREAKS:
            parts.append([])
        elif isinstance(node, NavigableString) and not isinstance(node, Comment):
            parts[-1].append(str(node))
    texts = (" ".join("".join(p).split()) for p in parts)
    return [t for t in texts if t]


def _text(cell: Tag) -> str:
    return " ".join(segments(cell))


def _table_title(table: Tag) -> str:
    """The table's caption, else its section headings ('Bare Metal Shapes › GPU Shapes')."""
    caption = table.find("caption")
    if caption is not None:
        return _text(caption)
    titles: list[str] = []
    node, levels = table, ["h2", "h3", "h4"]
    while levels and (heading := node.find_previous(levels)) is not None:
        titles.insert(0, _text(heading))
        levels, node = levels[: levels.index(heading.name)], heading
    return " › ".join(titles) or "GPU shapes table"


def _gpu_table(table: Tag) -> GpuTable | None:
    """The table as a GpuTable if it has a GPU memory header; LayoutError if it lacks another."""
    rows = table.find_all("tr")
    header_index = next((i for i, row in enumerate(rows) if row.find("th")), 0)
    headers = [_text(c) for c in rows[header_index].find_all(["th", "td"])] if rows else []
    columns = {
        name: next((i for i, h in enumerate(headers) if pattern.match(h)), -1)
        for name, pattern in _HEADERS.items()
    }
    if columns[MEMORY_HEADER] < 0:
        return None
    for name, index in columns.items():
        if index < 0:
            raise LayoutError(f"OCI GPU shapes table has no {name!r} header; headers are {headers}")
    memory_header = _HEADERS[MEMORY_HEADER].match(headers[columns[MEMORY_HEADER]])
    assert memory_header is not None  # the column was found by this pattern
    unit = memory_header.group("unit")
    body = tuple(tuple(r.find_all(["td", "th"])) for r in rows[header_index + 1 :] if r.find("td"))
    return GpuTable(_table_title(table), columns, unit, body)


def gpu_tables(text: str) -> list[GpuTable]:
    """Every table on the page with the required GPU shape headers; LayoutError if there is none."""
    tables = [t for t in map(_gpu_table, BeautifulSoup(text, "lxml").find_all("table")) if t]
    if not tables:
        raise LayoutError(f"no table with a {MEMORY_HEADER!r} header on the OCI compute shapes page")
    if not any(t.rows for t in tables):
        raise LayoutError(f"the OCI tables with a {MEMORY_HEADER!r} header have no rows")
    return tables


def parse_shapes(text: str, url: str) -> list[RawOffer]:
    """One RawOffer per GPU shape in the GPU shapes tables of the OCI Compute Shapes page."""
    offers = []
    for table in gpu_tables(text):
        for row in table.rows:
            shape_text = _text(row[0]) if row else ""
            if len(row) <= max(table.columns.values()):
                log.warning("Skipping oci row %s: %d cells, fewer than the headers", shape_text, len(row))
                continue
            try:
                offers.append(_offer(table, row, url))
            except ParseError as exc:
                log.warning("Skipping oci row %s: %s", shape_text, exc)
    if not offers:
        raise LayoutError("no parsable GPU shape rows on the OCI compute shapes page")
    return offers


def _offer(table: GpuTable, row: tuple[Tag, ...], url: str) -> RawOffer:
    shape_cell = _text(row[table.columns[SHAPE_HEADER]])
    memory_cell = _text(row[table.columns[MEMORY_HEADER]])
    shape, gpu_claims, notes = _gpu_claims(shape_cell, memory_cell, table, url)
    network = segments(row[table.columns[NETWORK_HEADER]])
    network_claims, shares_frontend, network_notes = _network_claims(network, table.title, url)
    return RawOffer(
        provider="oci",
        instance_type=shape,
        source_url=url,
        claims=(*gpu_claims, *network_claims),
        notes=(*notes, *network_notes),
        fabric_shares_frontend=shares_frontend,
    )


def _shape_and_gpus(cell: str) -> tuple[str, int, str, str | None]:
    """(shape, GPU count, GPU name to identify, note) from 'BM.GPU.H100.8 (8xH100)' or 'BM.GPU.L40S.4'."""
    match = _SHAPE.match(cell)
    if match is None:
        raise ParseError(f"shape cell {cell!r} is not 'SHAPE' or 'SHAPE (NxGPU)'")
    shape = match.group("shape")
    suffix = _SHAPE_COUNT.search(shape)
    if match.group("gpus") is None:
        if suffix is None:
            raise ParseError(f"shape cell {cell!r} states no GPU count")
        count = parse_count(suffix.group("count"))
        note = f"GPU count {count} taken from the shape name's trailing '.{count}' (the cell names no GPUs)"
        return shape, count, shape, note
    gpus = _GPUS.match(match.group("gpus").strip())
    if gpus is None:
        raise ParseError(f"GPUs in {cell!r} are not 'NxGPU'")
    count = parse_count(gpus.group("count"))
    note = None
    if suffix is not None and suffix.group("count") != str(count):
        note = f"shape name suffix .{suffix.group('count')} disagrees with the stated {count} GPUs"
    return shape, count, f"{shape} {gpus.group('name')}", note


def _gpu_claims(
    shape_cell: str, memory_cell: str, table: GpuTable, url: str
) -> tuple[str, list[Claim], list[str]]:
    shape, count, gpu_name, note = _shape_and_gpus(shape_cell)
    memory_gb = parse_memory_gb(f"{memory_cell} {table.memory_unit}") / count
    gpu = identify_gpu(gpu_name, memory_gb=memory_gb)
    notes = [note] if note else []
    named = family_of(gpu_name.removeprefix(shape))
    if named and named != gpu.family:
        notes.append(f"the shape name says {gpu.family} while the GPU text says {named}: {gpu.family} kept")
    if gpu.spec is None:
        notes.append(f"OCI states no {gpu.family} form factor (SXM or PCIe): GPU id is family-level")
    if gpu.memory_mismatch:
        notes.append(f"stated {memory_gb:g} GB per GPU does not match the {gpu.id}")
    where = f"{table.title} › {SHAPE_HEADER}"
    claims = [
        fact("gpu_model", gpu.id, quote=shape_cell, source_url=url, context=where),
        fact("gpu_count", count, quote=shape_cell, source_url=url, context=where),
        fact(
            "gpu_memory_gb",
            memory_gb,
            quote=memory_cell,
            source_url=url,
            context=f"{table.title} › {MEMORY_HEADER}",
            qualifiers=f"per GPU: {memory_cell} {table.memory_unit} per shape / {count} GPUs",
        ),
    ]
    return shape, claims, notes


def _leading_counts(part: str) -> tuple[int, int | None] | None:
    """(NICs, ports each) from '8 x 2 x 200 Gbps', (NICs, None) from '16 x 100 Gbps', else None."""
    match = _LEADING_COUNTS.match(part)
    if match is None:
        return None
    second = match.group("second")
    return parse_count(match.group("first")), None if second is None else parse_count(second)


def _split_network(parts: list[str]) -> tuple[str | None, str | None]:
    """(front-end part, RDMA part) of a Max Network Bandwidth cell; ParseError if ambiguous."""
    if not parts:
        raise ParseError(f"empty {NETWORK_HEADER} cell")
    rdma = [p for p in parts if fabric_from_text(p) == Fabric.ROCE]
    frontend = [p for p in parts if p not in rdma]
    if len(rdma) > 1 or len(frontend) > 1:
        raise ParseError(f"{NETWORK_HEADER} cell has {len(parts)} parts, expected front-end and RDMA")
    return (frontend[0] if frontend else None), (rdma[0] if rdma else None)


def _network_claims(parts: list[str], title: str, url: str) -> tuple[list[Claim], bool, list[str]]:
    """Claims of one Max Network Bandwidth cell, whether the fabric is the front-end, and notes."""
    where = f"{title} › {NETWORK_HEADER}"
    frontend, rdma = _split_network(parts)
    claims: list[Claim] = []
    notes: list[str] = []
    if frontend is not None:
        claims += _frontend_claims(frontend, where, url)
    else:
        notes.append("no front-end network figure stated")
    fabric_part = rdma if rdma is not None else frontend
    assert fabric_part is not None
    claims += _fabric_claims(fabric_part, rdma is not None, where, url)
    if rdma is None:
        notes.append("no RDMA cluster network stated: the front-end Ethernet is the only network")
    return claims, rdma is None, notes


def _frontend_claims(part: str, where: str, url: str) -> list[Claim]:
    bandwidth = parse_bandwidth(part)
    claims = [
        bandwidth_claim(
            "frontend_gbits_per_s",
            bandwidth,
            quote=part,
            source_url=url,
            context=where,
            extra_qualifiers="front-end (VNIC) network, per node",
        )
    ]
    counts = _leading_counts(part)
    if counts is not None:
        claims.append(fact("frontend_nic_count", counts[0], quote=part, source_url=url, context=where))
    return claims


def _fabric_claims(part: str, is_rdma: bool, where: str, url: str) -> list[Claim]:
    """Fabric, per-node Gbit/s and NIC count of the GPU fabric part of the network cell."""
    bandwidth = parse_bandwidth(part)
    counts = _leading_counts(part)
    if is_rdma:
        fabric, note = Fabric.ROCE, "RDMA cluster network (RDMA over converged Ethernet)"
    else:
        fabric, note = Fabric.ETHERNET, "no RDMA network listed; front-end Ethernet only"
    nics = "" if counts is None or counts[1] is None else f"{counts[0]} NICs x {counts[1]} ports"
    total = "NIC count not stated" if counts is None else nics or f"{counts[0]} NICs"
    claims = [
        fact("inter_node_fabric", fabric.value, quote=part, source_url=url, context=where, qualifiers=note),
        bandwidth_claim(
            "inter_node_gbits_per_s",
            bandwidth,
            quote=part,
            source_url=url,
            context=where,
            extra_qualifiers=f"total per node; {total}",
        ),
    ]
    if counts is not None:
        claims.append(
            fact("nic_count", counts[0], quote=part, source_url=url, context=where, qualifiers=nics)
        )
    return claims
