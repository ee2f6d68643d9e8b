"""Google Cloud's "Networking and GPU machines" page: what it states per machine series.

The page (HTML, devsite layout) has an overview table of machine SERIES (Machine type | GPU model |
Max total bandwidth | GPU to GPU networking technology) and one <h3> section per series whose prose
splits the total into GPU-to-GPU NICs and general-purpose NICs; a newer revision has a bullet list
('A3 Mega: up to 1,600 Gbps') instead. ``parse_network_page`` gives one ``SeriesFacts`` per series,
before ``scrapers.documents.gcp`` binds them to machine types. The overview is read with ``scrapers.tables``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Tag

from normalize.errors import LayoutError, ParseError
from normalize.units import Bandwidth, find_bandwidths, parse_bandwidth, parse_count
from normalize.vocab import Fabric, Link
from records.offers import Claim
from scrapers.claims import bandwidth_claim, fact
from scrapers.markdown import sentences
from scrapers.tables import Table, clean, collect, html_tables

log = logging.getLogger(__name__)

OVERVIEW_HEADERS = ("Machine type", "GPU model", "Max total bandwidth", "GPU to GPU networking technology")
# Series as the network page names them → prefixes of their machine types (Google's naming).
SERIES_PREFIXES = {
    "A4X Max": ("a4x-maxgpu",),
    "A4X": ("a4x-highgpu",),
    "A4": ("a4-highgpu",),
    "A3 Ultra": ("a3-ultragpu",),
    "A3 Mega": ("a3-megagpu",),
    "A3 High": ("a3-highgpu",),
    "A3 Edge": ("a3-edgegpu",),
    "A2 Standard": ("a2-highgpu", "a2-megagpu"),
    "A2 Ultra": ("a2-ultragpu",),
    "G4": ("g4-standard",),
    "G2": ("g2-standard",),
}
FABRIC_BY_TECHNOLOGY = {
    "GPUDirect RDMA": Fabric.ROCE,
    "GPUDirect-TCPXO": Fabric.GPUDIRECT_TCPXO,
    "GPUDirect-TCPX": Fabric.GPUDIRECT_TCPX,
    "N/A": Fabric.ETHERNET,
}
TCPX_TOTAL = "max total of the series; includes the general-purpose NIC (split not stated)"
#: A3 High/Mega/Edge: Google gives the series total only, so the front end's share is missing (a row
#: never takes the total as its front-end figure) and the row says why.
FRONTEND_NOT_STATED = (
    "frontend_gbits_per_s missing: Google gives only the series total ({total}), GPU NICs and the "
    "general-purpose NIC together, and no front-end share"
)
TCPX_NOTE = (
    "the series total includes the general-purpose NIC and the page gives no split: its fabric figure is "
    "not comparable per GPU with A3 Ultra, A4 or A4X, whose figures count the GPU NICs only"
)
# Series whose one stated total covers the front end too: no GPU fabric, or GPUDirect-TCPX(O).
FRONTEND_SHARED = frozenset({Fabric.ETHERNET, Fabric.GPUDIRECT_TCPX, Fabric.GPUDIRECT_TCPXO})
_NUMBER_WORDS = {"one": 1, "two": 2, "four": 4, "eight": 8, "sixteen": 16}
_NIC_COUNT = re.compile(r"(?i)\b(one|two|four|eight|sixteen|\d+)\b[^.]*?\bNICs?\b")


@dataclass
class SeriesFacts:
    """What the network page states for one machine series (before it is bound to machine types)."""

    series: str
    gpu_text: str = ""
    gpu_quote: str = ""
    fabric: Fabric | None = None
    claims: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def merge(self, other: SeriesFacts) -> None:
        """Add what another revision of the network page states for the same series."""
        self.gpu_text = self.gpu_text or other.gpu_text
        self.gpu_quote = self.gpu_quote or other.gpu_quote
        self.fabric = self.fabric or other.fabric
        self.claims += other.claims
        self.notes += [n for n in other.notes if n not in self.notes]


def _text(node: Tag) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


def _overview(tables: list[Table], url: str) -> Table | None:
    for table in tables:
        headers = list(table.clean_headers)
        if headers[: len(OVERVIEW_HEADERS)] == list(OVERVIEW_HEADERS):
            return table
        if headers and headers[0] == OVERVIEW_HEADERS[0]:
            missing = [h for h in OVERVIEW_HEADERS if h not in headers]
            raise LayoutError(f"{url}: overview table lacks header(s) {missing}; has {headers}")
    return None


def parse_network_page(html: str, url: str) -> list[SeriesFacts]:
    """Series facts from either revision: the overview table and per-series prose, or the list."""
    soup = BeautifulSoup(html, "lxml")
    table = _overview(html_tables(html), url)
    if table is not None:
        per_row = collect(
            table.rows,
            lambda row: _overview_row(row, url) or None,
            provider="gcp",
            name=lambda row: clean(row[0])[:60] if row else "",
            empty=f"{url}: no machine series of {sorted(SERIES_PREFIXES)} in the overview table",
        )
        by_series = {f.series: f for row_facts in per_row for f in row_facts}
        for heading in soup.find_all("h3"):
            _section(heading, by_series, url)
        return list(by_series.values())
    facts = [f for item in soup.find_all("li") if (f := _list_item(item, url)) is not None]
    if not facts:
        raise LayoutError(
            f"{url}: neither the overview table ({' | '.join(OVERVIEW_HEADERS)}) "
            "nor a list of '<series>: up to N Gbps'"
        )
    return facts


def _overview_row(row: tuple[str, ...], url: str) -> list[SeriesFacts]:
    cells = [clean(cell) for cell in row]
    if len(cells) < len(OVERVIEW_HEADERS):
        return []
    names, gpu, total, technology = cells[0], cells[1], cells[2], cells[3]
    fabric = FABRIC_BY_TECHNOLOGY.get(technology)
    facts = []
    for series in re.split(r"\s+and\s+", names):
        if series not in SERIES_PREFIXES:
            log.info("gcp: series %r has no machine types here (skipped)", series)
            continue
        gpu_text = _gpu_of_series(series, gpu)
        item = SeriesFacts(series, gpu_text, gpu, fabric)
        item.claims.append(
            fact(
                "inter_node_fabric",
                (fabric or Fabric.UNKNOWN).value,
                quote=technology,
                source_url=url,
                context="Overview › GPU to GPU networking technology",
            )
        )
        item.claims += _total_claims(
            series, fabric, parse_bandwidth(total), total, url, "Overview › Max total bandwidth"
        )
        if fabric in (Fabric.GPUDIRECT_TCPX, Fabric.GPUDIRECT_TCPXO):
            item.notes.append(FRONTEND_NOT_STATED.format(total=total))
        facts.append(item)
    return facts


def _gpu_of_series(series: str, gpu_cell: str) -> str:
    """'NVIDIA A100 40GB, NVIDIA A100 80GB' names one GPU per series of 'A2 Standard and A2 Ultra'."""
    parts = [p.strip() for p in gpu_cell.split(",")]
    if series == "A2 Ultra" and len(parts) > 1:
        return parts[1]
    return parts[0]


def _total_claims(
    series: str, fabric: Fabric | None, total: Bandwidth, quote: str, url: str, context: str
) -> list[Claim]:
    """The max total bandwidth: the node's only network when there is no GPU fabric; for TCPX(O)
    the page says it includes the general-purpose NIC; for RDMA the prose splits it."""

    def claim(field: str, qualifiers: str) -> Claim:
        return bandwidth_claim(
            field, total, quote=quote, source_url=url, context=context, extra_qualifiers=qualifiers
        )

    if fabric == Fabric.ETHERNET:
        return [
            claim("inter_node_gbits_per_s", "max total of the series; general-purpose network only"),
            claim("frontend_gbits_per_s", "max total of the series"),
        ]
    if fabric in (Fabric.GPUDIRECT_TCPX, Fabric.GPUDIRECT_TCPXO):
        return [claim("inter_node_gbits_per_s", TCPX_TOTAL)]
    return []


def _section(heading: Tag, by_series: dict[str, SeriesFacts], url: str) -> None:
    """An <h3> section's prose: GPU-to-GPU NICs, general-purpose NICs, NVLink."""
    targets = [by_series[s] for s in re.split(r"\s+and\s+", _text(heading)) if s in by_series]
    if not targets:
        return
    prose = []
    for sibling in heading.find_next_siblings():
        if sibling.name in ("h2", "h3"):
            break
        prose.append(_text(sibling))
    context = f"{_text(heading)} section"
    for sentence in sentences(" ".join(prose)):
        for facts in targets:
            facts.claims += _sentence_claims(sentence, url, context)


def _sentence_claims(sentence: str, url: str, context: str) -> list[Claim]:
    figures = find_bandwidths(sentence)
    nics = _NIC_COUNT.search(sentence)
    count = (
        None if nics is None else _NUMBER_WORDS.get(nics.group(1).lower()) or _count_or_none(nics.group(1))
    )
    if re.search(r"(?i)all[- ]to[- ]all NVLink", sentence):
        return [
            fact(
                "intra_node_link",
                Link.NVLINK.value,
                quote=sentence,
                source_url=url,
                context=context,
                qualifiers="all-to-all NVLink among the GPUs of the VM",
            )
        ]
    if not figures:
        return []
    if re.search(r"(?i)GPU-to-GPU|RDMA", sentence):
        field_name, count_field = "inter_node_gbits_per_s", "nic_count"
    elif re.search(r"(?i)general", sentence):
        field_name, count_field = "frontend_gbits_per_s", "frontend_nic_count"
    else:
        return []
    claims = [bandwidth_claim(field_name, figures[0], quote=sentence, source_url=url, context=context)]
    if count is not None:
        claims.append(fact(count_field, count, quote=sentence, source_url=url, context=context))
    return claims


def _count_or_none(text: str) -> int | None:
    try:
        return parse_count(text)
    except ParseError:
        return None


def _list_item(item: Tag, url: str) -> SeriesFacts | None:
    """'A3 Mega: up to 1,600 Gbps' from the newer revision's bullet list."""
    text = _text(item)
    series, _, rest = text.partition(":")
    if series.strip() not in SERIES_PREFIXES or not find_bandwidths(rest):
        return None
    fabric = _fabric_of_series(series.strip())
    facts = SeriesFacts(series.strip(), fabric=fabric)  # the fabric is the series' (no claim: not stated)
    total = parse_bandwidth(rest)
    facts.claims += _total_claims(series.strip(), fabric, total, text, url, "Maximum network bandwidth list")
    return facts


def _fabric_of_series(series: str) -> Fabric | None:
    """The list revision names no technology; the series' name still decides TCPX(O) vs none."""
    return {
        "A3 Mega": Fabric.GPUDIRECT_TCPXO,
        "A3 High": Fabric.GPUDIRECT_TCPX,
        "A3 Edge": Fabric.GPUDIRECT_TCPX,
        "G4": Fabric.ETHERNET,
        "G2": Fabric.ETHERNET,
        "A2 Standard": Fabric.ETHERNET,
        "A2 Ultra": Fabric.ETHERNET,
    }.get(series)
