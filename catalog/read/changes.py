"""What changed between refreshes, read from the claims and prices history (valid_from / valid_to)."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pandas as pd

# A change is a (provider, instance type, field[, region]) whose current values differ from the
# values that were current just before: rows closed and rows opened at the same refresh time. A price
# is two fields, usd_per_hour and spot_usd_per_hour, per region; claims have no region (NULL).
CHANGES_SQL = """
WITH facts AS (
    SELECT provider, instance_type, field, NULL::VARCHAR AS region, unit,
           coalesce(CAST(value AS VARCHAR), value_text) AS shown, quote, source_url, valid_from, valid_to
    FROM claims
    UNION ALL
    SELECT provider, instance_type, field, region, 'USD/h' AS unit,
           CAST(value AS VARCHAR) AS shown, quote, source_url, valid_from, valid_to
    FROM prices UNPIVOT (value FOR field IN (usd_per_hour, spot_usd_per_hour))
), closed AS (
    SELECT provider, instance_type, field, region, valid_to AS changed_at,
           list(DISTINCT shown ORDER BY 1) AS before, any_value(unit) AS unit,
           min(source_url) AS source_url
    FROM facts WHERE valid_to IS NOT NULL
    GROUP BY provider, instance_type, field, region, valid_to
), opened AS (
    SELECT provider, instance_type, field, region, valid_from AS changed_at,
           list(DISTINCT shown ORDER BY 1) AS after, min(quote) AS quote
    FROM facts
    GROUP BY provider, instance_type, field, region, valid_from
)
SELECT c.changed_at, c.provider, c.instance_type, c.field, c.region, c.unit, c.before,
       coalesce(o.after, []) AS after, o.quote, c.source_url
FROM closed c
LEFT JOIN opened o ON o.provider = c.provider AND o.instance_type = c.instance_type
    AND o.field = c.field AND o.region IS NOT DISTINCT FROM c.region AND o.changed_at = c.changed_at
WHERE c.changed_at >= ? AND c.before IS DISTINCT FROM coalesce(o.after, [])
ORDER BY c.changed_at DESC, c.provider, c.instance_type, c.field, c.region
"""


def changes(con: duckdb.DuckDBPyConnection, since: datetime | None = None) -> pd.DataFrame:
    """Every claimed figure and published price whose value changed at a refresh, newest first:
    before → after, with the region for a price (NULL for a claim)."""
    return con.execute(CHANGES_SQL, [since or datetime(1970, 1, 1)]).df()
