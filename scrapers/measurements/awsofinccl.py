"""AWS's own NCCL topology files for EC2 instance types (``aws/aws-ofi-nccl``, ``topology/*.xml``):
which GPUs share a PCIe switch with which EFA NICs and, in the newer files, each NIC's speed.

Every figure is ``expected``. p4d/p4de list PCI devices only (4 EFA NICs, 2 GPUs behind each): a
NIC count, no speed. The p5.48xlarge file of commit 79565c0e (2026-05, on no branch: it is live only
at its commit URL) lists 32 ``<net speed="100000" gdr="1">`` EFA ports (4 per GPU); the original p5
file of 2023 (commit 8807ce1e) lists bare PCI bus ids and g5.48xlarge bare bridges: nothing to read,
so they give no figure. GitHub's raw host has no listing, so the files are named here.
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

REPO = "https://raw.githubusercontent.com/aws/aws-ofi-nccl/"
FILES = {
    REPO + "master/topology/p4d-24xl-topo.xml": "p4d.24xlarge",
    REPO + "master/topology/p4de-24xl-topo.xml": "p4de.24xlarge",
    REPO + "master/topology/g5.48xl-topo.xml": "g5.48xlarge",
    REPO + "79565c0e5a384bc35bf8a0e6378e60f88c2b2565/topology/p5.48xl-topo.xml": "p5.48xlarge",
    REPO + "8807ce1e084d4b507bdc954f8d8f3689e4e27aef/topology/p5.48xl-topo.xml": "p5.48xlarge",
}


class AwsOfiNccl(Scraper):
    name = "awsofinccl"
    title = "AWS aws-ofi-nccl NCCL topology files (expected EFA NICs per instance type)"
    kind = "measurements"
    url_prefixes = (REPO,)

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get_all(list(FILES), required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        readings = []
        for url, instance_type in FILES.items():
            text = documents.optional_text(url)
            if text is not None:
                origin = Origin(self.name, url, "expected", "aws", instance_type)
                readings.extend(topology_readings(text, origin, tool="aws-ofi-nccl topology"))
        if not readings:
            raise LayoutError("no aws-ofi-nccl topology file gave a NIC count or speed")
        return readings
