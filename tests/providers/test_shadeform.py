"""Shadeform: SkyPilot's v8 Shadeform catalog (an aggregator), real file from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Link, SellerKind
from scrapers.offer_lists.shadeform import VMS_URL, Shadeform
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Shadeform())


def test_real_every_offer_is_resold_and_names_its_cloud(real):
    bodies, rows, prices = real
    assert len(rows) == 85 and len(prices) == 118
    assert {r.seller_kind for r in rows.values()} == {SellerKind.AGGREGATOR}
    assert {r.upstream_provider for r in rows.values()} == {
        "lambda",  # "lambdalabs_...": this catalog's provider id
        "scaleway",
        "paperspace",
        "hyperstack",
        "crusoe",  # not a provider of this catalog: Shadeform's spelling
        "massedcompute",
        "denvr",
        "excesssupply",
        "vultr",
    }
    assert {r.upstream_instance_type for r in rows.values()} == {None}  # Shadeform names none
    assert unquoted(bodies, rows.values(), prices) == []


@pytest.mark.parametrize(
    ("name", "model", "memory_gb", "link"),
    [
        ("lambdalabs_H100-sxm5x8", "H100-SXM-80GB", 80, Link.NVSWITCH),
        ("crusoe_A100-80G-sxm4x8", "A100-SXM-80GB", 80, Link.NVSWITCH),
        ("denvr_A100-sxm4x8", "A100-SXM-40GB", 40, Link.NVSWITCH),
        ("excesssupply_H200x8", "H200-141GB", 141, Link.UNKNOWN),
        ("denvr_Gaudi2x8", "GAUDI2-96GB", 96, Link.UNKNOWN),
        ("vultr_A16x2", "A16-16GB", 16, Link.PCIE),
    ],
)
def test_real_size_in_mib_holds_gigabytes(real, name, model, memory_gb, link):
    """MemoryInfo.SizeInMiB is 80 for an H100: GB despite its name; the total sits in the Gpus entry."""
    row = real[1][name]
    assert (row.gpu_model, row.gpu_memory_gb, row.intra_node_link) == (model, memory_gb, link)
    assert "TotalGpuMemoryInMiB" not in row.notes  # inside the entry, and consistent: 8 x 80 = 640
    assert f"'SizeInMiB': {memory_gb}}}" in real[0][VMS_URL]


def test_real_prices_of_a_resold_lambda_offer(real):
    prices = [p for p in real[2] if p.instance_type == "lambdalabs_H100-sxm5x8"]
    assert [(p.region, p.usd_per_hour) for p in prices] == [("saltlakecity-usa-1", 31.92)]
