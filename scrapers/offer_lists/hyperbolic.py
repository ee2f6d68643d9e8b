"""Hyperbolic: SkyPilot's v8 Hyperbolic catalog (CRLF lines; one region, "default"; a StorageGiB column).

Three H100 shapes ("1x-H100-75-722": GPUs, vCPUs, RAM GiB). GpuInfo names the GPU
"NVIDIA-H100-80GB-HBM3" and gives one GPU's memory in MiB; no form factor is named, so the H100 is
family-level and the GPU-to-GPU link of the 2- and 3-GPU shapes stays missing.
"""

from __future__ import annotations

from scrapers.offer_lists.skypilot import CATALOGS
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v8/hyperbolic/vms.csv"


class Hyperbolic(SkyPilotCatalog):
    name = "hyperbolic"
    title = "Hyperbolic"
    catalog_url = VMS_URL
