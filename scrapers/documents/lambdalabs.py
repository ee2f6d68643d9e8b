"""Lambda: SkyPilot's v8 catalog of Lambda instance types, and Lambda's docs in its own GitHub organisation.

The catalog (``v8/lambda/vms.csv``, CRLF, one line per type and region) gives Lambda's own names
(``gpu_8x_h100_sxm5``, ``gpu_1x_gh200``, ``gpu_8x_b200_sxm6``), GPU counts as floats ("8.0") and
prices. Its GpuInfo MemoryInfo.SizeInMiB is one GPU's memory while TotalGpuMemoryInMiB repeats that
figure whatever the count (noted, not used). The name's suffix (``_sxm5``, ``_pcie``) is the only
place the form factor is written, so a model read from it is inferred from the name.

``LambdaLabs/lambda-docs`` is Lambda's documentation in Lambda's own GitHub organisation (October 2024;
byte-identical to the employee's MkDocs proof of concept ``cbrownstein-lambda/lambda-docs-mkdocs`` the
rows cited before): the official copy is cited. It is older than Lambda's live docs (no B200/GB200
1-Click Clusters).
Its 1-Click Clusters page gives the cluster fabric (a row under a slug, since Lambda names no instance
type for a cluster node) and its instance-type table tells SXM from PCIe for shapes whose name does
not; a shape is matched on GPU, count, memory and vCPUs, and only when exactly one table row fits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import ClassVar

from fetch.http import ProviderFetcher
from normalize.errors import ParseError
from normalize.gpus import BY_ID, family_of, identify_gpu, memory_fits
from normalize.units import find_bandwidths, find_memory_gb, parse_bandwidth, parse_count, to_number
from normalize.vocab import Basis, Fabric
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from scrapers.claims import bandwidth_claim, fact
from scrapers.markdown import body, sentences, split_row
from scrapers.naming import cluster_slug, slug_note
from scrapers.offer_lists.skypilot import CATALOGS, CSV_LAYOUT, Row
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v8/lambda/vms.csv"
DOCS = "https://raw.githubusercontent.com/LambdaLabs/lambda-docs/main/docs/public-cloud/"
CLUSTERS_URL = DOCS + "1-click-clusters/index.md"
ON_DEMAND_URL = DOCS + "on-demand/index.md"
POC = "Lambda's docs (LambdaLabs/lambda-docs, Lambda's own repository, Oct 2024)"
REGION_NOTE = (
    "Lambda's 2023 network page states bandwidth between instances per region ('up to 200 Gbps' in "
    "us-west-3 and us-south-1), not per instance type: not taken as this row's fabric"
)


@dataclass(frozen=True)
class Shape:
    """One row of the proof of concept's instance-type table, with the GPU of its group."""

    gpu: str
    count: int
    vram_gb: float
    vcpus: int
    quote: str  # the table lines from the group's first row to this one, verbatim


def on_demand_shapes(text: str) -> list[Shape]:
    """The 'As of October 2024' instance-type table: an empty GPU cell continues the group above."""
    lines = text.splitlines(keepends=True)
    shapes, group, group_start = [], "", 0
    header = next((i for i, line in enumerate(lines) if "Number of GPUs" in line and "vCPU" in line), None)
    if header is None:
        return []
    for i in range(header + 2, len(lines)):
        if not lines[i].lstrip().startswith("|"):
            break
        cells = split_row(lines[i])
        if len(cells) < 4:
            continue
        if cells[0]:
            group, group_start = cells[0], i
        try:
            vram = find_memory_gb(cells[2])
            shape = Shape(group, parse_count(cells[1]), vram[0], parse_count(cells[3]), "")
        except (ParseError, IndexError):
            continue
        shapes.append(replace(shape, quote="".join(lines[group_start : i + 1]).rstrip("\n")))
    return shapes


class LambdaCloud(SkyPilotCatalog):
    name = "lambda"
    title = "Lambda"
    catalog_url = VMS_URL
    stored_commit = "0f4070387edc953d7004cff197940e1918a1d6aa"  # the copy in ../shared
    url_prefixes = (VMS_URL, DOCS)
    row_notes = (REGION_NOTE,)
    expected_layout: ClassVar[dict[str, str]] = {
        VMS_URL: CSV_LAYOUT,
        ON_DEMAND_URL: "GPU | Number of GPUs | VRAM | vCPU cores | RAM | Root volume size",
    }

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(VMS_URL)
        await fetcher.get_all([CLUSTERS_URL, ON_DEMAND_URL], required=False)

    def __init__(self) -> None:
        super().__init__()
        self._shapes: list[Shape] = []

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        shapes = on_demand_shapes(documents.optional_text(ON_DEMAND_URL) or "")
        if shapes != self._shapes:
            self._shapes, self._parsed = shapes, None  # the offers depend on the table too
        offers = super().parse(documents)
        clusters = documents.optional_text(CLUSTERS_URL)
        return offers + ([one_click_cluster(clusters)] if clusters else [])

    def offer(self, name: str, rows: list[Row]) -> RawOffer:
        """The catalog's row, with the form factor the docs table gives a shape whose name has none."""
        try:
            vcpus = int(to_number(rows[0].cell("vCPUs")))
        except ParseError:
            vcpus = None
        return _with_table_form_factor(super().offer(name, rows), self._shapes, vcpus)


def _with_table_form_factor(offer: RawOffer, shapes: list[Shape], vcpus: int | None) -> RawOffer:
    """The offer with its GPU's form factor from the docs table, when the catalog leaves it out and
    exactly one table row has the offer's GPU, count, memory and vCPUs."""
    claims = {c.field: c for c in offer.claims}
    model, count, memory = claims["gpu_model"], claims.get("gpu_count"), claims.get("gpu_memory_gb")
    if model.value in BY_ID or count is None or memory is None or vcpus is None:
        return offer
    family = family_of(str(model.value))
    fits = [
        s
        for s in shapes
        if family_of(s.gpu) == family
        and s.count == count.value
        and s.vcpus == vcpus
        and memory_fits(float(memory.value), s.vram_gb)
    ]
    if len(fits) != 1:
        return offer
    shape = fits[0]
    gpu = identify_gpu(shape.gpu, memory_gb=float(memory.value))
    if gpu.spec is None:
        return offer
    stated = fact(
        "gpu_model",
        gpu.id,
        quote=shape.quote,
        source_url=ON_DEMAND_URL,
        context=f"{POC} › Instance types table › GPU {shape.gpu!r}",
        basis=Basis.INFERRED,
        qualifiers=f"matched on {shape.count} GPUs, {shape.vram_gb:g} GB, {shape.vcpus} vCPUs",
    )
    note = (
        f"form factor from {POC}: its only {shape.gpu} row with {shape.count} GPUs, {shape.vram_gb:g} GB "
        f"and {shape.vcpus} vCPUs (the catalog says {model.value})"
    )
    rest = tuple(c for c in offer.claims if c.field != "gpu_model")
    return replace(offer, claims=(stated, *rest), notes=(*offer.notes, note))


_GPUS = re.compile(r"NVIDIA (?P<gpu>[\w -]+?) Tensor Core GPUs")
_ETHERNET = re.compile(r"connected via (?P<bandwidth>\S+) Ethernet for IP communication")


def _sentence(text: str, pattern: re.Pattern[str] | str) -> tuple[str, re.Match[str]]:
    """The first sentence of the page matching ``pattern``, and the match."""
    for sentence in sentences(body(text)):
        if match := re.search(pattern, sentence):
            return sentence, match
    raise ParseError(f"1-Click Clusters page: no sentence matching {str(pattern)!r}")


def _rdma(sentence: str, context: str) -> list[Claim]:
    """The 'up to' GPUDirect RDMA figure of the fabric sentence, as the node's fabric bandwidth."""
    rdma = [figure for figure in find_bandwidths(sentence) if figure.up_to]
    if len(rdma) != 1:
        return []
    qualifiers = "GPUDirect RDMA, peer to peer; per node (the page does not say per what)"
    claim = bandwidth_claim(
        "inter_node_gbits_per_s",
        rdma[0],
        quote=sentence,
        source_url=CLUSTERS_URL,
        context=context,
        extra_qualifiers=qualifiers,
    )
    return [claim]


def one_click_cluster(text: str) -> RawOffer:
    """The 1-Click Cluster compute node the proof of concept describes: GPU, fabric and front-end."""
    context = f"{POC} › 1-Click Clusters › Introduction"
    gpus, gpu_match = _sentence(text, _GPUS)
    gpu = identify_gpu(gpu_match.group("gpu"))
    fabric, _ = _sentence(text, r"InfiniBand.*\bup to\b")
    ethernet, ethernet_match = _sentence(text, _ETHERNET)
    claims: list[Claim] = [
        fact("gpu_model", gpu.id, quote=gpus, source_url=CLUSTERS_URL, context=context),
        fact(
            "inter_node_fabric",
            Fabric.INFINIBAND.value,
            quote=fabric,
            source_url=CLUSTERS_URL,
            context=context,
        ),
        bandwidth_claim(
            "frontend_gbits_per_s",
            parse_bandwidth(ethernet_match.group("bandwidth")),
            quote=ethernet,
            source_url=CLUSTERS_URL,
            context=context,
            extra_qualifiers="per node, for IP communication",
        ),
    ]
    claims += _rdma(fabric, context)
    slug = cluster_slug("1-click-cluster", gpu_match.group("gpu"))
    notes = (
        slug_note("Lambda", slug),
        "GPUs per node not stated (clusters of 16 to 512 GPUs)",
        f"from {POC}, not Lambda's live documentation",
    )
    return RawOffer("lambda", slug, CLUSTERS_URL, tuple(claims), notes)
