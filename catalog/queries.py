"""Read-only questions the app asks of the catalog, as pure functions returning DataFrames.

Every function takes an open DuckDB connection (``catalog.store.connect_readonly``) and nothing
from Streamlit, so it can be tested on a catalog built by the tests. Derived columns carry their
unit in their name, like the catalog's own columns: ``_gbytes_per_s`` is 10^9 bytes per second,
``_gbits_per_s`` 10^9 bits per second, ``_gpus`` a number of GPUs.

Scoring (``ranking``, ``assess``) is deliberately simple: one number per workload, in GB/s, built
from the links that workload stresses, plus a sentence saying why (``SCORING`` is the text the app
shows):

- tensor:   intra-node GB/s per GPU x log2(max_tp_degree_gpus); a single GPU scores 0.
- pipeline: fabric GB/s per GPU, x 0.5 when the fabric is plain Ethernet or of unstated type.
- expert:   sqrt(pipeline score x intra-node GB/s per GPU); a single GPU scores its pipeline score.

A value the catalog does not have is never read as zero or as good: a row whose score needs it gets
no score (and no rank) and comes after every scored row, whatever that row's score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import duckdb
import pandas as pd

from catalog.changes import changes

WORKLOADS = ("tensor", "pipeline", "expert")

#: GPU-to-GPU links that form a scale-up domain (all-reduce at NVLink-class speed).
SCALE_UP_LINKS = ("nvswitch", "nvlink", "nvlink-bridge", "infinity-fabric")
#: Node-to-node fabrics built for GPU traffic (RDMA, or GPUDirect over dedicated NICs).
GPU_FABRICS = ("infiniband", "efa", "roce", "gpudirect-tcpx", "gpudirect-tcpxo")
#: Weight of a fabric that is not one of ``GPU_FABRICS`` (plain or unnamed Ethernet).
ETHERNET_WEIGHT = 0.5

LINK_NAMES = {
    "nvswitch": "NVSwitch",
    "nvlink": "NVLink",
    "nvlink-bridge": "NVLink bridge",
    "infinity-fabric": "Infinity Fabric",
    "pcie": "PCIe",
    "single-gpu": "single GPU",
    "unknown": "GPU-to-GPU link",
}
FABRIC_NAMES = {
    "infiniband": "InfiniBand",
    "efa": "EFA",
    "roce": "RoCE",
    "gpudirect-tcpx": "GPUDirect-TCPX",
    "gpudirect-tcpxo": "GPUDirect-TCPXO",
    "ethernet": "Ethernet",
    "none": "no fabric",
    "unknown": "fabric",
}

#: One line per workload; the app shows it above the ranking. ``assess`` implements it.
SCORING = {
    "tensor": (
        "Tensor parallelism all-reduces after every layer, so it stays on the GPU-to-GPU link. "
        "Score = intra-node GB/s per GPU × log2(largest TP group on that link): an 8-GPU NVSwitch "
        "board at 900 GB/s scores 900 × 3 = 2,700; a 72-GPU NVL72 rack at 1,800 GB/s scores "
        "1,800 × 6.2; PCIe-only boxes score their PCIe GB/s; a single GPU scores 0. "
        "Ties go to the faster fabric."
    ),
    "pipeline": (
        "Pipeline parallelism sends activations between nodes. Score = fabric GB/s per GPU "
        "(the node's fabric Gb/s / 8 / GPUs); InfiniBand, EFA, RoCE and GPUDirect-TCPX(O) count "
        "in full, plain Ethernet or a fabric whose type is not stated counts half. "
        "Ties go to the faster intra-node link."
    ),
    "expert": (
        "Expert parallelism's all-to-all crosses both the fabric and the intra-node link. "
        "Score = √(pipeline score × intra-node GB/s per GPU), the geometric mean: a weak link "
        "drags it down. A single GPU has no intra-node peer, so its score is the pipeline score. "
        "Ties go to the larger scale-up domain."
    ),
}


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


_SCALE_UP_SQL = ", ".join(f"'{link}'" for link in SCALE_UP_LINKS)

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
        CASE WHEN inter_node_fabric = 'none' THEN 0.0
             WHEN gpu_count > 0 THEN inter_node_gbytes_per_s / greatest(gpu_count, 1)
        END AS fabric_gbytes_per_s_per_gpu,
        CASE WHEN gpu_count > 0 THEN frontend_gbits_per_s / 8 / greatest(gpu_count, 1)
        END AS frontend_gbytes_per_s_per_gpu,
        CASE WHEN intra_node_link IN ({_SCALE_UP_SQL}) THEN scale_up_domain_gpus
             WHEN intra_node_link = 'pcie' AND gpu_count IS NOT NULL
                  THEN CAST(greatest(floor(gpu_count), 1) AS INTEGER)
             WHEN intra_node_link = 'single-gpu' THEN 1
        END AS max_tp_degree_gpus,
        CASE WHEN intra_node_link IN ('pcie', 'single-gpu') THEN true
             WHEN intra_node_link IN ({_SCALE_UP_SQL}) THEN scale_up_domain_gpus <= gpu_count
        END AS confined_to_one_node
    FROM base
)
SELECT *,
    CASE WHEN intra_node_link IN ({_SCALE_UP_SQL}) AND fabric_gbytes_per_s_per_gpu > 0
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
# Scoring


def fmt(number: float) -> str:
    """A bandwidth for a sentence: ``3,200``, ``50``, ``12.5``, ``1.56``."""
    if number >= 100:
        return f"{number:,.0f}"
    return f"{number:.3g}"


def _known(value) -> bool:
    return value is not None and not pd.isna(value)


def _basis(row, column: str) -> str:
    basis = row.get(column)
    return f" ({basis})" if basis in ("stated", "inferred") else ""


def _not_stated(row, basis_column: str, include_inferred: bool) -> str:
    if row.get(basis_column) == "inferred" and not include_inferred:
        return "only inferred from the GPU datasheet (inferred values excluded)"
    return "not stated by the provider"


def _tensor(row, include_inferred: bool) -> tuple[float | None, str]:
    link = row["intra_node_link"]
    if link == "single-gpu":
        return 0.0, "single GPU: no tensor parallelism inside the instance"
    if link not in LINK_NAMES or link == "unknown":
        return None, "GPU-to-GPU link unknown: not stated by the provider"
    name, bw = LINK_NAMES[link], row["intra_node_gbytes_per_s"]
    if not _known(bw):
        return None, f"{name}, bandwidth unknown: {_not_stated(row, 'intra_node_basis', include_inferred)}"
    degree = row["max_tp_degree_gpus"]
    if not _known(degree):
        return None, f"{name} {fmt(bw)} GB/s per GPU, but the GPUs per instance are not stated"
    degree = int(degree)
    score = bw * math.log2(degree)
    basis = _basis(row, "intra_node_basis")
    if link == "pcie":
        gpus = f"{degree} GPUs per host" if degree > 1 else "one GPU per host: no TP"
        return score, f"PCIe only: TP crosses PCIe at {fmt(bw)} GB/s{basis}, {gpus}"
    confined = row["confined_to_one_node"]
    span = " spanning instances" if _known(confined) and not confined else ""
    return score, f"{name} {fmt(bw)} GB/s per GPU{basis}, {degree}-GPU domain{span}: TP up to {degree}"


def _pipeline(row, include_inferred: bool) -> tuple[float | None, str]:
    fabric = row["inter_node_fabric"]
    if fabric == "none":
        return 0.0, "no inter-node fabric"
    name = FABRIC_NAMES.get(fabric, fabric)
    per_gpu, gbits = row["fabric_gbytes_per_s_per_gpu"], row["inter_node_gbits_per_s"]
    if not _known(gbits):
        why = _not_stated(row, "inter_node_basis", include_inferred)
        if fabric == "unknown":
            return None, f"fabric unknown: {why}"
        return None, f"{name}, bandwidth unknown: {why}"
    if not _known(per_gpu):
        return None, f"{name} {fmt(gbits)} Gb/s per node, but the GPUs per instance are not stated"
    node = f"{fmt(gbits)} Gb/s per node{_basis(row, 'inter_node_basis')}"
    if fabric in GPU_FABRICS:
        return per_gpu, f"fabric {fmt(per_gpu)} GB/s per GPU over {name}: {node}"
    score = per_gpu * ETHERNET_WEIGHT
    if fabric == "ethernet":
        return score, f"Ethernet only, counted at half: {fmt(per_gpu)} GB/s per GPU from {node}"
    return score, f"fabric type not stated, counted at half: {fmt(per_gpu)} GB/s per GPU from {node}"


def _expert(row, include_inferred: bool) -> tuple[float | None, str]:
    fabric_score, fabric_reason = _pipeline(row, include_inferred)
    if fabric_score is None:
        return None, fabric_reason
    link = row["intra_node_link"]
    if link == "single-gpu":
        return fabric_score, f"single GPU: the all-to-all is all fabric; {fabric_reason}"
    bw = row["intra_node_gbytes_per_s"]
    if not _known(bw):
        return None, f"{fabric_reason}; {_tensor(row, include_inferred)[1]}"
    domain = row["max_tp_degree_gpus"]
    inside = f" ({int(domain)}-GPU domain)" if _known(domain) and link != "pcie" else ""
    link_text = f"{LINK_NAMES[link]} {fmt(bw)} GB/s per GPU{_basis(row, 'intra_node_basis')}{inside}"
    return math.sqrt(fabric_score * bw), f"{fabric_reason}; {link_text}"


_ASSESS = {"tensor": _tensor, "pipeline": _pipeline, "expert": _expert}
# Second sort key per workload, for equal scores.
_TIEBREAK = {
    "tensor": "fabric_gbytes_per_s_per_gpu",
    "pipeline": "intra_node_gbytes_per_s",
    "expert": "max_tp_degree_gpus",
}


def assess(row, workload: str, include_inferred: bool = True) -> tuple[float | None, str]:
    """Score and reason of one row (a mapping with the ``filtered_instances`` columns).

    See ``SCORING`` for the rules. The score is None when a value it needs is missing; the reason
    then names what is missing.
    """
    if workload not in _ASSESS:
        raise ValueError(f"unknown workload {workload!r}; expected one of {WORKLOADS}")
    return _ASSESS[workload](row, include_inferred)


def flags(row) -> str:
    """What a reader must know before trusting the row: stale, conflict, unit corrected, curated."""
    marks = []
    if row["stale"]:
        marks.append("stale")
    if row["conflict"]:
        marks.append("conflict")
    if row["unit_suspect"]:
        marks.append("unit corrected")
    if row["source_kind"] == "curated":
        marks.append("curated")
    return ", ".join(marks)


def ranking(con: duckdb.DuckDBPyConnection, filters: Filters = Filters()) -> pd.DataFrame:
    """``filtered_instances`` ranked for ``filters.workload``, best first.

    Adds ``rank`` (1, 2, ...; NA for rows that cannot be scored), ``score_weighted_gbytes_per_s``
    (``SCORING``), ``reason`` (one sentence) and ``flags``. Scored rows come first, by score, then
    by the workload's tie-break column; rows without a score follow, never mixed in as zeros.
    """
    frame = filtered_instances(con, filters)
    if frame.empty:
        return frame.assign(
            rank=pd.Series(dtype="Int64"), score_weighted_gbytes_per_s=[], reason=[], flags=[]
        )
    assessed = [assess(row, filters.workload, filters.include_inferred) for row in frame.to_dict("records")]
    frame["score_weighted_gbytes_per_s"] = pd.Series(
        [math.nan if score is None else score for score, _ in assessed], index=frame.index, dtype="float64"
    )
    frame["reason"] = [reason for _, reason in assessed]
    frame["flags"] = [flags(row) for row in frame.to_dict("records")]
    frame["_scored"] = frame["score_weighted_gbytes_per_s"].notna()
    frame = frame.sort_values(
        ["_scored", "score_weighted_gbytes_per_s", _TIEBREAK[filters.workload], "provider", "instance_type"],
        ascending=[False, False, False, True, True],
        na_position="last",
        kind="stable",
    ).drop(columns="_scored")
    scored = frame["score_weighted_gbytes_per_s"].notna().to_numpy()
    frame.insert(0, "rank", pd.array([i + 1 if s else None for i, s in enumerate(scored)], dtype="Int64"))
    front = ["rank", "provider", "instance_type", "score_weighted_gbytes_per_s", "reason", "flags"]
    return frame[front + [c for c in frame.columns if c not in front]].reset_index(drop=True)


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
    per = f" / {fmt(gpus)} GPUs" if _known(gpus) else ""

    def value_or_missing(value, basis):
        if basis == "not-applicable":
            return float("nan"), basis
        return (float(value), basis) if _known(value) else (float("nan"), "missing")

    memory = value_or_missing(row["gpu_memory_gbytes_per_s"], row["gpu_memory_bw_basis"])
    intra = value_or_missing(row["intra_node_gbytes_per_s"], row["intra_node_basis"])
    fabric = value_or_missing(row["fabric_gbytes_per_s_per_gpu"], row["inter_node_basis"])
    frontend = value_or_missing(row["frontend_gbytes_per_s_per_gpu"], "stated")
    gbits, front_gbits = row["inter_node_gbits_per_s"], row["frontend_gbits_per_s"]
    fabric_detail = f"{fmt(gbits)} Gb/s per node / 8{per}" if _known(gbits) else "not stated"
    if _known(gbits) and not _known(gpus):
        fabric_detail += "; GPUs per instance not stated"
    front_detail = f"{fmt(front_gbits)} Gb/s per node / 8{per}" if _known(front_gbits) else "not stated"
    if row["fabric_shares_frontend"]:
        front_detail += "; one allowance shared with the fabric"
    rows = [
        (CLIFF_LEVELS[0], *memory, row["gpu_model"] or "", "per GPU"),
        (CLIFF_LEVELS[1], *intra, _name(LINK_NAMES, row["intra_node_link"]), "per GPU"),
        (CLIFF_LEVELS[2], *fabric, _name(FABRIC_NAMES, row["inter_node_fabric"]), fabric_detail),
        (CLIFF_LEVELS[3], *frontend, "front-end network", front_detail),
    ]
    return pd.DataFrame(rows, columns=["level", "gbytes_per_s", "basis", "link", "detail"])


def _name(names: dict[str, str], value: str) -> str:
    return "unknown" if value == "unknown" else names.get(value, value)


def claims(
    con: duckdb.DuckDBPyConnection, provider: str, instance_type: str, history: bool = False
) -> pd.DataFrame:
    """The claims behind one row: field, value (in the field's unit), quote, context, source URL.

    Current claims only, unless ``history`` (then closed ones too, with ``valid_to``).
    """
    table = "claims" if history else "current_claims"
    return con.execute(
        f"""SELECT field, value, value_text, unit, basis, qualifiers, unit_suspect, quote, context,
                   source_url, fetched_at, valid_from, valid_to
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
