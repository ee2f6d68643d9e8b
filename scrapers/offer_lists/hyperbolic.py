"""Hyperbolic: SkyPilot's v8 Hyperbolic catalog (CRLF lines; one region, "default"; a StorageGiB column).

Three H100 shapes ("1x-H100-75-722": GPUs, vCPUs, RAM GiB). GpuInfo names the GPU
"NVIDIA-H100-80GB-HBM3" and gives one GPU's memory in MiB; no form factor is named, so the H100 is
family-level and the GPU-to-GPU link of the 2- and 3-GPU shapes stays missing. The name is nvidia-smi's
for the SXM5 module (``measure.nvidia_smi_xml``: the 80 GB PCIe card has HBM2e and says "PCIe"), and
each row says so; the part stays open all the same: a 2- or 3-GPU slice of an SXM board says nothing
of the NVLink between its GPUs (NVIDIA's shared-NVSwitch partitions hold 1, 2, 4 or 8 GPUs, never 3).
"""

from __future__ import annotations

from normalize.gpus import GpuMatch
from records.offers import Claim
from scrapers.offer_lists.skypilot import CATALOGS, Row
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v8/hyperbolic/vms.csv"


class Hyperbolic(SkyPilotCatalog):
    name = "hyperbolic"
    title = "Hyperbolic"
    catalog_url = VMS_URL
    stored_commit = "0082b0435f3912ae4c566856b272455cc78f4f61"  # the copy in ../shared

    def extra(self, name: str, rows: list[Row], gpu: GpuMatch) -> tuple[list[Claim], list[str]]:
        if "H100-80GB-HBM3" not in rows[0].cell("GpuInfo") or gpu.spec is not None:
            return [], []
        return [], [SXM_NAME_NOTE]


SXM_NAME_NOTE = (
    "GpuInfo names the GPU 'NVIDIA-H100-80GB-HBM3', nvidia-smi's name for the H100 SXM5 module (the PCIe "
    "card has HBM2e and reports 'NVIDIA H100 PCIe'); the form factor is still left open: a slice of an "
    "SXM board states nothing of the NVLink between its GPUs"
)
