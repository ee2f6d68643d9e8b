"""Hyperstack: SkyPilot's v8 catalog of Hyperstack flavors (a CSV with LF lines).

Hyperstack's GPU names tell the three ways the same GPU is built apart: ``H100-80G-PCIe`` (PCIe cards,
no bridge), ``H100-80G-PCIe-NVLink`` (PCIe cards joined by NVLink bridges) and ``H100-80G-SXM5``
(an SXM board). The first two become ``pcie`` and ``nvlink-bridge`` link claims, quoted from the line;
the SXM5 board's NVSwitch comes from the datasheet. GpuInfo writes ``'Manufacturer': null``, JSON's
null inside a Python repr, which the reader accepts.
"""

from __future__ import annotations

import re

from normalize.gpus import GpuMatch
from normalize.vocab import Link
from records.offers import Claim
from scrapers.claims import fact
from scrapers.offer_lists.skypilot import CATALOGS, Row, file_label
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v8/hyperstack/vms.csv"
_PCIE = re.compile(r"(?i)(?<![a-z])pcie(?![a-z])")
_NVLINK = re.compile(r"(?i)(?<![a-z])nvlink(?![a-z])")


class Hyperstack(SkyPilotCatalog):
    name = "hyperstack"
    title = "Hyperstack"
    catalog_url = VMS_URL
    stored_commit = "fdc9d908ab0b2af9f468f139fb3f662c8c6b3257"  # the copy in ../shared

    def extra(self, name: str, rows: list[Row], gpu: GpuMatch) -> tuple[list[Claim], list[str]]:
        """The link a PCIe GPU's name states: NVLink bridges with '-NVLink', plain PCIe without."""
        accelerator, count = rows[0].cell("AcceleratorName"), rows[0].cell("AcceleratorCount")
        if not _PCIE.search(accelerator) or count in ("1", "1.0"):
            return [], []
        bridged = bool(_NVLINK.search(accelerator))
        link = Link.NVLINK_BRIDGE if bridged else Link.PCIE
        why = (
            "PCIe cards joined by NVLink" if bridged else "PCIe cards, named apart from the '-NVLink' variant"
        )
        context = f"{file_label(VMS_URL)} › AcceleratorName {accelerator!r} ({why})"
        return [
            fact("intra_node_link", link.value, quote=rows[0].line, source_url=VMS_URL, context=context)
        ], []
