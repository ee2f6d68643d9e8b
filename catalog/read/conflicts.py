"""Conflicting claims, one line per claim: its value, its quote, its source, and whether the row kept
it and why. (The ``claim_conflicts`` view gives the same claims as lists per field.)

A row keeps one value per field (``catalog.offers.build_offer``: a stated claim before an inferred
one, then the first the scraper read) and is flagged ``conflict`` when another current claim for the
field disagrees; nothing is averaged or dropped.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from catalog.read.filters import NO_FILTERS, Filters
from catalog.read.queries import instances_sql
from catalog.read.shape import Shape, shape
from catalog.read.text import fmt_sql

# The instances columns a claim can feed, numeric and vocabulary ones.
NUMERIC_FIELDS = (
    "gpu_count",
    "gpu_memory_gb",
    "gpu_memory_gbytes_per_s",
    "intra_node_gbytes_per_s",
    "scale_up_domain_gpus",
    "inter_node_gbits_per_s",
    "nic_count",
    "frontend_gbits_per_s",
    "frontend_nic_count",
)
TEXT_FIELDS = ("gpu_model", "intra_node_link", "inter_node_fabric")


def _row_value_sql(fields: tuple[str, ...]) -> str:
    return "CASE c.field " + " ".join(f"WHEN '{f}' THEN i.{f}" for f in fields) + " END"


_CONFLICTS_SQL = f"""
WITH shown AS (SELECT provider, instance_type FROM (__SHOWN__)),
contested AS (
    SELECT provider, instance_type, field FROM current_claims
    GROUP BY ALL
    HAVING count(DISTINCT coalesce(CAST(round(value, 6) AS VARCHAR), value_text)) > 1
), lines AS (
    SELECT c.provider, c.instance_type, c.field, c.value, c.value_text, c.unit, c.basis, c.quote,
           c.context, c.source_url,
           CAST({_row_value_sql(NUMERIC_FIELDS)} AS DOUBLE) AS row_value,
           CAST({_row_value_sql(TEXT_FIELDS)} AS VARCHAR) AS row_value_text,
           i.source_url AS row_source_url,
           bool_or(c.basis = 'inferred') OVER (PARTITION BY c.provider, c.instance_type, c.field)
               AS field_has_inferred
    FROM current_claims c
    JOIN contested USING (provider, instance_type, field)
    JOIN shown USING (provider, instance_type)
    JOIN instances i USING (provider, instance_type)
), judged AS (
    SELECT *, coalesce(abs(value - row_value) <= 1e-6 * abs(row_value), value_text = row_value_text, false)
              AS kept
    FROM lines
)
SELECT provider, instance_type, field, value, value_text, unit, basis, quote, context, source_url, kept,
    CASE
        WHEN kept AND basis = 'stated' AND field_has_inferred
            THEN 'kept: stated by the provider; an inference from the GPU datasheet never overrides it'
        WHEN kept AND source_url = row_source_url
            THEN 'kept: stated on the page the row comes from, and read first'
        WHEN kept THEN 'kept: the first stated claim read for this row'
        WHEN row_value IS NOT NULL
            THEN 'not kept: the row shows ' || {fmt_sql("row_value")} || coalesce(' ' || unit, '')
                 || '; this claim disagrees, so the row is flagged conflict'
        WHEN row_value_text IS NOT NULL
            THEN 'not kept: the row shows ' || row_value_text
                 || '; this claim disagrees, so the row is flagged conflict'
        ELSE 'not kept: the row leaves this field empty'
    END AS why
FROM judged
ORDER BY provider, instance_type, field, kept DESC, value, value_text, quote
"""


def conflicts(
    con: duckdb.DuckDBPyConnection, filters: Filters = NO_FILTERS, catalog: Shape | None = None
) -> pd.DataFrame:
    """Every current claim of a field whose claims disagree, for the rows ``filters`` shows.

    One line per claim: ``provider, instance_type, field, value`` (in the field's unit, ``unit``) or
    ``value_text``, ``basis``, ``quote``, ``context``, ``source_url``, ``kept`` (the row's value is
    this claim's) and ``why`` (a sentence: which value the row kept and on what rule).
    """
    shown, params = instances_sql(filters, catalog or shape(con))
    return con.execute(_CONFLICTS_SQL.replace("__SHOWN__", shown), params).df()
