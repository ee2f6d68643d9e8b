"""Nebius AI Cloud: SkyPilot's machine-readable catalog of Nebius VM types (a CSV, CRLF lines).

One row per (instance type, region). An instance type is "<platform>_<preset>", e.g.
"gpu-h100-sxm_8gpu-128vcpu-1600gb": the platform names the GPU and its form factor, the preset the
GPU count, vCPUs and host RAM. The catalog states no network at all, so fabric and bandwidth stay
missing. Its GpuInfo memory figure is a trap: MemoryInfo.SizeInMiB is the HOST RAM per GPU
(204800 MiB = 200 GiB on an 80 GB H100), so it is checked and, when it is not GPU memory, dropped
with a note. GpuInfo is a Python-repr dict (single quotes), read with ast.literal_eval.
"""

from __future__ import annotations

import ast
import csv
import io
import logging
import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from normalize.errors import LayoutError, ParseError
from normalize.gpus import GIB_PER_GB, GPUS, MEMORY_TOLERANCE, GpuMatch, family_of, identify_gpu
from normalize.units import MAX_NUMBER, Quantity, parse_gpu_count, parse_memory_gb, to_number
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from scrapers.base import Scraper
from scrapers.claims import fact
from scrapers.http import ProviderFetcher

log = logging.getLogger(__name__)

VMS_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7/nebius/vms.csv"
FILE = "vms.csv"
COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "MemoryGiB", "GpuInfo")
# Columns that must agree across the regions of one instance type (Price and Region may differ).
SAME_IN_EVERY_REGION = ("AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo")
_PRESET_GPUS = re.compile(r"^(?P<count>\d+)gpu-")


class Nebius(Scraper):
    name = "nebius"
    title = "Nebius AI Cloud"
    url_prefixes = ("https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/",)
    expected_layout: ClassVar[dict[str, str]] = {VMS_URL: "CSV columns " + ", ".join(COLUMNS)}

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(VMS_URL)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return parse_vms(documents.text(VMS_URL), VMS_URL)


@dataclass(frozen=True)
class Row:
    """One CSV record: its cells by header, and its raw text (verbatim, without the line ending)."""

    cells: dict[str, str]
    line: str


def csv_rows(text: str) -> list[Row]:
    """Every record of the CSV with its raw line; LayoutError when a needed column is missing."""
    lines = io.StringIO(text, newline="").readlines()  # keeps "\r\n", splits only on line endings
    reader = csv.reader(lines)
    header = next(reader, None)
    missing = [c for c in COLUMNS if header is None or c not in header]
    if header is None or missing:
        raise LayoutError(f"{FILE}: no column {missing}; header is {header}")
    rows, start = [], reader.line_num
    for cells in reader:
        raw = "".join(lines[start : reader.line_num]).rstrip("\r\n")
        start = reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            log.warning("Skipping nebius row %s: %d cells, header has %d", raw[:60], len(cells), len(header))
            continue
        rows.append(Row(dict(zip(header, cells, strict=True)), raw))
    return rows


def _is_cpu_only(row: Row) -> bool:
    count = row.cells["AcceleratorCount"].strip()
    return not row.cells["AcceleratorName"].strip() and count in ("", "0", "0.0")


def gpu_rows_by_type(rows: list[Row]) -> dict[str, list[Row]]:
    """GPU rows grouped by instance type (one row per region), in document order."""
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        name = row.cells["InstanceType"].strip()
        if _is_cpu_only(row):
            log.debug("nebius %s: no accelerator (CPU-only type)", name)
        elif not name:
            log.warning("Skipping nebius row with no InstanceType: %s", row.line)
        else:
            grouped.setdefault(name, []).append(row)
    return grouped


def parse_vms(text: str, url: str) -> list[RawOffer]:
    """One RawOffer per GPU instance type in the Nebius vms.csv."""
    offers = []
    for name, rows in gpu_rows_by_type(csv_rows(text)).items():
        try:
            offers.append(_offer(name, rows, url))
        except ParseError as exc:
            log.warning("Skipping nebius row %s: %s", name, exc)
    if not offers:
        raise LayoutError(f"{FILE}: no GPU instance rows")
    return offers


def _offer(name: str, rows: list[Row], url: str) -> RawOffer:
    first = rows[0]
    platform, _, preset = name.partition("_")
    accelerator = first.cells["AcceleratorName"].strip()
    gpu_count = float(parse_gpu_count(first.cells["AcceleratorCount"]))
    gpu = _identify(platform, accelerator)
    notes = [*_region_notes(rows), *_preset_notes(preset, gpu_count)]
    memory_claims, memory_notes = _memory(first, gpu, gpu_count, url)
    notes += memory_notes
    claims = [
        fact(
            "gpu_model",
            gpu.id,
            quote=first.line,
            source_url=url,
            context=f"{FILE} › InstanceType (platform {platform!r}) + AcceleratorName",
        ),
        fact("gpu_count", gpu_count, quote=first.line, source_url=url, context=f"{FILE} › AcceleratorCount"),
        *memory_claims,
    ]
    notes.append("the catalog states no network (no fabric, NIC or bandwidth columns)")
    return RawOffer(
        provider="nebius", instance_type=name, source_url=url, claims=tuple(claims), notes=tuple(notes)
    )


def _identify(platform: str, accelerator: str) -> GpuMatch:
    """The GPU the platform ('gpu-h100-sxm': family and form factor) and AcceleratorName name."""
    named, listed = family_of(platform), family_of(accelerator)
    if named and listed and named != listed:
        raise ParseError(f"platform {platform!r} names {named} but AcceleratorName is {accelerator!r}")
    return identify_gpu(f"{platform} {accelerator}")


def _region_notes(rows: list[Row]) -> list[str]:
    notes = []
    for column in SAME_IN_EVERY_REGION:
        values = {row.cells.get(column, "") for row in rows}
        if len(values) > 1:
            notes.append(f"regions disagree on {column}: {sorted(values)}; first row kept")
    return notes


def _preset_notes(preset: str, gpu_count: float) -> list[str]:
    match = _PRESET_GPUS.match(preset)
    if match and float(match.group("count")) != gpu_count:
        return [f"preset {preset!r} names {match.group('count')} GPUs but AcceleratorCount is {gpu_count:g}"]
    return []


def gpu_info(cell: str) -> dict[str, Any]:
    """The GpuInfo cell, a Python-repr dict (not JSON), read with ast.literal_eval; never eval."""
    try:
        info = ast.literal_eval(cell)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ParseError(f"GpuInfo is not a Python literal: {exc}") from None
    gpus = info.get("Gpus") if isinstance(info, dict) else None
    if not isinstance(gpus, list) or len(gpus) != 1 or not isinstance(gpus[0], dict):
        raise ParseError(f"GpuInfo has not exactly one Gpus entry: {cell!r}")
    return info


def _size_mib(info: dict[str, Any]) -> float:
    memory = info["Gpus"][0].get("MemoryInfo")
    size = memory.get("SizeInMiB") if isinstance(memory, dict) else None
    if not isinstance(size, int | float) or not 0 < size <= MAX_NUMBER:
        raise ParseError(f"GpuInfo has no plausible MemoryInfo.SizeInMiB: {info!r}")
    return float(size)


def _nominal_gb(gpu: GpuMatch) -> str:
    """The nominal memory of the part, or of each part of the family when the part is not known."""
    sizes = (
        [gpu.spec.memory_gb] if gpu.spec else sorted({s.memory_gb for s in GPUS if s.family == gpu.family})
    )
    return " or ".join(f"{size:g}" for size in sizes)


def _plausible(memory_gb: float, gpu: GpuMatch) -> bool:
    """Whether a figure, read as GB or GiB, is the nominal memory of some part of the GPU family."""
    nominal = [s.memory_gb for s in GPUS if s.family == gpu.family]
    return any(
        min(abs(memory_gb - n), abs(memory_gb - n * GIB_PER_GB)) / n <= MEMORY_TOLERANCE for n in nominal
    )


def _memory(row: Row, gpu: GpuMatch, gpu_count: float, url: str) -> tuple[list[Claim], list[str]]:
    """A gpu_memory_gb claim only when GpuInfo's figure really is GPU memory; notes otherwise."""
    cell = row.cells["GpuInfo"].strip()
    if not cell:
        return [], ["no GpuInfo"]
    try:
        info = gpu_info(cell)
        size_mib = _size_mib(info)
        host_mib = Quantity(to_number(row.cells["MemoryGiB"]), "gibibyte").to("mebibyte").magnitude
    except ParseError as exc:
        return [], [f"GpuInfo or MemoryGiB unreadable, GPU memory not taken from them: {exc}"]
    notes = _gpu_info_notes(info, row, gpu_count, size_mib)
    memory_gb = parse_memory_gb(f"{size_mib:g} MiB")
    nominal = f"{gpu.id} has {_nominal_gb(gpu)} GB"
    figure = f"GpuInfo MemoryInfo.SizeInMiB {size_mib:g} MiB ({memory_gb:g} GB)"
    if math.isclose(size_mib * gpu_count, host_mib, rel_tol=1e-6):
        notes.append(
            f"not GPU memory: {figure} is the host RAM per GPU (MemoryGiB {row.cells['MemoryGiB']} / "
            f"{gpu_count:g} GPUs), not GPU memory ({nominal}); TotalGpuMemoryInMiB likewise; "
            "gpu_memory_gb is not stated by this catalog"
        )
        return [], notes
    if not _plausible(memory_gb, gpu):
        notes.append(f"{figure} is implausible as GPU memory ({nominal}); not used")
        return [], notes
    claim = fact(
        "gpu_memory_gb",
        memory_gb,
        quote=cell,
        source_url=url,
        context=f"{FILE} › GpuInfo › MemoryInfo.SizeInMiB",
        qualifiers="per GPU",
    )
    return [claim], notes


def _gpu_info_notes(info: dict[str, Any], row: Row, gpu_count: float, size_mib: float) -> list[str]:
    """Where GpuInfo disagrees with the row's own columns or with itself."""
    entry, notes = info["Gpus"][0], []
    if str(entry.get("Name", "")).strip() != row.cells["AcceleratorName"].strip():
        notes.append(f"GpuInfo Name {entry.get('Name')!r} differs from AcceleratorName")
    if isinstance(entry.get("Count"), int | float) and entry["Count"] != gpu_count:
        notes.append(f"GpuInfo Count {entry['Count']} differs from AcceleratorCount {gpu_count:g}")
    total = info.get("TotalGpuMemoryInMiB")
    if isinstance(total, int | float) and not 0 < total <= MAX_NUMBER:
        notes.append(f"GpuInfo TotalGpuMemoryInMiB {str(total)[:20]} is not a plausible size")
    elif isinstance(total, int | float) and not math.isclose(total, size_mib * gpu_count, rel_tol=1e-6):
        notes.append(f"GpuInfo TotalGpuMemoryInMiB {total} is not SizeInMiB x {gpu_count:g} GPUs")
    return notes
