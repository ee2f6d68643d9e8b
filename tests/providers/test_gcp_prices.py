"""GCP prices: a third-party whole-machine price file, on a fixture and then on the real file."""

from __future__ import annotations

import json

import pytest

from normalize.errors import LayoutError
from scrapers.prices.gcp import GPU_MACHINE_TYPE, NOTE, PRICES_URL, parse_prices
from tests.conftest import shared_fixture


def by_key(prices) -> dict:
    return {(p.instance_type, p.region): p for p in prices}


def test_fixture_keeps_accelerator_machines_with_on_demand_and_spot(fixture_text):
    text = fixture_text("gcp/initial-prices-small.json")
    prices = by_key(parse_prices(text))
    assert sorted(prices) == [
        ("a2-highgpu-1g", "us-central1"),
        ("a3-highgpu-8g", "asia-northeast1"),
        ("a3-highgpu-8g", "us-central1"),
        ("a3-megagpu-8g", "asia-northeast1"),
        ("a4-highgpu-8g", "us-central1"),
        ("g2-standard-4", "us-central1"),
    ]  # no c3 (CPU) and no g1-small (shared-core CPU)
    a3 = prices["a3-highgpu-8g", "us-central1"]
    assert (a3.usd_per_hour, a3.spot_usd_per_hour, a3.quote) == (88.49, 50.61, '"a3-highgpu-8g":88.49')
    assert (
        a3.context
        == 'prices["us-central1"]["on_demand"]; spot "a3-highgpu-8g":50.61 at prices["us-central1"]["spot"]'
    )
    assert a3.notes == NOTE and "not Google" in a3.notes
    spot_only = prices["a4-highgpu-8g", "us-central1"]  # an integer, in the spot list only
    assert (spot_only.usd_per_hour, spot_only.spot_usd_per_hour, spot_only.quote) == (
        None,
        30.0,
        '"a4-highgpu-8g":30',
    )
    assert all(p.quote in text for p in prices.values())


def test_gpu_rows_of_their_own_are_refused_so_a_host_only_price_never_stands_for_the_machine(fixture_text):
    data = json.loads(fixture_text("gcp/initial-prices-small.json"))
    data["prices"]["us-central1"]["on_demand"]["nvidia-h100-80gb"] = 9.8
    with pytest.raises(LayoutError, match="prices GPUs on rows of their own"):
        parse_prices(json.dumps(data, separators=(",", ":")))


def test_a_price_not_printed_as_its_quote_says_is_skipped_and_a_pretty_printed_file_refused(
    fixture_text, caplog
):
    text = fixture_text("gcp/initial-prices-small.json").replace(
        '"a3-highgpu-8g":88.49', '"a3-highgpu-8g": 88.49'
    )
    assert ("a3-highgpu-8g", "us-central1") not in by_key(parse_prices(text))
    assert """'"a3-highgpu-8g":88.49' is not printed so in the file""" in caplog.text
    pretty = json.dumps(json.loads(text), indent=1)
    with pytest.raises(LayoutError, match="no accelerator-optimized machine prices"):
        parse_prices(pretty)


@pytest.mark.parametrize("text", ["", "[]", '{"regions": {}}', '{"prices": []}', '{"prices": {"x": 1}}'])
def test_other_shapes_are_layout_errors(text):
    with pytest.raises(LayoutError):
        parse_prices(text)


@shared_fixture(scope="module")
def real(real_document):
    text = real_document(PRICES_URL)
    return text, by_key(parse_prices(text))


def test_real_a3_high_has_on_demand_and_spot_in_us_central1_quoted_from_the_file(real):
    text, prices = real
    a3 = prices["a3-highgpu-8g", "us-central1"]
    assert (a3.provider, a3.usd_per_hour, a3.spot_usd_per_hour) == ("gcp", 88.4899999025753, 50.6095408219178)
    assert a3.quote == '"a3-highgpu-8g":88.4899999025753' and a3.quote in text
    assert '"a3-highgpu-8g":50.6095408219178' in a3.context and a3.source_url == PRICES_URL
    assert "third-party" in a3.notes


def test_real_file_prices_whole_machines_not_hosts(real):
    # Verified on the file itself: an A3 High costs 7.6x a larger CPU-only machine of the same region
    # (c3-highmem-176: 176 vCPUs, 1,408 GB) and an A2 High 1g 3.9x an n1-highmem-16: the GPUs are in.
    text, prices = real
    listed = json.loads(text)["prices"]["us-central1"]["on_demand"]
    assert prices["a3-highgpu-8g", "us-central1"].usd_per_hour / listed["c3-highmem-176"] > 7.5
    assert prices["a2-highgpu-1g", "us-central1"].usd_per_hour / listed["n1-highmem-16"] > 3.8
    assert not [name for name in listed if name.startswith("nvidia-")]  # no GPU rows of their own


def test_real_file_covers_the_accelerator_families_it_lists_and_nothing_else(real):
    text, prices = real
    regions = json.loads(text)["prices"]
    listed = {(m, r) for r, kinds in regions.items() for m in kinds["on_demand"] if GPU_MACHINE_TYPE.match(m)}
    assert set(prices) == listed and len(prices) == 384
    assert {m.split("-")[0] for m, _ in prices} == {"a2", "a3", "g2", "g4"}
    assert len({r for _, r in prices}) == 29 and len(regions) == 43
    assert all(p.quote in text for p in prices.values())


def test_real_file_lacks_the_newest_machines_and_a3_mega_in_us_central1(real):
    _, prices = real
    machines = {m for m, _ in prices}
    assert not {"a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g", "a3-edgegpu-8g"} & machines
    assert ("a3-megagpu-8g", "us-central1") not in prices
    assert prices["a3-megagpu-8g", "asia-northeast1"].usd_per_hour == 119.276366632548
    assert prices["g4-standard-384", "us-central1"].usd_per_hour == 35.99944
