"""Fluidstack: SkyPilot's v6 Fluidstack catalog (CRLF lines), a frozen list (``scrapers.offer_lists.ages``).

A newer v9 list exists and lists a single offer (``H100_NVLINK_80GB::8``). The v6 list stays the one
read, so no row vanishes on the strength of a list SkyPilot itself does not read yet (it reads v8,
which has no Fluidstack file); the v9 file is fetched beside it when it can be, and each row says
whether v9 still lists its type (and at which price), or that v9 does not.

Instance types are "<GPU type>::<count>" ("H100_PCIE_80GB::4", "H100_NVLINK_80GB::8"). The GPU type
is the only place the build is written: PCIE gives the form factor, NVLINK a GPU-to-GPU link (an
``nvlink`` claim inferred from the name). "H100_NVLINK_80GB" does not say whether the GPUs are SXM
modules on an NVSwitch board or PCIe cards with NVLink bridges, so its GPU stays family-level and its
bandwidth missing, with a note.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from fetch.http import ProviderFetcher
from normalize.errors import LayoutError, ParseError
from normalize.gpus import GpuMatch
from normalize.vocab import Basis, Link
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from scrapers.claims import fact
from scrapers.offer_lists.skypilot import CATALOGS, Row, csv_rows, file_label, is_gpu_row
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

VMS_URL = CATALOGS + "v6/fluidstack/vms.csv"
V9_FLUIDSTACK = CATALOGS + "v9/fluidstack/vms.csv"
_NVLINK = re.compile(r"(?i)(?<![a-z])nvlink(?![a-z])")
NVLINK_NOTE = (
    "the name says NVLINK but not whether the GPUs are SXM modules on an NVSwitch board or PCIe cards "
    "with NVLink bridges: GPU-to-GPU bandwidth not inferred"
)


class Fluidstack(SkyPilotCatalog):
    name = "fluidstack"
    title = "Fluidstack"
    catalog_url = VMS_URL
    stored_commit = "002403bca05e2ab5110637448f3b1654c983d5d5"  # the copy in ../shared
    newer_list = f"{V9_FLUIDSTACK} (commit 2c3d7ea7) lists one offer, H100_NVLINK_80GB::8 at 23.92 in FINLAND"
    url_prefixes = (VMS_URL, V9_FLUIDSTACK)

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(self.catalog_url)
        await fetcher.get(V9_FLUIDSTACK, required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        offers = super().parse(documents)
        newer = documents.optional_text(V9_FLUIDSTACK)
        if newer is None:
            return offers
        listed = v9_offers(newer)
        return [
            replace(offer, notes=(*offer.notes, _v9_note(offer.instance_type, listed))) for offer in offers
        ]

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


def v9_offers(text: str) -> dict[str, str]:
    """Instance type -> '<price> in <regions>' of the v9 list ({} when it cannot be read)."""
    found: dict[str, list[tuple[str, str]]] = {}
    try:
        for row in csv_rows(text, file_label(V9_FLUIDSTACK)):
            if is_gpu_row(row):
                found.setdefault(row.cell("InstanceType"), []).append((row.cell("Price"), row.cell("Region")))
    except (ParseError, LayoutError) as exc:
        logging.getLogger(__name__).warning("Fluidstack's v9 list not read: %s", exc)
        return {}
    return {name: ", ".join(f"{p} in {r}" for p, r in lines) for name, lines in found.items()}


def _v9_note(name: str, listed: dict[str, str]) -> str:
    if name in listed:
        return f"still listed in SkyPilot's newer v9 Fluidstack list ({listed[name]})"
    shown = "; ".join(f"{k} at {v}" for k, v in listed.items()) or "no GPU offer"
    return f"not in SkyPilot's newer v9 Fluidstack list, which lists {shown}: this v6 offer may be withdrawn"
