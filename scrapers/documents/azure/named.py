"""Azure sizes Microsoft names outside the series pages: in its price table and its health checks.

The series pages list only some sizes of a series (ND-H100-v5's page lists ``Standard_ND96isr_H100_v5``;
the price table also prices ``Standard_ND96is_H100_v5``), and a few series have no page in the docs at
all, only the specs and summary includes a family page shows (NCasT4_v3, NVads-A10 v5, NVv4, NGads
V620, NVads-V710 v5). Two of Microsoft's own files name the sizes: the price table of the Azure
Karpenter provider (``zz_generated.pricing.go``, every size sold) and the AzureHPC health-check
configurations (``conf/<size>.conf``, one per size, with the GPU count a healthy VM has). A size
named there is placed in its series by its name (``scrapers.documents.azure.names``); what the
series states for all its sizes is carried to it, marked inferred (``scrapers.documents.azure``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from normalize.boards import board_of
from normalize.errors import ParseError
from normalize.units import parse_count, to_number
from normalize.vocab import Basis, Fabric, Link
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from records.prices import Price
from scrapers.claims import fact, gpu_model_claim
from scrapers.documents.azure import prose as azure_prose
from scrapers.documents.azure.gpu import gpu_identity, rdma_capable
from scrapers.documents.azure.names import NameParts, frontmatter_title, match_series, series_parts
from scrapers.documents.azure.series import Series, family_sections, is_series_page, load_section, load_series
from scrapers.measurements import azurehpc, nhc
from scrapers.prices import azure as azure_prices
from scrapers.tables import clean

log = logging.getLogger(__name__)

# Microsoft's health-check confs for GPU sizes (N-series): each names one size and its GPU count.
HEALTH_CONFS = {url: size for url, size in azurehpc.CONFS.items() if size.startswith("Standard_N")}
HEALTH_PREFIX = azurehpc.RAW + "azurehpc-health-checks/"


@dataclass(frozen=True)
class Naming:
    """One document that names a size: where, in its words, and the GPU count it gives (if any)."""

    size: str
    url: str
    quote: str
    context: str
    gpu_count: float | None = None


def named_sizes(
    documents: DocumentSet, parse_prices: Callable[[str], list[Price]] = azure_prices.parse_prices
) -> dict[str, list[Naming]]:
    """Every GPU size the health-check confs and the price table (read by ``parse_prices``) name, with
    the documents naming it (confs first: they state a GPU count). A conf or price table that cannot
    be read names nothing (a price table's failure is its prices' to report: the series pages' rows do
    not depend on it)."""
    named: dict[str, list[Naming]] = {}
    for url, size in HEALTH_CONFS.items():
        text = documents.optional_text(url)
        if text is not None:
            named.setdefault(size, []).append(_conf_naming(size, url, text))
    text = documents.optional_text(azure_prices.PRICES_URL)
    try:
        prices = parse_prices(text) if text is not None else []
    except ParseError as exc:  # the prices' own parse reports it (the provider goes stale there)
        log.warning("azure: no sizes read from the price table: %s", exc)
        prices = []
    seen = set()
    for price in prices:
        if price.instance_type not in seen:
            seen.add(price.instance_type)
            context = f"price table, {price.context}" if price.context else "price table"
            naming = Naming(price.instance_type, price.source_url, price.quote, context)
            named.setdefault(price.instance_type, []).append(naming)
    return named


def _conf_naming(size: str, url: str, text: str) -> Naming:
    """A conf names its size by its file name; ``check_gpu_count N`` is the GPU count it expects
    (not for ROCm, whose count is of devices: an MI200 shows two per package)."""
    try:
        found = nhc.checks(text)
    except ParseError:
        found = []
    count = nhc.first(found, "check_gpu_count")
    if count is None or not count.args or "rocm" in count.args:
        return Naming(size, url, url.rsplit("/", 1)[-1], "health-check configuration (file name)")
    try:
        gpus = to_number(count.args[0])
    except ParseError:
        gpus = None
    return Naming(size, url, count.text, f"health-check configuration, line {count.number}", gpus)


def series_candidates(
    documents: DocumentSet,
    family_pages: tuple[str, ...],
    load: Callable[[str, str, DocumentSet], Series] = load_series,
) -> list[tuple[Series, NameParts]]:
    """Every series a mirrored page or include describes, with the parts of its name: the series
    pages (named by their front matter's title), then the family pages' sections whose series page
    is unavailable but whose summary or specs include is not."""
    found: list[tuple[Series, NameParts]] = []
    for url in documents:
        text = documents.optional_text(url)
        if text is None or not is_series_page(url):
            continue
        series = load(url, text, documents)
        if (parts := series_parts(frontmatter_title(text) or series.name)) is not None:
            found.append((series, parts))
    for family in family_pages:
        for section in family_sections(family, documents.optional_text(family) or ""):
            page = documents.get(section.series_url or "")
            if page is not None and page.ok:
                continue
            series = load_section(family, section, documents)
            parts = series_parts(section.name)
            if parts is not None and (series.specs is not None or series.summary):
                found.append((series, parts))
    return found


def parse_named(
    documents: DocumentSet,
    listed: set[str],
    rdma: azure_prose.RdmaRates,
    pages: tuple[str, ...],
    ib_page: str,
    parse_prices: Callable[[str], list[Price]] = azure_prices.parse_prices,
    load: Callable[[str, str, DocumentSet], Series] = load_series,
) -> tuple[list[RawOffer], frozenset[str]]:
    """One row per size the price table or a health check names and no series page lists, placed in
    its series by its name; and the names of the series that got one. A size no series fits (or two
    fit) is skipped (logged): docs/providers.md names those with the reason. ``pages`` are the family
    pages, ``ib_page`` the InfiniBand page the RDMA rates were read from, ``parse_prices`` what reads
    the price table (``named_sizes``), ``load`` what reads a series page (``load_series``)."""
    candidates = series_candidates(documents, pages, load)
    offers, sized = [], set()
    for size, namings in named_sizes(documents, parse_prices).items():
        if size in listed:
            continue
        series = match_series(size, candidates)
        if series is None:
            log.info("Skipping azure size %s: no series in the mirror fits its name", size)
            continue
        try:
            offers.append(_named_offer(series, size, namings, rdma, ib_page))
        except ParseError as exc:
            log.info("Skipping azure size %s: %s", size, exc)
            continue
        sized.add(series.name)
    return offers, frozenset(sized)


def _named_offer(
    series: Series, size: str, namings: list[Naming], rdma: azure_prose.RdmaRates, ib_page: str
) -> RawOffer:
    """A size named outside its series page: its GPU, link and (for an 'r' size) fabric as its series
    states them for every size, inferred; its GPU count from its health check, else from a series that
    has one count for all its sizes, else missing."""
    count_claims, count, notes = _named_count(series, size, namings)
    prose = azure_prose.claims(series.summary, series.summary_url or series.url, count)
    nvlink = any(c.field == "intra_node_link" and c.value in (Link.NVLINK, Link.NVSWITCH) for c in prose)
    board = board_of("azure", series.name, nvlink_gpus=count if nvlink else None)
    gpu, gpu_quote, gpu_url = gpu_identity(series, None, board)
    carried = [
        gpu_model_claim(gpu, quote=gpu_quote, source_url=gpu_url, context=f"{series.name} › Accelerators")
    ]
    if board and gpu.form_factor_inferred:
        notes.append(board.note(series.name))
    fabric_fields = ("inter_node_gbits_per_s", "inter_node_fabric", "nic_count")
    carried += [c for c in prose if c.field not in fabric_fields]
    if rdma_capable(size):
        fabric = [c for c in prose if c.field in fabric_fields]
        carried += fabric or azure_prose.rdma_claims(series.name, rdma, ib_page)
    claims = [_as_series_fact(c, label(series), size) for c in carried] + count_claims
    if count is None and not any(c.field == "intra_node_link" for c in claims):
        claims.append(_peer_unknown(series, gpu_quote, gpu_url))
    if not rdma_capable(size):
        ethernet = _ethernet_by_name(size, namings)
        claims += ethernet
        if not ethernet:
            notes.append(
                "no 'r' (RDMA) capability letter, so Ethernet only by Azure's naming; but only a file name "
                "spells this size, so the fabric is left unknown (no document text to quote)"
            )
    named_by = "; ".join(f"{n.url.rsplit('/', 1)[-1]} ({n.context})" for n in namings)
    described = series.url if is_series_page(series.url) else (series.specs_url or series.summary_url or "")
    notes.insert(
        0,
        f"{size} is not on a series page: named by {named_by}; placed in the {label(series)} series by its "
        f"name ({described.rsplit('/', 1)[-1]}), whose figures for all its sizes it carries, inferred; its "
        "own front-end bandwidth and NIC count are stated nowhere in ../shared",
    )
    if series.missing_includes:
        notes.append("missing includes: " + ", ".join(series.missing_includes))
    return RawOffer(
        provider="azure",
        instance_type=size,
        source_url=namings[0].url,
        claims=tuple(claims),
        notes=tuple(notes),
    )


def _named_count(
    series: Series, size: str, namings: list[Naming]
) -> tuple[list[Claim], float | None, list[str]]:
    """The GPU count of a named size: its health check's ``check_gpu_count`` (stated by Microsoft for
    this size); else the series' specs table when it gives one count for every size (inferred); else
    none, noted with the range the series gives (a fraction of a GPU stays unknown, never guessed)."""
    counted = next((n for n in namings if n.gpu_count is not None), None)
    context = f"{series.name} › Accelerators"
    if counted is not None and counted.gpu_count is not None:
        qualifiers = "the GPU count Microsoft's health check for this size expects"
        claim = fact(
            "gpu_count",
            counted.gpu_count,
            quote=counted.quote.strip(),
            source_url=counted.url,
            context=counted.context,
            qualifiers=qualifiers,
        )
        return [claim], counted.gpu_count, []
    raw = series.spec_cell("Accelerators", 1)
    quantity = clean(raw)
    if re.fullmatch(r"\d+(?:\s*GPUs?)?", quantity):
        count = float(parse_count(quantity.split()[0]))
        claim = fact(
            "gpu_count",
            count,
            quote=raw.strip(),
            source_url=series.specs_url or series.url,
            context=context,
            basis=Basis.INFERRED,
            qualifiers=f"{label(series)} has {quantity} in every size; {size} is placed in it by its name",
        )
        return [claim], count, []
    given = (
        f"the series gives {quantity!r} across its sizes"
        if quantity
        else "the series' specs include, which gives the range, is not in the mirror"
    )
    return [], None, [f"GPU count of {size} not stated ({given}): missing, not guessed"]


def _peer_unknown(series: Series, gpu_quote: str, gpu_url: str) -> Claim:
    """A size whose GPU count is unknown (maybe a fraction of one GPU, maybe two): whether its GPUs
    have a peer, and over what, is unknown too; no PCIe figure is inferred for it."""
    raw = series.spec_cell("Accelerators", 1)
    quote, url = (raw.strip(), series.specs_url or series.url) if clean(raw) else (gpu_quote, gpu_url)
    return fact(
        "intra_node_link",
        Link.UNKNOWN.value,
        quote=quote,
        source_url=url,
        context=f"{series.name} › Accelerators",
        basis=Basis.INFERRED,
        qualifiers="this size's GPU count is not stated: whether it has a GPU peer, and which, is unknown",
    )


def label(series: Series) -> str:
    """A series' name without its trailing "series" ("NVads-A10 v5-series" → "NVads-A10 v5")."""
    return re.sub(r"[-\s]+series$", "", series.name, flags=re.IGNORECASE)


def _as_series_fact(claim: Claim, series: str, size: str) -> Claim:
    """A claim the series states for all its sizes, carried to a size placed in it by its name."""
    why = f"stated for the {series} series; {size} is placed in it by its name"
    qualifiers = "; ".join(q for q in (claim.qualifiers, why) if q)
    basis = Basis.INFERRED if claim.basis == Basis.STATED else claim.basis
    return replace(claim, basis=basis, qualifiers=qualifiers)


def _ethernet_by_name(size: str, namings: list[Naming]) -> list[Claim]:
    """No 'r' capability letter: front-end Ethernet only, read from the name where a document spells it
    (the price table; a health check names its size by its file name only)."""
    spelled = next((n for n in namings if size in n.quote), None)
    if spelled is None:
        return []
    return [
        fact(
            "inter_node_fabric",
            Fabric.ETHERNET.value,
            quote=spelled.quote,
            source_url=spelled.url,
            context="size name without the 'r' (RDMA) capability letter",
            basis=Basis.INFERRED,
            qualifiers="front-end Ethernet only: read from the size's name",
        )
    ]
