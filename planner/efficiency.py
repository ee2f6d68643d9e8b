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
from dataclasses import replace
from functools import cache
from importlib import resources

from normalize.gpus import BY_ID
from records.frozen import record

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


#: A GEMM's share of the peak grows with its reduction length K as K / (K + K0): every output tile
#: pays a fixed prologue and epilogue worth K0 elements of K. K0 is read from DeepGEMM's README
#: table at its February 2025 release (H800, M = 4096): K = 512, 1,536, 2,048, 7,168 and 16,384 at
#: 590, 990, 1,025, 1,304 and 1,358 TFLOPS fit 1,417 x K / (K + 718) within 3%.
GEMM_TILE_K0 = 718.0
GEMM_TILE_K0_SOURCE = "https://github.com/deepseek-ai/DeepGEMM"
#: A grouped (MoE) GEMM's share moves less with K: DeepGEMM PR #73's two contiguous-layout rows on
#: H800, 4 groups of 8,192 rows at N x K = 7,168 x 2,048 and 4,096 x 7,168, reach 1,262 and 1,381
#: TFLOPS: K / (K + K0) in their ratio gives K0 = 281 (the dense K0 would put the second at 1,550).
GROUPED_GEMM_TILE_K0 = 281.0
GROUPED_GEMM_TILE_K0_SOURCE = "https://github.com/deepseek-ai/DeepGEMM/pull/73"
#: A grouped GEMM's share also falls with the rows each group (expert) computes, as M / (M + M0):
#: every group pays a fixed cost worth M0 rows. Read from DeepGEMM's README at its February 2025
#: release (H800): its masked-layout rows, 1, 2 and 4 groups of 1,024, 512 and 256 rows, reach 1,233,
#: 1,040 and 932 TFLOPS at N x K = 4,096 x 7,168 and 925, 916 and 815 at 7,168 x 2,048, against
#: 1,297 and 1,099 for its contiguous rows of 8,192 a group at the same shapes. No row is bound by
#: its HBM reads (each reads its weights in less than its time at ``gemm_weights``' share), so
#: each ratio gives an M0: 61, 137, 105, 226, 111 and 93 rows; the median is 108.
GROUPED_GEMM_ROW_M0 = 108.0
GROUPED_GEMM_ROW_M0_SOURCE = "https://github.com/deepseek-ai/DeepGEMM"


@record
class Efficiency:
    """One factor: the share, whether a row measured it or it was ``inferred`` (and from what), and
    for a GEMM measured at one shape its reduction length ``k_elements`` (None otherwise), the K0 its
    share moves with (``gemm_k_share``: the dense or the grouped GEMM's) and the fixed time
    ``call_s`` each call pays beyond its compute and reads (0 where none was measured), and the rows
    ``m_rows`` a group of it computed (a dense GEMM's M; None where not stated)."""

    fraction: float
    basis: str
    detail: str
    k_elements: float | None = None
    call_s: float = 0.0
    k0_elements: float = GEMM_TILE_K0
    m_rows: float | None = None


def gemm_k_share(k_elements: float, measured: Efficiency) -> float:
    """The share ``measured`` (a GEMM row) becomes for a reduction length of ``k_elements``: the row
    times (K / (K + K0)) / (K_row / (K_row + K0)) with the row's K0, at most 1. A row without a K is
    taken as is."""
    if measured.k_elements is None or k_elements <= 0:
        return measured.fraction
    k0 = measured.k0_elements
    scale = (k_elements / (k_elements + k0)) / (measured.k_elements / (measured.k_elements + k0))
    return min(1.0, measured.fraction * scale)


def grouped_rows_share(rows: float, measured: Efficiency) -> float:
    """The factor a grouped GEMM's share takes when each group computes ``rows`` rows, against the
    rows ``measured`` was run at: (M / (M + M0)) / (M_row / (M_row + M0)) with
    ``GROUPED_GEMM_ROW_M0``, at most 1. A row without its M is taken as is (1)."""
    if measured.m_rows is None or rows <= 0:
        return 1.0
    m0 = GROUPED_GEMM_ROW_M0
    return min(1.0, (rows / (rows + m0)) / (measured.m_rows / (measured.m_rows + m0)))


def _rows(name: str) -> list[dict[str, str]]:
    text = resources.files("planner").joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@cache
def _compute_table() -> dict[tuple[str, str, str], Efficiency]:
    return {
        (r["arch"], r["kernel"], r["format"]): Efficiency(
            float(r["fraction"]),
            "measured",
            f"{r['figure']} ({r['source_url']})",
            float(r["k_elements"]) if r.get("k_elements") else None,
            float(r["call_us"]) * 1e-6 if r.get("call_us") else 0.0,
            GROUPED_GEMM_TILE_K0 if r["kernel"] == "moe_gemm" else GEMM_TILE_K0,
            float(r["m_rows"]) if r.get("m_rows") else None,
        )
        for r in _rows("efficiency.csv")
    }


#: HBM kernel classes: ``stream`` a kernel built to stream memory (attention over the KV cache,
#: FlashMLA's figure; also what training's weight and optimizer reads take), ``gemm_weights`` the
#: weights a GEMM with few rows (a decode batch) streams, which reaches less (DeepGEMM's table),
#: ``kv_cache_fp8`` decode attention over an FP8 KV cache (it dequantizes what it reads, so it
#: streams less than over a 16-bit one). A class without a row takes ``stream``'s (inferred).
HBM_KERNELS = ("stream", "gemm_weights", "kv_cache_fp8")


@cache
def _hbm_table() -> dict[tuple[str, str], Efficiency]:
    return {
        (r["arch"], r["kernel"]): Efficiency(
            float(r["fraction"]), "measured", f"{r['figure']} ({r['source_url']})"
        )
        for r in _rows("hbm_efficiency.csv")
    }


def arch_of(gpu_model: str) -> str | None:
    spec = BY_ID.get(gpu_model)
    return None if spec is None else ARCH.get(spec.family)


def _kernel_row(arch: str, kernel: str, fmt: str) -> Efficiency | None:
    table = _compute_table()
    if (arch, kernel, fmt) in table:
        return table[(arch, kernel, fmt)]
    # FP4 runs on its own tensor-core path: its share stands in for no other format, nor theirs for it.
    others = [
        v for (a, k, f), v in table.items() if a == arch and k == kernel and (f == "fp4") == (fmt == "fp4")
    ]
    if others:
        return replace(
            others[0], basis="inferred", detail=f"the {kernel} share in another format: {others[0].detail}"
        )
    if kernel == "moe_gemm":
        dense = _kernel_row(arch, "dense_gemm", fmt)
        if dense is not None:
            return replace(
                dense, basis="inferred", detail=f"no grouped-GEMM run: the dense share, {dense.detail}"
            )
    return None


@cache
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
                else replace(row, basis="inferred", detail=f"{candidate}'s: {row.detail}")
            )
    return Efficiency(
        FALLBACK, "assumed", "no published run for this GPU: the planner's former single factor"
    )


@cache
def hbm_efficiency(gpu_model: str, kernel: str = "stream") -> Efficiency:
    """The share of ``gpu_model``'s datasheet HBM bandwidth a memory-bound ``kernel`` (one of
    ``HBM_KERNELS``) reaches: the architecture's row, else its ``stream`` row (inferred), else
    Hopper's (inferred)."""
    arch = arch_of(gpu_model)
    table = _hbm_table()
    for candidate in (arch, BORROW.get(arch or ""), "hopper"):
        for kind in dict.fromkeys((kernel, "stream")):
            if candidate is None or (candidate, kind) not in table:
                continue
            row = table[(candidate, kind)]
            if candidate == arch and kind == kernel:
                return row
            whose = f"{candidate}'s" + ("" if kind == kernel else f" {kind} share")
            return Efficiency(row.fraction, "inferred", f"{whose}: {row.detail}")
    return Efficiency(1.0, "assumed", "no published run")


def every_row() -> list[tuple[str, str, str, Efficiency]]:
    """(arch, kernel, format, factor) of every measured row, and (arch, "hbm", HBM kernel, factor)."""
    rows = [(a, k, f, e) for (a, k, f), e in _compute_table().items()]
    return rows + [(a, "hbm", k, e) for (a, k), e in _hbm_table().items()]
