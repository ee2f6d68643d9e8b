"""DigitalOcean GPU Droplets: SkyPilot's v6 DigitalOcean catalog (the newest it has; LF lines).

GPU sizes are named "gpu-h100x8-640gb". GpuInfo is a Python repr with lower-case keys
('gpus', 'memoryinfo', 'sizeinmib'), its SizeInMiB one GPU's memory (81559 MiB on an H100), and its
totalgpumemoryinmib one GPU's again on the 8-GPU size (noted, not used). The name states no form
factor, so the H100 stays a family-level id and its GPU-to-GPU link stays missing.
"""

from __future__ import annotations

from scrapers.offer_lists.skypilot import CATALOGS
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v6/do/vms.csv"


class DigitalOcean(SkyPilotCatalog):
    name = "digitalocean"
    title = "DigitalOcean"
    catalog_url = VMS_URL
    stored_commit = "1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a"  # the copy in ../shared
