"""Scaleway: SkyPilot's v6 Scaleway catalog and Scaleway's own GPU documentation (docs-content repository).

The catalog (LF lines, AvailabilityZone first) lists only four GPU types with prices, none of them
H100-SXM. Scaleway's bandwidth overview lists every GPU instance type with its internet (front-end)
bandwidth, "up to" per its header: a type only the overview lists is a row too, its GPU and count read
from Scaleway's naming "<GPU>[-SXM]-<count>-<memory>G" (inferred from the name; no price source lists
it). Scaleway's NVLink page says NVLink is "available on Scaleway's H100-SXM Instances", "up to 900
GB/s total GPU-to-GPU bandwidth in an 8-GPU configuration": H100-SXM types get a stated NVLink (the
900 GB/s on the 8-GPU type, as worded), the other multi-GPU types a PCIe link inferred from that page.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import ClassVar

from fetch.http import ProviderFetcher
from normalize.errors import ParseError
from normalize.gpus import identify_gpu
from normalize.units import parse_bandwidth, parse_count, parse_memory_gb
from normalize.vocab import Basis, Link
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from scrapers.claims import bandwidth_claim, fact
from scrapers.markdown import body, markdown_tables, sentences
from scrapers.offer_lists.skypilot import CATALOGS, CSV_LAYOUT
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog
from scrapers.tables import clean, collect, find_table

log = logging.getLogger(__name__)

VMS_URL = CATALOGS + "v6/scaleway/vms.csv"
DOCS = "https://raw.githubusercontent.com/scaleway/docs-content/main/pages/gpu/reference-content/"
BANDWIDTH_URL = DOCS + "gpu-instances-bandwidth-overview.mdx"
NVLINK_URL = DOCS + "understanding-nvidia-nvlink.mdx"
_NAME = re.compile(r"^(?P<gpu>[A-Z0-9]+(?:-SXM)?)-(?P<count>\d+)-(?P<memory>\d+)G$")
_NVLINK_8_GPU = re.compile(
    r"up to (?P<figure>[\d.,]+\s*GB/s) total GPU-to-GPU bandwidth in an 8-GPU configuration"
)
OVERVIEW = "GPU Instances bandwidth overview › GPU Range"
DOCS_ONLY_NOTE = (
    "not in SkyPilot's Scaleway catalog: GPU and count read from the instance type's name "
    "(<GPU>[-SXM]-<count>-<memory>G); no price source in this catalog lists it"
)


class Scaleway(SkyPilotCatalog):
    name = "scaleway"
    title = "Scaleway"
    catalog_url = VMS_URL
    stored_commit = "1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a"  # the copy in ../shared
    # SkyPilot's Scaleway fetcher writes the Scaleway Instance API's hourly_price into Price, and
    # Scaleway's API documents that as an hourly price in euro: the file's figures are EUR.
    price_currency = "EUR"
    price_currency_note = (
        "SkyPilot's Scaleway fetcher writes the Scaleway Instance API's hourly_price, an hourly price "
        "Scaleway documents in euro (our restatement)"
    )
    url_prefixes = (VMS_URL, DOCS)
    expected_layout: ClassVar[dict[str, str]] = {
        VMS_URL: CSV_LAYOUT,
        BANDWIDTH_URL: "Instance Type | Internet Bandwidth (up to) | Block Bandwidth (up to)",
    }

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(VMS_URL)
        await fetcher.get_all([BANDWIDTH_URL, NVLINK_URL], required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        offers = {offer.instance_type: offer for offer in super().parse(documents)}
        overview = documents.optional_text(BANDWIDTH_URL)
        frontend = internet_bandwidths(overview) if overview else {}
        for name in (n for n in frontend if n not in offers):
            try:
                offers[name] = offer_from_name(name)
            except ParseError as exc:
                log.warning("Skipping scaleway row %s: %s", name, exc)
        nvlink = documents.optional_text(NVLINK_URL)
        return [_with_docs(offer, frontend.get(name), nvlink) for name, offer in offers.items()]


def internet_bandwidths(text: str) -> dict[str, Claim]:
    """Instance type → front-end bandwidth claim, from the overview's GPU Range table."""
    table = find_table(
        markdown_tables(text), r"^Instance Type$", r"^Internet Bandwidth", where="(Scaleway GPU Range)"
    )
    lines = {clean(line.split("|")[1]): line.strip() for line in text.splitlines() if line.count("|") >= 3}

    def claim(row: tuple[str, ...]) -> tuple[str, Claim]:
        name = clean(table.cell(row, r"^Instance Type$"))
        header = table.header(r"^Internet Bandwidth")
        bandwidth = parse_bandwidth(clean(table.cell(row, r"^Internet Bandwidth")))
        quote = lines.get(name) or table.cell(row, r"^Internet Bandwidth")
        context = f"{OVERVIEW} › {header}"
        qualifiers = "up to (column header); internet bandwidth per instance"
        return name, bandwidth_claim(
            "frontend_gbits_per_s",
            bandwidth,
            quote=quote,
            source_url=BANDWIDTH_URL,
            context=context,
            extra_qualifiers=qualifiers,
        )

    rows = collect(
        table.rows,
        claim,
        provider="scaleway",
        name=lambda r: r[0] if r else "",
        empty="no rows in the Scaleway GPU Range table",
    )
    return dict(rows)


def offer_from_name(name: str) -> RawOffer:
    """A row for a type only the overview lists: GPU and count read from Scaleway's naming."""
    match = _NAME.match(name)
    if match is None:
        raise ParseError(f"{name!r} does not follow Scaleway's <GPU>-<count>-<memory>G naming")
    memory = parse_memory_gb(f"{match.group('memory')} GB")
    gpu = identify_gpu(match.group("gpu").replace("-", " "), memory_gb=memory)
    context = f"{OVERVIEW} › Instance Type {name!r} (read from the name)"
    claims = (
        fact(
            "gpu_model", gpu.id, quote=name, source_url=BANDWIDTH_URL, context=context, basis=Basis.INFERRED
        ),
        fact(
            "gpu_count",
            parse_count(match.group("count")),
            quote=name,
            source_url=BANDWIDTH_URL,
            context=context,
            basis=Basis.INFERRED,
        ),
    )
    return RawOffer("scaleway", name, BANDWIDTH_URL, claims, (DOCS_ONLY_NOTE,))


def _sentence(text: str, pattern: str) -> str | None:
    return next((s for s in sentences(body(text)) if re.search(pattern, s)), None)


def _link_claims(offer: RawOffer, nvlink_text: str) -> list[Claim]:
    """NVLink on H100-SXM types (as stated), PCIe on the other multi-GPU types (inferred)."""
    where = _sentence(nvlink_text, r"available on Scaleway's \[?H100-SXM")
    count = next((c.value for c in offer.claims if c.field == "gpu_count"), None)
    if where is None or count is None or float(count) <= 1:
        return []
    context = "Understanding NVIDIA NVLink"
    if "H100-SXM" not in offer.instance_type:
        why = f"{context} (NVLink only on H100-SXM types: this type's GPUs talk over PCIe)"
        return [
            fact(
                "intra_node_link",
                Link.PCIE.value,
                quote=where,
                source_url=NVLINK_URL,
                context=why,
                basis=Basis.INFERRED,
            )
        ]
    claims = [fact("intra_node_link", Link.NVLINK.value, quote=where, source_url=NVLINK_URL, context=context)]
    eight = _sentence(nvlink_text, _NVLINK_8_GPU.pattern)
    stated = _NVLINK_8_GPU.search(eight) if eight is not None else None
    if eight is not None and stated is not None and float(count) == 8:
        figure = parse_bandwidth(stated.group("figure"))
        qualifiers = (
            "up to; 'total GPU-to-GPU bandwidth in an 8-GPU configuration' (NVIDIA's 900 GB/s is per GPU)"
        )
        claims.append(
            bandwidth_claim(
                "intra_node_gbytes_per_s",
                figure,
                quote=eight,
                source_url=NVLINK_URL,
                context=context,
                extra_qualifiers=qualifiers,
            )
        )
    return claims


def _with_docs(offer: RawOffer, frontend: Claim | None, nvlink_text: str | None) -> RawOffer:
    extra = [frontend] if frontend is not None else []
    if nvlink_text:
        extra += _link_claims(offer, nvlink_text)
    return replace(offer, claims=(*offer.claims, *extra)) if extra else offer
