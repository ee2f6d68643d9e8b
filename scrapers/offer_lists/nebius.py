"""Nebius AI Cloud: SkyPilot's v8 catalog of Nebius VM types (a CSV with CRLF lines).

An instance type is "<platform>_<preset>", e.g. "gpu-h100-sxm_8gpu-128vcpu-1600gb": the platform
names the GPU and its form factor, the preset the GPU count, vCPUs and host RAM. Both halves are kept
apart in the row (``platform``, ``preset``) so either finds it. In the v8 file GpuInfo's
MemoryInfo.SizeInMiB is one GPU's memory (81920 MiB on an H100); the older v7 file put the host RAM
per GPU there (204800 MiB), which the reader still recognises and drops with a note. The catalog
states no network; Nebius's InfiniBand facts are curated (scrapers/curated/nebius.toml).
"""

from __future__ import annotations

import re

from normalize.errors import ParseError
from normalize.gpus import GpuMatch, family_of
from normalize.units import parse_gpu_count
from records.offers import Claim, OfferIdentity
from scrapers.offer_lists.skypilot import CATALOGS, Row
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog, form_words

VMS_URL = CATALOGS + "v8/nebius/vms.csv"
_PRESET_GPUS = re.compile(r"^(?P<count>\d+)gpu-")


class Nebius(SkyPilotCatalog):
    name = "nebius"
    title = "Nebius AI Cloud"
    catalog_url = VMS_URL
    stored_commit = "0082b0435f3912ae4c566856b272455cc78f4f61"  # the copy in ../shared

    def identity(self, name: str, row: Row) -> OfferIdentity:
        platform, _, preset = name.partition("_")
        return OfferIdentity(platform=platform or None, preset=preset or None)

    def name_hint(self, name: str, row: Row) -> str:
        """The platform half names the form factor ('gpu-h100-sxm'); the preset names none."""
        return form_words(name.partition("_")[0])

    def extra(self, name: str, rows: list[Row], gpu: GpuMatch) -> tuple[list[Claim], list[str]]:
        platform, _, preset = name.partition("_")
        accelerator = rows[0].cell("AcceleratorName")
        named, listed = family_of(platform), family_of(accelerator)
        if named and listed and named != listed:
            raise ParseError(f"platform {platform!r} names {named} but AcceleratorName is {accelerator!r}")
        match = _PRESET_GPUS.match(preset)
        count = parse_gpu_count(rows[0].cell("AcceleratorCount"))
        if match and int(match.group("count")) != count:
            return [], [
                f"preset {preset!r} names {match.group('count')} GPUs but AcceleratorCount is {count}"
            ]
        return [], []
