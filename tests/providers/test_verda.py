"""Verda (ex-DataCrunch): SkyPilot's v8 Verda catalog, real file from ../shared/mirror."""

from __future__ import annotations

import json

import pytest

from normalize.vocab import Link
from scrapers.offer_lists.skypilot import csv_rows
from scrapers.offer_lists.verda import VMS_URL, Verda
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Verda())


def test_real_gpu_info_is_json_with_doubled_quotes(real):
    bodies, rows, prices = real
    body = bodies[VMS_URL]
    assert '"{""Gpus"": [{""Name"": ""B300""' in body  # JSON inside a CSV cell
    cell = csv_rows(body, "verda")[0].cell("GpuInfo")
    assert json.loads(cell)["Gpus"][0]["MemoryInfo"]["SizeInMiB"] == 268288
    assert len(rows) == 19 and not any(name.startswith("CPU.") for name in rows)
    b300 = rows["4B300.120V"]
    assert (b300.gpu_model, b300.gpu_count, b300.intra_node_link, b300.intra_node_gbytes_per_s) == (
        "B300-SXM-288GB",
        4,
        Link.NVSWITCH,
        1800,
    )
    assert b300.gpu_memory_gb == pytest.approx(281.8572288)  # 268800 MiB
    assert unquoted(bodies, rows.values(), prices) == []  # quotes are raw lines, doubled quotes and all


def test_real_empty_prices_are_no_price(real):
    prices = {(p.instance_type, p.region): p for p in real[2]}
    b200 = prices[("8B200.240V", "FIN-03")]  # Price empty, SpotPrice 13.69
    assert (b200.usd_per_hour, b200.spot_usd_per_hour) == (None, 13.69)
    h200 = prices[("1H200.141S.44V", "FIN-02")]  # SpotPrice empty
    assert (h200.usd_per_hour, h200.spot_usd_per_hour) == (3.39, None)
    assert prices[("4B300.120V", "FIN-03")].usd_per_hour == 27.96
    assert sum(p.usd_per_hour is None for p in real[2]) == 5 and len(real[2]) == 22


def test_real_form_factor_not_read_from_the_s_in_names(real):
    """'1H200.141S.44V': this catalog does not read the 'S' as SXM, so H200 and H100 stay family-level."""
    rows = real[1]
    assert rows["2H200.141S.88V"].gpu_model == "H200-141GB" and rows["2H200.141S.88V"].missing_intra_bw
    assert rows["1H100.80S.32V"].gpu_model == "H100-80GB"
    assert rows["8RTXPRO6000.240V"].gpu_model == "RTX-PRO-6000-96GB"
