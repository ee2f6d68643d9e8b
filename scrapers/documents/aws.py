"""Amazon EC2: the accelerated-computing instance specifications page.

One page holds everything: the performance table names each instance's accelerators and their
memory, the network table its bandwidth, EFA support and network cards. The network figure is
per instance across all network cards, and EFA and ENA traffic share it. The page never states
GPU-to-GPU bandwidth, so that is inferred from the GPU (basis inferred).

Two more documents are read beside it. Offline, a third-party copy of a newer revision of the page
(``NEWER``, a local copy with HTML tables; it lists P6-B300 and G7e) is a second revision: cited as
the copy it is, merged per instance type with AWS's page, which leads, so that where the revisions
disagree the row carries both claims and is a conflict (``scrapers.revisions``); a live refresh
reads AWS's own current page instead. And Karpenter's generated bandwidth table
(``scrapers.documents.aws_karpenter``) cross-checks every network figure: its claim sits beside the page's,
and a disagreement is a conflict.
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from fetch.http import ProviderFetcher
from normalize.boards import board_of
from normalize.errors import ParseError
from normalize.gpus import identify_gpu
from normalize.units import parse_bandwidth, parse_count, parse_gpu_count, parse_memory_gb
from normalize.vocab import Fabric
from records.documents import DocumentSet, copy_url
from records.offers import CONTRADICTED, RawOffer
from records.prices import Price
from scrapers.base import Scraper
from scrapers.claims import bandwidth_claim, fact, gpu_model_claim
from scrapers.documents import aws_karpenter, aws_neuron, aws_peer
from scrapers.markdown import markdown_tables
from scrapers.prices import aws as aws_prices
from scrapers.prices.tables import fetches_also
from scrapers.revisions import cite_copy, merge_revisions
from scrapers.tables import Table, clean, collect, find_table, html_tables

log = logging.getLogger(__name__)

AC_URL = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
# The newer revision's copy: awsdocs-style markdown with HTML tables, from a public repository whose
# name is unknown; it copies the HTML page.
NEWER = "reference/aws/instancetypes-md-mirror/ac.html-tables.md"
NEWER_ORIGINAL = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html"
NEWER_NOTE = (
    "from a third-party copy of a newer revision of AWS's page (repository unidentified), cited as "
    "itself; a live refresh of AWS's own page supersedes it"
)

_INSTANCE = re.compile(r"^`?(?P<name>[a-z][a-z0-9-]*\.[a-z0-9]+)`?(?:\s+\d+)?$")
_ACCELERATORS = re.compile(r"^(?P<count>\d+(?:\.\d+)?)\s*x\s+(?P<name>.+)$")
_PER_GPU_MEMORY = re.compile(r"\(\s*\d+(?:\.\d+)?\s*x\s*(?P<each>[\d.,]+\s*[GMT]i?B)\s*\)")
_YES = re.compile(r"\bYes\b")


class Aws(Scraper):
    name = "aws"
    title = "Amazon Web Services"
    url_prefixes = (
        "https://docs.aws.amazon.com/ec2/latest/instancetypes/",
        aws_karpenter.REPOSITORY,
        aws_neuron.DOCS,
        aws_prices.URL_PREFIX,
    )
    copy_paths = (NEWER, *aws_peer.COPIES)
    expected_layout: ClassVar[dict[str, str]] = {
        AC_URL: "markdown tables headed Instance type | ... | Accelerators | Accelerator memory, and "
        "Instance type | Baseline / Burst bandwidth (Gbps) | EFA | ... | Network cards; "
        "'| **Family** |' group rows",
        aws_karpenter.BANDWIDTH_URL: "a Go map InstanceTypeBandwidthMegabits of '\"<type>\": <Mb/s>,' lines",
        aws_prices.PRICES_URL: aws_prices.LAYOUT,
    }

    @fetches_also(aws_prices.PRICES_URL)
    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(AC_URL)
        fetcher.get_copy(NEWER)
        await fetcher.get_all(list(aws_neuron.URLS), required=False)
        for path in aws_peer.COPIES:
            fetcher.get_copy(path)
        await fetcher.get(aws_karpenter.BANDWIDTH_URL, required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        """AWS's page, leading; the newer revision's copy when it was read; Karpenter's figures beside."""
        offers = parse_instance_types(documents.text(AC_URL), AC_URL)
        newer = documents.optional_text(copy_url(NEWER))
        if newer is not None:
            offers = merge_revisions(offers, parse_newer_revision(newer))
        offers = aws_neuron.add_to(offers, aws_neuron.neuron_offers(documents))  # Trainium: AWS's Neuron docs
        offers = aws_peer.with_peer_figures(offers, documents)
        karpenter = documents.optional_text(aws_karpenter.BANDWIDTH_URL)
        if karpenter is None:
            return offers
        return aws_karpenter.cross_check(offers, aws_karpenter.parse_bandwidths(karpenter))

    def parse_prices(self, documents: DocumentSet) -> list[Price]:
        return aws_prices.prices_in(documents)


def parse_newer_revision(text: str) -> list[RawOffer]:
    """The newer revision's HTML tables, cited as the third-party copy of AWS's page they are."""
    offers = parse_tables(html_tables(text), copy_url(NEWER))
    return cite_copy(offers, NEWER_ORIGINAL, NEWER_NOTE)


def _instance_rows(table: Table) -> list[tuple[str, str, tuple[str, ...]]]:
    """(family, instance type, row) for each instance row; group rows (markdown "| **P5** |", HTML
    '<td colspan="8">P5</td>': a first cell that names no instance, nothing after it) set the family."""
    family = ""
    rows = []
    for row in table.rows:
        first = row[0] if row else ""
        if not any(cell.strip() for cell in row[1:]) and _INSTANCE.match(clean(first)) is None:
            family = clean(first)
            continue
        match = _INSTANCE.match(clean(first))
        if match is None:
            log.warning("Skipping aws row: no instance type in first cell: %s", row)
            continue
        rows.append((family, match.group("name"), row))
    return rows


def parse_instance_types(text: str, url: str) -> list[RawOffer]:
    """One RawOffer per GPU instance type on the accelerated-computing specifications page."""
    return parse_tables(markdown_tables(text), url)


def parse_tables(tables: list[Table], url: str) -> list[RawOffer]:
    """One RawOffer per GPU instance type of the page's performance and network tables."""
    performance = find_table(
        tables,
        r"^Instance type$",
        r"^Accelerators$",
        r"^Accelerator memory",
        where="(performance specifications)",
    )
    network = find_table(tables, r"^Instance type$", r"bandwidth", r"^EFA$", where="(network specifications)")
    bandwidth_unit = network.header_unit(r"bandwidth")
    network_rows: dict[str, list[tuple[str, ...]]] = {}
    for _, name, row in _instance_rows(network):  # a type listed twice keeps both rows: a conflict
        network_rows.setdefault(name, []).append(row)

    def build(item: tuple[str, str, tuple[str, ...]]) -> RawOffer | None:
        family, name, row = item
        if not re.search(r"\bGPU\b|\bTrainium", clean(performance.cell(row, r"^Accelerators$"))):
            return None  # not a GPU (or Trainium) instance
        return _offer(
            family, name, row, performance, network_rows.get(name, []), network, bandwidth_unit, url
        )

    return collect(
        _instance_rows(performance),
        build,
        provider="aws",
        name=lambda item: item[1],
        empty="no GPU instance rows on the AWS accelerated-computing page",
    )


#: A stated memory under this share of one GPU's datasheet memory is a slice of that GPU.
SLICE_SHARE = 0.5


def _offer(
    family: str,
    name: str,
    row: tuple[str, ...],
    performance: Table,
    network_rows: list[tuple[str, ...]],
    network: Table,
    bandwidth_unit: str,
    url: str,
) -> RawOffer:
    accel_raw = performance.cell(row, r"^Accelerators$")
    memory_raw = performance.cell(row, r"^Accelerator memory")
    match = _ACCELERATORS.match(clean(accel_raw))
    if match is None:
        raise ParseError(f"accelerators cell {accel_raw!r} is not 'N x NAME'")
    count = float(parse_gpu_count(match.group("count")))
    per_gpu = _PER_GPU_MEMORY.search(memory_raw)
    if per_gpu:
        memory_gb = parse_memory_gb(per_gpu.group("each"))
    elif count < 1:  # "0.125 x NVIDIA L4 GPU" with "2.79 GiB": the slice's memory, not a GPU's
        memory_gb = parse_memory_gb(memory_raw)
    else:
        memory_gb = parse_memory_gb(memory_raw) / count
    board = board_of("aws", family)
    hint = board.form_factor if board else None
    gpu = identify_gpu(f"{family} {match.group('name')}", memory_gb=memory_gb, form_factor=hint)
    perf_context = "Performance specifications"
    # "1 x NVIDIA L4 GPU" with "2 GiB": a whole GPU's count its own memory cell contradicts (a slice).
    sliced = count >= 1 and gpu.spec is not None and memory_gb < SLICE_SHARE * gpu.spec.memory_gb
    contradicted = f"{CONTRADICTED}{memory_raw} is a slice of one {gpu.id}; " if sliced else ""
    claims = [
        gpu_model_claim(gpu, quote=accel_raw, source_url=url, context=f"{perf_context} › Accelerators"),
        fact(
            "gpu_count",
            count,
            quote=accel_raw,
            source_url=url,
            context=f"{perf_context} › Accelerators",
            qualifiers=contradicted.rstrip("; "),
        ),
        fact(
            "gpu_memory_gb",
            memory_gb,
            quote=memory_raw,
            source_url=url,
            context=f"{perf_context} › Accelerator memory",
            qualifiers=contradicted + ("per GPU" if count >= 1 else "of the GPU slice"),
        ),
    ]
    notes = [board.note(family)] if board and gpu.form_factor_inferred else []
    if sliced:
        notes.append(
            f"{accel_raw!r} beside {memory_raw!r} is a slice of one {gpu.id}: the whole count is kept as a "
            "claim its own page contradicts, and a revision that states the fraction leads"
        )
    elif gpu.memory_mismatch:
        why = "" if gpu.family.startswith("TRAINIUM") else ": likely a GPU partition; count kept as stated"
        notes.append(f"stated {memory_gb:g} GB per GPU does not match the {gpu.id}{why}")
    if not network_rows:
        notes.append("no row in the network specifications table")
    for network_row in network_rows:
        claims += _network_claims(network_row, network, bandwidth_unit, url)
    return RawOffer(
        provider="aws",
        instance_type=name,
        source_url=url,
        claims=tuple(claims),
        notes=tuple(notes),
        fabric_shares_frontend=bool(network_rows),
    )


def _network_claims(row: tuple[str, ...], network: Table, unit: str, url: str) -> list:
    bandwidth_raw = network.cell(row, r"bandwidth")
    efa_raw = network.cell(row, r"^EFA$")
    cards_raw = network.cell(row, r"^Network cards$")
    bandwidth = parse_bandwidth(clean(bandwidth_raw), default_unit=unit)
    fabric = Fabric.EFA if _YES.search(efa_raw) else Fabric.ETHERNET
    context = "Network specifications"
    header = network.header(r"bandwidth")
    claims = [
        fact(
            "inter_node_fabric",
            fabric.value,
            quote=efa_raw,
            source_url=url,
            context=f"{context} › EFA",
            qualifiers="EFA supported" if fabric == Fabric.EFA else "ENA only",
        ),
        bandwidth_claim(
            "inter_node_gbits_per_s",
            bandwidth,
            quote=bandwidth_raw,
            source_url=url,
            context=f"{context} › {header}",
            extra_qualifiers="per instance, all network cards",
        ),
        bandwidth_claim(
            "frontend_gbits_per_s",
            bandwidth,
            quote=bandwidth_raw,
            source_url=url,
            context=f"{context} › {header}",
            extra_qualifiers="shared by ENA and EFA traffic",
        ),
    ]
    if re.fullmatch(r"[0-9]+", clean(cards_raw)):
        claims.append(
            fact(
                "nic_count",
                parse_count(clean(cards_raw)),
                quote=cards_raw,
                source_url=url,
                context=f"{context} › Network cards",
            )
        )
    return claims
