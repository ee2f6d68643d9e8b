"""planner/efficiency.py: every factor cites a published run; families without one say so."""

from __future__ import annotations

import pytest

from planner.efficiency import KERNELS, compute_efficiency, every_row, hbm_efficiency
from planner.link_costs import every_calibration


def test_every_measured_row_cites_its_run():
    rows = every_row()
    assert len(rows) >= 9
    for arch, kernel, _fmt, factor in rows:
        assert kernel in (*KERNELS, "hbm") and 0 < factor.fraction <= 1 and "https://" in factor.detail, arch
    for kind, name, calibration in every_calibration():
        assert (
            calibration.source_url.startswith("https://") and calibration.figure and calibration.value > 0
        ), (
            kind,
            name,
        )


def test_shares_by_family_kernel_and_format():
    # Hopper: DeepGEMM's FP8 GEMM (1,377 of 1,979 TFLOPS), grouped GEMM lower, FA3's attention.
    assert compute_efficiency("H100-SXM-80GB", "dense_gemm", "fp8").fraction == pytest.approx(0.696)
    assert compute_efficiency("H100-SXM-80GB", "moe_gemm", "fp8").fraction < 0.696
    assert compute_efficiency("H200-SXM-141GB", "attention", "bf16").fraction == 0.75
    # MI300X reaches less of its peak than H100 (the reason it ranks below it in MLPerf).
    assert compute_efficiency("MI300X-192GB", "dense_gemm", "fp8").fraction < 0.5
    assert hbm_efficiency("MI300X-192GB").fraction < hbm_efficiency("H100-SXM-80GB").fraction
    # Blackwell has its own FP4 GEMM row (DeepGEMM#348) and borrows Hopper's FP8 one, saying so; an
    # FP4 share never stands in for another format.
    assert compute_efficiency("B200-SXM-180GB", "dense_gemm", "fp4").fraction == pytest.approx(0.592)
    borrowed = compute_efficiency("B200-SXM-180GB", "dense_gemm", "fp8")
    assert borrowed.basis == "inferred" and "hopper" in borrowed.detail and borrowed.fraction == 0.696
    assert compute_efficiency("L4-24GB", "dense_gemm", "bf16").basis == "assumed"
