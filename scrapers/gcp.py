"""Google Cloud: "Networking and GPU machines" and the accelerator-optimized machine family page.

The network page (HTML, devsite layout) has an overview table of machine SERIES (Machine type |
GPU model | Max total bandwidth | GPU to GPU networking technology) and one <h3> section per
series whose prose splits the total into GPU-to-GPU NICs and general-purpose NICs. The same page
is served from two hosts, which can hold different revisions; both are read and a disagreement
becomes a conflict, never a silent pick. Machine types and GPU counts come from the
machine family page. The "max total" of a series is its largest machine type's figure; smaller
machine types get no bandwidth (missing). Google never states per-GPU NVLink bandwidth: that is
inferred from the GPU.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import ClassVar

from bs4 import BeautifulSoup, Tag

from normalize.errors import LayoutError, ParseError
from normalize.gpus import identify_gpu
from normalize.units import find_bandwidths, parse_bandwidth, parse_count
from normalize.vocab import Fabric, Link
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from records.prices import Price
from scrapers import gcp_prices
from scrapers.base import Scraper
from scrapers.claims import bandwidth_claim, fact
from scrapers.http import ProviderFetcher
from scrapers.markdown import sentences
from scrapers.price_tables import fetches_also

log = logging.getLogger(__name__)

NETWORK_URLS = (
    "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth",
    "https://docs.cloud.google.com/compute/docs/gpus/gpu-network-bandwidth",
)
MACHINES_URL = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
OVERVIEW_HEADERS = ("Machine type", "GPU model", "Max total bandwidth", "GPU to GPU networking technology")
MACHINE_HEADERS = ("Machine type", "GPU count")

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
# Google names the GPU, not its board. The A series are HGX (SXM) systems: measured A3 topology
# shows NV18 NVLink between every GPU pair (../shared/reference/measurements/topo); G4 runs the
# RTX PRO 6000 Server Edition. Figures that follow from these hints are marked inferred.
FORM_FACTOR_BY_SERIES = {"A2": "SXM", "A3": "SXM", "A4": "SXM", "G4": "SERVER"}
FABRIC_BY_TECHNOLOGY = {
    "GPUDirect RDMA": Fabric.ROCE,
    "GPUDirect-TCPXO": Fabric.GPUDIRECT_TCPXO,
    "GPUDirect-TCPX": Fabric.GPUDIRECT_TCPX,
    "N/A": Fabric.ETHERNET,
}
TCPX_TOTAL = "max total of the series; includes the general-purpose NIC (split not stated)"
_NUMBER_WORDS = {"one": 1, "two": 2, "four": 4, "eight": 8, "sixteen": 16}
_NIC_COUNT = re.compile(r"(?i)\b(one|two|four|eight|sixteen|\d+)\b[^.]*?\bNICs?\b")


class Gcp(Scraper):
    name = "gcp"
    title = "Google Cloud"
    url_prefixes = (
        "https://cloud.google.com/compute/docs/",
        "https://docs.cloud.google.com/compute/docs/",
        gcp_prices.URL_PREFIX,
    )
    expected_layout: ClassVar[dict[str, str]] = {
        NETWORK_URLS[0]: "overview <table> headed "
        + " | ".join(OVERVIEW_HEADERS)
        + "; one <h3> per machine series; or a <ul> of '<series>: up to N Gbps'",
        MACHINES_URL: "<table>s headed " + " | ".join(MACHINE_HEADERS),
        gcp_prices.PRICES_URL: gcp_prices.LAYOUT,
    }

    @fetches_also(gcp_prices.PRICES_URL)
    async def fetch(self, fetcher: ProviderFetcher) -> None:
        pages = await fetcher.get_all(list(NETWORK_URLS), required=False)
        if not any(page.ok for page in pages):
            await fetcher.get(NETWORK_URLS[0])  # raises with the cause
        await fetcher.get(MACHINES_URL)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        machines = parse_machine_types(documents.text(MACHINES_URL), MACHINES_URL)
        series: dict[str, SeriesFacts] = {}
        for url in NETWORK_URLS:
            text = documents.optional_text(url)
            if text is not None:
                for facts in parse_network_page(text, url):
                    series.setdefault(facts.series, SeriesFacts(facts.series)).merge(facts)
        if not series:
            raise LayoutError("no machine series on the GPU network page")
        return offers(machines, series)

    def parse_prices(self, documents: DocumentSet) -> list[Price]:
        return gcp_prices.prices_in(documents)


@dataclass
class Machine:
    """A machine type of the machine-family page and its GPU count."""

    instance_type: str
    gpu_count: int
    quote: str


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


def parse_machine_types(html: str, url: str) -> list[Machine]:
    """Every machine type with its GPU count from the machine family page's tables."""
    machines = []
    for table in BeautifulSoup(html, "lxml").find_all("table"):
        headers = [_text(th) for th in table.find_all("th")]
        if not all(any(h.startswith(want) for h in headers) for want in MACHINE_HEADERS):
            continue
        type_col = next(i for i, h in enumerate(headers) if h.startswith("Machine type"))
        count_col = next(i for i, h in enumerate(headers) if h.startswith("GPU count"))
        for row in table.find_all("tr"):
            cells = [_text(td) for td in row.find_all("td")]
            if len(cells) > max(type_col, count_col) and re.fullmatch(r"[0-9]+", cells[count_col]):
                try:
                    machines.append(Machine(cells[type_col], parse_count(cells[count_col]), cells[count_col]))
                except ParseError as exc:
                    log.warning("Skipping gcp row %s: %s", cells[type_col], exc)
    if not machines:
        raise LayoutError(f"{url}: no table headed {' | '.join(MACHINE_HEADERS)}")
    return machines


def _overview(soup: BeautifulSoup, url: str) -> Tag | None:
    for table in soup.find_all("table"):
        headers = [_text(th) for th in table.find_all("th")]
        if headers[: len(OVERVIEW_HEADERS)] == list(OVERVIEW_HEADERS):
            return table
        if headers and headers[0] == OVERVIEW_HEADERS[0]:
            missing = [h for h in OVERVIEW_HEADERS if h not in headers]
            raise LayoutError(f"{url}: overview table lacks header(s) {missing}; has {headers}")
    return None


def parse_network_page(html: str, url: str) -> list[SeriesFacts]:
    """Series facts from either revision: the overview table and per-series prose, or the list."""
    soup = BeautifulSoup(html, "lxml")
    table = _overview(soup, url)
    if table is not None:
        facts = [f for row in table.find_all("tr")[1:] for f in _overview_row_or_skip(row, url)]
        by_series = {f.series: f for f in facts}
        for heading in soup.find_all("h3"):
            _section(heading, by_series, url)
        return facts
    facts = [f for item in soup.find_all("li") if (f := _list_item(item, url)) is not None]
    if not facts:
        raise LayoutError(
            f"{url}: neither the overview table ({' | '.join(OVERVIEW_HEADERS)}) "
            "nor a list of '<series>: up to N Gbps'"
        )
    return facts


def _overview_row_or_skip(row: Tag, url: str) -> list[SeriesFacts]:
    try:
        return _overview_row(row, url)
    except ParseError as exc:
        log.warning("Skipping gcp overview row %s: %s", _text(row)[:60], exc)
        return []


def _overview_row(row: Tag, url: str) -> list[SeriesFacts]:
    cells = [_text(td) for td in row.find_all("td")]
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
        facts.append(item)
    return facts


def _gpu_of_series(series: str, gpu_cell: str) -> str:
    """'NVIDIA A100 40GB, NVIDIA A100 80GB' names one GPU per series of 'A2 Standard and A2 Ultra'."""
    parts = [p.strip() for p in gpu_cell.split(",")]
    if series == "A2 Ultra" and len(parts) > 1:
        return parts[1]
    return parts[0]


def _total_claims(
    series: str, fabric: Fabric | None, total, quote: str, url: str, context: str
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
    facts = SeriesFacts(series.strip())
    total = parse_bandwidth(rest)
    facts.claims += _total_claims(
        series.strip(), _fabric_of_series(series.strip()), total, text, url, "Maximum network bandwidth list"
    )
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


def offers(machines: list[Machine], series: dict[str, SeriesFacts]) -> list[RawOffer]:
    """One RawOffer per machine type; series facts go to the largest machine type of the series."""
    result = []
    for name, facts in series.items():
        members = [m for m in machines if m.instance_type.startswith(SERIES_PREFIXES[name])]
        if not members:
            log.warning("Skipping gcp series %s: no machine types listed for it", name)
            continue
        largest = max(members, key=lambda m: m.gpu_count)
        for machine in members:
            try:
                result.append(_offer(machine, facts, with_network=machine is largest))
            except ParseError as exc:
                log.warning("Skipping gcp row %s: %s", machine.instance_type, exc)
    return result


def _offer(machine: Machine, facts: SeriesFacts, *, with_network: bool) -> RawOffer:
    if not facts.gpu_text:
        raise ParseError(f"no GPU model stated for series {facts.series}")
    hint = FORM_FACTOR_BY_SERIES.get(facts.series[:2])
    gpu = identify_gpu(facts.gpu_text, form_factor=hint)
    claims = [
        fact(
            "gpu_model",
            gpu.id,
            quote=facts.gpu_quote,
            source_url=NETWORK_URLS[0],
            context="Overview › GPU model",
        ),
        fact(
            "gpu_count",
            machine.gpu_count,
            quote=machine.quote,
            source_url=MACHINES_URL,
            context=f"{machine.instance_type} › GPU count",
        ),
    ]
    notes = list(facts.notes)
    if hint and gpu.spec is not None and gpu.spec.form_factor == hint:
        notes.append(f"form factor {hint} inferred for the {facts.series} series (measured NVLink topology)")
    if with_network:
        claims += facts.claims
    else:
        # Only the link and a series-wide absence of a GPU fabric hold for the smaller machine types.
        claims += [
            c
            for c in facts.claims
            if c.field == "intra_node_link" or (c.field == "inter_node_fabric" and c.value == Fabric.ETHERNET)
        ]
        notes.append(f"the page states the network only for the largest {facts.series} machine type")
    return RawOffer(
        provider="gcp",
        instance_type=machine.instance_type,
        source_url=NETWORK_URLS[0],
        claims=tuple(claims),
        notes=tuple(notes),
    )
