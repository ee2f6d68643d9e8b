"""CoreWeave: its NCCL job files, the index of its docs and its pricing page as transcribed, beside the
curated facts (scrapers/curated/coreweave.toml).

- CoreWeave's own NCCL job files (``coreweave/nccl-tests``, branch ``master``) name a node type in a
  nodeSelector (``node.coreweave.cloud/type: b300-8x``), the GPUs each worker asks for
  (``nvidia.com/gpu: 8``) and the fabric it runs over: InfiniBand ports ``ibp0:1 ... ibp7:1``, or, for
  the GB300 NVL72 job, "RoCE networking with the Spectrum-X NCCL plugin".
- A third-party copy of CoreWeave's docs index (``https://docs.coreweave.com/llms.txt``) lists one
  spec page per GPU instance ID with its title: "GB300 NVL72 Quantum-X InfiniBand" for ``gb300-4x``,
  "GB300 NVL72 Spectrum-X RoCE" for ``gb300-4x-e``, "B300 (InfiniBand)" for ``b300-8x``. One GPU, two
  fabric rows. (The RoCE job file targets ``gb300-4x``: that disagreement is kept as a conflict.)
- A third-party transcription of https://www.coreweave.com/pricing gives on-demand and spot prices per
  instance in USD. Trap: an earlier commit of the same path held a scaffold; a file without a
  ``generated:`` date and ``method: searched`` header is refused (no prices, a warning).

Every claim cites the document read (a copy cites itself, the page it copies as ``original_url``).
CoreWeave publishes no per-node fabric bandwidth in these sources: it stays missing.
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from fetch.http import ProviderFetcher, raise_for
from normalize.errors import LayoutError, ParseError
from normalize.gpus import family_of, identify_gpu
from normalize.vocab import Basis, Fabric, fabric_from_text
from records.documents import DocumentSet, copy_url
from records.offers import Claim, RawOffer
from records.prices import Price
from scrapers import curated_facts
from scrapers.base import Scraper
from scrapers.claims import fact, gpu_model_claim
from scrapers.prices.tables import usd_per_hour
from scrapers.revisions import cite_copy, merge_revisions

log = logging.getLogger(__name__)

JOBS_DIR = "https://raw.githubusercontent.com/coreweave/nccl-tests/master/mpi-operator/"
JOBS = tuple(
    JOBS_DIR + name
    for name in (
        "nccl-test-distributed-h100-64-mpijob.yaml",
        "nccl-test-distributed-b300-64-mpijob.yaml",
        "nccl-test-distributed-gb300-roce-nvl72-mpijob.yaml",
    )
)
COPIES_DIR = "reference/thirdparty-copies/raw.githubusercontent.com/api-evangelist/coreweave/main/"
INDEX = COPIES_DIR + "llms/coreweave-llms.txt"
PRICING = COPIES_DIR + "plans/coreweave-plans-pricing.yml"
INDEX_ORIGINAL = "https://docs.coreweave.com/llms.txt"
PRICING_ORIGINAL = "https://www.coreweave.com/pricing"
COPY_NOTE = "from a third-party copy of CoreWeave's {what} (api-evangelist/coreweave), cited as itself"

# The transcription names products, not instance IDs: each plan's ID, as the curated file joins them.
PLAN_IDS = {
    "NVIDIA GB200 NVL72 (on-demand, North America)": "gb200-4x",
    "NVIDIA HGX B200 (on-demand)": "b200-8x",
    "NVIDIA HGX H100 (on-demand)": "gd-8xh100ib-i128",
    "NVIDIA HGX H200 (on-demand)": "gd-8xh200ib-i128",
    "NVIDIA A100 (on-demand)": "gd-8xa100-i128",
    "NVIDIA L40S (on-demand)": "gd-8xl40s-i128",
    "NVIDIA L40 (on-demand)": "gd-8xl40-i128",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition (High Memory)": "rtxp6000-8x",
    "NVIDIA GH200": "gd-1xgh200",
    "NVIDIA GB300 NVL72 / HGX B300 (on-demand)": "b300-8x",  # only "HGX B300 Spot Price" is a price
}
PRICE_REGION = "North America"

_INDEX_ENTRY = re.compile(
    r"\[(?P<title>[^\]]+)\]\(https://docs\.coreweave\.com/platform/instances/gpu/(?P<id>[\w.-]+)\.md\)"
)
_NODE_TYPE = re.compile(r"key: node\.coreweave\.cloud/type\s+operator: In\s+values:\s+- (?P<id>[\w.-]+)")
_WORKER_GPUS = re.compile(r"nvidia\.com/gpu: (?P<count>\d+)")
_IB_PORTS = re.compile(r"UCX_NET_DEVICES=(?P<ports>ibp\d+:\d+(?:,ibp\d+:\d+)*)")
_ROCE = re.compile(r"# This variant uses RoCE networking with the Spectrum-X NCCL plugin\.")
_SPOT = re.compile(r"(?:HGX B300 )?Spot(?: Price:)? \$(?P<usd>[\d.]+)")


class CoreWeave(Scraper):
    name = "coreweave"
    title = "CoreWeave"
    url_prefixes = (JOBS_DIR,)
    copy_paths = (INDEX, PRICING)
    expected_layout: ClassVar[dict[str, str]] = {
        url: "an MPIJob YAML: nodeSelector node.coreweave.cloud/type, nvidia.com/gpu, UCX_NET_DEVICES"
        for url in JOBS
    }

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        copies = [fetcher.get_copy(path) for path in self.copy_paths]
        jobs = await fetcher.get_all(list(JOBS), required=False)
        if not any(doc.ok for doc in (*jobs, *copies)):
            raise_for(jobs[0])

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        """The docs index's instance IDs, then what each NCCL job file says of its node type."""
        index = documents.optional_text(copy_url(INDEX))
        listed = [] if index is None else parse_index(index)
        jobs = [parse_job(text, url) for url in JOBS if (text := documents.optional_text(url)) is not None]
        if not listed and not jobs:
            raise LayoutError("neither CoreWeave's docs index nor its NCCL job files were read")
        pricing = documents.optional_text(copy_url(PRICING))
        shapes = [] if pricing is None or not is_transcription(pricing) else pricing_shapes(pricing)
        # what a document states leads; the index's counts read from the IDs come last
        merged = merge_revisions([job for job in jobs if job is not None], shapes, listed)
        # the curated facts name the GPU of the types whose documents here do not (H100, H200, A100)
        types = {offer.instance_type for offer in merged}
        restated = [o for o in curated_facts.load(self.name) if o.instance_type in types]
        rows = curated_facts.merge(merged, restated)
        named = [o for o in rows if any(c.field == "gpu_model" for c in o.claims)]
        for offer in rows:
            if offer not in named:
                log.warning("Skipping coreweave row %s: no document names its GPU", offer.instance_type)
        return named

    def parse_prices(self, documents: DocumentSet) -> list[Price]:
        text = documents.optional_text(copy_url(PRICING))
        return [] if text is None else parse_pricing(text)


def parse_index(text: str) -> list[RawOffer]:
    """One row per GPU instance spec page in the docs index: the GPU its title names and the fabric,
    where the title says one ("Quantum-X InfiniBand", "Spectrum-X RoCE", "(InfiniBand)")."""
    url, offers = copy_url(INDEX), {}
    for match in _INDEX_ENTRY.finditer(text):
        instance, title, quote = match.group("id"), match.group("title"), match.group(0)
        claims = _index_claims(instance, title, quote, url)
        if claims and instance not in offers:
            offers[instance] = RawOffer("coreweave", instance, url, tuple(claims))
    if not offers:
        raise LayoutError(f"{INDEX}: no platform/instances/gpu/<id>.md entries")
    return cite_copy(list(offers.values()), INDEX_ORIGINAL, COPY_NOTE.format(what="docs index (llms.txt)"))


_ID_COUNT = re.compile(r"(?:^|-)(?P<n>\d+)x")


def _index_claims(instance: str, title: str, quote: str, url: str) -> list[Claim]:
    claims = []
    context = "docs index › platform/instances/gpu"
    if family_of(title) is not None:
        gpu = identify_gpu(title)
        if gpu.spec is not None:  # "H100 (InfiniBand)" names no form factor: the curated facts give it
            claims.append(gpu_model_claim(gpu, quote=quote, source_url=url, context=context))
    fabric = fabric_from_text(title)
    if fabric is not None:
        claims.append(fact("inter_node_fabric", fabric.value, quote=quote, source_url=url, context=context))
    if claims and (count := _ID_COUNT.search(instance)) and int(count.group("n")) > 0:
        why = f"read from the instance ID's '{count.group(0).strip('-')}' (CoreWeave's IDs count GPUs so)"
        claims.append(
            fact("gpu_count", int(count.group("n")), quote=quote, source_url=url, context=context,
                 basis=Basis.INFERRED, qualifiers=why)
        )  # fmt: skip
    return claims


def parse_job(text: str, url: str) -> RawOffer | None:
    """What one NCCL job file says of the node type it selects: GPUs per node, fabric, IB ports."""
    node = _NODE_TYPE.search(text)
    if node is None:
        log.warning("Skipping coreweave job %s: no node.coreweave.cloud/type selector", url)
        return None
    where = f"{url.removeprefix(JOBS_DIR)} › Worker"
    claims = []
    if (gpus := _WORKER_GPUS.search(text)) and int(gpus.group("count")) > 0:
        claims.append(
            fact("gpu_count", int(gpus.group("count")), quote=gpus.group(0), source_url=url, context=where)
        )
    if roce := _ROCE.search(text):
        claims.append(
            fact("inter_node_fabric", Fabric.ROCE.value, quote=roce.group(0), source_url=url, context=where)
        )
    elif ports := _IB_PORTS.search(text):
        count = len(ports.group("ports").split(","))
        quote = ports.group(0)
        claims += [
            fact("inter_node_fabric", Fabric.INFINIBAND.value, quote=quote, source_url=url, context=where),
            fact(
                "nic_count",
                count,
                quote=quote,
                source_url=url,
                context=where,
                basis=Basis.INFERRED,
                qualifiers=f"{count} InfiniBand devices the job uses, read as {count} NICs",
            ),
        ]
    notes = ("CoreWeave's NCCL job file states no per-node fabric bandwidth",)
    return RawOffer("coreweave", node.group("id"), url, tuple(claims), notes)


def is_transcription(text: str) -> bool:
    """Whether the pricing file is the transcription (a ``generated:`` date, ``method: searched``),
    not the scaffold an earlier commit of the same path held."""
    dated = re.search(r"(?m)^generated: '\d{4}-\d{2}-\d{2}'$", text) is not None
    return dated and re.search(r"(?m)^method: searched$", text) is not None


def _plans(text: str) -> list[tuple[str, str, str]]:
    """(instance ID, plan name, plan block) for each plan matched to an instance ID."""
    found = []
    for block in re.split(r"(?m)^- name: ", text)[1:]:
        name = block.split("\n", 1)[0].strip().strip("'")
        if name in PLAN_IDS:
            found.append((PLAN_IDS[name], name, block))
    return found


_QUOTA = re.compile(r"included_quota: (?P<quota>(?P<count>\d+) GPUs?, (?P<memory>\d+) GB VRAM)")


def pricing_shapes(text: str) -> list[RawOffer]:
    """GPUs per instance and memory per GPU as the transcription quotes them ("8 GPUs, 80 GB VRAM")."""
    url, offers = copy_url(PRICING), []
    for instance, name, block in _plans(text):
        quota = _QUOTA.search(block)
        if quota is None:
            continue
        where = f"plans › {name} › included_quota"
        claims = (
            fact(
                "gpu_count",
                int(quota.group("count")),
                quote=quota.group("quota"),
                source_url=url,
                context=where,
            ),
            fact(
                "gpu_memory_gb",
                int(quota.group("memory")),
                quote=quota.group("quota"),
                source_url=url,
                context=where,
                qualifiers="per GPU (the page's VRAM figure)",
            ),
        )
        offers.append(RawOffer("coreweave", instance, url, claims))
    return cite_copy(offers, PRICING_ORIGINAL, COPY_NOTE.format(what="pricing page"))


def parse_pricing(text: str) -> list[Price]:
    """On-demand and spot USD per hour per instance from the transcription; [] (a warning) for a
    scaffold."""
    if not is_transcription(text):
        log.warning("coreweave: %s has no generated date / method: searched (a scaffold): refused", PRICING)
        return []
    prices = []
    for instance, name, block in _plans(text):
        try:
            prices.append(_price(instance, name, block))
        except ParseError as exc:
            log.warning("Skipping coreweave price %s: %s", name, exc)
    return prices


def _price(instance: str, name: str, block: str) -> Price:
    text = re.search(r"(?m)^  price_text: (?P<text>.+)$", block)
    on_demand = None
    if text and text.group("text").startswith("$"):
        on_demand = usd_per_hour(text.group("text").removeprefix("$").replace(",", ""))
    spot = _SPOT.search(block)
    spot_usd = None if spot is None else usd_per_hour(spot.group("usd"))
    if on_demand is None and spot_usd is None:
        raise ParseError(f"no price ({text.group('text') if text else 'no price_text'})")
    quote = "- name: " + block.strip()
    notes = [COPY_NOTE.format(what="pricing page"), f"plan {name!r} matched to instance ID {instance}"]
    if PRICE_REGION not in name:
        notes.append("region not stated for the on-demand price; spot prices say '(NA)'")
    return Price(
        "coreweave", instance, PRICE_REGION, on_demand, spot_usd, copy_url(PRICING), quote[:2000],
        f"{PRICING_ORIGINAL} as transcribed › plans", "; ".join(notes),
    )  # fmt: skip
