"""Ranking by price (catalog.read.prices and ``catalog cheapest``), on the small catalog and on the
catalog built from the real mirror: the issue's done-when questions."""

from __future__ import annotations

import json
import math

import duckdb
import pytest

from catalog.cli import main
from catalog.read.prices import PriceQuestion, cheapest, unlisted_prices
from scrapers.prices import aws as aws_prices
from scrapers.prices import azure as azure_prices
from scrapers.prices import gcp as gcp_prices
from tests.helpers import snapshot_records

CHEAPEST_NVSWITCH = (
    "select provider, instance_type, intra_node_link, inter_node_gbits_per_s, usd_per_gpu_hour "
    "from instances where gpu_count = 8 and intra_node_link = 'nvswitch' order by usd_per_gpu_hour"
)


@pytest.fixture(scope="module")
def small(small_catalog_file):
    with duckdb.connect(str(small_catalog_file), read_only=True) as con:
        yield con


def ranked(frame, *columns):
    return [tuple(row) for row in frame[["instance_type", *columns]].itertuples(index=False)]


def test_eight_gpus_nvswitch_and_3200_gbits_cheapest_first(small):
    question = PriceQuestion(gpu_counts=(8,), intra_links=("nvswitch",), min_fabric_gbits_per_s_per_node=3200)
    frame = cheapest(small, question)
    assert ranked(frame, "rank", "min_usd_per_hour", "usd_per_gpu_hour", "price_region") == [
        ("p5.48xlarge", 1, 55.04, 6.88, "us-east-1")  # the Azure 8-GPU size has 1,600 Gb/s
    ]
    row = frame.iloc[0]
    assert row["usd_per_gpu_hour_per_fabric_gbytes_per_s"] == pytest.approx(55.04 / 400)
    assert row["price_source_url"] == aws_prices.PRICES_URL and row["regions"] == 1


def test_every_order_ranks_cheapest_first(small):
    by_hour = cheapest(small)
    assert ranked(by_hour, "min_usd_per_hour") == [
        ("g5.xlarge", 1.006),
        ("g5.12xlarge", 5.672),
        ("Standard_ND48is_T9_v9", 30.0),
        ("p5.48xlarge", 55.04),
        ("Standard_ND96isr_T9_v9", 60.0),
    ]
    by_gpu = cheapest(small, PriceQuestion(order_by="usd_per_gpu_hour"))
    assert ranked(by_gpu, "usd_per_gpu_hour")[2:] == [
        ("p5.48xlarge", 6.88),
        ("Standard_ND48is_T9_v9", 7.5),  # a tie is broken by provider, then instance type
        ("Standard_ND96isr_T9_v9", 7.5),
    ]
    by_fabric = cheapest(small, PriceQuestion(order_by="usd_per_fabric_gbytes_per_s"))
    assert [
        (name, round(value, 4))
        for name, value in ranked(by_fabric, "usd_per_gpu_hour_per_fabric_gbytes_per_s")
    ] == [
        ("p5.48xlarge", 0.1376),  # 55.04 USD/h for 400 GB/s
        ("Standard_ND96isr_T9_v9", 0.3),  # 60 for 200
        ("g5.12xlarge", 1.1344),  # 5.672 for 5
        ("g5.xlarge", 3.2192),  # 1.006 for 0.3125
        ("Standard_ND48is_T9_v9", 6.0),  # 30 for 5
    ]


def test_filters_by_provider_and_fabric_and_refuses_an_unknown_order(small):
    frame = cheapest(small, PriceQuestion(providers=("azure",), fabrics=("infiniband",)))
    assert ranked(frame, "inter_node_fabric") == [("Standard_ND96isr_T9_v9", "infiniband")]
    with pytest.raises(ValueError, match="choose one of usd_per_hour"):
        cheapest(small, PriceQuestion(order_by="price"))


def test_cli_ranks_and_prints_json(small_catalog_file, capsys):
    args = ["cheapest", "--db", str(small_catalog_file), "--gpus", "8", "--link", "nvswitch"]
    assert main([*args, "--min-fabric-gbits", "3200", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["instance_type"], r["min_usd_per_hour"], r["rank"]) for r in rows] == [
        ("p5.48xlarge", 55.04, 1)
    ]
    assert main([*args, "--by", "usd_per_gpu_hour", "--limit", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "p5.48xlarge" in lines[1] and "6.88" in lines[1]
    assert " NULL " in lines[1] and "nan" not in lines[1].lower()  # no spot price: NULL, never NaN
    assert "price_source_url" not in lines[0]  # the table keeps to what fits; JSON has the sources
    assert main(["cheapest", "--db", str(small_catalog_file.parent / "none.duckdb")]) == 4  # the environment


# -- the catalog built from ../shared/mirror --------------------------------------------------------


@pytest.fixture(scope="module")
def real(real_catalog_file):
    with duckdb.connect(str(real_catalog_file), read_only=True) as con:
        yield con


@pytest.mark.parametrize(
    ("provider", "instance_type", "usd_per_hour", "region", "url"),
    [
        ("aws", "p5.48xlarge", 55.04, "us-east-1", aws_prices.PRICES_URL),
        ("azure", "Standard_ND96isr_H100_v5", 98.32, "eastus", azure_prices.PRICES_URL),
        ("gcp", "a3-highgpu-8g", 88.4899999025753, "us-central1", gcp_prices.PRICES_URL),
    ],
)
def test_real_flagships_have_a_price_with_its_region_and_source(
    real, provider, instance_type, usd_per_hour, region, url
):
    row = real.execute(
        """SELECT i.min_usd_per_hour, i.price_region, p.source_url, p.quote
           FROM instances i JOIN current_prices p
             ON p.provider = i.provider AND p.instance_type = i.instance_type AND p.region = i.price_region
           WHERE i.provider = ? AND i.instance_type = ?""",
        [provider, instance_type],
    ).fetchall()
    assert len(row) == 1 and row[0][:3] == (usd_per_hour, region, url)
    assert instance_type in row[0][3]


def test_real_cheapest_nvswitch_question_is_answered(real):
    rows = real.execute(CHEAPEST_NVSWITCH).fetchall()
    priced = [(p, name, round(usd, 4)) for p, name, _, _, usd in rows if usd is not None]
    assert priced[:3] == [  # Mithril prices on-demand as spot, flagged as a placeholder (price_flag)
        ("mithril", "ccs-h200.sxm.8x", 1.0),
        ("mithril", "h100-80gb.sxm.8x", 1.0),
        ("shadeform", "massedcompute_A100-sxm4-80GBx8", 1.38),
    ]
    assert ("aws", "p4d.24xlarge", 2.7447) in priced and ("azure", "Standard_ND96asr_v4", 3.3996) in priced
    assert ("aws", "p5.48xlarge", 6.88) in priced and ("gcp", "a3-highgpu-8g", 11.0612) in priced
    # 49, + 7 Azure sizes only the price table names (ND96is_H100_v5 and kin, ND96ams/asr_A100_v4)
    assert len(priced) == 56 and all(usd is None for *_, usd in rows[len(priced) :])  # unpriced last
    fast = cheapest(
        real, PriceQuestion((8,), ("nvswitch",), min_fabric_gbits_per_s_per_node=3200, priced_only=True)
    )
    assert list(fast["instance_type"]) == [
        "nebius__8xH100_80GB__128__1600",  # Prime Intellect reselling it: Nebius's fabric, basis upstream
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",  # Nebius: 8 x 400 Gb/s InfiniBand, paraphrased
        "gpu-h200-sxm_8gpu-128vcpu-1600gb",  # Nebius's MLPerf system description: 8 x 400, expected
        "gpu-b200-sxm_8gpu-160vcpu-1792gb",
        "p5.48xlarge",
        "p5en.48xlarge",
        "BM.GPU.H100.8",  # OCI: 80 USD/h per shape (SkyPilot's v8 OCI list)
        "BM.GPU.H200.8",
        "Standard_ND96isr_H200_v5",
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isrf_H100_v5",  # named by the price table only: its series' InfiniBand, inferred
        "BM.GPU.B200.8",
        "p6-b200.48xlarge",
        "BM.GPU.B300.8",  # 6,400 Gb/s expected by Oracle's health check; no shapes-table row
        "p6-b300.48xlarge",
    ]


def test_real_stated_only_leaves_out_a_fabric_figure_inferred_from_the_gpu(real):
    question = PriceQuestion(providers=("azure",), min_fabric_gbits_per_s_per_node=50)
    assert "Standard_NC24rs_v3" in set(cheapest(real, question)["instance_type"])  # 56 Gb/s, inferred
    stated = cheapest(
        real, PriceQuestion(providers=("azure",), min_fabric_gbits_per_s_per_node=50, include_inferred=False)
    )
    assert "Standard_NC24rs_v3" not in set(stated["instance_type"]) and len(stated) > 0


def test_real_spot_prices_are_shown_beside_never_ranked(real):
    frame = cheapest(real, PriceQuestion(providers=("gcp",), priced_only=True))
    mega = frame[frame["instance_type"] == "a3-megagpu-8g"].iloc[0]
    assert mega["min_usd_per_hour"] == pytest.approx(92.9375881512329)
    assert mega["min_spot_usd_per_hour"] == pytest.approx(22.8588387945205)
    assert list(frame["min_usd_per_hour"]) == sorted(frame["min_usd_per_hour"])


def test_real_price_columns_agree_with_current_prices(real):
    rows = real.execute(
        """SELECT i.provider || '/' || i.instance_type, i.gpu_count, i.min_usd_per_hour, i.usd_per_gpu_hour,
                  i.regions, i.price_region, min(p.usd_per_hour), count(DISTINCT p.region),
                  min(p.region) FILTER (p.usd_per_hour = (SELECT min(q.usd_per_hour) FROM current_prices q
                      WHERE q.provider = i.provider AND q.instance_type = i.instance_type))
           FROM instances i LEFT JOIN current_prices p
             ON p.provider = i.provider AND p.instance_type = i.instance_type AND p.usd_per_hour IS NOT NULL
           GROUP BY ALL"""
    ).fetchall()
    priced = sum(1 for row in snapshot_records("instances") if row["min_usd_per_hour"] is not None)
    assert len(rows) > 100 and sum(1 for r in rows if r[2] is not None) == priced
    for name, gpus, low, per_gpu, regions, where, expected, count, first in rows:
        assert (low, regions, where) == (expected, count, first), name
        if low is None or gpus is None:  # g2-standard-96 and g4-standard-384 state no GPU count
            assert per_gpu is None, name
        else:
            assert math.isclose(per_gpu, low / gpus), name


def test_real_every_price_quote_is_in_the_document_it_cites(real):
    missing = real.execute(
        """WITH body AS (
               SELECT f.url, d.body FROM fetches f JOIN documents d USING (sha256)
               QUALIFY row_number() OVER (PARTITION BY f.url ORDER BY f.fetched_at DESC) = 1)
           SELECT p.provider, p.instance_type, p.region, p.quote
           FROM current_prices p LEFT JOIN body b ON b.url = p.source_url
           WHERE b.body IS NULL OR NOT contains(b.body, p.quote)"""
    ).fetchall()
    assert missing == []
    assert real.execute("SELECT count(*) FROM current_prices").fetchone() == (
        len(snapshot_records("prices")),
    )


def test_real_priced_types_without_a_row_are_listed_as_a_finding(real):
    frame = unlisted_prices(real)
    # Azure: 70 before the sizes the price table names became rows in their series; these 16 fit none
    # (catalog/not_rows.toml says why), and Standard_NC4as_T4_v3 is a row now
    assert frame.groupby("provider").size().to_dict() == {"aws": 15, "azure": 16}
    a10 = frame[frame["instance_type"] == "Standard_NC8ads_A10_v4"].iloc[0]  # sold, priced, not described
    assert a10["provider"] == "azure" and a10["regions"] == 3 and a10["source_url"] == azure_prices.PRICES_URL
    assert "Standard_NC4as_T4_v3" not in set(frame["instance_type"])
    assert "g2.2xlarge" in set(frame["instance_type"]) and "p5.48xlarge" not in set(frame["instance_type"])


def test_current_prices_export_with_their_quotes(small_catalog_file, tmp_path):
    out = tmp_path / "prices.csv"
    args = ["export", "--format", "csv", "--table", "current_prices", "--out", str(out)]
    assert main([*args, "--db", str(small_catalog_file)]) == 0
    rows = duckdb.sql(
        f"SELECT region, usd_per_hour, quote FROM read_csv('{out}') WHERE instance_type = 'p5.48xlarge'"
    ).fetchall()
    assert rows == [("us-east-1", 55.04, '"p5.48xlarge": 55.040000')]
