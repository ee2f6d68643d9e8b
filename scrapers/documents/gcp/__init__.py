"""Google Cloud: "Networking and GPU machines" and the accelerator-optimized machine family page.

The network page states facts per machine SERIES (``scrapers.documents.gcp.network``); the machine family page
lists machine types and their GPU counts in tables (read with ``scrapers.tables``). The same network
page is served from two hosts, which can hold different revisions; both are read and a disagreement
becomes a conflict, never a silent pick. The "max total" of a series is its largest machine type's
figure; smaller machine types get no bandwidth (missing). For the GPUDirect-TCPX(O) series (A3
Mega/High/Edge) that total includes the general-purpose NIC and no split is stated, so those rows keep
it as one allowance shared with the front end (``fabric_shares_frontend``) and say so; the RDMA
series' prose splits the GPU NICs from the front-end NICs, and the rows keep the two apart. Google
never states per-GPU NVLink bandwidth: that is inferred from the GPU.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import ClassVar

from fetch.http import ProviderFetcher, raise_for
from normalize.boards import board_of
from normalize.errors import LayoutError, ParseError
from normalize.gpus import identify_gpu
from normalize.units import parse_count
from normalize.vocab import Fabric
from records.documents import DocumentSet
from records.offers import RawOffer
from records.prices import Price
from scrapers.base import Scraper
from scrapers.claims import fact, gpu_model_claim
from scrapers.documents.gcp.network import (
    FABRIC_BY_TECHNOLOGY,
    FRONTEND_SHARED,
    OVERVIEW_HEADERS,
    SERIES_PREFIXES,
    TCPX_NOTE,
    SeriesFacts,
    parse_network_page,
)
from scrapers.prices import gcp as gcp_prices
from scrapers.prices.tables import fetches_also
from scrapers.tables import Table, clean, collect, find_tables, html_tables

log = logging.getLogger(__name__)

NETWORK_URLS = (
    "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth",
    "https://docs.cloud.google.com/compute/docs/gpus/gpu-network-bandwidth",
)
MACHINES_URL = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
MACHINE_HEADERS = ("Machine type", "GPU count")

__all__ = ["FABRIC_BY_TECHNOLOGY", "SERIES_PREFIXES", "Gcp", "parse_machine_types", "parse_network_page"]


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
            raise_for(pages[0])
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


def parse_machine_types(html: str, url: str) -> list[Machine]:
    """Every machine type with its GPU count from the machine family page's tables."""
    rows = [
        (t, row) for t in find_tables(html_tables(html), r"^Machine type", r"^GPU count") for row in t.rows
    ]
    return collect(
        rows,
        lambda item: _machine(*item),
        provider="gcp",
        name=lambda item: clean(item[1][0]) if item[1] else "",
        empty=f"{url}: no table headed {' | '.join(MACHINE_HEADERS)}",
    )


def _machine(table: Table, row: tuple[str, ...]) -> Machine | None:
    """One machine-type row; None for a row without a whole GPU count (a note or a spacer)."""
    count = clean(table.cell(row, r"^GPU count"))
    if not re.fullmatch(r"[0-9]+", count):
        return None
    return Machine(clean(table.cell(row, r"^Machine type")), parse_count(count), count)


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
    # Google names the GPU, not its board: a series sold only as HGX boards gets it from the one table.
    board = board_of("gcp", facts.series)
    gpu = identify_gpu(facts.gpu_text, form_factor=board.form_factor if board else None)
    claims = [
        gpu_model_claim(
            gpu, quote=facts.gpu_quote, source_url=NETWORK_URLS[0], context="Overview › GPU model"
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
    if board and gpu.form_factor_inferred:
        notes.append(board.note(facts.series))
    shares_frontend = facts.fabric == Fabric.ETHERNET  # the front end is the only network
    if with_network:
        claims += facts.claims
        shares_frontend = facts.fabric in FRONTEND_SHARED
        if facts.fabric in (Fabric.GPUDIRECT_TCPX, Fabric.GPUDIRECT_TCPXO):
            notes.append(TCPX_NOTE)
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
        fabric_shares_frontend=shares_frontend,
    )
