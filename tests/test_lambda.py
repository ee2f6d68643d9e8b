"""Lambda: curated facts only (its spec pages render in JavaScript). Checked against the real
documents they quote, which ../shared holds."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.vocab import Fabric, Link
from scrapers import curated_facts
from tests.conftest import shared_fixture


@shared_fixture(scope="module")
def real():
    return {
        o.instance_type: build_offer(o, scraped_at=datetime(2026, 12, 1))
        for o in curated_facts.load("lambda")
    }


@pytest.mark.parametrize(
    ("name", "model", "count", "memory_gb"),
    [
        ("gpu_1x_a6000", "RTX-A6000-48GB", 1, 51.539607552),
        ("gpu_2x_a6000", "RTX-A6000-48GB", 2, 51.539607552),
        ("gpu_4x_a6000", "RTX-A6000-48GB", 4, 51.539607552),
        ("gpu_8x_a100", "A100-40GB", 8, 42.94967296),  # form factor not stated: family-level
        ("gpu_8x_v100", "V100-16GB", 8, 17.179869184),
    ],
)
def test_real_instance_types(real, name, model, count, memory_gb):
    row = real[name]
    assert (row.gpu_model, row.gpu_count) == (model, count)
    assert row.gpu_memory_gb == pytest.approx(memory_gb)  # the per-GPU MiB, not the "total" trap
    # "up to 200 Gbps" between instances is stated per region, not per instance type: noted, not taken
    assert row.missing_inter_bw and row.inter_node_fabric == Fabric.UNKNOWN
    assert "'up to 200 Gbps' between instances per region" in row.notes


def test_real_bridged_cards_and_unknown_form_factors_stay_missing(real):
    assert real["gpu_4x_a6000"].intra_node_link == Link.UNKNOWN and real["gpu_4x_a6000"].missing_intra_bw
    assert real["gpu_8x_a100"].missing_intra_bw


def test_real_one_click_cluster_fabric_without_a_published_bandwidth(real):
    cluster = real["1-Click Cluster B200 (8 GPUs per node)"]
    assert (cluster.gpu_model, cluster.gpu_count) == ("B200-SXM-180GB", 8)
    assert cluster.inter_node_fabric == Fabric.INFINIBAND
    assert cluster.missing_inter_bw  # unpublished: a finding, not a guess
