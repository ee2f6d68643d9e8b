"""Mithril (formerly Foundry): SkyPilot's v8 Mithril catalog (CRLF lines; GpuInfo is the last column).

Instance types are named "h100-80gb.sxm.8x" and "ccs-h200.sxm.8x": the ".sxm." is the only place the
form factor is written, so the SXM part is inferred from the name. Price and SpotPrice are equal on
every line, as published.
"""

from __future__ import annotations

from scrapers.offer_lists.skypilot import CATALOGS
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v8/mithril/vms.csv"


class Mithril(SkyPilotCatalog):
    name = "mithril"
    title = "Mithril"
    catalog_url = VMS_URL
    stored_commit = "1f9eb0c264f9a6d78833766f4b18353ac7dfdde9"  # the copy in ../shared
