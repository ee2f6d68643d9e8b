"""The one registry of providers and measurement sources. The CLI and Makefile derive their choices from it.

Each entry names the module and class of one source; the module is imported the first time the entry
is looked up, so ``import scrapers`` (or ``fetch``) loads no parser. Adding a provider is one line here
and one module under ``documents/``, ``offer_lists/`` or ``measurements/`` (docs/contributing.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapers.base import Scraper

# Clouds first, in the order they joined the catalog; then the marketplace and the aggregators.
PROVIDER_ENTRIES: dict[str, str] = {
    "aws": "scrapers.documents.aws:Aws",
    "azure": "scrapers.documents.azure:Azure",
    "gcp": "scrapers.documents.gcp:Gcp",
    "oci": "scrapers.documents.oci:Oci",
    "runpod": "scrapers.documents.runpod:RunPod",
    "nebius": "scrapers.offer_lists.nebius:Nebius",
    "lambda": "scrapers.documents.lambdalabs:LambdaCloud",
    "coreweave": "scrapers.documents.coreweave:CoreWeave",
    "scaleway": "scrapers.documents.scaleway:Scaleway",
    "hyperstack": "scrapers.offer_lists.hyperstack:Hyperstack",
    "verda": "scrapers.offer_lists.verda:Verda",
    "digitalocean": "scrapers.offer_lists.digitalocean:DigitalOcean",
    "paperspace": "scrapers.offer_lists.paperspace:Paperspace",
    "fluidstack": "scrapers.offer_lists.fluidstack:Fluidstack",
    "ovhcloud": "scrapers.offer_lists.ovhcloud:OvhCloud",
    "hyperbolic": "scrapers.offer_lists.hyperbolic:Hyperbolic",
    "mithril": "scrapers.offer_lists.mithril:Mithril",
    "vast": "scrapers.offer_lists.vast:Vast",
    "shadeform": "scrapers.offer_lists.shadeform:Shadeform",
    "primeintellect": "scrapers.offer_lists.primeintellect:PrimeIntellect",
}
# Sources of expected (providers' own health checks, topology files) and measured bandwidth.
MEASUREMENT_ENTRIES: dict[str, str] = {
    "azurehpc": "scrapers.measurements.azurehpc:AzureHpc",
    "gcphealth": "scrapers.measurements.gcphealth:GcpHealth",
    "ocihpc": "scrapers.measurements.ocihpc:OciHpc",
    "awsofinccl": "scrapers.measurements.awsofinccl:AwsOfiNccl",
    "nebiustopo": "scrapers.measurements.nebiustopo:NebiusTopology",
    "sparecores": "scrapers.measurements.sparecores:SpareCores",
    "awshealth": "scrapers.measurements.awshealth:AwsHealth",
    "mlperf": "scrapers.measurements.mlperf:MlPerf",
}
PROVIDER_NAMES: tuple[str, ...] = tuple(PROVIDER_ENTRIES)
MEASUREMENT_SOURCE_NAMES: tuple[str, ...] = tuple(MEASUREMENT_ENTRIES)


def load(entry: str) -> type[Scraper]:
    """The class an entry ("package.module:Class") names, importing its module."""
    module, _, cls = entry.partition(":")
    found: type[Scraper] = getattr(importlib.import_module(module), cls)
    return found


class Registry(MutableMapping[str, "type[Scraper]"]):
    """Name → scraper class, loading each class on first look-up. Tests and devtools may add entries."""

    def __init__(self, entries: dict[str, str]) -> None:
        self._entries: dict[str, str | type[Scraper]] = dict(entries)

    def __getitem__(self, name: str) -> type[Scraper]:
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._entries[name] = load(entry)
        return entry

    def __setitem__(self, name: str, cls: type[Scraper]) -> None:
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


REGISTRY = Registry({**PROVIDER_ENTRIES, **MEASUREMENT_ENTRIES})
