"""Canonical GPU names that keep the form factor, and the datasheet facts used for inferred values.

The same chip name covers parts with different links: an H100 SXM sits on an NVSwitch board at
900 GB/s, an H100 NVL pairs over an optional bridge, an H100 PCIe may have nothing but PCIe. A
catalog keyed on "H100" alone loses exactly the fact that decides tensor parallelism, so every
scraped name resolves to one row of ``GPUS`` (or, when the form factor cannot be told, to a
family-level id whose link stays unknown).
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass, replace
from importlib import resources

from normalize.errors import ParseError
from normalize.vocab import PCIE_X16_GBYTES_PER_S, Link, link_from_text

# A link that depends on how the provider built the server: two NVL/PCIe cards may or may not
# carry an NVLink bridge. Inference cannot choose; the catalog leaves such a link unknown.
PCIE_OR_BRIDGE = "pcie-or-nvlink-bridge"

MEMORY_TOLERANCE = 0.05


@dataclass(frozen=True)
class GpuSpec:
    """One GPU part as its vendor's datasheet describes it.

    ``link_gbytes_per_s`` is the total bidirectional GPU-to-GPU bandwidth per GPU of the part's
    scale-up link (NVLink, NVSwitch, Infinity Fabric, or the bridge of a bridged pair).
    ``scale_up_domain_gpus`` is how many GPUs share one such domain; ``rack_scale`` marks domains
    that span several instances (GB200/GB300 NVL72).

    ``dense_bf16_tflops``, ``dense_fp8_tflops`` and (Blackwell) ``dense_fp4_tflops`` are the dense
    (no sparsity) tensor-core peaks per GPU from the same vendor page, None where the part has no
    such tensor cores or no datasheet figure was read. ``tflops_printed_sparse`` says the vendor
    prints only the 2:4-sparsity figure (the dense one stored is half of it); ``tflops_note``
    restates, in our words, what the page prints.
    """

    id: str
    family: str
    form_factor: str | None
    memory_gb: float
    link: str
    link_gbytes_per_s: float | None
    pcie_gen: int | None
    scale_up_domain_gpus: int | None
    memory_gbytes_per_s: float | None
    datasheet_url: str
    rack_scale: bool = False
    dense_bf16_tflops: float | None = None
    dense_fp8_tflops: float | None = None
    dense_fp4_tflops: float | None = None
    tflops_printed_sparse: bool | None = None
    tflops_note: str = ""
    table_row: str = ""  # the line of normalize/gpus.csv this spec was read from, as written
    cells: tuple[tuple[str, str], ...] = ()  # that line as (column, cell) pairs

    def quote_cells(self, *columns: str) -> str:
        """The cells of this part's table row that a value was read from, as written: what a datasheet
        claim quotes (so adding a column to the table changes no claim)."""
        return _quote_cells(self.cells, columns)

    @property
    def pcie_gbytes_per_s(self) -> float | None:
        return PCIE_X16_GBYTES_PER_S.get(self.pcie_gen) if self.pcie_gen else None


@functools.lru_cache(maxsize=1024)
def _quote_cells(row: tuple[tuple[str, str], ...], columns: tuple[str, ...]) -> str:
    """``GpuSpec.quote_cells`` of a table row, made once per row and columns (a datasheet claim is
    inferred for most rows of a refresh)."""
    cells = dict(row)
    return "; ".join(f"{column}={cells[column]}" for column in ("id", *columns))


def _number(text: str) -> float | None:
    return float(text) if text else None


GPU_TABLE = "normalize/gpus.csv"


def gpu_table_lines() -> list[str]:
    """The lines of the GPU table as written (header first): what a datasheet claim quotes."""
    return resources.files("normalize").joinpath("gpus.csv").read_text(encoding="utf-8").splitlines()


def _flag(text: str) -> bool | None:
    return text == "true" if text else None


def _load_gpus() -> tuple[GpuSpec, ...]:
    """The datasheet table, normalize/gpus.csv: one row per GPU part."""
    lines = gpu_table_lines()
    return tuple(
        GpuSpec(
            id=row["id"],
            family=row["family"],
            form_factor=row["form_factor"] or None,
            memory_gb=float(row["memory_gb"]),
            link=row["link"],
            link_gbytes_per_s=_number(row["link_gbytes_per_s"]),
            pcie_gen=int(row["pcie_gen"]) if row["pcie_gen"] else None,
            scale_up_domain_gpus=int(row["scale_up_domain_gpus"]) if row["scale_up_domain_gpus"] else None,
            memory_gbytes_per_s=_number(row["memory_gbytes_per_s"]),
            datasheet_url=row["datasheet_url"],
            rack_scale=row["rack_scale"] == "true",
            dense_bf16_tflops=_number(row["dense_bf16_tflops"]),
            dense_fp8_tflops=_number(row["dense_fp8_tflops"]),
            dense_fp4_tflops=_number(row.get("dense_fp4_tflops") or ""),
            tflops_printed_sparse=row["tflops_printed_sparse"] == "true"
            if row["tflops_printed_sparse"]
            else None,
            tflops_note=row["tflops_note"],
            table_row=line,
            cells=tuple(row.items()),
        )
        for line, row in zip(lines[1:], csv.DictReader(lines), strict=True)
    )


@functools.cache  # compiled on first use: the read path (the planner) never names a family
def _load_families() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Family names as providers spell them, most specific first (normalize/gpu_families.csv):
    "GB200" before "B200", "A10G" before "A10", "RTX 4080 SUPER" before "RTX 4080"."""
    with resources.files("normalize").joinpath("gpu_families.csv").open(encoding="utf-8") as handle:
        return tuple(
            (row["family"], re.compile(row["pattern"], re.IGNORECASE)) for row in csv.DictReader(handle)
        )


GPUS = _load_gpus()
_FORM_FACTORS = (
    ("SXM2", r"\bSXM2\b"),
    ("SXM", r"\bSXM\d?\b|\bHGX\b"),  # HGX boards carry SXM modules
    ("NVL", r"\bNVL\b"),
    ("MAXQ", r"\bMax-?Q\b"),
    ("WS", r"\bWorkstation\b"),
    ("SERVER", r"\bServer Edition\b|\bRTX\s*PRO\s*Server\b"),  # AWS: "RTX PRO Server 6000"
    ("SFF", r"\bSFF\b"),
    ("PCIE", r"\bPCI-?e\b"),
)

BY_ID = {spec.id: spec for spec in GPUS}


@dataclass(frozen=True)
class GpuMatch:
    """The result of resolving a provider's GPU name.

    ``spec`` is None when the family is known but its form factor is not (``id`` is then the
    family-level name, e.g. 'H100-80GB'). ``memory_mismatch`` marks a stated memory that fits no
    part of the family (a partitioned GPU, for instance). ``form_factor_inferred`` says the form
    factor came from the caller's hint (a family's board), not from the name itself.
    """

    id: str
    family: str
    spec: GpuSpec | None
    memory_mismatch: bool = False
    form_factor_inferred: bool = False


@functools.lru_cache(maxsize=4096)  # a refresh asks about ~200 distinct names thousands of times
def family_of(name: str) -> str | None:
    """The GPU family a provider's text names ('8 x NVIDIA H100 GPU' → 'H100'), or None."""
    name = re.sub(r"(?<=\d)[x×](?=[A-Za-z])", " x ", name)  # OCI writes "(8xH100)"
    for family, pattern in _load_families():
        if pattern.search(name):
            return family
    return None


def _form_factor_of(name: str) -> str | None:
    for form, pattern in _FORM_FACTORS:
        if re.search(pattern, name, flags=re.IGNORECASE):
            return form
    return None


def memory_fits(stated_gb: float, nominal_gb: float) -> bool:
    """Whether a provider's memory figure is the nominal size, read as GB or as GiB of it (within
    ``MEMORY_TOLERANCE``): "80 GB", "81920 MiB" and "85.9 GB" all fit an 80 GB part."""
    gib_per_gb = _gib_per_gb()  # 1.073741824
    distance = min(abs(stated_gb - nominal_gb), abs(stated_gb - nominal_gb * gib_per_gb)) / nominal_gb
    return distance <= MEMORY_TOLERANCE


@functools.cache
def _gib_per_gb() -> float:
    """The registry's GB in a GiB, asked for once: an import in a function looks for the module's
    ``__path__`` on every call, which ``normalize.units``' module ``__getattr__`` answers by raising."""
    from normalize.units import factor  # the read path (the planner) never parses units

    return factor("gibibyte", "gigabyte")


@functools.lru_cache(maxsize=4096)  # pure, and its result is frozen: the same name resolves once
def identify_gpu(name: str, *, memory_gb: float | None = None, form_factor: str | None = None) -> GpuMatch:
    """Resolve a provider's GPU name to a canonical part.

    The form factor comes from the name when it says one (SXM, NVL, PCIe), else from the
    ``form_factor`` hint a scraper passes for a family it knows (``normalize.boards``); the match
    then says so (``form_factor_inferred``). Raises ParseError for an unknown family.
    """
    match = _identify(name, memory_gb, form_factor)
    hinted = _form_factor_of(name) is None and form_factor is not None
    if hinted and match.spec is not None and match.spec.form_factor == form_factor:
        return replace(match, form_factor_inferred=True)
    return match


def _identify(name: str, memory_gb: float | None, form_factor: str | None) -> GpuMatch:
    family = family_of(name)
    if family is None:
        raise ParseError(f"unknown GPU {name!r}")
    if memory_gb is None:
        from normalize.units import find_memory_gb

        memory_gb = next(iter(find_memory_gb(name)), None)  # "NVIDIA A100-SXM4-80GB"
    form = _form_factor_of(name) or form_factor
    family_parts = [s for s in GPUS if s.family == family]
    if form is None and link_from_text(name) in (Link.NVLINK, Link.NVSWITCH):
        # "NVLINK-connected V100": a part whose link is PCIe alone (no bridge) cannot be it
        family_parts = [s for s in family_parts if s.link != Link.PCIE] or family_parts
    # "SXM" (an SXM board, generation unsaid) covers the SXM2 modules of V100 and P100 boards too
    form_parts = [
        s for s in family_parts if s.form_factor == form or (form, s.form_factor) == ("SXM", "SXM2")
    ]
    candidates = form_parts or family_parts
    fits = candidates
    if memory_gb is not None:
        fits = [s for s in candidates if memory_fits(memory_gb, s.memory_gb)]
        if not fits:  # "PCIe H100 (94GB)" is the NVL card: memory outranks a loose form-factor word
            candidates = family_parts
            fits = [s for s in candidates if memory_fits(memory_gb, s.memory_gb)]
    if len(fits) == 1:
        return GpuMatch(fits[0].id, family, fits[0])
    if not fits and len(candidates) == 1:
        return GpuMatch(candidates[0].id, family, candidates[0], memory_mismatch=True)
    if not fits and len(form_parts) == 1:  # a MIG slice of a Server Edition card
        return GpuMatch(form_parts[0].id, family, form_parts[0], memory_mismatch=True)
    if not fits:
        raise ParseError(f"{name!r} with {memory_gb} GB fits no known {family} part")
    nominal = {s.memory_gb for s in fits}
    if len(nominal) == 1:
        return GpuMatch(f"{family}-{nominal.pop():g}GB", family, None)
    return GpuMatch(family, family, None)


def __getattr__(name: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """``FAMILY_PATTERNS``: (family, pattern) pairs, most specific first, loaded on first use."""
    if name == "FAMILY_PATTERNS":
        return _load_families()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
