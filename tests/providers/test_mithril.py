"""Mithril: SkyPilot's v8 Mithril catalog, real file from ../shared/mirror."""

from __future__ import annotations

from normalize.vocab import Basis, Link
from scrapers.offer_lists.mithril import VMS_URL, Mithril
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Mithril())


def test_real_gpu_info_is_the_last_column_and_price_equals_spot(real):
    bodies, rows, prices = real
    assert bodies[VMS_URL].split("\r\n", 1)[0].endswith(",SpotPrice,Region,GpuInfo")
    assert sorted(rows) == ["ccs-h200.sxm.1x", "ccs-h200.sxm.8x", "h100-80gb.sxm.1x", "h100-80gb.sxm.8x"]
    assert {(p.instance_type, p.usd_per_hour, p.spot_usd_per_hour) for p in prices} >= {
        ("h100-80gb.sxm.8x", 8.0, 8.0),
        ("ccs-h200.sxm.8x", 8.0, 8.0),
    }
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_sxm_from_the_name(real):
    row = real[1]["ccs-h200.sxm.8x"]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link, row.intra_node_gbytes_per_s) == (
        "H200-SXM-141GB",
        8,
        Link.NVSWITCH,
        900,
    )
    (model,) = [c for c in row.claims if c.field == "gpu_model"]
    assert model.basis == Basis.INFERRED and "form factor read from the name" in model.context
