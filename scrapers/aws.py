"""Amazon EC2: the accelerated-computing instance specifications page.

One page holds everything: the performance table names each instance's accelerators and their
memory, the network table its bandwidth, EFA support and network cards. The network figure is
per instance across all network cards, and EFA and ENA traffic share it. The page never states
GPU-to-GPU bandwidth, so that is inferred from the GPU (basis inferred).
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from normalize.errors import ParseError
from normalize.gpus import identify_gpu
from normalize.units import parse_bandwidth, parse_count, parse_gpu_count, parse_memory_gb
from normalize.vocab import Fabric
from records.documents import DocumentSet
from records.offers import RawOffer
from scrapers.base import Scraper
from scrapers.claims import bandwidth_claim, fact
from scrapers.http import ProviderFetcher
from scrapers.markdown import Table, clean, find_table, markdown_tables

log = logging.getLogger(__name__)

AC_URL = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"

_INSTANCE = re.compile(r"^`?(?P<name>[a-z][a-z0-9-]*\.[a-z0-9]+)`?(?:\s+\d+)?$")
_ACCELERATORS = re.compile(r"^(?P<count>\d+(?:\.\d+)?)\s*x\s+(?P<name>.+)$")
_PER_GPU_MEMORY = re.compile(r"\(\s*\d+(?:\.\d+)?\s*x\s*(?P<each>[\d.,]+\s*[GMT]i?B)\s*\)")
_HEADER_UNIT = re.compile(r"\((?P<unit>[KMGT]bps|[KMGT]b/s)\)")
_YES = re.compile(r"\bYes\b")

# The instance-type page names the GPU but not its board. The P families are NVIDIA HGX servers
# with SXM modules on NVLink/NVSwitch (their EC2 product pages); the form factor, and every
# figure that follows from it, is therefore inferred, and each row says so in its notes.
FORM_FACTOR_BY_FAMILY = {
    "p3": "SXM2",
    "p3dn": "SXM2",
    "p4d": "SXM",
    "p4de": "SXM",
    "p5": "SXM",
    "p5e": "SXM",
    "p5en": "SXM",
    "p6-b200": "SXM",
}


class Aws(Scraper):
    name = "aws"
    title = "Amazon Web Services"
    url_prefixes = ("https://docs.aws.amazon.com/ec2/latest/instancetypes/",)
    expected_layout: ClassVar[dict[str, str]] = {
        AC_URL: "markdown tables headed Instance type | ... | Accelerators | Accelerator memory, and "
        "Instance type | Baseline / Burst bandwidth (Gbps) | EFA | ... | Network cards; "
        "'| **Family** |' group rows",
    }

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(AC_URL)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return parse_instance_types(documents.text(AC_URL), AC_URL)


def _instance_rows(table: Table) -> list[tuple[str, str, tuple[str, ...]]]:
    """(family, instance type, row) for each instance row; group rows ("| **P5** |") set the family."""
    family = ""
    rows = []
    for row in table.rows:
        first = row[0] if row else ""
        if first.startswith("**") and not any(cell.strip() for cell in row[1:]):
            family = clean(first)
            continue
        match = _INSTANCE.match(clean(first))
        if match is None:
            log.warning("Skipping aws row: no instance type in first cell: %s", row)
            continue
        rows.append((family, match.group("name"), row))
    return rows


def _header_unit(table: Table, pattern: str) -> str:
    header = table.clean_headers[table.column(pattern)]
    match = _HEADER_UNIT.search(header)
    if match is None:
        raise ParseError(f"no rate unit in header {header!r}")
    return match.group("unit")


def parse_instance_types(text: str, url: str) -> list[RawOffer]:
    """One RawOffer per GPU instance type on the accelerated-computing specifications page."""
    tables = markdown_tables(text)
    performance = find_table(
        tables,
        r"^Instance type$",
        r"^Accelerators$",
        r"^Accelerator memory",
        where="(performance specifications)",
    )
    network = find_table(tables, r"^Instance type$", r"bandwidth", r"^EFA$", where="(network specifications)")
    bandwidth_unit = _header_unit(network, r"bandwidth")
    network_rows: dict[str, list[tuple[str, ...]]] = {}
    for _, name, row in _instance_rows(network):  # a type listed twice keeps both rows: a conflict
        network_rows.setdefault(name, []).append(row)
    offers = []
    for family, name, row in _instance_rows(performance):
        accelerators = clean(performance.cell(row, r"^Accelerators$"))
        if not re.search(r"\bGPU\b", accelerators):
            log.debug("aws %s: not a GPU instance (%s)", name, accelerators)
            continue
        try:
            offers.append(
                _offer(
                    family, name, row, performance, network_rows.get(name, []), network, bandwidth_unit, url
                )
            )
        except ParseError as exc:
            log.warning("Skipping aws row %s: %s", name, exc)
    if not offers:
        raise ParseError("no GPU instance rows on the AWS accelerated-computing page")
    return offers


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
    hint = FORM_FACTOR_BY_FAMILY.get(family.lower())
    gpu = identify_gpu(f"{family} {match.group('name')}", memory_gb=memory_gb, form_factor=hint)
    perf_context = "Performance specifications"
    claims = [
        fact("gpu_model", gpu.id, quote=accel_raw, source_url=url, context=f"{perf_context} › Accelerators"),
        fact("gpu_count", count, quote=accel_raw, source_url=url, context=f"{perf_context} › Accelerators"),
        fact(
            "gpu_memory_gb",
            memory_gb,
            quote=memory_raw,
            source_url=url,
            context=f"{perf_context} › Accelerator memory",
            qualifiers="per GPU" if count >= 1 else "of the GPU slice",
        ),
    ]
    notes = []
    if hint and gpu.spec is not None:
        notes.append(f"form factor {hint} inferred from the {family} family (HGX board)")
    if gpu.memory_mismatch:
        notes.append(
            f"stated {memory_gb:g} GB per GPU does not match the {gpu.id}: "
            "likely a GPU partition; count kept as stated"
        )
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
    header = network.clean_headers[network.column(r"bandwidth")]
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
