"""What changed between refreshes, read from the claims history (valid_from / valid_to)."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pandas as pd

# A change is a (provider, instance type, field) whose current claims differ from the claims
# that were current just before: claims closed and claims opened at the same refresh time.
CHANGES_SQL = """
WITH closed AS (
    SELECT provider, instance_type, field, valid_to AS changed_at,
           list(DISTINCT coalesce(CAST(value AS VARCHAR), value_text) ORDER BY 1) AS before,
           min(source_url) AS source_url
    FROM claims WHERE valid_to IS NOT NULL
    GROUP BY ALL
), opened AS (
    SELECT provider, instance_type, field, valid_from AS changed_at,
           list(DISTINCT coalesce(CAST(value AS VARCHAR), value_text) ORDER BY 1) AS after,
           min(quote) AS quote
    FROM claims
    GROUP BY ALL
)
SELECT c.changed_at, c.provider, c.instance_type, c.field, c.unit, c.before,
       coalesce(o.after, []) AS after, o.quote, c.source_url
FROM (SELECT closed.*, any_value(claims.unit) AS unit
      FROM closed JOIN claims USING (provider, instance_type, field)
      GROUP BY ALL) c
LEFT JOIN opened o USING (provider, instance_type, field, changed_at)
WHERE c.changed_at >= ? AND c.before IS DISTINCT FROM coalesce(o.after, [])
ORDER BY c.changed_at DESC, c.provider, c.instance_type, c.field
"""


def changes(con: duckdb.DuckDBPyConnection, since: datetime | None = None) -> pd.DataFrame:
    """Every field whose claimed values changed at a refresh, newest first: before → after."""
    return con.execute(CHANGES_SQL, [since or datetime(1970, 1, 1)]).df()
