"""Vast.ai: SkyPilot's v8 Vast.ai catalog (CRLF lines, UTF-8 region names).

Vast.ai is a marketplace: hosts list machines and Vast.ai sells them, naming no upstream cloud. An
"instance type" here is SkyPilot's name for an offer shape, "<GPUs>x-<GPU>-<vCPUs>-<RAM MiB>"
("8x-H100_SXM-32-65536"), and its vCPUs and MemoryGiB (32 and 64 on every line) are the size SkyPilot
requests, not the host's. The GPU part of the name is the only place the form factor or variant is
written ("H100_SXM", "H100_NVL", "A100_PCIE", "RTX_4070S_Ti"), so a model it decides is inferred from
the name. GpuInfo's MemoryInfo.SizeInMiB is all GPUs' memory together; a SpotPrice of 0.00 is no spot
price. Regions are "State, CC, continent", sometimes with the state left empty (", US, NA").
"""

from __future__ import annotations

import re

from normalize.vocab import SellerKind
from scrapers.offer_lists.skypilot import CATALOGS, Row
from scrapers.offer_lists.skypilot_catalog import MemoryReading, SkyPilotCatalog, form_words

VMS_URL = CATALOGS + "v8/vast/vms.csv"
_SHAPE = re.compile(r"^\d+x-(?P<gpu>.+)-\d+-\d+$")
REQUEST_SIZE_NOTE = (
    "a Vast.ai marketplace offer: the instance type is SkyPilot's name for an offer shape "
    "(<GPUs>x-<GPU>-<vCPUs>-<RAM MiB>) and its vCPUs and MemoryGiB are the request size, not the host's"
)


class Vast(SkyPilotCatalog):
    name = "vast"
    title = "Vast.ai"
    catalog_url = VMS_URL
    stored_commit = "01b8cdda287814b30ff0acb49746cca19fbd4355"  # the copy in ../shared
    memory_reading = MemoryReading.TOTAL_MIB
    seller_kind = SellerKind.MARKETPLACE
    row_notes = (REQUEST_SIZE_NOTE,)

    def name_hint(self, name: str, row: Row) -> str:
        """The GPU part of the shape name ('RTX_4070S_Ti' → 'RTX 4070S Ti')."""
        match = _SHAPE.match(name)
        return match.group("gpu").replace("_", " ") if match else form_words(name)
