"""What the catalog does not know, and why: per provider counts, and one line per missing item of a row
with the reason (the provider states nothing / a page was not fetched / the form factor is unknown)."""

from __future__ import annotations

import csv
import functools
from importlib import resources

import duckdb
import pandas as pd

from catalog.read.filters import NO_FILTERS, Filters
from catalog.read.queries import instances_sql
from catalog.read.shape import Shape, shape

# The GPU link the datasheet table gives a part whose cards may or may not carry an NVLink bridge
# (normalize.gpus.PCIE_OR_BRIDGE; that module loads pint, which the read side never imports).
PCIE_OR_BRIDGE = "pcie-or-nvlink-bridge"

NOT_STATED = "not stated by the provider"
NOT_FETCHED = "page not fetched"
FORM_FACTOR = "form factor unknown"
BRIDGE = "NVLink bridge or PCIe not stated"


@functools.cache
def datasheet_links() -> dict[str, str]:
    """GPU id → its link in the datasheet table (normalize/gpus.csv), read without loading pint."""
    with resources.files("normalize").joinpath("gpus.csv").open(encoding="utf-8") as handle:
        return {row["id"]: row["link"] for row in csv.DictReader(handle)}


def missing_summary(
    con: duckdb.DuckDBPyConnection, filters: Filters = NO_FILTERS, catalog: Shape | None = None
) -> pd.DataFrame:
    """Per provider, among the rows ``filters`` shows, how many lack or qualify a value (counts of rows),
    and ``priced_rows``: how many have a current on-demand price (0 for every provider when the
    catalog holds no prices)."""
    found = catalog or shape(con)
    shown, params = instances_sql(filters, found)
    priced = _priced_sql(found, "shown")
    return con.execute(
        f"""SELECT provider,
                  count(*) AS rows,
                  count(*) FILTER ({priced}) AS priced_rows,
                  count(*) FILTER (missing_intra_bw) AS missing_intra_bw_rows,
                  count(*) FILTER (missing_inter_bw) AS missing_inter_bw_rows,
                  count(*) FILTER (intra_node_link = 'unknown') AS unknown_intra_link_rows,
                  count(*) FILTER (inter_node_fabric = 'unknown') AS unknown_fabric_rows,
                  count(*) FILTER (gpu_count IS NULL) AS missing_gpu_count_rows,
                  count(*) FILTER (intra_node_basis = 'inferred') AS inferred_intra_bw_rows,
                  count(*) FILTER (unit_suspect) AS unit_suspect_rows,
                  count(*) FILTER (conflict) AS conflict_rows,
                  count(*) FILTER (stale) AS stale_rows,
                  count(*) FILTER (source_kind = 'curated') AS curated_rows
           FROM ({shown}) AS shown GROUP BY provider ORDER BY provider""",
        params,
    ).df()


def _priced_sql(catalog: Shape, rows: str) -> str:
    """A condition on a row of the relation ``rows``: it has a current on-demand price."""
    if "current_prices" not in catalog.tables:
        return "false"
    return (
        f"EXISTS (SELECT 1 FROM current_prices p WHERE p.provider = {rows}.provider "
        f"AND p.instance_type = {rows}.instance_type AND p.usd_per_hour IS NOT NULL)"
    )


NO_PRICE = "no price source lists it"

# One SELECT per kind of missing item; ``rows`` is the filtered instances, ``gaps`` adds flags.
_ITEMS = (
    ("GPU count", "gpu_count IS NULL", False),
    (
        "GPU-to-GPU link and bandwidth",
        "missing_intra_bw AND intra_node_link = 'unknown'",
        True,
    ),
    ("GPU-to-GPU bandwidth", "missing_intra_bw AND intra_node_link <> 'unknown'", True),
    ("GPU-to-GPU link", "NOT missing_intra_bw AND intra_node_link = 'unknown'", True),
    ("fabric type and bandwidth", "missing_inter_bw AND inter_node_fabric = 'unknown'", False),
    ("fabric bandwidth", "missing_inter_bw AND inter_node_fabric <> 'unknown'", False),
    ("fabric type", "NOT missing_inter_bw AND inter_node_fabric = 'unknown'", False),
)

_WHY_SQL = f"""
    CASE
        WHEN missing = 'on-demand price' THEN '{NO_PRICE}'
        WHEN not_fetched IS NOT NULL THEN '{NOT_FETCHED}'
        WHEN intra AND gpu_model IS NOT NULL AND NOT list_contains($datasheet_ids, gpu_model)
             AND intra_node_link = 'unknown' THEN '{FORM_FACTOR}'
        WHEN intra AND list_contains($bridge_ids, gpu_model) AND intra_node_link = 'unknown'
             THEN '{BRIDGE}'
        ELSE '{NOT_STATED}'
    END"""

_DETAIL_SQL = """
    CASE
        WHEN missing = 'on-demand price'
            THEN 'none of the price sources read for ' || provider || ' lists an on-demand price for it'
        WHEN not_fetched IS NOT NULL
            THEN 'a page this row needs was not fetched: ' || not_fetched
        WHEN intra AND gpu_model IS NOT NULL AND NOT list_contains($datasheet_ids, gpu_model)
             AND intra_node_link = 'unknown'
            THEN 'the sources name ' || gpu_model
                 || ' without its form factor (SXM or PCIe), so the link cannot be inferred'
        WHEN intra AND list_contains($bridge_ids, gpu_model) AND intra_node_link = 'unknown'
            THEN gpu_model || ' cards may be joined by an NVLink bridge or by PCIe only; the source '
                 || 'states neither'
        WHEN intra AND intra_node_link <> 'unknown'
            THEN 'the provider states no figure and the GPU datasheet table has none for '
                 || coalesce(gpu_model, 'this GPU')
        WHEN source_kind = 'curated' THEN 'none of the sources read for the curated facts states it'
        ELSE 'the provider''s page states nothing for it'
    END"""


def missing_items(
    con: duckdb.DuckDBPyConnection, filters: Filters = NO_FILTERS, catalog: Shape | None = None
) -> pd.DataFrame:
    """One line per missing item of each row ``filters`` shows, with why it is missing.

    Columns: ``provider, instance_type, gpu_model, missing`` (what: GPU count, GPU-to-GPU link and/or
    bandwidth, fabric type and/or bandwidth, on-demand price), ``why`` (``NOT_STATED``, ``NOT_FETCHED``,
    ``FORM_FACTOR`` or ``BRIDGE``), ``detail`` (a sentence), ``notes`` (the row's own notes, joined by '; '),
    ``source_kind`` and ``source_url``.
    """
    found = catalog or shape(con)
    shown, params = instances_sql(filters, found)
    links = datasheet_links()
    params["datasheet_ids"] = sorted(links)
    params["bridge_ids"] = sorted(gpu for gpu, link in links.items() if link == PCIE_OR_BRIDGE)
    kinds = [*_ITEMS, ("on-demand price", f"NOT ({_priced_sql(found, 'gaps')})", False)]
    items = "\nUNION ALL\n".join(
        f"SELECT *, {i} AS item_order, '{name}' AS missing, {str(intra).lower()} AS intra "
        f"FROM gaps WHERE {condition}"
        for i, (name, condition, intra) in enumerate(kinds)
    )
    sql = f"""
WITH gaps AS (
    SELECT *, nullif(regexp_extract(array_to_string(notes, '; '), 'missing includes: ([^;]+)', 1), '')
        AS not_fetched
    FROM ({shown})
), items AS ({items})
SELECT provider, instance_type, gpu_model, missing, {_WHY_SQL} AS why, {_DETAIL_SQL} AS detail,
       array_to_string(notes, '; ') AS notes, source_kind, source_url
FROM items ORDER BY provider, instance_type, item_order"""
    return con.execute(sql, params).df()
