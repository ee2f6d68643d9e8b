"""Paperspace: SkyPilot's v6 Paperspace catalog (the newest it has; LF lines; Price is the last column).

GpuInfo is a bare GPU name ("H100", "A100-80GB"), not a structure: it states no GPU memory, so the
memory is in the row only as far as the GPU's name says it (in ``gpu_model``). Machine names are
Paperspace's ("H100x8", "A100-80Gx8", "GPU+"); the CPU-only C5-C9 machines are not rows.
"""

from __future__ import annotations

from scrapers.offer_lists.skypilot import CATALOGS
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v6/paperspace/vms.csv"


class Paperspace(SkyPilotCatalog):
    name = "paperspace"
    title = "Paperspace"
    catalog_url = VMS_URL
    stored_commit = "e520054145d1bce6748bcf18c9a25ddd6ea9a348"  # the copy in ../shared
