"""DigitalOcean: SkyPilot's v6 DigitalOcean catalog, real file from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Basis, Link
from scrapers.offer_lists.digitalocean import VMS_URL, DigitalOcean
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(DigitalOcean())


def test_real_gpu_droplets_only(real):
    bodies, rows, prices = real
    assert sorted(rows) == ["gpu-h100x1-80gb", "gpu-h100x8-640gb"]  # 36 CPU lines are not rows
    assert [(p.instance_type, p.region, p.usd_per_hour) for p in prices] == [
        ("gpu-h100x1-80gb", "tor1", 6.74),
        ("gpu-h100x8-640gb", "tor1", 47.60),
    ]
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_lower_case_gpu_info_and_total_of_one_gpu(real):
    bodies, rows, _ = real
    assert "'memoryinfo': {'sizeinmib': 81559}" in bodies[VMS_URL]
    eight = rows["gpu-h100x8-640gb"]
    assert (eight.gpu_model, eight.gpu_count) == ("H100-80GB", 8)
    assert eight.gpu_memory_gb == pytest.approx(85.520809984)  # 81559 MiB per GPU
    assert "GpuInfo TotalGpuMemoryInMiB 81559 is not the 8 GPUs' 652472: not used" in eight.notes


def test_real_no_form_factor_no_inferred_link(real):
    eight = real[1]["gpu-h100x8-640gb"]
    assert (eight.intra_node_link, eight.intra_node_basis) == (Link.UNKNOWN, Basis.MISSING)
    assert eight.missing_intra_bw and eight.missing_inter_bw  # a finding, not a guess
