"""The price columns of ``instances``, read from the current prices in one SQL statement.

``min_usd_per_hour`` is the cheapest current on-demand price of the whole instance over every region
its sources publish; ``usd_per_gpu_hour`` is that price divided by ``gpu_count`` (for a fractional GPU,
0.125 x L4, the price of a whole GPU's worth: the slice's price / 0.125); ``regions`` counts the
regions with an on-demand price and ``price_region`` names the cheapest one (the first by name when
several share the minimum). Spot prices stay in ``prices`` and never set these columns: a spot price
can be withdrawn at any moment, so "cheapest" means on-demand. A row with no on-demand price has
NULLs and ``regions`` 0: a price that is not published is missing, never guessed.

``fill_price_columns`` runs on the new catalog's connection once every provider's rows and prices are
in, so stale and untouched providers get their columns from the prices they kept.
"""

from __future__ import annotations

import duckdb

FILL_SQL = """
UPDATE instances AS i SET
    min_usd_per_hour = u.min_usd_per_hour,
    usd_per_gpu_hour = u.min_usd_per_hour / i.gpu_count,
    regions = coalesce(u.regions, 0),
    price_region = u.price_region
FROM (
    SELECT provider, instance_type, b.min_usd_per_hour, b.regions, b.price_region
    FROM instances LEFT JOIN (
        SELECT provider, instance_type,
               min(usd_per_hour) AS min_usd_per_hour,
               count(DISTINCT region) AS regions,
               list(region ORDER BY usd_per_hour, region)[1] AS price_region
        FROM current_prices
        WHERE usd_per_hour IS NOT NULL
        GROUP BY provider, instance_type
    ) AS b USING (provider, instance_type)
) AS u
WHERE i.provider = u.provider AND i.instance_type = u.instance_type
"""


def fill_price_columns(con: duckdb.DuckDBPyConnection) -> None:
    """Set every row's price columns from ``current_prices`` (NULL and 0 where none is published)."""
    con.execute(FILL_SQL)
