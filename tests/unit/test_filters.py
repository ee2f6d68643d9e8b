"""The read side's filters, search, prices, cliffs and number formatting, on the small catalog."""

from __future__ import annotations

import math
import shutil
from datetime import datetime

import duckdb
import pytest

from catalog.read import queries, scoring
from catalog.read.connect import connect_readonly
from catalog.read.filters import Filters, describe, parse_search
from catalog.read.shape import shape
from catalog.read.text import fmt, fmt_sql
from tests.helpers import reprice


@pytest.fixture
def small(small_catalog_file):
    with connect_readonly(small_catalog_file) as con:
        yield con


def types(con, **kw) -> list[str]:
    return sorted(queries.filtered_instances(con, Filters(**kw))["instance_type"])


def test_search_alternatives_are_commas_and_terms_are_words():
    assert parse_search(" H100 SXM, B200 ,, ") == (("h100", "sxm"), ("b200",))
    assert parse_search("") == ()


def test_search_matches_any_alternative_and_every_term_of_it(small):
    assert types(small, search="p5.48xlarge, Standard_ND48is_T9_v9") == [
        "Standard_ND48is_T9_v9",
        "p5.48xlarge",
    ]
    assert types(small, search="aws a10g") == ["g5.12xlarge", "g5.xlarge"]
    assert types(small, search="azure a10g") == []
    # Links and fabrics are searched by their names: "8-GPU NVSwitch" as the question asks it.
    assert types(small, search="8-GPU NVSwitch") == ["Standard_ND96isr_T9_v9", "p5.48xlarge"]
    assert types(small, search="efa 4x") == ["g5.12xlarge"]
    assert types(small, search="infiniband") == ["Standard_ND96isr_T9_v9"]


def test_list_filters_links_fabrics_and_domains(small):
    assert types(small, intra_links=("pcie",)) == ["g5.12xlarge"]
    assert types(small, intra_links=("nvswitch", "single-gpu")) == [
        "Standard_ND48is_T9_v9",
        "Standard_ND96isr_T9_v9",
        "g5.xlarge",
        "p5.48xlarge",
    ]
    assert types(small, fabrics=("efa",)) == ["g5.12xlarge", "p5.48xlarge"]
    assert types(small, fabrics=("ethernet",)) == ["Standard_ND48is_T9_v9", "g5.xlarge"]
    # An NVLink-class domain of at least 8 GPUs: PCIe hosts of 4 GPUs never count as a domain.
    assert types(small, min_scale_up_domain_gpus=8) == ["Standard_ND96isr_T9_v9", "p5.48xlarge"]
    assert types(small, min_scale_up_domain_gpus=4) == [
        "Standard_ND48is_T9_v9",
        "Standard_ND96isr_T9_v9",
        "p5.48xlarge",
    ]


def test_minimum_fabric_per_node_or_per_gpu(small):
    # p5: 3,200 Gb/s = 50 GB/s per GPU; ND96isr: 1,600 Gb/s = 25 GB/s per GPU; g5.12xlarge 40 Gb/s.
    assert types(small, min_fabric_gbits_per_s_per_node=1600) == ["Standard_ND96isr_T9_v9", "p5.48xlarge"]
    assert types(small, min_fabric_gbytes_per_s_per_gpu=30) == ["p5.48xlarge"]
    assert types(small, min_fabric_gbytes_per_s_per_gpu=1.25) == [
        "Standard_ND48is_T9_v9",
        "Standard_ND96isr_T9_v9",
        "g5.12xlarge",
        "p5.48xlarge",
    ]
    assert "g5.xlarge" not in types(small, min_fabric_gbytes_per_s_per_gpu=0.5)  # 0.3125


def _reprice(db, *prices: tuple[str, float]) -> None:
    """Replace the small catalog's prices with ``prices`` of p5.48xlarge (region, USD/h) and fill the
    price columns the way a refresh does."""
    when = datetime(2026, 12, 1)
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM prices")
        for region, usd in prices:
            con.execute(
                "INSERT INTO prices (provider, instance_type, region, usd_per_hour, spot_usd_per_hour, "
                "quote, context, notes, source_url, fetched_at, valid_from, valid_to) "
                "VALUES ('aws', 'p5.48xlarge', ?, ?, NULL, ?, 'test', '', "
                "'https://example.test/prices', ?, ?, NULL)",
                [region, usd, f"${usd}", when, when],
            )
        reprice(con)


def test_a_catalog_without_prices_ignores_the_price_filter(small_catalog):
    _, db = small_catalog
    _reprice(db)
    with connect_readonly(db) as con:
        assert not shape(con).priced
        frame = queries.filtered_instances(con, Filters(max_usd_per_gpu_hour=1.0))
    assert len(frame) == 5 and frame["usd_per_gpu_hour"].isna().all()


def test_prices_give_a_price_per_gpu_hour_and_a_filter(small_catalog):
    _, db = small_catalog
    _reprice(db, ("us-east-1", 98.32), ("us-west-2", 55.04))
    with connect_readonly(db) as con:
        catalog = shape(con)
        assert catalog.priced and catalog.price_rows == 1  # one priced row, p5.48xlarge
        rows = queries.filtered_instances(con, Filters(), catalog).set_index("instance_type")
        assert rows.loc["p5.48xlarge", "usd_per_gpu_hour"] == pytest.approx(55.04 / 8)
        assert math.isnan(rows.loc["g5.xlarge", "usd_per_gpu_hour"])
        cheap = queries.filtered_instances(con, Filters(max_usd_per_gpu_hour=7.0), catalog)
        assert list(cheap["instance_type"]) == ["p5.48xlarge"]
        assert queries.filtered_instances(con, Filters(max_usd_per_gpu_hour=6.0), catalog).empty
        ranked = scoring.ranking(con, Filters(), catalog)
        assert "usd_per_gpu_hour" in ranked


def test_facets_list_what_the_filters_can_choose(small):
    assert queries.facets(small) == {
        "providers": ["aws", "azure"],
        "gpu_counts": [1.0, 4.0, 8.0],
        "intra_links": ["nvswitch", "pcie", "single-gpu"],
        "fabrics": ["efa", "ethernet", "infiniband"],
        "domain_gpus": [4, 8],
        "peer_access": ["not-applicable", "unknown", "yes"],
        "rows": 5,
    }


def test_peer_access_filter_keeps_the_rows_of_those_answers(small):
    """Issue 21: no filter for whether an instance's GPUs reach each other's memory directly."""
    every = queries.filtered_instances(small)
    peers = dict(zip(every["instance_type"], every["gpu_peer_access"], strict=True))
    for asked in (("yes",), ("unknown", "not-applicable")):
        assert types(small, peer_access=asked) == sorted(t for t, p in peers.items() if p in asked)
    assert types(small, peer_access=("no",)) == []
    assert "GPU peer access yes, unknown" in describe(Filters(peer_access=("yes", "unknown")))


def test_cliffs_of_several_instances_in_one_query_with_their_sources(small):
    found = queries.cliffs(small, [("azure", "Standard_ND96isr_T9_v9"), ("aws", "p5.48xlarge")])
    assert list(found["instance_type"]) == ["Standard_ND96isr_T9_v9"] * 4 + ["p5.48xlarge"] * 4
    p5 = found[found["instance_type"] == "p5.48xlarge"].set_index("level")
    assert list(p5["gbytes_per_s"]) == [3350.0, 900.0, 50.0, 50.0]
    assert p5.loc["fabric per GPU", "quote"] == "3200 Gigabit"
    assert (
        p5.loc["fabric per GPU", "source_url"] == "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
    )
    assert p5.loc["intra-node per GPU", "source_url"].startswith("https://www.nvidia.com/")
    nd96 = found[found["instance_type"] == "Standard_ND96isr_T9_v9"].set_index("level")
    assert nd96.loc["fabric per GPU", "gbytes_per_s"] == 25.0
    # Two claims state the row's 1,600 Gb/s; the cell cites one of them (the first by text).
    assert (
        nd96.loc["fabric per GPU", "quote"]
        == "Deployments scale with 1.6 TB/s of interconnect bandwidth per VM."
    )
    assert queries.cliffs(small, [("aws", "no-such-instance")]).empty


@pytest.mark.parametrize(
    "number", [0.0, 1e-5, 0.15625, 0.3125, 1.5625, 12.5, 50.0, 64.0, 85.89934592, 99.95, 100.0, 3200.0, 1.2e6]
)
def test_sql_formats_numbers_like_python(number):
    with duckdb.connect() as con:
        formatted = con.execute(f"SELECT {fmt_sql('x')} FROM (SELECT CAST(? AS DOUBLE) AS x)", [number])
        assert formatted.fetchone()[0] == fmt(number)


def test_the_app_benchmark_builds_a_larger_catalog_from_a_real_one(small_catalog_file, tmp_path):
    """devtools.bench_app measures the app on a catalog 100x the shipped one, built like this."""
    from devtools.bench_app import build_synthetic

    big = tmp_path / "x3.duckdb"
    assert build_synthetic(small_catalog_file, big, 3) == 15
    with connect_readonly(big) as con:
        names = sorted(queries.filtered_instances(con, Filters(search="p5.48xlarge"))["instance_type"])
        claims = con.execute("SELECT count(*) FROM claims WHERE instance_type LIKE 'g5.xlarge%'").fetchone()[
            0
        ]
        one = con.execute("SELECT count(*) FROM claims WHERE instance_type = 'g5.xlarge'").fetchone()[0]
        ranked = scoring.ranking(con, Filters())
    assert names == ["p5.48xlarge", "p5.48xlarge-x1", "p5.48xlarge-x2"]
    assert claims == 3 * one and len(ranked) == 15


def test_a_paraphrased_figure_is_named_so_in_the_reason(small_catalog_file, tmp_path):
    """Curated figures in our own words carry basis 'paraphrased' (issue 10); the reason says it."""
    db = tmp_path / "c.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute(
            "UPDATE instances SET inter_node_basis = 'paraphrased' WHERE instance_type = 'p5.48xlarge'"
        )
    with connect_readonly(db) as con:
        ranked = scoring.ranking(con, Filters(workload="pipeline", search="p5.48xlarge"))
    assert ranked.loc[0, "reason"] == "fabric 50 GB/s per GPU over EFA: 3,200 Gb/s per node (paraphrased)"
