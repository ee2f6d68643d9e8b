"""Prime Intellect: SkyPilot's v8 Prime Intellect catalog (CRLF lines), an aggregator of other clouds.

Instance types are "<cloud>__<n>x<GPU>_<GB>__<vCPUs>__<RAM>[__NVLINK]" with an UpstreamCloudId column
holding the upstream cloud's own name ("gpu_8x_h100_sxm5" at lambdalabs, "n3-H100-SXM5x8" at
hyperstack, Nebius presets, "8H100.80S.176V" at datacrunch): both become ``upstream_provider`` and
``upstream_instance_type``. A "__SPOT" line is the spot offer of the same instance type: its price
joins that type's prices (quoting the "__SPOT" line), it is not a row of its own. GpuInfo is JSON; its
MemoryInfo.SizeInMiB is all GPUs' memory together and TotalGpuMemoryInMiB that again times the count
(noted, not used). "__NVLINK" in a name is an ``nvlink`` link claim inferred from the name.
"""

from __future__ import annotations

import re

from normalize.gpus import GpuMatch
from normalize.vocab import Basis, Link, SellerKind
from records.offers import Claim, OfferIdentity
from scrapers.claims import fact
from scrapers.offer_lists.skypilot import CATALOGS, Row, file_label
from scrapers.offer_lists.skypilot_catalog import MemoryReading, SkyPilotCatalog, form_words
from scrapers.resale import upstream_provider

VMS_URL = CATALOGS + "v8/primeintellect/vms.csv"
SPOT = "__SPOT"


class PrimeIntellect(SkyPilotCatalog):
    name = "primeintellect"
    title = "Prime Intellect"
    catalog_url = VMS_URL
    stored_commit = "d9a304ea01e96cd4a043159c60d9326d8de4cf0f"  # the copy in ../shared
    memory_reading = MemoryReading.TOTAL_MIB
    seller_kind = SellerKind.AGGREGATOR
    name_columns = "InstanceType and UpstreamCloudId"

    def type_name(self, row: Row) -> str:
        return row.cell("InstanceType").removesuffix(SPOT)

    def name_hint(self, name: str, row: Row) -> str:
        """Form-factor words of the name and of the upstream cloud's name for it ('gpu_8x_h100_sxm5')."""
        return " ".join(w for w in (form_words(name), form_words(row.cell("UpstreamCloudId"))) if w)

    def identity(self, name: str, row: Row) -> OfferIdentity:
        cloud, sep, _ = name.partition("__")
        upstream_type = row.cell("UpstreamCloudId").removesuffix("_SPOT") or None
        provider = upstream_provider(cloud) if sep else None
        return OfferIdentity(
            seller_kind=self.seller_kind,
            upstream_provider=provider,
            upstream_instance_type=upstream_type if provider else None,
        )

    def extra(self, name: str, rows: list[Row], gpu: GpuMatch) -> tuple[list[Claim], list[str]]:
        notes = []
        if any(row.cell("InstanceType").endswith(SPOT) for row in rows):
            notes.append(f"also sold as spot under {name + SPOT!r}: its price is among this type's prices")
        if not re.search(r"__NVLINK(?:__|$)", name):
            return [], notes
        context = f"{file_label(VMS_URL)} › InstanceType {name!r} (link from the name)"
        link = fact(
            "intra_node_link",
            Link.NVLINK.value,
            quote=rows[0].line,
            source_url=VMS_URL,
            context=context,
            basis=Basis.INFERRED,
        )
        return [link], notes
