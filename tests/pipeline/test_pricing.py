"""Price columns on instances (catalog.pricing), price history through refreshes, and prices that survive
a failing provider; the small mirror carries the AWS and Azure price-table fixtures."""

from __future__ import annotations

import logging
import shutil
from datetime import datetime

import duckdb
import pandas as pd
import pytest

from catalog.cli import main
from catalog.offers import build_offer
from catalog.store import INSTANCE_COLUMNS, PRICE_COLUMNS, offer_row, price_row, schema_sql
from normalize.errors import InvalidOffer
from records.offers import Claim, RawOffer
from records.prices import Price
from scrapers.prices import aws as aws_prices
from scrapers.prices import gcp as gcp_prices
from tests.helpers import AWS_PAGE, FIXTURES, Clock, build_mirror, query, reprice, run, url_to_path

URL = "https://prices.example.test/list"
NOW = datetime(2026, 12, 1)


def offer(name: str, gpus: float | None, model: str = "H100-SXM-80GB"):
    claims = [Claim("gpu_model", model, model, URL)]
    if gpus is not None:
        claims.append(Claim("gpu_count", gpus, f"{gpus} GPUs", URL))
    return build_offer(RawOffer("test", name, URL, tuple(claims)), scraped_at=NOW)


def price(name: str, region: str, usd: float | None, spot: float | None = None) -> Price:
    return Price("test", name, region, usd, spot, URL, f"{name} {region} {usd} {spot}")


def filled(offers, prices, closed=()) -> list[tuple]:
    """The price columns of ``offers`` as a refresh joins them, given current and closed prices."""
    with duckdb.connect() as con:
        con.execute(schema_sql())
        rows = pd.DataFrame([offer_row(o) for o in offers], columns=list(INSTANCE_COLUMNS))
        history = [price_row(p, None, NOW) for p in prices]
        history += [{**price_row(p, None, NOW), "valid_to": NOW} for p in closed]
        con.register("staged_rows", rows)
        con.register("staged_prices", pd.DataFrame(history, columns=list(PRICE_COLUMNS)))
        con.execute("INSERT INTO instances BY NAME SELECT * FROM staged_rows")
        con.execute("INSERT INTO prices BY NAME SELECT * FROM staged_prices")
        reprice(con)
        return con.execute(
            "SELECT instance_type, min_usd_per_hour, usd_per_gpu_hour, regions, price_region "
            "FROM instances ORDER BY instance_type"
        ).fetchall()


def test_cheapest_current_on_demand_price_per_row_and_per_gpu():
    rows = filled(
        [offer("box-8", 8.0), offer("box-1", 1.0)],
        [price("box-8", "west", 24.0), price("box-8", "east", 20.0), price("box-8", "north", 32.0, spot=9.0)],
        closed=[price("box-8", "south", 16.0)],  # a price that was replaced: never the minimum
    )
    assert rows == [("box-1", None, None, 0, None), ("box-8", 20.0, 2.5, 3, "east")]


def test_a_tie_names_the_first_region_by_name_and_spot_never_counts():
    rows = filled(
        [offer("box-8", 8.0), offer("spot-only", 8.0)],
        [
            price("box-8", "zurich", 20.0),
            price("box-8", "amsterdam", 20.0),
            price("spot-only", "x", None, 3.0),
        ],
    )
    assert rows == [("box-8", 20.0, 2.5, 2, "amsterdam"), ("spot-only", None, None, 0, None)]


def test_a_fractional_gpu_is_priced_per_whole_gpu_and_an_unknown_count_per_instance_only():
    rows = filled(
        [offer("g6f.large", 0.125, "L4-24GB"), offer("mystery", None)],
        [price("g6f.large", "r", 0.25), price("mystery", "r", 5.0)],
    )
    assert rows == [("g6f.large", 0.25, 2.0, 1, "r"), ("mystery", 5.0, None, 1, "r")]


def test_price_columns_must_be_consistent():
    base = offer("box-8", 8.0)
    ok = dict(min_usd_per_hour=20.0, usd_per_gpu_hour=2.5, regions=3, price_region="east")
    assert type(base)(**{**base.__dict__, **ok}).usd_per_gpu_hour == 2.5
    for bad, message in (
        ({"min_usd_per_hour": -1.0}, "positive price"),
        ({"regions": 0}, "all set or all unset"),
        ({"price_region": None}, "all set or all unset"),
        ({"usd_per_gpu_hour": 20.0}, "not min_usd_per_hour / gpu_count"),
    ):
        with pytest.raises(InvalidOffer, match=message):
            type(base)(**{**base.__dict__, **ok, **bad})


def test_the_catalog_refuses_inconsistent_price_columns():
    with duckdb.connect() as con:
        con.execute(schema_sql())
        con.register("staged", pd.DataFrame([offer_row(offer("box-8", 8.0))]))
        con.execute("INSERT INTO instances BY NAME SELECT * FROM staged")
        with pytest.raises(duckdb.ConstraintException):
            con.execute("UPDATE instances SET min_usd_per_hour = 20")  # without regions and region


# -- through refreshes ---------------------------------------------------------------------------


@pytest.fixture
def priced(tmp_path):
    """A catalog refreshed once from the small mirror on the test clock, and that clock a day later:
    (mirror, db, AWS price table, clock)."""
    mirror, db, clock = build_mirror(tmp_path / "m"), tmp_path / "c.duckdb", Clock()
    assert run(db, mirror, clock).exit_code == 0
    clock.advance()
    return mirror, db, url_to_path(mirror, aws_prices.PRICES_URL), clock


def test_small_catalog_rows_carry_their_cheapest_price(small_catalog_file):
    rows = query(
        small_catalog_file,
        "SELECT instance_type, min_usd_per_hour, usd_per_gpu_hour, regions, price_region FROM instances "
        "ORDER BY instance_type",
    )
    assert rows == [
        ("Standard_ND48is_T9_v9", 30.0, 7.5, 1, "eastus"),
        ("Standard_ND96isr_T9_v9", 60.0, 7.5, 3, "eastus"),  # 60 in eastus and swedencentral, 66 west
        ("g5.12xlarge", 5.672, 1.418, 1, "us-east-1"),
        ("g5.xlarge", 1.006, 1.006, 1, "us-east-1"),
        ("p5.48xlarge", 55.04, 6.88, 1, "us-east-1"),
    ]


def test_a_price_change_is_history_and_a_listed_change(priced, capsys):
    mirror, db, table, clock = priced
    table.write_text(table.read_text().replace('"p5.48xlarge": 55.040000', '"p5.48xlarge": 60.000000'))
    assert run(db, mirror, clock).exit_code == 0
    history = query(
        db,
        "SELECT usd_per_hour, quote, valid_from, valid_to FROM prices "
        "WHERE instance_type = 'p5.48xlarge' ORDER BY valid_from",
    )
    first = datetime(2026, 12, 1, 6)
    assert history == [
        (55.04, '"p5.48xlarge": 55.040000', first, clock.now),
        (60.0, '"p5.48xlarge": 60.000000', clock.now, None),
    ]
    assert query(db, "SELECT usd_per_gpu_hour FROM instances WHERE instance_type = 'p5.48xlarge'") == [(7.5,)]
    assert main(["changes", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out == "2026-12-02 06:00  aws/p5.48xlarge  usd_per_hour in us-east-1: 55.04 -> 60.0 USD/h\n"


def test_a_failing_provider_keeps_its_prices_and_price_columns(priced):
    mirror, db, _, clock = priced
    (mirror / AWS_PAGE).write_text("# moved\n")
    report = run(db, mirror, clock)
    assert report.exit_code == 1 and report.outcomes[0].outcome == "stale"
    assert query(db, "SELECT count(*) FROM current_prices WHERE provider = 'aws'") == [(4,)]
    assert query(db, "SELECT stale, min_usd_per_hour FROM instances WHERE instance_type = 'p5.48xlarge'") == [
        (True, 55.04)
    ]


def test_an_unreadable_price_table_keeps_the_providers_rows_and_prices(priced):
    mirror, db, table, clock = priced
    table.write_text("package pricing\n")
    report = run(db, mirror, clock)
    assert report.exit_code == 1
    aws = report.outcomes[0]
    assert (
        aws.outcome == "stale"
        and "LayoutError: no region block" in aws.cause
        and "pricing_aws.go" in aws.cause
    )
    assert query(db, "SELECT min_usd_per_hour FROM instances WHERE instance_type = 'p5.48xlarge'") == [
        (55.04,)
    ]


def test_an_absent_price_table_leaves_the_rows_fresh_and_carries_the_prices(priced, caplog, capsys):
    mirror, db, table, clock = priced
    table.unlink()
    with caplog.at_level(logging.WARNING):
        report = run(db, mirror, clock)
    aws = report.outcomes[0]
    assert (report.exit_code, aws.outcome, aws.rows_after) == (1, "carried", 3)  # never a silent exit 0
    assert aws.cause == "0 prices against 4 before: the last good 4 carried"
    assert "aws: no prices this refresh" in caplog.text and "not in mirror" in caplog.text
    assert query(db, "SELECT count(*) FROM current_prices WHERE provider = 'aws'") == [(4,)]
    assert query(db, "SELECT count(*) FROM prices WHERE provider = 'aws' AND valid_to IS NOT NULL") == [(0,)]
    assert query(
        db, "SELECT min_usd_per_hour, regions FROM instances WHERE instance_type = 'p5.48xlarge'"
    ) == [(55.04, 1)]
    assert query(db, "SELECT DISTINCT stale FROM instances WHERE provider = 'aws'") == [(False,)]
    assert main(["changes", "--db", str(db)]) == 0
    assert "(gone)" not in capsys.readouterr().out
    clock.advance()
    accepted = run(db, mirror, clock, accept_changes=True)  # published as it is: the prices go
    assert (accepted.exit_code, accepted.outcomes[0].outcome) == (0, "ok")
    assert query(db, "SELECT count(*) FROM current_prices WHERE provider = 'aws'") == [(0,)]


def test_a_price_file_that_reads_as_a_handful_keeps_the_last_good_prices(priced):
    mirror, db, table, clock = priced
    text = table.read_text().replace('"g5.12xlarge": 5.672000, ', "")
    table.write_text("\n".join(line for line in text.splitlines() if '"p5.' not in line))  # 4 prices -> 1
    report = run(db, mirror, clock)
    fresh = query(db, "SELECT count(*) FROM current_prices WHERE provider = 'aws'")
    assert (report.exit_code, report.outcomes[0].outcome, fresh) == (1, "carried", [(4,)])


def test_curated_rows_get_prices_when_only_the_price_file_is_reachable(tmp_path):
    mirror, db = tmp_path / "m", tmp_path / "c.duckdb"
    path = url_to_path(mirror, gcp_prices.PRICES_URL)
    path.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "gcp/initial-prices-small.json", path)
    report = run(db, mirror, Clock(), providers=["gcp"])  # Google's pages are not in this mirror
    assert (report.outcomes[0].outcome, report.exit_code) == ("curated", 0)
    assert query(
        db, "SELECT min_usd_per_hour, price_region FROM instances WHERE instance_type='a3-highgpu-8g'"
    ) == [(88.49, "us-central1")]
    path.write_text("{}")
    report = run(db, mirror, Clock(), providers=["gcp"])
    gcp = report.outcomes[0]
    assert (gcp.outcome, gcp.rows_after, report.exit_code) == ("curated", 31, 1)  # rows kept
    assert gcp.cause.endswith("0 prices against 6 before: the last good 6 carried")  # never a silent 0
    assert query(db, "SELECT count(*) FROM current_prices") == [(6,)]
    text = (FIXTURES / "gcp/initial-prices-small.json").read_text()
    path.write_text(text.replace('"a3-highgpu-8g":88.49', '"a3-highgpu-8g":1.00,"a3-highgpu-8g":0.01', 1))
    report = run(db, mirror, Clock(), providers=["gcp"])  # a machine listed twice: the price file's gate
    assert report.exit_code == 1 and "a3-highgpu-8g is listed 2 times" in report.outcomes[0].cause
    assert query(db, "SELECT min_usd_per_hour FROM instances WHERE instance_type='a3-highgpu-8g'") == [
        (88.49,)
    ]


def test_a_reparse_with_only_the_price_file_stored_leaves_the_provider_as_it_was(tmp_path):
    mirror, db = tmp_path / "m", tmp_path / "c.duckdb"
    path = url_to_path(mirror, gcp_prices.PRICES_URL)
    path.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "gcp/initial-prices-small.json", path)
    clock = Clock()
    assert run(db, mirror, clock, providers=["gcp"]).exit_code == 0  # curated rows, fixture prices
    clock.advance()
    report = run(db, None, clock, providers=["gcp"], replay=True)  # no page of Google's was ever stored
    assert (report.outcomes[0].outcome, report.exit_code) == ("unchanged", 0)
    assert query(db, "SELECT count(*), max(scraped_at), max(min_usd_per_hour) FROM instances") == [
        (31, datetime(2026, 12, 1, 6), 119.27)
    ]
    assert query(db, "SELECT count(*) FROM current_prices") == [(6,)]
