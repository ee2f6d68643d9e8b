"""Vast.ai: SkyPilot's v8 Vast.ai catalog (a marketplace), real file from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Basis, Link, SellerKind
from scrapers.offer_lists.skypilot import csv_rows
from scrapers.offer_lists.vast import REQUEST_SIZE_NOTE, VMS_URL, Vast
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Vast())


def test_real_every_offer_shape_is_a_marketplace_row(real):
    bodies, rows, prices = real
    assert len(rows) == 46 and len(prices) == 67  # one price per line, nothing averaged
    for row in rows.values():
        assert row.seller_kind == SellerKind.MARKETPLACE and row.upstream_provider is None
        assert REQUEST_SIZE_NOTE in row.notes
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_request_size_is_the_same_on_every_line(real):
    """vCPUs and MemoryGiB are SkyPilot's request (32, 64 GiB), not the hosts': the same on every line."""
    lines = csv_rows(real[0][VMS_URL], "vast")
    assert {(r.cell("vCPUs"), r.cell("MemoryGiB")) for r in lines} == {("32", "64.0")}


@pytest.mark.parametrize(
    ("name", "model", "count", "memory_gb", "link", "basis"),
    [
        ("8x-H100_SXM-32-65536", "H100-SXM-80GB", 8, 85.520809984, Link.NVSWITCH, Basis.INFERRED),
        ("2x-H100_NVL-32-65536", "H100-NVL-94GB", 2, 100.48507904, Link.UNKNOWN, Basis.STATED),  # 94 GB: NVL
        ("1x-A100_PCIE-32-65536", "A100-PCIE-80GB", 1, 85.89934592, Link.SINGLE_GPU, Basis.INFERRED),
        # 2 of an 8-GPU SXM board, resold: not NVSwitch by assumption (issue 20)
        ("2x-A100_SXM4-32-65536", "A100-SXM-40GB", 2, 42.94967296, Link.UNKNOWN, Basis.INFERRED),
        ("2x-RTX_4070S_Ti-32-65536", "RTX-4070-TI-SUPER-16GB", 2, 17.171480576, Link.PCIE, Basis.INFERRED),
        ("2x-RTX_3060_Ti-32-65536", "RTX-3060-TI-8GB", 2, 8.589934592, Link.PCIE, Basis.INFERRED),
        ("8x-RTX_4090-32-65536", "RTX-4090-24GB", 8, 25.757220864, Link.PCIE, Basis.STATED),
    ],
)
def test_real_model_from_the_name_and_memory_from_the_total(real, name, model, count, memory_gb, link, basis):
    """MemoryInfo.SizeInMiB is all GPUs together (8x H100 SXM: 652472 MiB = 8 x 81559 MiB)."""
    row = real[1][name]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link) == (model, count, link)
    assert row.gpu_memory_gb == pytest.approx(memory_gb)
    (claim,) = [c for c in row.claims if c.field == "gpu_model"]
    assert claim.basis == basis  # the columns say "H100"; SXM, NVL and PCIE are only in the name
    (memory,) = [c for c in row.claims if c.field == "gpu_memory_gb"]
    assert "all GPUs' memory together, in MiB" in memory.context


def test_real_regions_disagree_on_a_4090s_memory(real):
    row = real[1]["1x-RTX_4090-32-65536"]  # 24564 MiB in Germany and Washington, 49140 MiB in Hong Kong
    assert row.gpu_memory_gb is None and row.gpu_model == "RTX-4090-24GB"
    assert "regions disagree on GPU memory (24564 MiB, 49140 MiB): not stated" in row.notes


def test_real_zero_spot_price_and_utf8_regions(real):
    prices = real[2]
    assert {p.spot_usd_per_hour for p in prices} == {None}  # every SpotPrice is 0.00: no spot market
    assert all("SpotPrice 0.00 is not a price" in p.notes for p in prices)
    regions = {p.region for p in prices if p.instance_type == "2x-RTX_5090-32-65536"}
    assert regions == {"Taiwan, TW, AS", "Texas, US, NA", "Hafnarfjarðarkaupstaður, IS, EU"}
    h100 = [p for p in prices if p.instance_type == "8x-H100_SXM-32-65536"]
    assert [(p.region, p.usd_per_hour) for p in h100] == [("Vietnam, VN, AS", 16.0)]
    assert ", US, NA" in {p.region for p in prices}  # the state left empty, as published
