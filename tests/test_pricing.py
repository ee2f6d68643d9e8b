"""Price columns on instances (catalog.pricing): the cheapest current on-demand price, per GPU, where."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pandas as pd
import pytest

from catalog.offers import build_offer
from catalog.pricing import fill_price_columns
from catalog.store import INSTANCE_COLUMNS, PRICE_COLUMNS, offer_row, price_row, schema_sql
from normalize.errors import InvalidOffer
from records.offers import Claim, RawOffer
from records.prices import Price

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
    """The price columns of ``offers`` after fill_price_columns, given current and closed prices."""
    with duckdb.connect() as con:
        con.execute(schema_sql())
        rows = pd.DataFrame([offer_row(o) for o in offers], columns=list(INSTANCE_COLUMNS))
        history = [price_row(p, None, NOW) for p in prices]
        history += [{**price_row(p, None, NOW), "valid_to": NOW} for p in closed]
        con.register("staged_rows", rows)
        con.register("staged_prices", pd.DataFrame(history, columns=list(PRICE_COLUMNS)))
        con.execute("INSERT INTO instances BY NAME SELECT * FROM staged_rows")
        con.execute("INSERT INTO prices BY NAME SELECT * FROM staged_prices")
        fill_price_columns(con)
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
