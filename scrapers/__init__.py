"""Provider modules and the one registry of them. The CLI and Makefile derive their choices from it."""

from __future__ import annotations

from scrapers.aws import Aws
from scrapers.awsofinccl import AwsOfiNccl
from scrapers.azure import Azure
from scrapers.azurehpc import AzureHpc
from scrapers.base import Scraper
from scrapers.coreweave import CoreWeave
from scrapers.gcp import Gcp
from scrapers.gcphealth import GcpHealth
from scrapers.lambdalabs import LambdaCloud
from scrapers.nebius import Nebius
from scrapers.nebiustopo import NebiusTopology
from scrapers.oci import Oci
from scrapers.ocihpc import OciHpc
from scrapers.runpod import RunPod
from scrapers.sparecores import SpareCores

PROVIDERS = (Aws, Azure, Gcp, Oci, RunPod, Nebius, LambdaCloud, CoreWeave)
# Sources of expected (providers' own health checks, topology files) and measured bandwidth.
MEASUREMENT_SOURCES = (AzureHpc, GcpHealth, OciHpc, AwsOfiNccl, NebiusTopology, SpareCores)
REGISTRY: dict[str, type[Scraper]] = {cls.name: cls for cls in (*PROVIDERS, *MEASUREMENT_SOURCES)}
