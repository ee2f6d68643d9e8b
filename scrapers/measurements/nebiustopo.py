"""Nebius's own NCCL topology file for its H100 GPU-cluster VMs (``nebius/nccl-topology``,
``nccl-topo-h100-v1.xml``): 8 ``<net speed="400000" gdr="1">`` InfiniBand ports (mlx5_0..7), each
beside one H100 under a PCIe switch: 8 x 400 Gbit/s, one NIC per GPU.

The repository's README says the file is for "Nebius AI virtual machines in GPU clusters"; clusters
are built from the 8-GPU H100 preset, so its figures are for ``gpu-h100-sxm_8gpu-128vcpu-1600gb``.
Every figure is ``expected``: SkyPilot's Nebius catalog states no network at all.
"""

from __future__ import annotations

from fetch.http import ProviderFetcher
from measure.common import Origin
from normalize.errors import LayoutError
from records.documents import DocumentSet
from records.measurements import Measurement
from records.offers import RawOffer
from scrapers.base import Scraper
from scrapers.measurements.nccl_topology import topology_readings

H100_TOPOLOGY = "https://raw.githubusercontent.com/nebius/nccl-topology/main/nccl-topo-h100-v1.xml"
H100_CLUSTER_VM = "gpu-h100-sxm_8gpu-128vcpu-1600gb"


class NebiusTopology(Scraper):
    name = "nebiustopo"
    title = "Nebius nccl-topology (expected InfiniBand ports of H100 GPU-cluster VMs)"
    kind = "measurements"
    url_prefixes = ("https://raw.githubusercontent.com/nebius/nccl-topology/main/",)

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(H100_TOPOLOGY)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        origin = Origin(self.name, H100_TOPOLOGY, "expected", "nebius", H100_CLUSTER_VM)
        readings = topology_readings(documents.text(H100_TOPOLOGY), origin, tool="nebius nccl-topology")
        if not readings:
            raise LayoutError("nccl-topo-h100-v1.xml lists no NIC")
        return readings
