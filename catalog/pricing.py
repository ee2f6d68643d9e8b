"""The price columns of ``instances``, read from the current prices in SQL, and what the prices carry
beside their figures: the exchange rates they were converted at and the flags of placeholder prices.

``min_usd_per_hour`` is the cheapest current on-demand price of the whole instance over every region
its sources publish; ``usd_per_gpu_hour`` is that price divided by ``gpu_count`` (for a fractional GPU,
0.125 x L4, the price of a whole GPU's worth: the slice's price / 0.125); ``regions`` counts the
regions with an on-demand price and ``price_region`` names the cheapest one (the first by name when
several share the minimum). Spot prices stay in ``prices`` and never set these columns: a spot price
can be withdrawn at any moment, so "cheapest" means on-demand. A row with no on-demand price has
NULLs and ``regions`` 0: a price that is not published is missing, never guessed. A price published
in another currency is compared in USD at the catalog's stated, dated rate (``exchange_rates``).

A placeholder-looking price is kept and flagged (``prices.price_flag``, and the row's ``price_flag``
when it is the row's cheapest): on-demand equal to spot, at a whole number of dollars per GPU-hour,
the same figure for two or more GPU models of one seller. No market prices an H100 and an H200 alike.

The price columns are joined into each row when it is finished (``catalog.finish``), once every
provider's rows and prices are in, so stale and untouched providers get theirs from the prices they kept.
"""

from __future__ import annotations

import duckdb

from normalize.currency import RATES
from scrapers import PROVIDER_NAMES, REGISTRY
from scrapers.offer_lists.ages import READ_BY_DOCUMENTS, OfferList
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog

#: The price columns of one row from the current prices (a row with none has NULLs and 0 regions).
ROW_PRICES_SQL = """
SELECT provider, instance_type,
       min(usd_per_hour) AS min_usd_per_hour,
       count(DISTINCT region) AS regions,
       list(region ORDER BY usd_per_hour, region)[1] AS price_region,
       list(price_flag ORDER BY usd_per_hour, region)[1] AS price_flag
FROM current_prices
WHERE usd_per_hour IS NOT NULL
GROUP BY provider, instance_type
"""
#: How a row ``r`` meets its price columns ``p``.
PRICE_JOIN = (
    f"LEFT JOIN ({ROW_PRICES_SQL}) p ON p.provider = r.provider AND p.instance_type = r.instance_type"
)
#: Each price column of ``instances`` as an expression over a row ``r`` and its ROW_PRICES_SQL ``p``.
PRICE_COLUMNS = {
    "min_usd_per_hour": "p.min_usd_per_hour",
    "usd_per_gpu_hour": "p.min_usd_per_hour / r.gpu_count",
    "regions": "coalesce(p.regions, 0)",
    "price_region": "p.price_region",
    "price_flag": "p.price_flag",
}

# Per GPU-hour, in the published currency: on-demand = spot, a whole number, shared by 2+ GPU models.
FLAG_SQL = """
WITH per_gpu AS (
    SELECT p.provider, p.instance_type, p.region, p.currency, i.gpu_model,
           round(p.published_per_hour / i.gpu_count, 6) AS per_gpu_hour
    FROM prices p JOIN {rows} i USING (provider, instance_type)
    WHERE p.valid_to IS NULL AND i.gpu_count IS NOT NULL AND i.gpu_model IS NOT NULL
      AND p.published_per_hour IS NOT NULL AND p.published_per_hour = p.published_spot_per_hour
), suspects AS (
    SELECT provider, currency, per_gpu_hour, string_agg(DISTINCT gpu_model, ', ' ORDER BY gpu_model) AS models
    FROM per_gpu WHERE per_gpu_hour = round(per_gpu_hour)
    GROUP BY provider, currency, per_gpu_hour HAVING count(DISTINCT gpu_model) > 1
)
UPDATE prices AS p SET price_flag =
    'looks like a placeholder: on-demand = spot = ' || s.per_gpu_hour || ' ' || s.currency
    || ' per GPU-hour, the same for ' || s.models || ' (kept as published)'
FROM per_gpu g JOIN suspects s USING (provider, currency, per_gpu_hour)
WHERE p.valid_to IS NULL AND p.provider = g.provider AND p.instance_type = g.instance_type
  AND p.region = g.region
"""


def write_exchange_rates(con: duckdb.DuckDBPyConnection) -> None:
    """The catalog's exchange rates (normalize/exchange_rates.csv), replacing what the table held."""
    con.execute("DELETE FROM exchange_rates")
    _insert_values(
        con,
        "exchange_rates",
        [[r.currency, r.usd_per_unit, r.rate_date, r.source_url, r.note] for r in RATES.values()],
    )


def offer_lists() -> list[OfferList]:
    """Every offer list read: each offer-list provider's (declared on its class), then the lists
    document scrapers read (scrapers.offer_lists.ages)."""
    classes = (REGISTRY[name] for name in PROVIDER_NAMES)  # not a scaled benchmark's copies of them
    declared = (cls.offer_list() for cls in classes if issubclass(cls, SkyPilotCatalog))
    return [*(found for found in declared if found), *READ_BY_DOCUMENTS]


def write_offer_lists(con: duckdb.DuckDBPyConnection) -> None:
    """How old each offer list is (scrapers.offer_lists.ages), replacing what the table held."""
    con.execute("DELETE FROM offer_lists")
    _insert_values(
        con,
        "offer_lists",
        [
            [
                o.provider,
                o.url,
                o.catalog_version,
                o.status,
                o.data_as_of,
                o.as_of_note,
                o.stored_commit,
                o.newer_list,
            ]
            for o in offer_lists()
        ],
    )


def _insert_values(con: duckdb.DuckDBPyConnection, table: str, rows: list[list[object]]) -> None:
    """``rows`` into ``table`` in one statement: ``executemany`` runs a statement per row (most of
    writing these small tables)."""
    if rows:
        one = f"({', '.join('?' * len(rows[0]))})"
        con.execute(
            f"INSERT INTO {table} VALUES {', '.join([one] * len(rows))}", [v for r in rows for v in r]
        )


def flag_placeholders(con: duckdb.DuckDBPyConnection, rows: str = "instances") -> None:
    """Flag every current price that looks like a placeholder (see the module docstring); the GPU
    model and count come from ``rows`` (a table or view of the catalog's rows)."""
    con.execute("UPDATE prices SET price_flag = NULL WHERE valid_to IS NULL")
    con.execute(FLAG_SQL.format(rows=rows))


def prepare_prices(con: duckdb.DuckDBPyConnection, rows: str) -> None:
    """What the rows' price columns are read from: the exchange rates, and the placeholder flags of the
    current prices (``rows``: the rows as built, for their GPU model and count). In the caller's
    transaction (``catalog.finish``): a commit per statement was most of their time."""
    write_exchange_rates(con)
    write_offer_lists(con)
    flag_placeholders(con, rows)
