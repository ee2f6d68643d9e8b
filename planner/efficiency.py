"""What share of the datasheet peak a GPU reaches, by kernel class and format, and of its HBM
bandwidth, each read from a published run (``planner/efficiency.csv``, ``planner/hbm_efficiency.csv``:
the URL and the figure read there travel with every row). The datasheet stays the datasheet
(``normalize/gpus.csv``); these factors say what is achieved.

Kernel classes: ``dense_gemm`` (attention projections, dense MLPs, shared experts), ``moe_gemm``
(routed experts' grouped GEMMs), ``attention`` (the score and value products). A GPU family maps to
an architecture (``ARCH``). A row missing for its format takes the same kernel's other format
(``inferred``); an architecture without a row takes Hopper's (``inferred``: Blackwell's kernels are
younger, so this is optimistic); a family with no architecture takes ``FALLBACK`` (the planner's
former single factor). A user's ``--efficiency`` replaces every compute factor.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache
from importlib import resources

from normalize.gpus import BY_ID

KERNELS = ("dense_gemm", "moe_gemm", "attention")
#: GPU family → architecture whose measured rows apply.
ARCH = {
    "H100": "hopper", "H200": "hopper", "H20": "hopper", "H800": "hopper", "GH200": "hopper",
    "B200": "blackwell", "B300": "blackwell", "GB200": "blackwell", "GB300": "blackwell",
    "MI300X": "cdna3", "MI325X": "cdna3", "A100": "ampere",
}  # fmt: skip
#: Where an architecture has no row of its own.
BORROW = {"blackwell": "hopper", "ampere": "hopper"}
FALLBACK = 0.5


@dataclass(frozen=True)
class Efficiency:
    """One factor: the share, whether a row measured it or it was ``inferred`` (and from what)."""

    fraction: float
    basis: str
    detail: str


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("planner").joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@cache
def _compute_table() -> dict[tuple[str, str, str], Efficiency]:
    return {
        (r["arch"], r["kernel"], r["format"]): Efficiency(
            float(r["fraction"]), "measured", f"{r['figure']} ({r['source_url']})"
        )
        for r in _rows("efficiency.csv")
    }


@cache
def _hbm_table() -> dict[str, Efficiency]:
    return {
        r["arch"]: Efficiency(float(r["fraction"]), "measured", f"{r['figure']} ({r['source_url']})")
        for r in _rows("hbm_efficiency.csv")
    }


def arch_of(gpu_model: str) -> str | None:
    spec = BY_ID.get(gpu_model)
    return None if spec is None else ARCH.get(spec.family)


def _kernel_row(arch: str, kernel: str, fmt: str) -> Efficiency | None:
    table = _compute_table()
    if (arch, kernel, fmt) in table:
        return table[(arch, kernel, fmt)]
    others = [v for (a, k, _), v in table.items() if a == arch and k == kernel]
    if others:
        row = others[0]
        return Efficiency(row.fraction, "inferred", f"the {kernel} share in another format: {row.detail}")
    if kernel == "moe_gemm":
        dense = _kernel_row(arch, "dense_gemm", fmt)
        if dense is not None:
            return Efficiency(
                dense.fraction, "inferred", f"no grouped-GEMM run: the dense share, {dense.detail}"
            )
    return None


def compute_efficiency(gpu_model: str, kernel: str, fmt: str) -> Efficiency:
    """The share of ``gpu_model``'s dense ``fmt`` peak ``kernel`` reaches."""
    arch = arch_of(gpu_model)
    for candidate in (arch, BORROW.get(arch or "")):
        if candidate is None:
            continue
        row = _kernel_row(candidate, kernel, fmt)
        if row is not None:
            return (
                row
                if candidate == arch
                else Efficiency(row.fraction, "inferred", f"{candidate}'s: {row.detail}")
            )
    return Efficiency(
        FALLBACK, "assumed", "no published run for this GPU: the planner's former single factor"
    )


def hbm_efficiency(gpu_model: str) -> Efficiency:
    """The share of ``gpu_model``'s datasheet HBM bandwidth a memory-bound kernel reaches."""
    arch = arch_of(gpu_model)
    table = _hbm_table()
    for candidate in (arch, BORROW.get(arch or ""), "hopper"):
        if candidate in table:
            row = table[candidate]
            return (
                row
                if candidate == arch
                else Efficiency(row.fraction, "inferred", f"{candidate}'s: {row.detail}")
            )
    return Efficiency(1.0, "assumed", "no published run")


def every_row() -> list[tuple[str, str, str, Efficiency]]:
    """(arch, kernel, format, factor) of every measured row, and (arch, "hbm", "", factor)."""
    rows = [(a, k, f, e) for (a, k, f), e in _compute_table().items()]
    return rows + [(a, "hbm", "", e) for a, e in _hbm_table().items()]
