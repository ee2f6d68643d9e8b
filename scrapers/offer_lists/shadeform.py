"""Shadeform: SkyPilot's v8 Shadeform catalog (CRLF lines), an aggregator reselling other clouds.

Every instance type is "<cloud>_<GPU>[x<count>]" ("lambdalabs_H100-sxm5x8", "massedcompute_A6000-plusx2"):
the prefix is the upstream cloud (``upstream_provider``, mapped to this catalog's provider id where it
is one, see scrapers/resale.py); no upstream instance id is given. GpuInfo's MemoryInfo.SizeInMiB holds
one GPU's memory in GB (80 for an H100), and TotalGpuMemoryInMiB sits inside the Gpus entry. The
"-sxm4"/"-sxm5" in a name is the only place the form factor is written (inferred from the name).
The file looks stale in places (Paperspace V100, Lambda A100 at 1.99): it is what Shadeform published.
"""

from __future__ import annotations

from normalize.gpus import GpuMatch
from normalize.vocab import SellerKind
from records.offers import Claim, OfferIdentity
from scrapers.offer_lists.skypilot import CATALOGS, Row
from scrapers.offer_lists.skypilot_catalog import MemoryReading, SkyPilotCatalog
from scrapers.resale import upstream_provider

VMS_URL = CATALOGS + "v8/shadeform/vms.csv"


class Shadeform(SkyPilotCatalog):
    name = "shadeform"
    title = "Shadeform"
    catalog_url = VMS_URL
    stored_commit = "002363dac75913b446b2d3d564ae795678849dfd"  # the copy in ../shared
    memory_reading = MemoryReading.PER_GPU_GB
    seller_kind = SellerKind.AGGREGATOR

    def identity(self, name: str, row: Row) -> OfferIdentity:
        cloud, sep, _ = name.partition("_")
        return OfferIdentity(
            seller_kind=self.seller_kind, upstream_provider=upstream_provider(cloud) if sep else None
        )

    def extra(self, name: str, rows: list[Row], gpu: GpuMatch) -> tuple[list[Claim], list[str]]:
        """Say that the upstream machine is not named: Shadeform gives the cloud, never its type."""
        cloud, sep, _ = name.partition("_")
        if not sep:
            return [], ["Shadeform names no upstream cloud for this offer"]
        return [], [
            f"Shadeform names the upstream cloud ({cloud}) but not its instance type: "
            "upstream_instance_type is missing, and no upstream row's facts are carried"
        ]
