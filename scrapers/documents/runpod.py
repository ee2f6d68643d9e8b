"""RunPod: Instant Clusters and the GPU types pods are sold in, from RunPod's docs repository.

The Instant Clusters overview states, per cluster GPU, the network speed and the node range
("2-8 nodes (16-64 GPUs)", hence 8 GPUs per node); its prose names the high-speed interfaces
``ens1``-``ens8`` that carry inter-node traffic, while ``eth0`` carries external traffic. The GPU
types reference lists every GPU ID with its memory; pods are sold per GPU type with a count
chosen at deploy time, and no network is stated for them. The Flash GPU types page restates the
memory of some GPU types (kept as a second claim, so a disagreement shows as a conflict), and the
cluster observability page names "InfiniBand / RoCE" metrics without saying which one a cluster
uses, so the cluster fabric stays unknown.

RunPod names no instance types. A cluster row is named with this catalog's slug for it
(scrapers/naming.py: "instant-cluster-b200-8gpu", from RunPod's GPU name and the GPUs per node its
table states); a pod row is the exact GPU ID.
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from fetch.http import ProviderFetcher
from normalize.errors import ParseError
from normalize.gpus import GpuMatch, family_of, identify_gpu
from normalize.units import parse_bandwidth, parse_count, parse_memory_gb
from normalize.vocab import Basis, Link, fabric_from_text
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from scrapers.base import Scraper
from scrapers.claims import bandwidth_claim, fact
from scrapers.markdown import body, markdown_tables, sentences
from scrapers.naming import cluster_slug, slug_note
from scrapers.tables import Table, clean, collect, find_table, find_tables

log = logging.getLogger(__name__)

DOCS = "https://raw.githubusercontent.com/runpod/docs/main/"
CLUSTERS_URL = DOCS + "instant-clusters.mdx"
GPU_TYPES_URL = DOCS + "references/gpu-types.mdx"
FLASH_GPU_TYPES_URL = DOCS + "flash/configuration/gpu-types.mdx"
OBSERVABILITY_URL = DOCS + "instant-clusters/cluster-observability.mdx"

_NODES = re.compile(
    r"^(?P<nodes_lo>\d+)(?:\s*-\s*(?P<nodes_hi>\d+))?\s+nodes?\s*"
    r"\(\s*(?P<gpus_lo>\d+)(?:\s*-\s*(?P<gpus_hi>\d+))?\s+GPUs?\s*\)$",
    re.IGNORECASE,
)
_INTERFACES = re.compile(r"`?ens(?P<first>\d+)`?\s*-\s*`?ens(?P<last>\d+)`?")
_MIG = re.compile(r"\s+MIG\s+(?P<profile>\d+g\.\d+gb)\s*$", re.IGNORECASE)

COUNT_NOTE = "pods are sold per GPU type; the GPU count is chosen at deploy time and not stated"
POD_NETWORK_NOTE = "no network is stated for pods: fabric and inter-node bandwidth are missing"
CLUSTER_MEMORY_NOTE = "the Instant Clusters page does not state GPU memory"


class RunPod(Scraper):
    name = "runpod"
    title = "RunPod"
    url_prefixes = (DOCS,)
    expected_layout: ClassVar[dict[str, str]] = {
        CLUSTERS_URL: "GPU | Network speed | Nodes",
        GPU_TYPES_URL: "GPU ID | Display Name | Memory (GB)",
        FLASH_GPU_TYPES_URL: "GpuType | GPU Model | VRAM | Architecture",
        OBSERVABILITY_URL: "Category | Metrics",
    }

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get_all([CLUSTERS_URL, GPU_TYPES_URL])
        await fetcher.get_all([FLASH_GPU_TYPES_URL, OBSERVABILITY_URL], required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        pods = parse_gpu_types(
            documents.text(GPU_TYPES_URL), flash_text=documents.optional_text(FLASH_GPU_TYPES_URL)
        )
        clusters = parse_instant_clusters(
            documents.text(CLUSTERS_URL),
            observability_text=documents.optional_text(OBSERVABILITY_URL),
            pods=pods,
        )
        return clusters + pods


def _stated(field: str, value: float | str, raw: str, url: str, context: str, qualifiers: str = "") -> Claim:
    """A stated claim quoting ``raw``, the exact text of one cell or sentence."""
    return fact(field, value, quote=raw, source_url=url, context=context, qualifiers=qualifiers)


# Instant Clusters


def _model_claim(gpu: GpuMatch, cell: str, context: str) -> Claim:
    """The cluster GPU: stated when the cell names the part; inferred when it names only the family
    ("B200") and the GPU table has one part of it (B200-SXM-180GB: form factor and memory unsaid)."""
    if (
        gpu.spec is None
        or clean(cell) == gpu.id
        or (gpu.spec.form_factor or "").lower() in clean(cell).lower()
    ):
        return _stated("gpu_model", gpu.id, cell, CLUSTERS_URL, context)
    return fact(
        "gpu_model",
        gpu.id,
        quote=cell,
        source_url=CLUSTERS_URL,
        context=context,
        basis=Basis.INFERRED,
        qualifiers=f"the page names only {clean(cell)!r}; {gpu.id} is the GPU table's one {gpu.family} part",
    )


def gpus_per_node(cell: str) -> int:
    """'2-8 nodes (16-64 GPUs)' → 8; ParseError unless both ends give the same whole number."""
    match = _NODES.match(clean(cell))
    if match is None:
        raise ParseError(f"nodes cell {cell!r} is not 'N-M nodes (X-Y GPUs)'")
    pairs = [(match.group("nodes_lo"), match.group("gpus_lo"))]
    if match.group("nodes_hi") and match.group("gpus_hi"):
        pairs.append((match.group("nodes_hi"), match.group("gpus_hi")))
    per_node = {parse_count(gpus) / parse_count(nodes) for nodes, gpus in pairs}
    if len(per_node) != 1 or not next(iter(per_node)).is_integer():
        raise ParseError(f"nodes cell {cell!r} gives no single whole number of GPUs per node")
    return int(per_node.pop())


def interfaces_sentence(text: str) -> tuple[int, str] | None:
    """(count, sentence) for the prose naming the inter-node interfaces ('ens1'-'ens8' → 8)."""
    for sentence in sentences(body(text)):
        match = _INTERFACES.search(sentence)
        if match and re.search(r"(?i)inter-node", sentence):
            try:
                count = parse_count(match.group("last")) - parse_count(match.group("first")) + 1
            except ParseError:
                continue
            if count > 0:
                return count, sentence
    return None


def fabric_note(observability_text: str | None) -> str:
    """Why the cluster fabric is unknown, quoting the observability page where it names fabrics."""
    tables = find_tables(markdown_tables(observability_text or ""), r"^Category$")
    for category in (table.cell(row, r"^Category$") for table in tables for row in table.rows):
        if fabric_from_text(category) is not None:
            return (
                f"fabric unknown: the cluster observability page lists {category!r} metrics "
                "but states no fabric for any cluster GPU type"
            )
    return "fabric unknown: no RunPod document states the Instant Cluster fabric"


def _form_factor_note(gpu: GpuMatch, cell: str, pods: list[RawOffer]) -> str | None:
    """For a family-level id: which RunPod GPU types it could be, since no document says."""
    if gpu.spec is not None:
        return None
    listed = [p.instance_type for p in pods if family_of(p.instance_type) == gpu.family]
    options = f" (RunPod lists {', '.join(listed)})" if listed else ""
    return (
        f"the cluster table names only {clean(cell)!r}{options}; no RunPod document says which part "
        "the clusters use, so the form factor and GPU-to-GPU link stay unknown"
    )


def parse_instant_clusters(
    text: str, *, observability_text: str | None = None, pods: list[RawOffer] | None = None
) -> list[RawOffer]:
    """One RawOffer per GPU of the Instant Clusters 'Supported hardware' table."""
    table = find_table(
        markdown_tables(text), r"^GPU$", r"^Network speed$", r"^Nodes$", where="(Instant Clusters hardware)"
    )
    interfaces = interfaces_sentence(text)
    notes = [fabric_note(observability_text), CLUSTER_MEMORY_NOTE]
    return collect(
        table.rows,
        lambda row: _cluster_offer(row, table, interfaces, notes, pods or []),
        provider="runpod",
        name=lambda row: clean(row[0]) if row else str(row),
        empty="no rows in the RunPod Instant Clusters hardware table",
    )


def _cluster_offer(
    row: tuple[str, ...],
    table: Table,
    interfaces: tuple[int, str] | None,
    notes: list[str],
    pods: list[RawOffer],
) -> RawOffer:
    gpu_raw = table.cell(row, r"^GPU$")
    speed_raw = table.cell(row, r"^Network speed$")
    nodes_raw = table.cell(row, r"^Nodes$")
    gpu = identify_gpu(clean(gpu_raw))
    count = gpus_per_node(nodes_raw)
    context = "Supported hardware"
    claims = [
        _model_claim(gpu, gpu_raw, f"{context} › GPU"),
        fact(
            "gpu_count",
            count,
            quote=nodes_raw,
            source_url=CLUSTERS_URL,
            context=f"{context} › Nodes",
            basis=Basis.INFERRED,
            qualifiers="per node, inferred: the GPU range over the node range (no GPUs per node stated)",
        ),
        bandwidth_claim(
            "inter_node_gbits_per_s",
            parse_bandwidth(clean(speed_raw)),
            quote=speed_raw,
            source_url=CLUSTERS_URL,
            context=f"{context} › Network speed",
            extra_qualifiers="per node, all high-speed interfaces together",
        ),
    ]
    slug = cluster_slug("instant-cluster", clean(gpu_raw), count)
    row_notes = [slug_note("RunPod", slug), *notes]
    if interfaces is None:
        row_notes.append("the number of high-speed interfaces is not stated")
    else:
        count_nics, sentence = interfaces
        qualifiers = "high-speed interfaces per node; stated for Instant Clusters in general"
        claims.append(_stated("nic_count", count_nics, sentence, CLUSTERS_URL, "How it works", qualifiers))
    form_note = _form_factor_note(gpu, gpu_raw, pods)
    if form_note:
        row_notes.append(form_note)
    return RawOffer(
        provider="runpod",
        instance_type=slug,
        source_url=CLUSTERS_URL,
        claims=tuple(claims),
        notes=tuple(row_notes),
    )


# GPU types (pods)


def flash_memory(flash_text: str | None) -> dict[str, tuple[str, str]]:
    """Flash 'GpuType' enum key → (enum cell, VRAM cell); empty when the page or table is absent."""
    found = {}
    for table in find_tables(markdown_tables(flash_text or ""), r"^GpuType$", r"^VRAM$"):
        for row in table.rows:
            enum = clean(table.cell(row, r"^GpuType$")).removeprefix("GpuType.")
            found[enum.upper()] = (table.cell(row, r"^GpuType$"), table.cell(row, r"^VRAM$"))
    return found


def enum_key(gpu_id: str) -> str:
    """The Flash enum name of a GPU ID: 'NVIDIA A100-SXM4-80GB' → 'NVIDIA_A100_SXM4_80GB'."""
    return re.sub(r"[^A-Z0-9]+", "_", gpu_id.upper()).strip("_")


def parse_gpu_types(text: str, *, flash_text: str | None = None) -> list[RawOffer]:
    """One RawOffer per GPU ID of the GPU types reference table (not the GPU pools table)."""
    table = find_table(
        markdown_tables(text), r"^GPU ID$", r"^Display Name$", r"^Memory", where="(GPU types reference)"
    )
    header, unit = table.header(r"^Memory"), table.header_unit(r"^Memory")
    flash = flash_memory(flash_text)
    return collect(
        table.rows,
        lambda row: _pod_offer(row, table, header, unit, flash),
        provider="runpod",
        name=lambda row: clean(row[0]) if row else str(row),
        empty="no rows in the RunPod GPU types table",
    )


def _identify(gpu_id: str, display: str, memory_gb: float) -> tuple[GpuMatch, list[str]]:
    """The GPU part from ID and display name together; a MIG slice is its parent GPU."""
    mig = _MIG.search(gpu_id)
    if mig is None:
        gpu = identify_gpu(f"{gpu_id} {display}", memory_gb=memory_gb)
        notes = []
        if gpu.spec is not None and abs(gpu.spec.memory_gb - memory_gb) >= 1:
            notes.append(
                f"stated {memory_gb:g} GB; the {gpu.id} datasheet figure is {gpu.spec.memory_gb:g} GB"
            )
        return gpu, notes
    parent = identify_gpu(gpu_id[: mig.start()])
    note = (
        f"MIG slice {mig.group('profile')} of one {parent.id}: a partition of one GPU, "
        f"identified as its parent; {memory_gb:g} GB is the slice's memory"
    )
    return GpuMatch(parent.id, parent.family, parent.spec, memory_mismatch=True), [note]


def _pod_offer(
    row: tuple[str, ...], table: Table, header: str, unit: str, flash: dict[str, tuple[str, str]]
) -> RawOffer:
    id_raw = table.cell(row, r"^GPU ID$")
    display_raw = table.cell(row, r"^Display Name$")
    memory_raw = table.cell(row, r"^Memory")
    gpu_id, display = clean(id_raw), clean(display_raw)
    if not gpu_id:
        raise ParseError("empty GPU ID")
    memory_gb = parse_memory_gb(f"{clean(memory_raw)} {unit}")
    gpu, notes = _identify(gpu_id, display, memory_gb)
    per = "per MIG slice" if gpu.memory_mismatch else "per GPU"
    claims: list[Claim] = [
        _stated(
            "gpu_model", gpu.id, id_raw, GPU_TYPES_URL, "GPU types › GPU ID", f"display name {display!r}"
        ),
        _stated("gpu_memory_gb", memory_gb, memory_raw, GPU_TYPES_URL, f"GPU types › {header}", per),
    ]
    if _MIG.search(gpu_id):  # a slice of one GPU has no GPU peer: no GPU-to-GPU link to infer
        claims.append(
            fact(
                "intra_node_link",
                Link.SINGLE_GPU.value,
                quote=id_raw,
                source_url=GPU_TYPES_URL,
                context="GPU types › GPU ID",
                basis=Basis.INFERRED,
                qualifiers="a MIG slice is a partition of one GPU: it has no GPU peer",
            )
        )
    flash_row = flash.get(enum_key(gpu_id))
    if flash_row is not None:
        try:
            flash_claim, flash_note = _flash_claim(flash_row, memory_gb)
        except ParseError as exc:  # the Flash page is a cross-check: the row stands without it
            log.warning("Ignoring runpod Flash VRAM of %s: %s", gpu_id, exc)
        else:
            claims.append(flash_claim)
            notes += flash_note
    return RawOffer(
        provider="runpod",
        instance_type=gpu_id,
        source_url=GPU_TYPES_URL,
        claims=tuple(claims),
        notes=(COUNT_NOTE, POD_NETWORK_NOTE, *notes),
    )


def _flash_claim(flash_row: tuple[str, str], memory_gb: float) -> tuple[Claim, list[str]]:
    enum_raw, vram_raw = flash_row
    vram_gb = parse_memory_gb(clean(vram_raw))
    context = f"Specific GPU types › VRAM ({clean(enum_raw)})"
    claim = _stated("gpu_memory_gb", vram_gb, vram_raw, FLASH_GPU_TYPES_URL, context, "per GPU")
    notes = []
    if abs(vram_gb - memory_gb) > 1e-6:
        notes.append(
            f"the Flash GPU types page states {clean(vram_raw)} for {clean(enum_raw)}; "
            f"the GPU types reference states {memory_gb:g} GB"
        )
    return claim, notes
