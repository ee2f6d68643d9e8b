"""Prime Intellect: SkyPilot's v8 Prime Intellect catalog (an aggregator), real file from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Basis, Link, SellerKind
from scrapers.offer_lists.primeintellect import VMS_URL, PrimeIntellect
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(PrimeIntellect())


def test_real_upstream_cloud_and_instance_id(real):
    bodies, rows, prices = real
    assert len(rows) == 79 and len(prices) == 115
    row = rows["lambdalabs__8xH100_80GB__208__1800"]
    assert (row.seller_kind, row.upstream_provider, row.upstream_instance_type) == (
        SellerKind.AGGREGATOR,
        "lambda",
        "gpu_8x_h100_sxm5",
    )
    assert (
        rows["datacrunch__8xH100_80GB__176__1480"].upstream_provider,
        rows["hyperstack__8xH100_80GB__192__960"].upstream_instance_type,
    ) == ("verda", "n3-H100-SXM5x8")
    assert rows["crusoecloud__8xA100_80GB__96__960"].upstream_provider == "crusoecloud"
    assert rows["nebius__8xH100_80GB__128__1600"].upstream_instance_type == "gpu-h100-sxm_8gpu-128vcpu-1600gb"
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_spot_lines_join_their_instance_type(real):
    bodies, rows, prices = real
    assert "datacrunch__8xH200_141GB__176__1450__SPOT" in bodies[VMS_URL]
    assert not any(name.endswith("__SPOT") for name in rows)
    h200 = [
        (p.region, p.usd_per_hour, p.spot_usd_per_hour)
        for p in prices
        if p.instance_type == "datacrunch__8xH200_141GB__176__1450"
    ]
    assert h200 == [("FI", 15.97, None), ("FI", None, 7.55), ("IS", 15.97, None)]  # one per line, file order
    spot = next(
        p for p in prices if p.instance_type == "datacrunch__8xH200_141GB__176__1450" and p.spot_usd_per_hour
    )
    assert spot.quote.startswith("datacrunch__8xH200_141GB__176__1450__SPOT,8H200.141S.176V_SPOT,")
    assert "also sold as spot" in rows["datacrunch__8xH200_141GB__176__1450"].notes_text
    assert rows["datacrunch__8xH200_141GB__176__1450"].upstream_instance_type == "8H200.141S.176V"


def test_real_memory_is_the_total_and_the_total_is_counted_twice(real):
    row = real[1]["lambdalabs__8xA100_80GB__240__1800"]  # SizeInMiB 655360 = 8 x 80 GiB
    assert row.gpu_memory_gb == pytest.approx(85.89934592)
    assert "GpuInfo TotalGpuMemoryInMiB 5242880 is not the 8 GPUs' 655360: not used" in row.notes_text


@pytest.mark.parametrize(
    ("name", "model", "link", "intra"),
    [
        ("hyperstack__8xH100_80GB__192__960", "H100-SXM-80GB", Link.NVSWITCH, 900),  # upstream n3-H100-SXM5x8
        ("lambdalabs__8xH100_80GB__208__1800", "H100-SXM-80GB", Link.NVSWITCH, 900),  # gpu_8x_h100_sxm5
        ("datacrunch__8xH100_80GB__176__1480", "H100-80GB", Link.UNKNOWN, None),  # 8H100.80S.176V: not read
        ("oblivus__4xA100_80GB__124__480", "A100-PCIE-80GB", Link.UNKNOWN, None),  # A100_PCIE_80GB
        ("hyperstack__8xA100_80GB__252__1920__NVLINK", "A100-80GB", Link.NVLINK, None),
    ],
)
def test_real_form_factor_from_the_names(real, name, model, link, intra):
    row = real[1][name]
    assert (row.gpu_model, row.intra_node_link, row.intra_node_gbytes_per_s) == (model, link, intra)
    (claim,) = [c for c in row.claims if c.field == "gpu_model"]
    assert claim.basis == (Basis.STATED if model in ("H100-80GB", "A100-80GB") else Basis.INFERRED)
