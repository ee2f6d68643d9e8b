"""Provider modules and the one registry of them. The CLI and Makefile derive their choices from it."""

from __future__ import annotations

from scrapers.aws import Aws
from scrapers.awsofinccl import AwsOfiNccl
from scrapers.azure import Azure
from scrapers.azurehpc import AzureHpc
from scrapers.base import Scraper
from scrapers.coreweave import CoreWeave
from scrapers.digitalocean import DigitalOcean
from scrapers.fluidstack import Fluidstack
from scrapers.gcp import Gcp
from scrapers.gcphealth import GcpHealth
from scrapers.hyperbolic import Hyperbolic
from scrapers.hyperstack import Hyperstack
from scrapers.lambdalabs import LambdaCloud
from scrapers.mithril import Mithril
from scrapers.nebius import Nebius
from scrapers.nebiustopo import NebiusTopology
from scrapers.oci import Oci
from scrapers.ocihpc import OciHpc
from scrapers.ovhcloud import OvhCloud
from scrapers.paperspace import Paperspace
from scrapers.primeintellect import PrimeIntellect
from scrapers.runpod import RunPod
from scrapers.scaleway import Scaleway
from scrapers.shadeform import Shadeform
from scrapers.sparecores import SpareCores
from scrapers.vast import Vast
from scrapers.verda import Verda

# Clouds first, in the order they joined the catalog; then the marketplace and the aggregators.
PROVIDERS: tuple[type[Scraper], ...] = (
    Aws,
    Azure,
    Gcp,
    Oci,
    RunPod,
    Nebius,
    LambdaCloud,
    CoreWeave,
    Scaleway,
    Hyperstack,
    Verda,
    DigitalOcean,
    Paperspace,
    Fluidstack,
    OvhCloud,
    Hyperbolic,
    Mithril,
    Vast,
    Shadeform,
    PrimeIntellect,
)
# Sources of expected (providers' own health checks, topology files) and measured bandwidth.
MEASUREMENT_SOURCES: tuple[type[Scraper], ...] = (
    AzureHpc,
    GcpHealth,
    OciHpc,
    AwsOfiNccl,
    NebiusTopology,
    SpareCores,
)
REGISTRY: dict[str, type[Scraper]] = {cls.name: cls for cls in (*PROVIDERS, *MEASUREMENT_SOURCES)}
