"""OVHcloud: SkyPilot's v6 OVHcloud catalog, real file from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Link
from scrapers.offer_lists.ovhcloud import VMS_URL, OvhCloud
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(OvhCloud())


def test_real_flavors_and_zone_in_each_price(real):
    bodies, rows, prices = real
    assert "\r\n" not in bodies[VMS_URL] and len(rows) == 14 and len(prices) == 42
    a100 = [p for p in prices if p.instance_type == "a100-180"]
    assert {(p.region, p.usd_per_hour) for p in a100} >= {("GRA", 3.07)}
    assert all("› AvailabilityZone " in p.context for p in prices)
    assert unquoted(bodies, rows.values(), prices) == []


@pytest.mark.parametrize(
    ("name", "model", "count", "link"),
    [
        ("a100-360", "A100-80GB", 2, Link.UNKNOWN),  # SXM or PCIe: not stated
        ("t1-180", "V100-16GB", 4, Link.UNKNOWN),
        ("t2-le-180", "V100-32GB", 4, Link.UNKNOWN),
        ("t1-45", "V100-16GB", 1, Link.SINGLE_GPU),
    ],
)
def test_real_v100_form_factor_is_not_guessed(real, name, model, count, link):
    row = real[1][name]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link) == (model, count, link)
    assert row.missing_inter_bw
