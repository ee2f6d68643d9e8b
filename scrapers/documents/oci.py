"""Oracle Cloud Infrastructure: the GPU tables of the Compute Shapes reference page (HTML).

A GPU shapes table names each shape with its GPUs ("BM.GPU.H100.8 (8xH100)"), the GPU memory of
the whole shape, and one "Max Network Bandwidth" cell that holds two networks separated by <br>:
the front-end VNIC network ("1 x 100 Gbps") and the RDMA cluster network ("8 x 2 x 200 Gbps RDMA").
Only the part that says RDMA is the GPU fabric; a shape without one has only the front-end
Ethernet. The page never states GPU-to-GPU bandwidth or the GPU form factor: shapes sold only as HGX
boards (``normalize.boards``) get theirs inferred, like every provider's.

Offline, a third-party markdown excerpt of the same table (``EXCERPT``, a local copy) is read in
place of the page: the same table reader gives the same ``Table``, and its claims cite the excerpt.
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from fetch.http import ProviderFetcher, raise_for
from normalize.boards import board_of
from normalize.errors import LayoutError, ParseError
from normalize.gpus import family_of, identify_gpu
from normalize.units import parse_bandwidth, parse_count, parse_memory_gb
from normalize.vocab import Basis, Fabric, fabric_from_text
from records.documents import DocumentSet, copy_url
from records.offers import Claim, RawOffer
from scrapers.base import Scraper
from scrapers.claims import bandwidth_claim, fact, gpu_model_claim
from scrapers.markdown import markdown_tables
from scrapers.revisions import cite_copy, merge_revisions
from scrapers.tables import Table, clean, collect, html_tables

log = logging.getLogger(__name__)

SHAPES_URL = "https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm"
# A third-party markdown excerpt of the page's bare-metal GPU table (its repository unidentified):
# read offline in place of the live page, cited as itself, never at Oracle's URL.
EXCERPT = "reference/oci/computeshapes-excerpt/oci-bm-gpu-shapes.md"
EXCERPT_NOTE = (
    "from a third-party excerpt of Oracle's Compute Shapes page (repository unidentified), "
    "cited as itself; a live fetch of Oracle's page supersedes it"
)

# Header texts the parser requires, and the pattern each is found by.
SHAPE_HEADER = "Shape"
MEMORY_HEADER = "GPU Memory (GB)"
NETWORK_HEADER = "Max Network Bandwidth"
_HEADERS = {
    SHAPE_HEADER: r"^Shape$",
    MEMORY_HEADER: r"^GPU Memory \([KMGT]i?B\)$",
    NETWORK_HEADER: r"^Max Network Bandwidth$",
}

_SHAPE = re.compile(r"^(?P<shape>[A-Z]+\.[\w.\-]+?)\s*(?:\((?P<gpus>[^)]*)\))?$")
_GPUS = re.compile(r"^(?:GPU:\s*)?(?P<count>\d+)\s*x\s*(?P<name>\S.*)$", re.I)
_SHAPE_COUNT = re.compile(r"\.(?P<count>\d+)$")
_LEADING_COUNTS = re.compile(r"^(?P<first>\d+)\s*x\s*(?:(?P<second>\d+)\s*x\s*)?\d", re.I)
_PART_BREAK = re.compile(r"(?i)<br\s*/?>|\n")


class Oci(Scraper):
    name = "oci"
    title = "Oracle Cloud Infrastructure"
    url_prefixes = ("https://docs.oracle.com/en-us/iaas/Content/Compute/",)
    copy_paths = (EXCERPT,)
    expected_layout: ClassVar[dict[str, str]] = {
        SHAPES_URL: f"<table>s headed {SHAPE_HEADER} | ... | {MEMORY_HEADER} | ... | {NETWORK_HEADER}"
        " (other columns ignored; network cells split on <br>)",
    }

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        page = await fetcher.get(SHAPES_URL, required=False)
        excerpt = fetcher.get_copy(EXCERPT)
        if not page.ok and not excerpt.ok:
            raise_for(page)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        """Oracle's page when it was fetched, the excerpt when it was read; both: one row per shape
        with both revisions' claims (a disagreement is a conflict), Oracle's leading."""
        page, excerpt = documents.optional_text(SHAPES_URL), documents.optional_text(copy_url(EXCERPT))
        if page is None and excerpt is None:
            documents.text(SHAPES_URL)  # raises, naming the page and why it is unavailable
        live = [] if page is None else parse_shapes(page, SHAPES_URL)
        copied = [] if excerpt is None else parse_excerpt(excerpt)
        return merge_revisions(live, copied)


def parse_excerpt(text: str) -> list[RawOffer]:
    """The shapes of the third-party markdown excerpt, cited as the copy of Oracle's page it is."""
    offers = _parse_tables(markdown_tables(text), copy_url(EXCERPT))
    return cite_copy(offers, SHAPES_URL, EXCERPT_NOTE)


def parse_shapes(text: str, url: str) -> list[RawOffer]:
    """One RawOffer per GPU shape in the GPU shapes tables of the OCI Compute Shapes page (HTML)."""
    return _parse_tables(html_tables(text), url)


def gpu_tables(tables: list[Table]) -> list[Table]:
    """The tables with a GPU memory header; LayoutError if there is none, if one lacks another
    required header (naming it), or if none has rows."""
    found = [t for t in tables if t.has_column(_HEADERS[MEMORY_HEADER])]
    if not found:
        raise LayoutError(f"no table with a {MEMORY_HEADER!r} header on the OCI compute shapes page")
    for table in found:
        for name, pattern in _HEADERS.items():
            if not table.has_column(pattern):
                headers = list(table.clean_headers)
                raise LayoutError(f"OCI GPU shapes table has no {name!r} header; headers are {headers}")
    if not any(t.rows for t in found):
        raise LayoutError(f"the OCI tables with a {MEMORY_HEADER!r} header have no rows")
    return found


def _parse_tables(tables: list[Table], url: str) -> list[RawOffer]:
    rows = [(table, row) for table in gpu_tables(tables) for row in table.rows]
    return collect(
        rows,
        lambda item: _offer(*item, url),
        provider="oci",
        name=lambda item: clean(item[1][0]) if item[1] else "",
        empty="no parsable GPU shape rows on the OCI compute shapes page",
    )


def _parts(cell: str) -> list[str]:
    """A cell's line-broken parts: <br> in markdown, line breaks in an HTML table's cell text."""
    return [part for part in (clean(p) for p in _PART_BREAK.split(cell)) if part]


def _offer(table: Table, row: tuple[str, ...], url: str) -> RawOffer:
    if len(row) < len(table.headers):
        raise ParseError(f"{len(row)} cells, fewer than the headers")
    title = table.heading or "GPU shapes table"
    shape_cell = clean(table.cell(row, _HEADERS[SHAPE_HEADER]))
    memory_cell = clean(table.cell(row, _HEADERS[MEMORY_HEADER]))
    memory_unit = table.header_unit(_HEADERS[MEMORY_HEADER])
    shape, gpu_claims, notes = _gpu_claims(shape_cell, memory_cell, memory_unit, title, url)
    network = _parts(table.cell(row, _HEADERS[NETWORK_HEADER]))
    network_claims, shares_frontend, network_notes = _network_claims(network, title, url)
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
        return (
            shape,
            count,
            shape,
            f"GPU count {count} taken from the shape name's trailing '.{count}' (the cell names no GPUs)",
        )
    gpus = _GPUS.match(match.group("gpus").strip())
    if gpus is None:
        raise ParseError(f"GPUs in {cell!r} are not 'NxGPU'")
    count = parse_count(gpus.group("count"))
    note = None
    if suffix is not None and suffix.group("count") != str(count):
        note = f"shape name suffix .{suffix.group('count')} disagrees with the stated {count} GPUs"
    return shape, count, f"{shape} {gpus.group('name')}", note


def _gpu_claims(
    shape_cell: str, memory_cell: str, memory_unit: str, title: str, url: str
) -> tuple[str, list[Claim], list[str]]:
    shape, count, gpu_name, note = _shape_and_gpus(shape_cell)
    memory_gb = parse_memory_gb(f"{memory_cell} {memory_unit}") / count
    board = board_of("oci", shape)
    gpu = identify_gpu(gpu_name, memory_gb=memory_gb, form_factor=board.form_factor if board else None)
    notes = [note] if note else []
    if board and gpu.form_factor_inferred:
        notes.append(board.note(shape))
    named = family_of(gpu_name.removeprefix(shape))
    if named and named != gpu.family:
        notes.append(f"the shape name says {gpu.family} while the GPU text says {named}: {gpu.family} kept")
    if gpu.spec is None:
        notes.append(f"OCI states no {gpu.family} form factor (SXM or PCIe): GPU id is family-level")
    if gpu.memory_mismatch:
        notes.append(f"stated {memory_gb:g} GB per GPU does not match the {gpu.id}")
    where = f"{title} › {SHAPE_HEADER}"
    claims = [
        gpu_model_claim(gpu, quote=shape_cell, source_url=url, context=where),
        fact(
            "gpu_count",
            count,
            quote=shape_cell,
            source_url=url,
            context=where,
            basis=Basis.INFERRED if "(" not in shape_cell else Basis.STATED,  # '.4' of a name: inferred
        ),
        fact(
            "gpu_memory_gb",
            memory_gb,
            quote=memory_cell,
            source_url=url,
            context=f"{title} › {MEMORY_HEADER}",
            qualifiers=f"per GPU: {memory_cell} {memory_unit} per shape / {count} GPUs",
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
