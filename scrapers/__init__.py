"""Provider modules and the one registry of them. The CLI and Makefile derive their choices from it."""

from __future__ import annotations

from scrapers.aws import Aws
from scrapers.azure import Azure
from scrapers.base import Scraper
from scrapers.coreweave import CoreWeave
from scrapers.gcp import Gcp
from scrapers.lambdalabs import LambdaCloud
from scrapers.nebius import Nebius
from scrapers.oci import Oci
from scrapers.runpod import RunPod

REGISTRY: dict[str, type[Scraper]] = {
    cls.name: cls for cls in (Aws, Azure, Gcp, Oci, RunPod, Nebius, LambdaCloud, CoreWeave)
}
