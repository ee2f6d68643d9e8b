"""Microsoft Azure: the GPU size-series pages of the azure-compute-docs repository.

Series pages are discovered from the four GPU family pages (plus series the family pages do not
link yet), and their ``[!INCLUDE]`` directives are resolved against the page; a missing include
is recorded as a 404, not fatal. Each series page holds per-size tables (the "Max Bandwidth
(Mbps)" network table is the FRONT-END Ethernet) and a summary include whose prose states the
NVLink and InfiniBand figures. Sizes with an 'r' capability letter are the RDMA (InfiniBand) ones.

Sizes the series pages do not list but Microsoft's price table or health checks name
(``scrapers.documents.azure.named``) are rows too, placed in their series by their name
(``scrapers.documents.azure.names``): they carry what the series states for all its sizes, marked
inferred, and leave per-size figures (front-end bandwidth, a fraction of a GPU) missing, noted.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import ClassVar

from fetch.http import ProviderFetcher
from normalize.boards import board_of
from normalize.errors import LayoutError, ParseError
from normalize.gpus import identify_gpu
from normalize.units import parse_count, parse_gpu_count, parse_memory_gb
from normalize.vocab import Link
from records.documents import Document, DocumentSet
from records.offers import Claim, RawOffer
from records.prices import Price
from scrapers.base import Scraper
from scrapers.claims import fact, gpu_model_claim
from scrapers.documents.azure import network as azure_network
from scrapers.documents.azure import prose as azure_prose
from scrapers.documents.azure.gpu import gpu_identity, rdma_capable, spec_memory_gb
from scrapers.documents.azure.named import HEALTH_CONFS, HEALTH_PREFIX, parse_named
from scrapers.documents.azure.series import (
    FamilySection,
    Series,
    family_sections,
    include_urls,
    is_series_page,
    join_url,
    load_section,
    load_series,
)
from scrapers.prices import azure as azure_prices
from scrapers.prices.tables import fetches_also
from scrapers.shared_parse import SharedParse
from scrapers.tables import Table, clean, find_tables

log = logging.getLogger(__name__)

ARTICLES = (
    "https://raw.githubusercontent.com/MicrosoftDocs/azure-compute-docs/main/articles/virtual-machines/"
)
SIZES = ARTICLES + "sizes/gpu-accelerated/"
FAMILY_PAGES = tuple(SIZES + f"{family}-family.md" for family in ("nc", "nd", "nv", "ng"))
# Series the family pages do not link (yet): newer series appear in the docs before the family
# pages are updated.
KNOWN_SERIES = tuple(
    SIZES + page
    for page in (
        "nd-gb200-v6-series.md",
        "nd-gb300-v6-series.md",
        "nd-h200-v5-series.md",
        "nc-rtxpro6000-bse-v6-series.md",
    )
)
INFINIBAND_PAGE = ARTICLES + "setup-infiniband.md"

_SERIES_LINK = re.compile(r"\]\((?P<href>[^)\s]+-series\.md)\)")


class Azure(Scraper):
    name = "azure"
    title = "Microsoft Azure"
    url_prefixes = (ARTICLES, azure_prices.URL_PREFIX, HEALTH_PREFIX)
    expected_layout: ClassVar[dict[str, str]] = {
        SIZES
        + "<series>-series.md": "tables headed Size Name | Accelerators (Qty.) | Accelerator-Memory (GB) "
        "and Size Name | Max NICs (Qty.) | Max Bandwidth (Mbps); [!INCLUDE] of *-summary.md and *-specs.md",
        SIZES
        + "includes/<series>-specs.md": "table headed Part | Quantity | Specs (rows Network, Accelerators)",
        INFINIBAND_PAGE: "a sentence '... <GEN> rates for <series>, ...' naming InfiniBand generations",
        azure_prices.PRICES_URL: azure_prices.LAYOUT,
    }

    def __init__(self) -> None:
        # The price table names sizes (parse) and prices them (parse_prices): parsed once for both.
        self._price_table = SharedParse(azure_prices.parse_prices)

    @fetches_also(azure_prices.PRICES_URL)
    async def fetch(self, fetcher: ProviderFetcher) -> None:
        families = await fetcher.get_all(list(FAMILY_PAGES))
        series = series_urls([(doc.url, doc.body or "") for doc in families])
        pages = await fetcher.get_all(series, required=False)
        # The family pages show each series' summary and specs too: what is left when a series page is not.
        includes = sorted(
            {
                url
                for page in [*families, *pages]
                if page.ok
                for url in include_urls(page.url, page.body or "")
            }
        )
        await fetcher.get_all([INFINIBAND_PAGE, *includes, *HEALTH_CONFS], required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        rdma = azure_prose.rdma_generations(documents.optional_text(INFINIBAND_PAGE) or "")
        load = _loaded_once()  # the series pages are read for their rows and again for the named sizes
        offers: list[RawOffer] = []
        for url in documents:
            text = documents.optional_text(url)
            if text is not None and is_series_page(url):
                offers.extend(parse_series(url, text, documents, rdma, load))
        if not offers:
            raise LayoutError("no Azure GPU sizes found on any series page")
        listed = {o.instance_type for o in offers}
        named, sized = parse_named(
            documents, listed, rdma, FAMILY_PAGES, INFINIBAND_PAGE, self._price_table, load
        )
        return offers + named + parse_specs_only(documents, sized)

    def parse_prices(self, documents: DocumentSet) -> list[Price]:
        return azure_prices.prices_in(documents, self._price_table)


def series_urls(family_pages: list[tuple[str, str]]) -> list[str]:
    """Series pages linked from the family pages, then the known ones they do not link yet."""
    urls = [join_url(url, m.group("href")) for url, text in family_pages for m in _SERIES_LINK.finditer(text)]
    return list(dict.fromkeys([*filter(None, urls), *KNOWN_SERIES]))


def parse_specs_only(documents: DocumentSet, sized: frozenset[str] = frozenset()) -> list[RawOffer]:
    """One row per series whose page is unavailable but whose specs include a family page shows, and
    none of whose sizes is named elsewhere (``sized``: the names of the series that have size rows):
    the series' GPU from its specs table, its sizes noted as unknown."""
    offers = []
    for family in FAMILY_PAGES:
        text = documents.optional_text(family)
        for section in family_sections(family, text or ""):
            page = documents.get(section.series_url or "")
            if page is not None and page.ok:
                continue  # the series page was read: its sizes are rows already
            series = load_section(family, section, documents)
            if series.specs is None or series.name in sized:
                continue
            try:
                offers.append(_series_offer(series, section, page))
            except ParseError as exc:
                log.warning("Skipping azure series %s: %s", section.name, exc)
    return offers


def _series_offer(series: Series, section: FamilySection, page: Document | None) -> RawOffer:
    gpu, quote, url = gpu_identity(series, None, board_of("azure", series.name))
    claims = [gpu_model_claim(gpu, quote=quote, source_url=url, context=f"{series.name} › Accelerators")]
    claims += azure_prose.claims(series.summary, series.summary_url or series.url, None)
    why = "not fetched" if page is None else (page.error or f"status {page.status}")
    quantity = clean(series.spec_cell("Accelerators", 1)) or "GPU count not given"
    network = clean(series.spec_cell("Network", 2)) or "not given"
    page_name = (section.series_url or "").rsplit("/", 1)[-1]
    notes = [
        f"series page {page_name} unavailable ({why}): its sizes are not listed, so this row is the "
        f"series, from its specs include ({quantity}; network {network} across its sizes)"
    ]
    if series.missing_includes:
        notes.append("missing includes: " + ", ".join(series.missing_includes))
    return RawOffer(
        provider="azure",
        instance_type=section.name,
        source_url=series.specs_url or series.url,
        claims=tuple(claims),
        notes=tuple(notes),
    )


def _rows_by_size(tables: list[Table]) -> dict[str, list[tuple[Table, tuple[str, ...]]]]:
    """Every row of each size (a size listed twice keeps both rows: their figures may conflict)."""
    rows: dict[str, list[tuple[Table, tuple[str, ...]]]] = {}
    for table in tables:
        for row in table.rows:
            if row and clean(row[0]).startswith("Standard_"):
                rows.setdefault(clean(row[0]), []).append((table, row))
    return rows


def _loaded_once() -> Callable[[str, str, DocumentSet], Series]:
    """``load_series`` for one parse, each page read once (a Series is not changed by its readers)."""
    loaded: dict[str, Series] = {}

    def load(url: str, text: str, documents: DocumentSet) -> Series:
        if url not in loaded:
            loaded[url] = load_series(url, text, documents)
        return loaded[url]

    return load


def parse_series(
    url: str,
    text: str,
    documents: DocumentSet,
    rdma: azure_prose.RdmaRates,
    load: Callable[[str, str, DocumentSet], Series] = load_series,
) -> list[RawOffer]:
    """One RawOffer per size on a series page (read by ``load``)."""
    series = load(url, text, documents)
    sizes = list(_rows_by_size(find_tables(series.tables, r"^Size Name$")))
    accelerators = _rows_by_size(find_tables(series.tables, r"^Size Name$", r"^Accelerators"))
    network = _rows_by_size(find_tables(series.tables, r"^Size Name$", r"NICs"))
    if not accelerators:
        raise LayoutError(f"{url}: no accelerators table (a 'Size Name' + 'Accelerators' table)")
    offers = []
    for size in sizes:
        if size not in accelerators:
            log.warning("Skipping azure size %s: not in the accelerators table of %s", size, url)
            continue
        try:  # one offer per pair of rows; the pipeline merges a size's offers into one row
            offers += [
                _offer(series, size, accel, net, rdma)
                for accel in accelerators[size]
                for net in network.get(size, [None])
            ]
        except ParseError as exc:
            log.warning("Skipping azure size %s: %s", size, exc)
    return offers


def _offer(
    series: Series,
    size: str,
    accel: tuple[Table, tuple[str, ...]],
    net: tuple[Table, tuple[str, ...]] | None,
    rdma: azure_prose.RdmaRates,
) -> RawOffer:
    gpu_claims, gpu_count, notes = _gpu_claims(series, size, *accel)
    claims = list(gpu_claims)
    frontend: list[Claim] = []
    if net is not None:
        frontend = azure_network.frontend_claims(series, *net)
        claims += frontend + azure_network.scale_claims(series, *net)
    prose = azure_prose.claims(series.summary, series.summary_url or series.url, gpu_count)
    claims += [
        c for c in prose if c.field not in ("inter_node_gbits_per_s", "inter_node_fabric", "nic_count")
    ]
    if rdma_capable(size):
        fabric = [c for c in prose if c.field in ("inter_node_gbits_per_s", "inter_node_fabric", "nic_count")]
        # One rule for every 'r' size the InfiniBand page's sentence covers ("FDR rates for ... other
        # RDMA-capable N-series"): its generation's rate, inferred, wherever the series states none.
        caught = [] if fabric else azure_prose.rdma_claims(series.name, rdma, INFINIBAND_PAGE)
        claims += fabric or caught
        if caught and not series.summary:
            notes.append(
                "InfiniBand rate inferred from setup-infiniband.md's catch-all for RDMA-capable N-series; "
                "the series summary, which may state its own, was not read"
            )
    else:
        claims += azure_network.ethernet_claims(series, size, frontend)
    if series.missing_includes:
        notes.append("missing includes: " + ", ".join(series.missing_includes))
    return RawOffer(
        provider="azure", instance_type=size, source_url=series.url, claims=tuple(claims), notes=tuple(notes)
    )


def _gpu_claims(
    series: Series, size: str, table: Table, row: tuple[str, ...]
) -> tuple[list[Claim], float | None, list[str]]:
    count_raw = table.cell(row, r"^Accelerators")
    memory_col = table.column(r"^Accelerator.?Memory")
    memory_raw = row[memory_col] if memory_col < len(row) else ""
    context = f"{series.name} › Accelerators"
    claims, notes = [], []
    count, count_quote, count_url = None, count_raw, series.url
    if clean(count_raw):
        count = float(parse_gpu_count(clean(count_raw)))
    else:
        quantity_raw = series.spec_cell("Accelerators", 1)
        quantity = clean(quantity_raw)
        if re.fullmatch(r"\d+(?:\s*GPUs?)?", quantity):
            count = float(parse_count(quantity.split()[0]))
            count_quote, count_url = quantity_raw.strip(), series.specs_url or series.url
            notes.append("GPU count taken from the host specifications table (size table cell empty)")
    per_gpu_gb, memory_note = _per_gpu_memory(series, memory_raw, table, count)
    nvlink = any(
        c.field == "intra_node_link" and c.value in (Link.NVLINK, Link.NVSWITCH)
        for c in azure_prose.claims(series.summary, series.url, count)
    )
    board = board_of("azure", series.name, nvlink_gpus=count if nvlink else None)
    gpu, gpu_quote, gpu_url = gpu_identity(series, per_gpu_gb, board)
    claims.append(gpu_model_claim(gpu, quote=gpu_quote, source_url=gpu_url, context=context))
    if board and gpu.form_factor_inferred:
        notes.append(board.note(series.name))
    if count is not None:
        claims.append(fact("gpu_count", count, quote=count_quote, source_url=count_url, context=context))
    if per_gpu_gb is not None:
        claims.append(
            fact(
                "gpu_memory_gb",
                per_gpu_gb,
                quote=memory_raw.strip(),
                source_url=series.url,
                context=f"{context} › {table.clean_headers[memory_col]}",
                qualifiers=memory_note,
            )
        )
    if memory_note.startswith("per GPU as printed"):
        notes.append(f"the accelerator-memory column of {size} gives the per-GPU figure, not the VM total")
    return claims, count, notes


def _per_gpu_memory(
    series: Series, memory_raw: str, table: Table, count: float | None
) -> tuple[float | None, str]:
    """Per-GPU memory from the VM figure. Most pages print the VM total; some the per-GPU size."""
    if not clean(memory_raw):
        return None, ""
    header = table.header(r"^Accelerator.?Memory")
    unit = (
        "GB" if header.endswith("(GB)") or "(" not in header else table.header_unit(r"^Accelerator.?Memory")
    )
    printed = parse_memory_gb(f"{clean(memory_raw)} {unit}")
    if not count:
        return None, ""
    as_total = printed / count
    reference = spec_memory_gb(series)
    if reference is None:
        try:
            spec = identify_gpu(f"{series.name} {series.summary}", form_factor=None).spec
            reference = spec.memory_gb if spec else None
        except ParseError:
            reference = None
    if count > 1 and reference is not None and abs(printed - reference) < abs(as_total - reference):
        return printed, "per GPU as printed (the column holds the per-GPU size here)"
    return as_total, f"VM total {clean(memory_raw)} / {count:g} GPUs"
