"""OVHcloud: SkyPilot's v6 OVHcloud catalog of Public Cloud GPU flavors (LF lines).

Flavors are named "a100-180", "t1-45", "t2-le-90"; the file adds an AvailabilityZone column after the
region (kept in each price's context). The V100 flavors name no form factor (SXM2 or PCIe), so their
GPU is family-level and their GPU-to-GPU link stays missing.
"""

from __future__ import annotations

from scrapers.offer_lists.skypilot import CATALOGS
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v6/ovhcloud/vms.csv"


class OvhCloud(SkyPilotCatalog):
    name = "ovhcloud"
    title = "OVHcloud"
    catalog_url = VMS_URL
    stored_commit = "8a258f54356e9a8c3a08083f1eebc169a4078d1c"  # the copy in ../shared
