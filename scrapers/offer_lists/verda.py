"""Verda (formerly DataCrunch): SkyPilot's v8 Verda catalog (CRLF lines).

Instance types are named "8B200.240V", "1H200.141S.44V" (GPUs, GPU, vCPUs). GpuInfo is real JSON, its
quotes doubled inside the CSV cell, not a Python repr. Some lines have an empty Price (only a spot
price, e.g. 8B200.240V) or an empty SpotPrice: an empty cell is no price, never zero. The UpstreamCloudId
column repeats the instance type: Verda is the cloud itself.
"""

from __future__ import annotations

from scrapers.offer_lists.skypilot import CATALOGS
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v8/verda/vms.csv"


class Verda(SkyPilotCatalog):
    name = "verda"
    title = "Verda (ex-DataCrunch)"
    catalog_url = VMS_URL
    stored_commit = "000c1d0bf24621f4ac37cfa585f0897c1aa1d9cf"  # the copy in ../shared
