"""Canonical GPU names that keep the form factor, and the datasheet facts used for inferred values.

The same chip name covers parts with different links: an H100 SXM sits on an NVSwitch board at
900 GB/s, an H100 NVL pairs over an optional bridge, an H100 PCIe may have nothing but PCIe. A
catalog keyed on "H100" alone loses exactly the fact that decides tensor parallelism, so every
scraped name resolves to one row of ``GPUS`` (or, when the form factor cannot be told, to a
family-level id whose link stays unknown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from normalize.errors import ParseError
from normalize.units import Quantity
from normalize.vocab import PCIE_X16_GBYTES_PER_S, Link

# A link that depends on how the provider built the server: two NVL/PCIe cards may or may not
# carry an NVLink bridge. Inference cannot choose; the catalog leaves such a link unknown.
PCIE_OR_BRIDGE = "pcie-or-nvlink-bridge"

GIB_PER_GB = Quantity(1, "gibibyte").to("gigabyte").magnitude  # 1.073741824
MEMORY_TOLERANCE = 0.05


@dataclass(frozen=True)
class GpuSpec:
    """One GPU part as its vendor's datasheet describes it.

    ``link_gbytes_per_s`` is the total bidirectional GPU-to-GPU bandwidth per GPU of the part's
    scale-up link (NVLink, NVSwitch, Infinity Fabric, or the bridge of a bridged pair).
    ``scale_up_domain_gpus`` is how many GPUs share one such domain; ``rack_scale`` marks domains
    that span several instances (GB200/GB300 NVL72).
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

    @property
    def pcie_gbytes_per_s(self) -> float | None:
        return PCIE_X16_GBYTES_PER_S.get(self.pcie_gen) if self.pcie_gen else None

    def datasheet_quote(self) -> str:
        """The datasheet line an inferred value cites."""
        parts = [f"{self.id}: {self.link}"]
        if self.link_gbytes_per_s is not None:
            parts.append(f"{self.link_gbytes_per_s:g} GB/s per GPU (bidirectional)")
        if self.pcie_gen:
            parts.append(f"PCIe Gen{self.pcie_gen} x16 {self.pcie_gbytes_per_s:g} GB/s")
        if self.memory_gbytes_per_s is not None:
            parts.append(f"memory {self.memory_gbytes_per_s:g} GB/s")
        return "; ".join(parts)


_NV = "https://www.nvidia.com/en-us/data-center"
_AMD = "https://www.amd.com/en/products/accelerators/instinct"

GPUS: tuple[GpuSpec, ...] = (
    GpuSpec("V100-SXM2-16GB", "V100", "SXM2", 16, Link.NVLINK, 300, 3, 8, 900, f"{_NV}/v100/"),
    GpuSpec("V100-SXM2-32GB", "V100", "SXM2", 32, Link.NVLINK, 300, 3, 8, 900, f"{_NV}/v100/"),
    GpuSpec("V100-PCIE-16GB", "V100", "PCIE", 16, Link.PCIE, None, 3, 1, 900, f"{_NV}/v100/"),
    GpuSpec("A100-SXM-40GB", "A100", "SXM", 40, Link.NVSWITCH, 600, 4, 8, 1555, f"{_NV}/a100/"),
    GpuSpec("A100-SXM-80GB", "A100", "SXM", 80, Link.NVSWITCH, 600, 4, 8, 2039, f"{_NV}/a100/"),
    GpuSpec("A100-PCIE-40GB", "A100", "PCIE", 40, PCIE_OR_BRIDGE, 600, 4, 2, 1555, f"{_NV}/a100/"),
    GpuSpec("A100-PCIE-80GB", "A100", "PCIE", 80, PCIE_OR_BRIDGE, 600, 4, 2, 1935, f"{_NV}/a100/"),
    GpuSpec("H100-SXM-80GB", "H100", "SXM", 80, Link.NVSWITCH, 900, 5, 8, 3350, f"{_NV}/h100/"),
    GpuSpec("H100-PCIE-80GB", "H100", "PCIE", 80, PCIE_OR_BRIDGE, 600, 5, 2, 2000, f"{_NV}/h100/"),
    GpuSpec("H100-NVL-94GB", "H100", "NVL", 94, PCIE_OR_BRIDGE, 600, 5, 2, 3900, f"{_NV}/h100/"),
    GpuSpec("H200-SXM-141GB", "H200", "SXM", 141, Link.NVSWITCH, 900, 5, 8, 4800, f"{_NV}/h200/"),
    GpuSpec("H200-NVL-141GB", "H200", "NVL", 141, PCIE_OR_BRIDGE, 900, 5, 4, 4800, f"{_NV}/h200/"),
    GpuSpec("B200-SXM-180GB", "B200", "SXM", 180, Link.NVSWITCH, 1800, 5, 8, 8000, f"{_NV}/hgx/"),
    GpuSpec("B300-SXM-288GB", "B300", "SXM", 288, Link.NVSWITCH, 1800, 6, 8, 8000, f"{_NV}/hgx/"),
    GpuSpec(
        "GB200-186GB",
        "GB200",
        None,
        186,
        Link.NVSWITCH,
        1800,
        None,
        72,
        8000,
        f"{_NV}/gb200-nvl72/",
        rack_scale=True,
    ),
    GpuSpec(
        "GB300-288GB",
        "GB300",
        None,
        288,
        Link.NVSWITCH,
        1800,
        None,
        72,
        8000,
        f"{_NV}/gb300-nvl72/",
        rack_scale=True,
    ),
    GpuSpec("L4-24GB", "L4", None, 24, Link.PCIE, None, 4, 1, 300, f"{_NV}/l4/"),
    GpuSpec("L40S-48GB", "L40S", None, 48, Link.PCIE, None, 4, 1, 864, f"{_NV}/l40s/"),
    GpuSpec("L40-48GB", "L40", None, 48, Link.PCIE, None, 4, 1, 864, f"{_NV}/l40/"),
    GpuSpec("A10G-24GB", "A10G", None, 24, Link.PCIE, None, 4, 1, 600, f"{_NV}/products/a10-gpu/"),
    GpuSpec("A10-24GB", "A10", None, 24, Link.PCIE, None, 4, 1, 600, f"{_NV}/products/a10-gpu/"),
    GpuSpec("T4-16GB", "T4", None, 16, Link.PCIE, None, 3, 1, 320, f"{_NV}/tesla-t4/"),
    GpuSpec("T4G-16GB", "T4G", None, 16, Link.PCIE, None, 3, 1, 320, f"{_NV}/tesla-t4/"),
    GpuSpec("P40-24GB", "P40", None, 24, Link.PCIE, None, 3, 1, 346, f"{_NV}/tesla-p40/"),
    GpuSpec(
        "RTX-PRO-6000-96GB",
        "RTX-PRO-6000",
        None,
        96,
        Link.PCIE,
        None,
        5,
        1,
        1597,
        f"{_NV}/rtx-pro-6000-blackwell-server-edition/",
    ),
    GpuSpec(
        "MI300X-192GB",
        "MI300X",
        None,
        192,
        Link.INFINITY_FABRIC,
        896,
        5,
        8,
        5300,
        f"{_AMD}/mi300/mi300x.html",
    ),
    GpuSpec(
        "RADEON-PRO-V520-8GB",
        "RADEON-PRO-V520",
        None,
        8,
        Link.PCIE,
        None,
        None,
        1,
        None,
        "https://www.amd.com/en/products/server-accelerators/amd-radeon-pro-v520",
    ),
    GpuSpec(
        "GAUDI-HL205-32GB",
        "GAUDI-HL205",
        None,
        32,
        Link.UNKNOWN,
        None,
        None,
        None,
        None,
        "https://habana.ai/products/gaudi/",
    ),
)

# Family names as providers spell them, most specific first ("GB200" before "B200", "A10G"
# before "A10", "H100 NVL" is a form factor of H100).
FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    ("GB300", r"\bGB300\b|Blackwell Ultra"),
    ("GB200", r"\bGB200\b"),
    ("B300", r"\bB300\b"),
    ("B200", r"\bB200\b"),
    ("H200", r"\bH200\b"),
    ("H100", r"\bH100\b"),
    ("A100", r"\bA100\b"),
    ("A10G", r"\bA10G\b"),
    ("A10", r"\bA10\b"),
    ("L40S", r"\bL40S\b"),
    ("L40", r"\bL40\b"),
    ("L4", r"\bL4\b"),
    ("T4G", r"\bT4g\b"),
    ("T4", r"\bT4\b"),
    ("V100", r"\bV100\b"),
    ("P40", r"\bP40\b"),
    ("RTX-PRO-6000", r"RTX\s*PRO\s*6000"),
    ("MI300X", r"\bMI300X?\b"),
    ("RADEON-PRO-V520", r"Radeon\s+Pro\s+V520"),
    ("GAUDI-HL205", r"Gaudi\s+HL-?205"),
)
_FORM_FACTORS = (("SXM2", r"\bSXM2\b"), ("SXM", r"\bSXM\d?\b"), ("NVL", r"\bNVL\b"), ("PCIE", r"\bPCI-?e\b"))

BY_ID = {spec.id: spec for spec in GPUS}


@dataclass(frozen=True)
class GpuMatch:
    """The result of resolving a provider's GPU name.

    ``spec`` is None when the family is known but its form factor is not (``id`` is then the
    family-level name, e.g. 'H100-80GB'). ``memory_mismatch`` marks a stated memory that fits no
    part of the family (a partitioned GPU, for instance).
    """

    id: str
    family: str
    spec: GpuSpec | None
    memory_mismatch: bool = False


def family_of(name: str) -> str | None:
    """The GPU family a provider's text names ('8 x NVIDIA H100 GPU' → 'H100'), or None."""
    for family, pattern in FAMILY_PATTERNS:
        if re.search(pattern, name, flags=re.IGNORECASE):
            return family
    return None


def _form_factor_of(name: str) -> str | None:
    for form, pattern in _FORM_FACTORS:
        if re.search(pattern, name, flags=re.IGNORECASE):
            return form
    return None


def _memory_distance(stated_gb: float, nominal_gb: float) -> float:
    """Relative distance, reading the provider's figure as either GB or GiB of the nominal size."""
    return min(abs(stated_gb - nominal_gb), abs(stated_gb - nominal_gb * GIB_PER_GB)) / nominal_gb


def identify_gpu(name: str, *, memory_gb: float | None = None, form_factor: str | None = None) -> GpuMatch:
    """Resolve a provider's GPU name to a canonical part.

    The form factor comes from the name when it says one (SXM, NVL, PCIe), else from the
    ``form_factor`` hint a scraper passes for a family it knows. Raises ParseError for an unknown
    family.
    """
    family = family_of(name)
    if family is None:
        raise ParseError(f"unknown GPU {name!r}")
    form = _form_factor_of(name) or form_factor
    family_parts = [s for s in GPUS if s.family == family]
    candidates = [s for s in family_parts if s.form_factor == form] or family_parts
    fits = candidates
    if memory_gb is not None:
        fits = [s for s in candidates if _memory_distance(memory_gb, s.memory_gb) <= MEMORY_TOLERANCE]
        if not fits:  # "PCIe H100 (94GB)" is the NVL card: memory outranks a loose form-factor word
            candidates = family_parts
            fits = [s for s in candidates if _memory_distance(memory_gb, s.memory_gb) <= MEMORY_TOLERANCE]
    if len(fits) == 1:
        return GpuMatch(fits[0].id, family, fits[0])
    if not fits and len(candidates) == 1:
        return GpuMatch(candidates[0].id, family, candidates[0], memory_mismatch=True)
    if not fits:
        raise ParseError(f"{name!r} with {memory_gb} GB fits no known {family} part")
    nominal = {s.memory_gb for s in fits}
    if len(nominal) == 1:
        return GpuMatch(f"{family}-{nominal.pop():g}GB", family, None)
    return GpuMatch(family, family, None)
