"""A provider whose offers are one SkyPilot catalog CSV: one row per GPU instance type, one price per line.

``SkyPilotCatalog`` is the base every offer-list provider module subclasses. It reads the file once
(``scrapers.offer_lists.skypilot``), groups its lines by instance type, and builds each offer from the first
line, checking that the other regions agree. What differs per provider is declared on the subclass:
how its file writes GPU memory (``memory_reading``), who sells (``seller_kind`` and ``identity``), what
its instance names say beyond the GPU columns (``name_hint``: SXM, PCIe...), and claims from its own
documents (``extra``). GPU facts read from the AcceleratorName and GpuInfo columns are stated; a form
factor only the instance's name gives is inferred from the name, and the claim says so.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from dataclasses import replace
from enum import StrEnum
from typing import Any, ClassVar

from fetch.http import ProviderFetcher
from normalize.currency import USD
from normalize.errors import ParseError
from normalize.gpus import GPUS, GpuMatch, family_of, identify_gpu, memory_fits
from normalize.units import memory_gb, parse_gpu_count, to_number
from normalize.vocab import Basis, SellerKind
from records.documents import DocumentSet
from records.offers import Claim, OfferIdentity, RawOffer
from records.prices import Price, in_currency
from scrapers.base import Scraper
from scrapers.claims import fact
from scrapers.offer_lists.ages import OfferList, age_note, offer_list
from scrapers.offer_lists.skypilot import (
    CSV_LAYOUT,
    NO_NETWORK_NOTE,
    SAME_IN_EVERY_REGION,
    GpuInfo,
    Row,
    csv_rows,
    file_label,
    gpu_info,
    is_gpu_row,
    row_price,
)
from scrapers.tables import collect

log = logging.getLogger(__name__)

_FORM_WORDS = re.compile(r"(?i)(?<![a-z])(sxm\d?|pcie|nvl)(?![a-z])")


class MemoryReading(StrEnum):
    """What a file's ``MemoryInfo.SizeInMiB`` really holds."""

    PER_GPU_MIB = "one GPU's memory in MiB"
    TOTAL_MIB = "all GPUs' memory together, in MiB"
    PER_GPU_GB = "one GPU's memory in GB, despite its name"


def form_words(name: str) -> str:
    """The form-factor words an instance name holds ('gpu_8x_h100_sxm5' → 'sxm5'), space-separated."""
    return " ".join(_FORM_WORDS.findall(name.replace("_", " ")))


def _n(value: float) -> str:
    return f"{value:.10g}"


@functools.lru_cache(maxsize=2048)
def _read_gpu_info(cell: str) -> tuple[GpuInfo | None, str | None]:
    """GpuInfo read once per distinct cell text: (info, None) or (None, why it is unreadable)."""
    try:
        return gpu_info(cell), None
    except ParseError as exc:
        return None, str(exc)


def _per_gpu(info: GpuInfo | None, reading: MemoryReading, count: float) -> tuple[float, str] | None:
    """One GPU's memory as (figure, unit symbol) under the file's reading, or None."""
    if info is None or info.size is None:
        return None
    if reading == MemoryReading.TOTAL_MIB:
        return info.size / count, "MiB"
    return info.size, "GB" if reading == MemoryReading.PER_GPU_GB else "MiB"


def _total_note(info: GpuInfo, reading: MemoryReading, count: float) -> str | None:
    """A note when TotalGpuMemoryInMiB is not what the reading says the GPUs hold together."""
    if info.total is None or info.size is None:
        return None
    expected = info.size if reading == MemoryReading.TOTAL_MIB else info.size * count
    where = " (inside the Gpus entry)" if info.total_in_entry else ""
    if math.isclose(info.total, expected, rel_tol=1e-6):
        return None
    return (
        f"GpuInfo TotalGpuMemoryInMiB{where} {_n(info.total)} is not the {count:g} GPUs' "
        f"{_n(expected)}: not used"
    )


def _regions_figure(
    rows: list[Row], reading: MemoryReading, count: float
) -> tuple[tuple[float, str], GpuInfo] | str:
    """The one per-GPU memory figure every region's GpuInfo gives, with the first GpuInfo; or why
    there is none (an unreadable cell, regions that disagree, no figure at all)."""
    read = [_read_gpu_info(row.cell("GpuInfo")) for row in rows]
    errors = sorted({error for _, error in read if error})
    if errors:
        return f"GpuInfo unreadable, GPU memory not taken from it: {errors[0]}"
    figures = {_per_gpu(info, reading, count) for info, _ in read}
    if len(figures) > 1:
        shown = ", ".join(f"{_n(f[0])} {f[1]}" if f else "none" for f in sorted(figures, key=str))
        return f"regions disagree on GPU memory ({shown}): not stated"
    figure, info = figures.pop(), read[0][0]
    if info is not None and info.written == "bare":
        return f"GpuInfo is a bare GPU name ({info.name!r}): no GPU memory stated"
    if figure is None or info is None:
        return "GpuInfo states no GPU memory"
    return figure, info


def _host_gb(row: Row) -> float | None:
    """The host RAM the line states (MemoryGiB), in GB, or None."""
    try:
        return memory_gb(to_number(row.cell("MemoryGiB")), "GiB")
    except ParseError:
        return None


@functools.lru_cache(maxsize=256)
def _family_sizes_gb(family: str) -> tuple[float, ...]:
    """The memory sizes of a GPU family's parts, ascending (a scan of the GPU table, once a family)."""
    return tuple(sorted({s.memory_gb for s in GPUS if s.family == family}))


def _not_gpu_memory(per_gpu_gb: float, row: Row, family: str, count: float, described: str) -> str | None:
    """Why a figure is not this GPU's memory (host RAM per GPU, or no part of the family has it)."""
    host_gb = _host_gb(row)
    if host_gb is not None and math.isclose(per_gpu_gb * count, host_gb, rel_tol=1e-6):
        host = row.cell("MemoryGiB")
        return f"{described} is the host RAM per GPU (MemoryGiB {host} / {count:g} GPUs), not GPU memory"
    sizes = _family_sizes_gb(family)
    if not any(memory_fits(per_gpu_gb, size) for size in sizes):
        return f"{described} fits no {family} part ({' or '.join(f'{s:g}' for s in sizes)} GB): not used"
    return None


def catalog_memory(
    rows: list[Row], reading: MemoryReading, family: str, count: float, url: str
) -> tuple[list[Claim], list[str]]:
    """A gpu_memory_gb claim when every region's GpuInfo gives one GPU's memory and it fits the GPU
    family; otherwise no claim and notes saying why (an unreadable or disagreeing cell, host RAM
    written as GPU memory, a size no part of the family has)."""
    found = _regions_figure(rows, reading, count)
    if isinstance(found, str):
        return [], [found]
    figure, info = found
    notes = [note] if (note := _total_note(info, reading, count)) else []
    per_gpu_gb = memory_gb(*figure)
    per_gpu = f"{_n(figure[0])} {figure[1]} per GPU"
    described = f"GpuInfo MemoryInfo.SizeInMiB {_n(info.size or 0)} ({reading.value}: {per_gpu})"
    problem = _not_gpu_memory(per_gpu_gb, rows[0], family, count, described)
    if problem:
        return [], [*notes, problem]
    qualifiers = "per GPU" if reading != MemoryReading.TOTAL_MIB else f"per GPU: SizeInMiB / {count:g} GPUs"
    context = f"{file_label(url)} › GpuInfo › MemoryInfo.SizeInMiB ({reading.value})"
    claim = fact(
        "gpu_memory_gb",
        per_gpu_gb,
        quote=rows[0].line,
        source_url=url,
        context=context,
        qualifiers=qualifiers,
    )
    return [claim], notes


def region_notes(rows: list[Row]) -> list[str]:
    """What the regions of one instance type disagree on (the first line's values are used)."""
    if len(rows) < 2:
        return []  # one line agrees with itself
    notes = []
    for column in SAME_IN_EVERY_REGION:
        values = sorted({row.cell(column) for row in rows})
        if len(values) > 1:
            shown = (
                ", ".join(values) if all(len(v) < 24 for v in values) else f"{len(values)} different values"
            )
            notes.append(f"regions disagree on {column} ({shown}); the first line's is used")
    return notes


class SkyPilotCatalog(Scraper):
    """A provider whose offers are the GPU rows of one SkyPilot catalog CSV (``catalog_url``)."""

    catalog_url: ClassVar[str]
    # The skypilot-catalog commit of the copy in ../shared (../shared/MANIFEST.md names it), and a newer
    # list of the provider's that exists, with what it holds (scrapers.offer_lists.ages). A reader with
    # no stored commit (OCI's copies, read by its document scraper) declares no list of its own.
    stored_commit: ClassVar[str] = ""
    newer_list: ClassVar[str] = ""
    memory_reading: ClassVar[MemoryReading] = MemoryReading.PER_GPU_MIB
    seller_kind: ClassVar[SellerKind] = SellerKind.CLOUD
    row_notes: ClassVar[tuple[str, ...]] = ()
    # The currency the file's Price and SpotPrice are in (SkyPilot's columns say no unit), and why.
    price_currency: ClassVar[str] = USD
    price_currency_note: ClassVar[str] = ""
    # The columns ``name_hint`` reads, named in the context of a model it decides.
    name_columns: ClassVar[str] = "InstanceType"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A provider fetches its catalog and expects its columns unless it declares more."""
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "catalog_url"):
            if "url_prefixes" not in vars(cls):
                cls.url_prefixes = (cls.catalog_url,)
            if "expected_layout" not in vars(cls):
                cls.expected_layout = {cls.catalog_url: CSV_LAYOUT}

    @classmethod
    def offer_list(cls) -> OfferList | None:
        """The list this provider reads, how old it is known to be (None without a stored commit)."""
        if not cls.stored_commit:
            return None
        return offer_list(cls.name, cls.catalog_url, cls.stored_commit, cls.newer_list)

    def __init__(self) -> None:
        self._parsed: tuple[str, list[RawOffer], list[Price]] | None = None

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(self.catalog_url)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return self.read(documents.text(self.catalog_url))[0]

    def parse_prices(self, documents: DocumentSet) -> list[Price]:
        return self.read(documents.text(self.catalog_url))[1]

    # -- hooks ----------------------------------------------------------------------------------

    def type_name(self, row: Row) -> str:
        """The instance type a line is about (its InstanceType)."""
        return row.cell("InstanceType")

    def name_hint(self, name: str, row: Row) -> str:
        """What the instance's name adds to the GPU columns: its form-factor words (SXM, PCIe, NVL)."""
        return form_words(name)

    def identity(self, name: str, row: Row) -> OfferIdentity:
        """Who sells the offer and under which names."""
        return OfferIdentity(seller_kind=self.seller_kind)

    def extra(self, name: str, rows: list[Row], gpu: GpuMatch) -> tuple[list[Claim], list[str]]:
        """Claims and notes beyond the GPU columns (links the name states, the provider's documents)."""
        return [], []

    # -- reading --------------------------------------------------------------------------------

    def read(self, text: str) -> tuple[list[RawOffer], list[Price]]:
        """The offers and prices of the catalog text, parsed once per document."""
        if self._parsed is None or self._parsed[0] is not text:
            offers, prices = self._read(text)
            self._parsed = (text, offers, prices)
        return self._parsed[1], self._parsed[2]

    def _read(self, text: str) -> tuple[list[RawOffer], list[Price]]:
        url = self.catalog_url
        grouped: dict[str, list[Row]] = {}
        for row in csv_rows(text, file_label(url)):
            name = self.type_name(row)
            if not is_gpu_row(row):
                continue
            if not name:
                log.warning("Skipping %s line %d: no InstanceType", self.name, row.number)
                continue
            grouped.setdefault(name, []).append(row)
        offers = collect(
            grouped.items(),
            lambda item: self.offer(*item),
            provider=self.name,
            name=lambda item: item[0],
            empty=f"{file_label(url)}: no GPU instance rows",
        )
        built = {offer.instance_type for offer in offers}
        prices = []
        for name, rows in grouped.items():
            for row in rows if name in built else ():
                try:
                    price = self._priced(row_price(self.name, name, row, url))
                except ParseError as exc:
                    log.warning("Skipping %s price on line %d: %s", self.name, row.number, exc)
                    continue
                if price is not None:
                    prices.append(price)
        return offers, prices

    def _priced(self, price: Price | None) -> Price | None:
        """A price in the currency the file's figures are in (converted to USD at the catalog's rate)."""
        if price is None or self.price_currency == USD:
            return price
        converted = in_currency(price, self.price_currency)
        return replace(
            converted, notes="; ".join(n for n in (self.price_currency_note, converted.notes) if n)
        )

    def gpu_text(self, rows: list[Row]) -> str:
        """The GPU as the columns name it: AcceleratorName and, where it has one, GpuInfo's name."""
        info, _ = _read_gpu_info(rows[0].cell("GpuInfo"))
        named = info.name if info is not None and info.written != "bare" else ""
        return f"{rows[0].cell('AcceleratorName')} {named or ''}".replace("_", " ").strip()

    def offer(self, name: str, rows: list[Row]) -> RawOffer:
        """One instance type's row from its lines (one per region)."""
        url, first = self.catalog_url, rows[0]
        count = float(parse_gpu_count(first.cell("AcceleratorCount")))
        columns, hint = self.gpu_text(rows), self.name_hint(name, first)
        family = family_of(f"{columns} {hint}")
        if family is None:
            raise ParseError(f"unknown GPU {columns!r}")
        memory_claims, notes = catalog_memory(rows, self.memory_reading, family, count, url)
        memory = float(memory_claims[0].value) if memory_claims else None
        gpu, from_name = self._identify(columns, hint, memory)
        label = file_label(url)
        context = f"{label} › AcceleratorName + GpuInfo Name"
        if from_name:
            context += f" + {self.name_columns} of {name!r} (form factor read from the name)"
        model = fact(
            "gpu_model",
            gpu.id,
            quote=first.line,
            source_url=url,
            context=context,
            basis=Basis.INFERRED if from_name else Basis.STATED,
        )
        gpus = fact(
            "gpu_count", count, quote=first.line, source_url=url, context=f"{label} › AcceleratorCount"
        )
        extra_claims, extra_notes = self.extra(name, rows, gpu)
        return RawOffer(
            provider=self.name,
            instance_type=name,
            source_url=url,
            claims=(model, gpus, *memory_claims, *extra_claims),
            notes=(
                *region_notes(rows),
                *notes,
                *extra_notes,
                *self.row_notes,
                *self._age_notes(),
                NO_NETWORK_NOTE,
            ),
            identity=self.identity(name, first),
        )

    @classmethod
    def _age_notes(cls) -> tuple[str, ...]:
        """The note of a row from a frozen offer list (scrapers.offer_lists.ages), or none."""
        listed = cls.offer_list()
        note = age_note(listed) if listed else None
        return (note,) if note else ()

    @staticmethod
    def _identify(columns: str, hint: str, memory: float | None) -> tuple[GpuMatch, bool]:
        """The GPU part, and whether the instance's name (not the columns) decided it."""
        gpu = identify_gpu(f"{columns} {hint}".strip(), memory_gb=memory)
        if not hint:
            return gpu, False
        try:
            from_columns = identify_gpu(columns, memory_gb=memory)
        except ParseError:
            return gpu, True
        return gpu, from_columns.id != gpu.id
