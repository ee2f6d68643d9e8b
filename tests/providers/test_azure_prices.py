"""Azure prices: Karpenter's generated per-region table, on a fixture and then on the real 3 MB file."""

from __future__ import annotations

import re

import pytest

from normalize.errors import LayoutError
from scrapers.prices.azure import PRICES_URL, parse_prices
from tests.conftest import shared_fixture


def by_key(prices) -> dict:
    return {(p.instance_type, p.region): p for p in prices}


def test_fixture_keeps_gpu_sizes_per_region(fixture_text, caplog):
    prices = by_key(parse_prices(fixture_text("azure/pricing-small.go")))
    assert sorted(prices) == [
        ("Standard_ND48is_T9_v9", "eastus"),
        ("Standard_ND96isr_T9_v9", "eastus"),
        ("Standard_ND96isr_T9_v9", "swedencentral"),
        ("Standard_ND96isr_T9_v9", "westeurope"),
    ]  # not the dedicated-host SKU, the D/M sizes, the NM media accelerator or the NP FPGA
    east = prices["Standard_ND96isr_T9_v9", "eastus"]
    assert (east.usd_per_hour, east.quote) == (60.0, '"Standard_ND96isr_T9_v9": 60.000000')
    assert east.context == 'initialOnDemandPrices["eastus"]'
    west = prices["Standard_ND96isr_T9_v9", "westeurope"]
    assert west.usd_per_hour == 66.0 and west.notes == "name printed as 'Standard_ND96isr_T9_v9  '"
    assert "Skipping azure price row Standard_NC6_Promo in westeurope: price '0.000000' is a placeholder" in (
        caplog.text
    )


def test_a_size_listed_twice_in_a_region_is_skipped_not_doubled(fixture_text, caplog):
    text = fixture_text("azure/pricing-small.go").replace(
        '"Standard_ND48is_T9_v9":  30.000000,',
        '"Standard_ND48is_T9_v9": 30.0,\n"Standard_ND48is_T9_v9 ": 31.0,',
    )
    prices = [p for p in parse_prices(text) if p.instance_type == "Standard_ND48is_T9_v9"]
    assert [(p.region, p.usd_per_hour) for p in prices] == [("eastus", 30.0)]
    assert "Standard_ND48is_T9_v9 is listed twice in eastus" in caplog.text


def test_a_file_with_no_region_map_is_a_layout_error():
    with pytest.raises(LayoutError, match="no region block"):
        parse_prices('var prices = map[string]float64{"Standard_ND96isr_H100_v5": 98.32}\n')


@shared_fixture(scope="module")
def real(real_document):
    text = real_document(PRICES_URL)
    return text, parse_prices(text)


def test_real_h100_size_has_a_price_in_every_region_that_lists_it(real):
    text, prices = real
    h100 = {p.region: p for p in prices if p.instance_type == "Standard_ND96isr_H100_v5"}
    assert len(h100) == 23
    assert h100["eastus"].usd_per_hour == 98.32
    # The first block to list it is australiaeast (the manifest's "australiacentral ... 142.6" is
    # one block off): each entry takes the region of the block that holds it.
    assert h100["australiaeast"].usd_per_hour == 142.6 and "australiacentral" not in h100
    quote = h100["eastus"].quote
    assert quote == '"Standard_ND96isr_H100_v5":              98.320000' and quote in text
    assert h100["eastus"].source_url == PRICES_URL and h100["eastus"].spot_usd_per_hour is None


def test_real_file_zero_placeholders_and_odd_keys_never_become_prices(real):
    text, prices = real
    zeros = re.findall(r'"([^"]+)":\s+0\.000000,', text)
    assert len(zeros) == 68 and not [z for z in zeros if z.startswith("Standard_N")]
    assert min(p.usd_per_hour for p in prices) > 0
    assert '"Standard_NM16ads_MA35D  "' in text and '"Ddsv4_Type 1"' in text  # the traps are there...
    names = {p.instance_type for p in prices}
    assert not [
        n for n in names if n != n.strip() or " " in n or not n.startswith("Standard_N")
    ]  # ...not here
    assert not {"Standard_NM16ads_MA35D", "Standard_NP10s"} & names  # media and FPGA, not GPUs


def test_real_file_is_read_whole_every_region_and_gpu_size(real):
    text, prices = real
    assert len(prices) == 1391 and len({p.instance_type for p in prices}) == 93
    regions = set(re.findall(r'initialOnDemandPrices\["([^"]+)"\] =', text))
    assert len(regions) == 57 and {p.region for p in prices} <= regions
    assert len({p.region for p in prices}) == 52  # five regions sell no GPU size
    assert all(p.quote in text for p in prices)
    gb200 = {p.region: p.usd_per_hour for p in prices if p.instance_type == "Standard_ND128isr_NDR_GB200_v6"}
    assert (gb200["australiaeast"], gb200["australiasoutheast"], gb200["brazilsouth"]) == (
        156.84,
        151.44,
        216.32,
    )
