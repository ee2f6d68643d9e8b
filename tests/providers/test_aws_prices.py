"""AWS prices: Karpenter's generated us-east-1 table, on a fixture and then on the real file."""

from __future__ import annotations

import re

import pytest

from normalize.errors import LayoutError
from scrapers.prices.aws import GPU_INSTANCE_TYPE, PRICES_URL, parse_prices
from tests.conftest import shared_fixture


def by_type(prices) -> dict:
    return {p.instance_type: p for p in prices}


def test_fixture_keeps_gpu_types_and_skips_unreadable_prices(fixture_text, caplog):
    prices = by_type(parse_prices(fixture_text("aws/pricing-small.go")))
    assert sorted(prices) == ["g5.12xlarge", "g5.xlarge", "p5.48xlarge", "p5.4xlarge"]  # no c5: not a GPU
    p5 = prices["p5.48xlarge"]
    assert (p5.region, p5.usd_per_hour, p5.spot_usd_per_hour) == ("us-east-1", 55.04, None)
    assert p5.quote == '"p5.48xlarge": 55.040000'
    assert p5.context == 'InitialOnDemandPricesAWS["us-east-1"]'
    assert prices["p5.4xlarge"].usd_per_hour == 6.88  # the second entry on the same line
    assert "Skipping aws price row g4dn.xlarge in us-east-1: price '0.000000' is a placeholder" in caplog.text
    assert "Skipping aws price row p2.xlarge in us-east-1: price '-0.900000' is not a number" in caplog.text


def test_a_table_without_region_blocks_is_a_layout_error(fixture_text):
    text = fixture_text("aws/pricing-small.go").replace('"us-east-1": {', "{")
    with pytest.raises(LayoutError, match="no region block"):
        parse_prices(text)


def test_a_table_without_gpu_prices_is_a_layout_error():
    cpu_only = 'var InitialOnDemandPricesAWS = map[string]map[string]float64{\n"us-east-1": {\n"c5.large": 1,'
    with pytest.raises(LayoutError, match="no GPU instance prices"):
        parse_prices(cpu_only)


@shared_fixture(scope="module")
def real(real_document):
    text = real_document(PRICES_URL)
    return text, by_type(parse_prices(text))


def test_real_p5_is_priced_in_us_east_1_with_the_map_entry_as_quote(real):
    text, prices = real
    p5 = prices["p5.48xlarge"]
    assert (p5.provider, p5.region, p5.usd_per_hour, p5.source_url) == ("aws", "us-east-1", 55.04, PRICES_URL)
    assert p5.quote == '"p5.48xlarge": 55.040000' and p5.quote in text
    assert prices["p5.4xlarge"].usd_per_hour == 6.88  # printed on the same line as p5.48xlarge
    assert prices["p6-b300.48xlarge"].usd_per_hour == 142.416
    assert prices["p4d.24xlarge"].usd_per_hour == 21.957642


def test_real_table_prices_every_gpu_type_it_lists_and_nothing_else(real):
    text, prices = real
    listed = set(re.findall(rf'"({GPU_INSTANCE_TYPE})":', text))
    assert set(prices) == listed and len(prices) == 82
    assert not [t for t in prices if t.startswith(("c", "m", "r", "t", "inf", "trn"))]
    assert {p.region for p in prices.values()} == {"us-east-1"}
    assert all(p.quote in text for p in prices.values())


def test_real_table_omits_p5e_and_gb200_so_they_get_no_price(real):
    _, prices = real
    assert "p5e.48xlarge" not in prices and "p6e-gb200.36xlarge" not in prices
    assert "p5en.48xlarge" in prices  # a neighbour that is listed
