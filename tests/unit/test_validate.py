"""The gates a provider's fresh rows must pass before they replace its previous ones."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from catalog.validate import check, problems
from normalize.errors import ValidationError
from records.offers import Claim, RawOffer

URL = "https://example.test/p"


def row(name="x", **values):
    claims = tuple(Claim(field=f, value=v, quote=f"{f} {v}", source_url=URL) for f, v in values.items())
    return build_offer(RawOffer("test", name, URL, claims), scraped_at=datetime(2026, 12, 1))


def test_physical_bounds():
    assert problems(row(inter_node_gbits_per_s=3200.0)) == []
    assert problems(row(inter_node_gbits_per_s=32000.0)) == [
        "inter_node_gbits_per_s 32000 exceeds 30000 Gbit/s per node"]  # fmt: skip
    assert problems(row(frontend_gbits_per_s=80000.0)) == [
        "frontend_gbits_per_s 80000 exceeds 30000 Gbit/s per node"
    ]
    too_fast = row(gpu_model="H100-SXM-80GB", gpu_count=8.0, intra_node_gbytes_per_s=3600.0)
    assert problems(too_fast) == ["intra-node 3600 GB/s per GPU exceeds 2000"]


def test_a_gbit_figure_printed_as_gbytes_for_nvlink():
    # "900 Gb/s NVLink" on an H100 board would store 112.5 GB/s: an eighth of the datasheet's 900.
    suspect = row(gpu_model="H100-SXM-80GB", gpu_count=8.0, intra_node_gbytes_per_s=112.5)
    assert problems(suspect) == [
        "stated GPU-to-GPU 112.5 GB/s is an eighth of the H100-SXM-80GB datasheet's 900 GB/s: "
        "a Gbit/s figure printed as GB/s"
    ]
    slow_nvlink = row(
        intra_node_link="nvlink", gpu_count=8.0, gpu_model="V100-16GB", intra_node_gbytes_per_s=50.0
    )
    assert problems(slow_nvlink) == ["NVLink at 50 GB/s per GPU only makes sense as Gbit/s"]


def test_zero_rows_and_halving_are_refused():
    with pytest.raises(ValidationError, match="no rows"):
        check("p", [], rows_before=10)
    with pytest.raises(ValidationError, match="4 rows against 10 before"):
        check("p", [row(str(i)) for i in range(4)], rows_before=10)
    check("p", [row(str(i)) for i in range(5)], rows_before=10)  # half is still accepted


def test_bad_rows_are_listed_with_a_count():
    rows = [row(str(i), inter_node_gbits_per_s=99999.0) for i in range(5)]
    with pytest.raises(ValidationError, match=r"values outside physical bounds: 0: .* \(\+2 more\)"):
        check("p", rows, rows_before=0)


def test_network_per_gpu_and_floor():
    # A Gbps header read as Tbps: one T4's "5" becomes 5,000 Gbit/s, under the per-node bound.
    one_gpu = row(gpu_model="T4-16GB", gpu_count=1.0, frontend_gbits_per_s=5000.0)
    assert problems(one_gpu) == ["frontend_gbits_per_s 5000 is 5000 Gbit/s per GPU, above 1600"]
    gb200 = row(gpu_model="GB200-186GB", gpu_count=4.0, inter_node_gbits_per_s=3200.0)  # 800 per GPU: real
    assert problems(gb200) == []
    slice_ = row(gpu_model="L4-24GB", gpu_count=0.125, frontend_gbits_per_s=10.0)  # a slice has a whole NIC
    assert problems(slice_) == []
    # ... and read as Mbps: "5" becomes 0.005 Gbit/s.
    assert problems(row(gpu_count=1.0, gpu_model="T4-16GB", inter_node_gbits_per_s=0.005)) == [
        "inter_node_gbits_per_s 0.005 is below 0.5 Gbit/s per node"
    ]


def test_stated_figures_far_from_the_gpu_datasheet():
    ten_x = row(gpu_model="H200-SXM-141GB", gpu_count=8.0, gpu_memory_gbytes_per_s=48000.0)
    assert problems(ten_x) == [
        "stated memory bandwidth 48000 GB/s is 10x the H200-SXM-141GB datasheet's 4800 GB/s: "
        "a unit or prefix error"
    ]
    milli = row(gpu_model="H100-SXM-80GB", gpu_count=8.0, intra_node_gbytes_per_s=0.9)
    assert "stated GPU-to-GPU 0.9 GB/s is 0.001x the H100-SXM-80GB datasheet's 900 GB/s" in problems(milli)[0]
    assert problems(row(gpu_model="MI300X-192GB", gpu_count=8.0, intra_node_gbytes_per_s=896.0)) == []
