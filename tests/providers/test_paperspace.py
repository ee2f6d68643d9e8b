"""Paperspace: SkyPilot's v6 Paperspace catalog, real file from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Link
from scrapers.offer_lists.paperspace import VMS_URL, Paperspace
from scrapers.offer_lists.skypilot import csv_rows, gpu_info
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Paperspace())


def test_real_price_is_the_last_column(real):
    bodies, rows, prices = real
    assert bodies[VMS_URL].split("\n", 1)[0].endswith(",SpotPrice,Price")
    assert {p.instance_type: p.usd_per_hour for p in prices}["H100x8"] == 47.60
    assert {p.region for p in prices} == {"East Coast (NY2)"}
    assert len(rows) == 14 and not {"C5", "C9"} & set(rows)  # CPU machines are not rows
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_gpu_info_is_a_bare_name(real):
    row = csv_rows(real[0][VMS_URL], "paperspace")[0]
    assert row.cell("GpuInfo") == "H100" and gpu_info("H100").written == "bare"
    h100 = real[1]["H100x8"]
    assert (
        h100.gpu_memory_gb is None
        and "GpuInfo is a bare GPU name ('H100'): no GPU memory stated" in h100.notes
    )


@pytest.mark.parametrize(
    ("name", "model", "count", "link"),
    [
        ("H100x8", "H100", 8, Link.UNKNOWN),  # SXM or PCIe, 80 or 94 GB: not stated
        ("A100-80Gx8", "A100-80GB", 8, Link.UNKNOWN),
        ("V100-32Gx4", "V100-32GB", 4, Link.UNKNOWN),
        ("GPU+", "QUADRO-M4000-8GB", 1, Link.SINGLE_GPU),
        ("P4000x2", "QUADRO-P4000-8GB", 2, Link.PCIE),
        ("A4000x4", "RTX-A4000-16GB", 4, Link.PCIE),
    ],
)
def test_real_machines(real, name, model, count, link):
    row = real[1][name]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link) == (model, count, link)
