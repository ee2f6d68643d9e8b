"""Read-only questions the app and the CLI ask of the catalog, as pure functions returning DataFrames.

Every function takes an open DuckDB connection (``catalog.read.connect.connect_readonly``) and
nothing from Streamlit, so it can be tested on a catalog built by the tests. Derived columns carry
their unit in their name, like the catalog's own columns: ``_gbytes_per_s`` is 10^9 bytes per
second, ``_gbits_per_s`` 10^9 bits per second, ``_gpus`` a number of GPUs. How rows are ranked for
a workload is ``catalog.read.scoring``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pandas as pd

from catalog.read.changes import changes
from catalog.read.text import fmt, known
from normalize.vocab import (
    FABRIC_LABELS,
    LINK_LABELS,
    NVLINK_CLASS_LINKS,
    Fabric,
    Link,
    sql_list,
)

WORKLOADS = ("tensor", "pipeline", "expert")


@dataclass(frozen=True)
class Filters:
    """What the user asked for. Empty ``providers`` means every provider.

    ``min_gpus`` > 0 drops rows whose GPU count is not stated (they cannot be shown to meet it).
    ``include_inferred`` False treats datasheet-inferred bandwidths as not stated, so only the
    providers' own figures score.
    """

    workload: str = "tensor"
    providers: tuple[str, ...] = ()
    min_gpus: float = 0
    gpu_search: str = ""
    include_stale: bool = True
    include_curated: bool = True
    include_inferred: bool = True


_SCALE_UP_SQL = sql_list(NVLINK_CLASS_LINKS)

# Derived columns on top of ``instances``; ``$inferred`` False blanks inferred bandwidths.
_DERIVED = f"""
WITH base AS (
    SELECT * REPLACE (
        CASE WHEN $inferred OR intra_node_basis <> 'inferred'
             THEN intra_node_gbytes_per_s END AS intra_node_gbytes_per_s,
        CASE WHEN $inferred OR inter_node_basis <> 'inferred'
             THEN inter_node_gbits_per_s END AS inter_node_gbits_per_s,
        CASE WHEN $inferred OR inter_node_basis <> 'inferred'
             THEN inter_node_gbytes_per_s END AS inter_node_gbytes_per_s
    )
    FROM instances
), derived AS (
    SELECT *,
        CASE WHEN gpu_count > 0 THEN inter_node_gbytes_per_s / greatest(gpu_count, 1)
        END AS fabric_gbytes_per_s_per_gpu,
        CASE WHEN gpu_count > 0 THEN frontend_gbits_per_s / 8 / greatest(gpu_count, 1)
        END AS frontend_gbytes_per_s_per_gpu,
        CASE WHEN intra_node_link IN {_SCALE_UP_SQL} THEN scale_up_domain_gpus
             WHEN intra_node_link = 'pcie' AND gpu_count IS NOT NULL
                  THEN CAST(greatest(floor(gpu_count), 1) AS INTEGER)
             WHEN intra_node_link = 'single-gpu' THEN 1
        END AS max_tp_degree_gpus,
        CASE WHEN intra_node_link IN ('pcie', 'single-gpu') THEN true
             WHEN intra_node_link IN {_SCALE_UP_SQL} THEN scale_up_domain_gpus <= gpu_count
        END AS confined_to_one_node
    FROM base
)
SELECT *,
    CASE WHEN intra_node_link IN {_SCALE_UP_SQL} AND fabric_gbytes_per_s_per_gpu > 0
         THEN intra_node_gbytes_per_s / fabric_gbytes_per_s_per_gpu
    END AS nvlink_to_fabric_ratio
FROM derived
"""


def instances_sql(filters: Filters = Filters()) -> tuple[str, dict]:
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
    - ``nvlink_to_fabric_ratio``: intra-node GB/s per GPU / fabric GB/s per GPU for scale-up
      links: how much slower the step off the NVLink domain is.
    """
    where, params = [], {"inferred": filters.include_inferred}
    if filters.providers:
        where.append("list_contains($providers, provider)")
        params["providers"] = list(filters.providers)
    if filters.min_gpus and filters.min_gpus > 0:
        where.append("gpu_count >= $min_gpus")
        params["min_gpus"] = float(filters.min_gpus)
    if filters.gpu_search.strip():
        where.append(
            "(contains(lower(coalesce(gpu_model, '')), $search) OR contains(lower(instance_type), $search))"
        )
        params["search"] = filters.gpu_search.strip().lower()
    if not filters.include_stale:
        where.append("NOT stale")
    if not filters.include_curated:
        where.append("source_kind <> 'curated'")
    sql = _DERIVED + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY provider, instance_type"
    return sql, params


def filtered_instances(con: duckdb.DuckDBPyConnection, filters: Filters = Filters()) -> pd.DataFrame:
    """Catalog rows matching ``filters``, with the derived columns of ``instances_sql``."""
    sql, params = instances_sql(filters)
    return con.execute(sql, params).df()


def instance(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str) -> pd.DataFrame:
    """One catalog row with its derived columns (inferred values kept); empty if there is none."""
    sql = _DERIVED + " WHERE provider = $provider AND instance_type = $instance_type"
    return con.execute(sql, {"inferred": True, "provider": provider, "instance_type": instance_type}).df()


# ---------------------------------------------------------------------------------------------
# One instance: its bandwidth cliff and its claims

CLIFF_LEVELS = ("GPU memory", "intra-node per GPU", "fabric per GPU", "front-end per GPU")


def cliff(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str) -> pd.DataFrame:
    """The bandwidth cliff of one instance: one row per level of ``CLIFF_LEVELS``, in GB/s.

    Columns: ``level``, ``gbytes_per_s`` (NaN when not known), ``basis`` (stated, inferred,
    missing, not-applicable), ``link`` (what carries it), ``detail`` (how the figure was derived).
    Fabric and front-end are per GPU: the node's Gb/s / 8 / GPUs. Empty if there is no such row.
    """
    found = instance(con, provider, instance_type)
    if found.empty:
        return pd.DataFrame(columns=["level", "gbytes_per_s", "basis", "link", "detail"])
    row = found.iloc[0].to_dict()
    gpus = row["gpu_count"]
    per = f" / {fmt(gpus)} GPUs" if known(gpus) else ""

    def value_or_missing(value, basis):
        if basis == "not-applicable":
            return float("nan"), basis
        return (float(value), basis) if known(value) else (float("nan"), "missing")

    memory = value_or_missing(row["gpu_memory_gbytes_per_s"], row["gpu_memory_bw_basis"])
    intra = value_or_missing(row["intra_node_gbytes_per_s"], row["intra_node_basis"])
    fabric = value_or_missing(row["fabric_gbytes_per_s_per_gpu"], row["inter_node_basis"])
    frontend = value_or_missing(row["frontend_gbytes_per_s_per_gpu"], "stated")
    gbits, front_gbits = row["inter_node_gbits_per_s"], row["frontend_gbits_per_s"]
    fabric_detail = f"{fmt(gbits)} Gb/s per node / 8{per}" if known(gbits) else "not stated"
    if known(gbits) and not known(gpus):
        fabric_detail += "; GPUs per instance not stated"
    front_detail = f"{fmt(front_gbits)} Gb/s per node / 8{per}" if known(front_gbits) else "not stated"
    if row["fabric_shares_frontend"]:
        front_detail += "; one allowance shared with the fabric"
    rows = [
        (CLIFF_LEVELS[0], *memory, row["gpu_model"] or "", "per GPU"),
        (CLIFF_LEVELS[1], *intra, LINK_LABELS[Link(row["intra_node_link"])], "per GPU"),
        (CLIFF_LEVELS[2], *fabric, FABRIC_LABELS[Fabric(row["inter_node_fabric"])], fabric_detail),
        (CLIFF_LEVELS[3], *frontend, "front-end network", front_detail),
    ]
    return pd.DataFrame(rows, columns=["level", "gbytes_per_s", "basis", "link", "detail"])


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
# Catalog health


def missing_summary(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per provider, how many rows lack or qualify a value (all counts are rows)."""
    return con.execute(
        """SELECT provider,
                  count(*) AS rows,
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
           FROM instances GROUP BY provider ORDER BY provider"""
    ).df()


def missing_rows(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Rows missing a bandwidth, a link/fabric type or a GPU count, with what is missing."""
    return con.execute(
        """SELECT provider, instance_type, gpu_model,
                  concat_ws(', ',
                      CASE WHEN intra_node_link = 'unknown' THEN 'intra-node link' END,
                      CASE WHEN missing_intra_bw THEN 'intra-node GB/s' END,
                      CASE WHEN inter_node_fabric = 'unknown' THEN 'fabric type' END,
                      CASE WHEN missing_inter_bw THEN 'fabric Gb/s' END,
                      CASE WHEN gpu_count IS NULL THEN 'GPU count' END) AS missing,
                  source_kind, source_url
           FROM instances
           WHERE missing_intra_bw OR missing_inter_bw OR gpu_count IS NULL
              OR intra_node_link = 'unknown' OR inter_node_fabric = 'unknown'
           ORDER BY provider, instance_type"""
    ).df()


def conflicts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Fields whose current claims disagree (``claim_conflicts``), lists joined by " ‖ " for display."""
    return con.execute(
        """SELECT provider, instance_type, field,
                  array_to_string(values, ' ‖ ') AS claimed_values,
                  array_to_string(quotes, ' ‖ ') AS quotes,
                  array_to_string(source_urls, ' ') AS source_urls
           FROM claim_conflicts ORDER BY provider, instance_type, field"""
    ).df()


def latest_refresh(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The last refresh run (one row, or none): id, start, end, mode, exit code."""
    return con.execute(
        "SELECT refresh_id, started_at, finished_at, mode, exit_code FROM refreshes "
        "ORDER BY finished_at DESC LIMIT 1"
    ).df()


def provider_status(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Each provider's outcome in its latest refresh, with the cause, last success and stale rows."""
    return con.execute(
        """WITH latest AS (
               SELECT p.*, r.finished_at AS refreshed_at, r.mode
               FROM provider_refreshes p JOIN refreshes r USING (refresh_id)
               QUALIFY row_number() OVER (PARTITION BY p.provider ORDER BY r.finished_at DESC) = 1
           ), rows AS (
               SELECT provider, count(*) AS rows, count(*) FILTER (stale) AS stale_rows
               FROM instances GROUP BY provider
           )
           SELECT provider, l.outcome, l.cause, l.last_success_at, l.refreshed_at, l.mode,
                  l.documents, l.rows_before, l.rows_after,
                  coalesce(r.rows, 0) AS rows, coalesce(r.stale_rows, 0) AS stale_rows
           FROM latest l FULL JOIN rows r USING (provider)
           ORDER BY provider"""
    ).df()


def stale_providers(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Providers whose rows are stale: since when, why, and their last successful refresh."""
    return con.execute(
        """WITH last_ok AS (
               SELECT provider, max(last_success_at) AS last_success_at
               FROM provider_refreshes GROUP BY provider
           )
           SELECT provider, count(*) AS stale_rows, min(stale_since) AS stale_since,
                  any_value(stale_cause) AS stale_cause, any_value(l.last_success_at) AS last_success_at
           FROM instances LEFT JOIN last_ok l USING (provider)
           WHERE stale GROUP BY provider ORDER BY provider"""
    ).df()


def providers(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The providers that have rows in the catalog."""
    return [p for (p,) in con.execute("SELECT DISTINCT provider FROM instances ORDER BY 1").fetchall()]


def recent_changes(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """What changed between refreshes (``catalog.changes``), newest first, before/after as text."""
    frame = changes(con)
    for column in ("before", "after"):
        frame[column] = [", ".join(values) if len(values) else "(gone)" for values in frame[column]]
    return frame
