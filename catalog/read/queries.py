"""Read-only questions the app and the CLI ask of the catalog, as pure functions returning DataFrames.

Every function takes an open DuckDB connection (``catalog.read.connect.connect_readonly``) and
nothing from Streamlit, so it can be tested on a catalog built by the tests. Derived columns carry
their unit in their name, like the catalog's own columns: ``_gbytes_per_s`` is 10^9 bytes per
second, ``_gbits_per_s`` 10^9 bits per second, ``_gpus`` a number of GPUs, ``_usd_per_gpu_hour``
US dollars per GPU-hour. How rows rank for a workload is ``catalog.read.scoring``; the catalog's
health (missing values, conflicts, refresh status) has its own modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import duckdb

from catalog.read.filters import NO_FILTERS, WORKLOADS, Filters, where_sql
from catalog.read.shape import Shape, shape
from catalog.read.text import fmt_sql, label_sql
from normalize.factors import BITS_PER_BYTE
from normalize.vocab import FABRIC_LABELS, LINK_LABELS, NVLINK_CLASS_LINKS, sql_list

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WORKLOADS", "Filters", "filtered_instances", "instances_sql", "plain_sql"]

NVLINK_CLASS_SQL = sql_list(NVLINK_CLASS_LINKS)
LINK_LABEL_SQL = label_sql("intra_node_link", LINK_LABELS)
FABRIC_LABEL_SQL = label_sql("inter_node_fabric", FABRIC_LABELS)
_PRICE_JOIN = """LEFT JOIN (
        SELECT provider, instance_type, min(usd_per_hour) AS min_usd_per_hour
        FROM current_prices GROUP BY provider, instance_type
    ) USING (provider, instance_type)"""


_ASKED_PRICE = "CASE WHEN $spot THEN spot_usd_per_hour ELSE usd_per_hour END"
_ASKED_JOIN = f"""LEFT JOIN (
        SELECT provider, instance_type, min({_ASKED_PRICE}) AS asked_usd_per_hour,
               arg_min(region, {_ASKED_PRICE}) AS asked_region
        FROM current_prices
        WHERE ($region = '' OR lower(region) = lower($region)) AND {_ASKED_PRICE} IS NOT NULL
        GROUP BY provider, instance_type
    ) USING (provider, instance_type)"""


#: ``$inferred`` False: datasheet-inferred bandwidths read as not stated.
_UNINFERRED = """REPLACE (
        CASE WHEN $inferred OR intra_node_basis <> 'inferred'
             THEN intra_node_gbytes_per_s END AS intra_node_gbytes_per_s,
        CASE WHEN $inferred OR inter_node_basis <> 'inferred'
             THEN inter_node_gbits_per_s END AS inter_node_gbits_per_s,
        CASE WHEN $inferred OR inter_node_basis <> 'inferred'
             THEN inter_node_gbytes_per_s END AS inter_node_gbytes_per_s
    )"""
_FLAGS = """concat_ws(', ', CASE WHEN stale THEN 'stale' END, CASE WHEN conflict THEN 'conflict' END,
                  CASE WHEN unit_suspect THEN 'unit corrected' END,
                  CASE WHEN source_kind = 'curated' THEN 'curated' END)"""
#: The columns ``instances_sql`` derives (and the price columns it joins), which ``plain_sql`` lacks.
DERIVED_COLUMNS = (
    "fabric_gbytes_per_s_per_gpu", "frontend_gbytes_per_s_per_gpu", "max_tp_degree_gpus",
    "confined_to_one_node", "gpu_memory_per_gpu_gb", "gpu_memory_total_gb", "usd_per_gpu_hour",
    "search_text", "nvlink_to_fabric_ratio", "min_usd_per_hour", "price_region_asked",
)  # fmt: skip


def _derived_sql(catalog: Shape | None, asked: bool = False) -> str:
    """Derived columns on top of ``instances``; ``$inferred`` False blanks inferred bandwidths.
    ``asked``: price each row in ``$region`` (all regions when empty), spot when ``$spot``."""
    asked = asked and catalog is not None and catalog.priced and "current_prices" in catalog.tables
    join_prices = catalog is not None and catalog.priced and not catalog.prices_in_instances
    price_columns = (
        "min_usd_per_hour / gpu_count AS usd_per_gpu_hour," if join_prices else ""
    )  # NULL count: NULL
    nominal = (
        "coalesce(gpu_memory_nominal_gb, gpu_memory_gb)"
        if catalog is not None and "gpu_memory_nominal_gb" in catalog.instance_columns
        else "gpu_memory_gb"
    )
    return f"""
WITH base AS (
    SELECT * {_UNINFERRED}
    FROM instances {_PRICE_JOIN if join_prices else ""} {_ASKED_JOIN if asked else ""}
), derived AS (
    SELECT *,
        CASE WHEN gpu_count > 0 THEN inter_node_gbytes_per_s / greatest(gpu_count, 1)
        END AS fabric_gbytes_per_s_per_gpu,
        CASE WHEN gpu_count > 0 THEN frontend_gbits_per_s / {BITS_PER_BYTE} / greatest(gpu_count, 1)
        END AS frontend_gbytes_per_s_per_gpu,
        CASE WHEN intra_node_link IN {NVLINK_CLASS_SQL} THEN scale_up_domain_gpus
             WHEN intra_node_link = 'pcie' AND gpu_count IS NOT NULL
                  THEN CAST(greatest(floor(gpu_count), 1) AS INTEGER)
             WHEN intra_node_link = 'single-gpu' THEN 1
        END AS max_tp_degree_gpus,
        CASE WHEN intra_node_link IN ('pcie', 'single-gpu') THEN true
             WHEN intra_node_link IN {NVLINK_CLASS_SQL} THEN scale_up_domain_gpus <= gpu_count
        END AS confined_to_one_node,
        CASE WHEN gpu_count < 1 THEN gpu_memory_gb ELSE {nominal} END AS gpu_memory_per_gpu_gb,
        CASE WHEN gpu_count < 1 THEN gpu_memory_gb ELSE {nominal} * gpu_count END AS gpu_memory_total_gb,
        {price_columns}
        lower(concat_ws(' ', provider, instance_type, gpu_model, {LINK_LABEL_SQL}, intra_node_link,
                        {FABRIC_LABEL_SQL}, inter_node_fabric)) AS search_text
    FROM base
), flagged AS (
    SELECT *,
        CASE WHEN intra_node_link IN {NVLINK_CLASS_SQL} AND fabric_gbytes_per_s_per_gpu > 0
             THEN intra_node_gbytes_per_s / 2 / fabric_gbytes_per_s_per_gpu
        END AS nvlink_to_fabric_ratio,
        {_FLAGS} AS flags
    FROM derived
), rows AS ({_ASKED_ROWS if asked else "SELECT * FROM flagged"}
)"""


_ASKED_ROWS = """SELECT * EXCLUDE (asked_usd_per_hour, asked_region) REPLACE (
        asked_usd_per_hour / gpu_count AS usd_per_gpu_hour), asked_region AS price_region_asked
    FROM flagged"""


def instances_sql(filters: Filters = NO_FILTERS, catalog: Shape | None = None) -> tuple[str, dict]:
    """The SQL and parameters of ``filtered_instances`` (every ``instances`` column plus derived ones).

    Derived columns:

    - ``fabric_gbytes_per_s_per_gpu``: the node's fabric GB/s divided by its GPUs (a fractional
      GPU counts as one GPU); NULL when either is unknown; 0 when the fabric is ``none``.
    - ``frontend_gbytes_per_s_per_gpu``: the same for the front-end network.
    - ``max_tp_degree_gpus``: the largest tensor-parallel group that never leaves the GPU-to-GPU
      link: the scale-up domain for NVLink/NVSwitch/Infinity Fabric (72 on an NVL72 rack, even
      though an instance holds 4), every GPU of the host for PCIe, 1 for a single GPU; NULL when
      the link or the GPU count is unknown.
    - ``confined_to_one_node``: tensor parallelism at link speed cannot span instances (PCIe,
      single GPU, or a scale-up domain no larger than the instance); False for rack-scale domains;
      NULL when unknown.
    - ``nvlink_to_fabric_ratio``: one way against one way, for scale-up links: half the
      bidirectional intra-node GB/s per GPU / the one-way fabric GB/s per GPU (p5.48xlarge: 450 / 50
      = 9): how much slower the step off the NVLink domain is.
    - ``gpu_memory_per_gpu_gb``: memory per GPU compared like for like: the datasheet's size
      (``gpu_memory_nominal_gb``: 80 for every H100 SXM, whether its page says "80 GB" or "80 GiB"),
      or the stated one where the file has no such column; a fraction of a GPU its slice's memory.
    - ``gpu_memory_total_gb``: the instance's GPU memory, per GPU x GPUs (a slice: its own memory).
    - ``flags``: what a reader must know before trusting the row: stale, conflict, unit corrected,
      curated (comma-separated; empty when none).
    - ``usd_per_gpu_hour`` (only when ``catalog`` has prices): the cheapest on-demand price of the
      instance divided by its GPUs; with ``filters.region`` or ``filters.spot``, the cheapest price
      of that kind in that region, and ``price_region_asked`` the region it is published for.
    """
    priced = catalog is not None and catalog.priced
    where, params = where_sql(filters, nvlink_class_sql=NVLINK_CLASS_SQL, priced=priced)
    params["inferred"] = filters.include_inferred
    asked = bool(filters.region or filters.spot) and priced
    if asked:
        params |= {"region": filters.region, "spot": filters.spot}
    sql = (
        _derived_sql(catalog, asked)
        + "\nSELECT * EXCLUDE (search_text) FROM rows"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY provider, instance_type"
    )
    return sql, params


def plain_sql(filters: Filters, catalog: Shape | None, columns: Iterable[str]) -> tuple[str, dict] | None:
    """``instances_sql``'s rows, in its order, with ``columns`` of the catalog's own (inferred figures
    blanked as there) or ``flags``: a fraction of the work to bind, for a caller that needs no derived
    column. None when a filter reads one (then ask ``instances_sql``)."""
    where, params = where_sql(
        filters, nvlink_class_sql=NVLINK_CLASS_SQL, priced=catalog is not None and catalog.priced
    )
    if any(column in clause for clause in where for column in DERIVED_COLUMNS):
        return None
    sql = (
        f"SELECT {', '.join(columns)} FROM (SELECT * {_UNINFERRED}, {_FLAGS} AS flags FROM instances)"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY provider, instance_type"
    )
    return sql, params | {"inferred": filters.include_inferred}


def filtered_instances(
    con: duckdb.DuckDBPyConnection, filters: Filters = NO_FILTERS, catalog: Shape | None = None
) -> pd.DataFrame:
    """Catalog rows matching ``filters``, with the derived columns of ``instances_sql``."""
    sql, params = instances_sql(filters, catalog or shape(con))
    return con.execute(sql, params).df()


def instance(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str) -> pd.DataFrame:
    """One catalog row with its derived columns (inferred values kept); empty if there is none."""
    sql = _derived_sql(None) + (
        "\nSELECT * EXCLUDE (search_text) FROM rows "
        "WHERE provider = $provider AND instance_type = $instance_type"
    )
    return con.execute(sql, {"inferred": True, "provider": provider, "instance_type": instance_type}).df()


# ---------------------------------------------------------------------------------------------
# Instances side by side: their bandwidth cliffs and their claims

CLIFF_LEVELS = ("GPU memory", "intra-node per GPU", "fabric per GPU", "front-end per GPU")
CLIFF_COLUMNS = ["level", "gbytes_per_s", "direction", "basis", "link", "detail"]
#: The direction each level's figure is stated in: HBM is a memory's bandwidth (no direction), a
#: GPU-to-GPU claim is bidirectional per GPU (900 GB/s on Hopper), networks are one way.
CLIFF_DIRECTIONS = ("none", "two-way", "one-way", "one-way")
_PER_GPUS = (
    f"CASE WHEN gpu_count IS NOT NULL THEN ' / ' || {fmt_sql('gpu_count')} "
    "|| CASE WHEN gpu_count = 1 THEN ' GPU' ELSE ' GPUs' END ELSE '' END"
)


def _node_detail_sql(column: str) -> str:
    """How a per-GPU figure comes from a per-node Gb/s column: '3,200 Gb/s per node / 8 / 8 GPUs'."""
    return (
        f"CASE WHEN {column} IS NULL THEN 'not stated' ELSE "
        f"{fmt_sql(column)} || ' Gb/s per node / {BITS_PER_BYTE}' || {_PER_GPUS} END"
    )


def _level_sql(order: int, field: str, value: str, basis: str, link: str, detail: str) -> str:
    """One level of the cliff for every chosen row: value per GPU, basis, what carries it, how."""
    return f"""SELECT position, provider, instance_type, {order} AS level_order,
        '{CLIFF_LEVELS[order]}' AS level,
        CASE WHEN {basis} = 'not-applicable' THEN NULL ELSE {value} END AS gbytes_per_s,
        '{CLIFF_DIRECTIONS[order]}' AS direction, source_url AS row_source_url,
        CASE WHEN {basis} = 'not-applicable' THEN {basis}
             WHEN {value} IS NULL THEN 'missing' ELSE {basis} END AS basis,
        {link} AS link, {detail} AS detail, '{field}' AS field, {field} AS field_value, gpu_count
    FROM chosen"""


_CLIFFS_SQL = (
    _derived_sql(None)
    + """, chosen AS (
    SELECT rows.*, k.position FROM rows JOIN (
        SELECT unnest($providers) AS provider, unnest($types) AS instance_type,
               generate_subscripts($providers, 1) AS position
    ) k USING (provider, instance_type)
), levels AS ("""
    + "\nUNION ALL\n".join(
        (
            _level_sql(
                0,
                "gpu_memory_gbytes_per_s",
                "gpu_memory_gbytes_per_s",
                "gpu_memory_bw_basis",
                "coalesce(gpu_model, '')",
                "'per GPU'",
            ),
            _level_sql(
                1,
                "intra_node_gbytes_per_s",
                "intra_node_gbytes_per_s",
                "intra_node_basis",
                LINK_LABEL_SQL,
                "'per GPU'",
            ),
            _level_sql(
                2,
                "inter_node_gbits_per_s",
                "fabric_gbytes_per_s_per_gpu",
                "inter_node_basis",
                FABRIC_LABEL_SQL,
                _node_detail_sql("inter_node_gbits_per_s")
                + " || CASE WHEN inter_node_gbits_per_s IS NOT NULL AND gpu_count IS NULL "
                "THEN '; GPUs per instance not stated' ELSE '' END",
            ),
            _level_sql(
                3,
                "frontend_gbits_per_s",
                "frontend_gbytes_per_s_per_gpu",
                "'stated'",
                "'front-end network'",
                _node_detail_sql("frontend_gbits_per_s")
                + " || CASE WHEN fabric_shares_frontend THEN '; one allowance shared with the fabric' "
                "ELSE '' END",
            ),
        )
    )
    + """)
SELECT l.* EXCLUDE (field_value, level_order, position, row_source_url), s.source_url, s.quote
FROM levels l LEFT JOIN current_claims s
  ON s.provider = l.provider AND s.instance_type = l.instance_type AND s.field = l.field
 AND abs(s.value - l.field_value) <= 1e-6 * abs(l.field_value)
QUALIFY row_number() OVER (
    PARTITION BY l.position, l.level_order
    ORDER BY s.basis IS NOT DISTINCT FROM l.basis DESC, s.source_url LIKE 'http%' DESC NULLS LAST,
             s.source_url IS NOT DISTINCT FROM l.row_source_url DESC, s.evidence = 'verbatim' DESC NULLS LAST,
             s.source_url, s.quote) = 1
ORDER BY l.position, l.level_order"""
)


def cliffs(con: duckdb.DuckDBPyConnection, chosen: list[tuple[str, str]]) -> pd.DataFrame:
    """The bandwidth cliffs of the ``(provider, instance_type)`` pairs, in their order, in one query.

    One row per instance and level of ``CLIFF_LEVELS``: ``gbytes_per_s`` per GPU (NaN when not
    known) in the level's ``direction`` (``CLIFF_DIRECTIONS``), ``basis`` (stated, inferred,
    missing, not-applicable), ``link`` (what carries it), ``detail`` (how the per-GPU figure is
    derived), ``field`` (the ``instances`` column behind it),
    ``gpu_count``, and the ``source_url`` and ``quote`` of the claim the row's value comes from: of
    the claims of that value, one of the row's basis (a stated figure quotes the page, not a topology
    file that expects the same number), from an http(s) page (the provider's own before a copy).
    Fabric and front-end are per GPU: the node's Gb/s / 8 / GPUs. Unknown pairs have no rows.
    """
    params = {"inferred": True, "providers": [p for p, _ in chosen], "types": [t for _, t in chosen]}
    return con.execute(_CLIFFS_SQL, params).df()


def cliff(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str) -> pd.DataFrame:
    """The bandwidth cliff of one instance (``cliffs`` for one pair, without its key columns)."""
    found = cliffs(con, [(provider, instance_type)])
    return found.drop(columns=["provider", "instance_type"]).reset_index(drop=True)


def copy_originals(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Each local copy a row or claim cites (``copy:reference/...``: a third-party copy read from
    ../shared, cited as itself) → the page it copies, as its current claims record it
    (``original_url``); a copy whose claims name no page is left out."""
    rows = con.execute(
        """SELECT source_url, min(original_url) FROM current_claims
            WHERE source_url LIKE 'copy:%' AND original_url IS NOT NULL GROUP BY source_url"""
    ).fetchall()
    return {str(url): str(original) for url, original in rows}


def claims(
    con: duckdb.DuckDBPyConnection, provider: str, instance_type: str, history: bool = False
) -> pd.DataFrame:
    """The claims behind one row: field, value (in the field's unit), quote, context, source URL,
    the evidence the quote is (verbatim, paraphrase, datasheet) and ``provenance``, a sentence saying
    so ("quoted from URL", "paraphrased from URL, read 2026-12-02", "GPU table row; datasheet URL").

    Current claims only, unless ``history`` (then closed ones too, with ``valid_to``).
    """
    table = "claims" if history else "current_claims"
    return con.execute(
        f"""SELECT field, value, value_text, unit, basis, qualifiers, unit_suspect, quote, context,
                   source_url, evidence, original_url, read_on,
                   CASE evidence
                       WHEN 'paraphrase' THEN 'paraphrased from ' || source_url
                           || coalesce(', read ' || CAST(read_on AS VARCHAR), '')
                       WHEN 'datasheet' THEN 'GPU table row; datasheet ' || source_url
                       ELSE 'quoted from ' || source_url
                           || coalesce(' (a copy of ' || original_url || ')', '')
                   END AS provenance,
                   fetched_at, valid_from, valid_to
            FROM {table} WHERE provider = ? AND instance_type = ?
            ORDER BY field, valid_from, value, value_text""",
        [provider, instance_type],
    ).df()


# ---------------------------------------------------------------------------------------------
# What the filters can choose from


def providers(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The providers that have rows in the catalog."""
    return [p for (p,) in con.execute("SELECT DISTINCT provider FROM instances ORDER BY 1").fetchall()]


def facets(con: duckdb.DuckDBPyConnection) -> dict:
    """The values each list filter can take in this catalog: providers, GPU counts (stated ones),
    intra-node links, fabrics, NVLink-class domain sizes and peer-access values, each sorted; and
    ``rows``, the number
    of rows in the catalog."""
    row = con.execute(
        f"""SELECT count(*),
                   list(DISTINCT provider ORDER BY provider),
                   list(DISTINCT gpu_count ORDER BY gpu_count) FILTER (gpu_count IS NOT NULL),
                   list(DISTINCT intra_node_link ORDER BY intra_node_link),
                   list(DISTINCT inter_node_fabric ORDER BY inter_node_fabric),
                   list(DISTINCT scale_up_domain_gpus ORDER BY scale_up_domain_gpus)
                       FILTER (intra_node_link IN {NVLINK_CLASS_SQL} AND scale_up_domain_gpus IS NOT NULL),
                   list(DISTINCT gpu_peer_access ORDER BY gpu_peer_access)
            FROM instances"""
    ).fetchone()
    assert row is not None, "an aggregate without GROUP BY has one row"
    names = ("providers", "gpu_counts", "intra_links", "fabrics", "domain_gpus", "peer_access")
    found: dict = {name: list(values or []) for name, values in zip(names, row[1:], strict=True)}
    return found | {"rows": int(row[0])}
