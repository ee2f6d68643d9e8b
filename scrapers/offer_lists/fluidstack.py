"""Fluidstack: SkyPilot's v6 Fluidstack catalog (the newest it has; CRLF lines).

Instance types are "<GPU type>::<count>" ("H100_PCIE_80GB::4", "H100_NVLINK_80GB::8"). The GPU type
is the only place the build is written: PCIE gives the form factor, NVLINK a GPU-to-GPU link (an
``nvlink`` claim inferred from the name). "H100_NVLINK_80GB" does not say whether the GPUs are SXM
modules on an NVSwitch board or PCIe cards with NVLink bridges, so its GPU stays family-level and its
bandwidth missing, with a note.
"""

from __future__ import annotations

import re

from normalize.gpus import GpuMatch
from normalize.vocab import Basis, Link
from records.offers import Claim
from scrapers.claims import fact
from scrapers.offer_lists.skypilot import CATALOGS, Row, file_label
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v6/fluidstack/vms.csv"
_NVLINK = re.compile(r"(?i)(?<![a-z])nvlink(?![a-z])")
NVLINK_NOTE = (
    "the name says NVLINK but not whether the GPUs are SXM modules on an NVSwitch board or PCIe cards "
    "with NVLink bridges: GPU-to-GPU bandwidth not inferred"
)


class Fluidstack(SkyPilotCatalog):
    name = "fluidstack"
    title = "Fluidstack"
    catalog_url = VMS_URL

    def extra(self, name: str, rows: list[Row], gpu: GpuMatch) -> tuple[list[Claim], list[str]]:
        if not _NVLINK.search(name.replace("_", " ")):
            return [], []
        context = f"{file_label(VMS_URL)} › InstanceType {name!r} (link from the name)"
        link = fact(
            "intra_node_link",
            Link.NVLINK.value,
            quote=rows[0].line,
            source_url=VMS_URL,
            context=context,
            basis=Basis.INFERRED,
        )
        return [link], [] if gpu.spec else [NVLINK_NOTE]
