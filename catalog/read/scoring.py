"""Ranking rows for a workload: one index per workload, in GB/s, built from the links that workload
stresses, plus a sentence saying why (``SCORING`` is the text the app shows). It is an index for
comparing links, not a time estimate; the planner (time and cost for a model) is meant to replace it.

- tensor:   intra-node GB/s per GPU x log2(max_tp_degree_gpus), PCIe included; a single GPU scores 0.
- pipeline: fabric GB/s per GPU, x 0.5 when the fabric is plain Ethernet or of unstated type.
- expert:   sqrt(pipeline score x intra-node GB/s per GPU); a single GPU scores its pipeline score.

A value the catalog does not have is never read as zero or as good: a row whose score needs it gets
no score (and no rank) and comes after every scored row, whatever that row's score. The whole ranking
is one SQL query over ``filtered_instances`` (scores, sentences, order and ranks).
"""

from __future__ import annotations

import duckdb
import pandas as pd

from catalog.read.filters import WORKLOADS, Filters
from catalog.read.queries import FABRIC_LABEL_SQL, LINK_LABEL_SQL, instances_sql
from catalog.read.shape import Shape, shape
from catalog.read.text import fmt_sql
from normalize.vocab import GPU_FABRICS, sql_list

#: Weight of a fabric that is not one of ``GPU_FABRICS`` (plain or unnamed Ethernet).
ETHERNET_WEIGHT = 0.5

#: One line per workload; the app shows it above the ranking. ``ranking`` implements it.
SCORING = {
    "tensor": (
        "Tensor parallelism all-reduces after every layer, so it stays on the GPU-to-GPU link. "
        "Index = intra-node GB/s per GPU × log2(largest TP group on that link): an 8-GPU NVSwitch "
        "board at 900 GB/s scores 900 × 3 = 2,700; a 72-GPU NVL72 rack at 1,800 GB/s scores "
        "1,800 × 6.2; a PCIe-only box scores the same way on its PCIe GB/s (8 GPUs at 64 GB/s: "
        "64 × 3 = 192); a single GPU scores 0. Ties go to the faster fabric."
    ),
    "pipeline": (
        "Pipeline parallelism sends activations between nodes. Index = fabric GB/s per GPU "
        "(the node's fabric Gb/s / 8 / GPUs); InfiniBand, EFA, RoCE and GPUDirect-TCPX(O) count "
        "in full, plain Ethernet or a fabric whose type is not stated counts half. "
        "Ties go to the faster intra-node link."
    ),
    "expert": (
        "Expert parallelism's all-to-all crosses both the fabric and the intra-node link. "
        "Index = √(pipeline index × intra-node GB/s per GPU), the geometric mean: a weak link "
        "drags it down. A single GPU has no intra-node peer, so its index is the pipeline index. "
        "Ties go to the larger scale-up domain."
    ),
}

#: The rule of each index in one line (``SCORING`` says it in full).
SCORING_SHORT = {
    "tensor": "Index = GPU-to-GPU GB/s per GPU × log2(largest TP group on that link).",
    "pipeline": "Index = fabric GB/s per GPU; plain or unnamed Ethernet counts half.",
    "expert": "Index = √(pipeline index × GPU-to-GPU GB/s per GPU).",
}

# Second sort key per workload, for equal scores.
_TIEBREAK = {
    "tensor": "fabric_gbytes_per_s_per_gpu",
    "pipeline": "intra_node_gbytes_per_s",
    "expert": "max_tp_degree_gpus",
}


#: Bases a reason names in brackets ("(stated)"); 'paraphrased' is a curated figure in our words,
#: 'expected' a provider's health check, 'measured' a tool run on the instance.
NAMED_BASES = ("stated", "paraphrased", "inferred", "expected", "measured")


def _basis(column: str) -> str:
    named = ", ".join(f"'{b}'" for b in NAMED_BASES)
    return f"CASE WHEN {column} IN ({named}) THEN ' (' || {column} || ')' ELSE '' END"


def _not_stated(basis_column: str) -> str:
    return (
        f"CASE WHEN {basis_column} = 'inferred' AND NOT $inferred "
        "THEN 'only inferred from the GPU datasheet (inferred values excluded)' "
        "ELSE 'not stated by the provider' END"
    )


_BW, _DEGREE, _GBITS, _PER_GPU = (
    "intra_node_gbytes_per_s",
    "max_tp_degree_gpus",
    "inter_node_gbits_per_s",
    "fabric_gbytes_per_s_per_gpu",
)
_TENSOR_SCORE = f"""CASE WHEN intra_node_link = 'single-gpu' THEN 0.0
    WHEN intra_node_link <> 'unknown' AND {_BW} IS NOT NULL AND {_DEGREE} IS NOT NULL
        THEN {_BW} * log2({_DEGREE}) END"""
_TENSOR_REASON = f"""CASE
    WHEN intra_node_link = 'single-gpu' THEN 'single GPU: no tensor parallelism inside the instance'
    WHEN intra_node_link = 'unknown' THEN 'GPU-to-GPU link unknown: not stated by the provider'
    {{no_peer}}WHEN {_BW} IS NULL
        THEN link_name || ', bandwidth unknown: ' || {_not_stated("intra_node_basis")}
    WHEN {_DEGREE} IS NULL
        THEN link_name || ' ' || {fmt_sql(_BW)} || ' GB/s per GPU, but the GPUs per instance are not stated'
    WHEN intra_node_link = 'pcie'
        THEN 'PCIe only: TP crosses PCIe at ' || {fmt_sql(_BW)} || ' GB/s' || {_basis("intra_node_basis")}
             || CASE WHEN {_DEGREE} > 1
                     THEN ', ' || {_DEGREE} || ' GPUs per host: ' || {fmt_sql(_BW)} || ' × log2('
                          || {_DEGREE} || ') = ' || {fmt_sql(f"{_BW} * log2({_DEGREE})")}
                     ELSE ', one GPU per host: no TP' END
    ELSE link_name || ' ' || {fmt_sql(_BW)} || ' GB/s per GPU' || {_basis("intra_node_basis")} || ', '
         || {_DEGREE} || '-GPU domain'
         || CASE WHEN confined_to_one_node = false THEN ' spanning instances' ELSE '' END
         || ': TP up to ' || {_DEGREE}
END"""
_PIPELINE_SCORE = f"""CASE WHEN {_GBITS} IS NULL OR {_PER_GPU} IS NULL THEN NULL
    WHEN inter_node_fabric IN {sql_list(GPU_FABRICS)} THEN {_PER_GPU}
    ELSE {_PER_GPU} * {ETHERNET_WEIGHT} END"""
_NODE = f"{fmt_sql(_GBITS)} || ' Gb/s per node' || {_basis('inter_node_basis')}"
_PIPELINE_REASON = f"""CASE
    WHEN {_GBITS} IS NULL AND inter_node_fabric = 'unknown'
        THEN 'fabric unknown: ' || {_not_stated("inter_node_basis")}
    WHEN {_GBITS} IS NULL THEN fabric_name || ', bandwidth unknown: ' || {_not_stated("inter_node_basis")}
    WHEN {_PER_GPU} IS NULL
        THEN fabric_name || ' ' || {fmt_sql(_GBITS)}
             || ' Gb/s per node, but the GPUs per instance are not stated'
    WHEN inter_node_fabric IN {sql_list(GPU_FABRICS)}
        THEN 'fabric ' || {fmt_sql(_PER_GPU)} || ' GB/s per GPU over ' || fabric_name || ': ' || {_NODE}
    WHEN inter_node_fabric = 'ethernet'
        THEN 'Ethernet only, counted at half: ' || {fmt_sql(_PER_GPU)} || ' GB/s per GPU from ' || {_NODE}
    ELSE 'fabric type not stated, counted at half: ' || {fmt_sql(_PER_GPU)} || ' GB/s per GPU from '
         || {_NODE}
END"""
_EXPERT_SCORE = f"""CASE WHEN pipeline_score IS NULL THEN NULL
    WHEN intra_node_link = 'single-gpu' THEN pipeline_score
    WHEN {_BW} IS NULL THEN NULL
    ELSE sqrt(pipeline_score * {_BW}) END"""
_EXPERT_REASON = f"""CASE WHEN pipeline_score IS NULL THEN pipeline_reason
    WHEN intra_node_link = 'single-gpu' THEN 'single GPU: the all-to-all is all fabric; ' || pipeline_reason
    WHEN {_BW} IS NULL THEN pipeline_reason || '; ' || tensor_reason
    ELSE pipeline_reason || '; ' || link_name || ' ' || {fmt_sql(_BW)} || ' GB/s per GPU'
         || {_basis("intra_node_basis")}
         || CASE WHEN {_DEGREE} IS NOT NULL AND intra_node_link <> 'pcie'
                 THEN ' (' || {_DEGREE} || '-GPU domain)' ELSE '' END
END"""


# A row whose GPUs have no peer access (catalog.peer_access) says so, in a catalog that has the column.
_NO_PEER = """WHEN intra_node_gbytes_per_s IS NULL AND gpu_peer_access = 'no'
        THEN link_name || ' without GPU peer access (' || gpu_peer_access_basis
             || '): GPU-to-GPU copies are staged through host memory'
    """


def _tensor_reason(catalog: Shape | None) -> str:
    peer = catalog is None or "gpu_peer_access" in catalog.instance_columns
    return _TENSOR_REASON.replace("{no_peer}", _NO_PEER if peer else "")


def ranking_sql(filters: Filters, catalog: Shape | None = None) -> tuple[str, dict]:
    """The SQL and parameters of ``ranking``."""
    if filters.workload not in WORKLOADS:
        raise ValueError(f"unknown workload {filters.workload!r}; expected one of {WORKLOADS}")
    shown, params = instances_sql(filters, catalog)
    score, reason = {
        "tensor": ("tensor_score", "tensor_reason"),
        "pipeline": ("pipeline_score", "pipeline_reason"),
        "expert": (_EXPERT_SCORE, _EXPERT_REASON),
    }[filters.workload]
    order = (
        f"score_weighted_gbytes_per_s IS NULL, score_weighted_gbytes_per_s DESC, "
        f"{_TIEBREAK[filters.workload]} DESC NULLS LAST, provider, instance_type"
    )
    sql = f"""
WITH shown AS (SELECT *, {LINK_LABEL_SQL} AS link_name, {FABRIC_LABEL_SQL} AS fabric_name FROM ({shown})),
parts AS (
    SELECT *, {_TENSOR_SCORE} AS tensor_score, {_tensor_reason(catalog)} AS tensor_reason,
              {_PIPELINE_SCORE} AS pipeline_score, {_PIPELINE_REASON} AS pipeline_reason
    FROM shown
), scored AS (
    SELECT * EXCLUDE (flags), CAST({score} AS DOUBLE) AS score_weighted_gbytes_per_s, {reason} AS reason,
           flags
    FROM parts
)
SELECT CASE WHEN score_weighted_gbytes_per_s IS NOT NULL THEN row_number() OVER (ORDER BY {order}) END
           AS rank,
       provider, instance_type, score_weighted_gbytes_per_s, reason, flags,
       * EXCLUDE (provider, instance_type, score_weighted_gbytes_per_s, reason, flags, link_name,
                  fabric_name, tensor_score, tensor_reason, pipeline_score, pipeline_reason)
FROM scored ORDER BY {order}"""
    return sql, params


def ranking(
    con: duckdb.DuckDBPyConnection, filters: Filters | None = None, catalog: Shape | None = None
) -> pd.DataFrame:
    """``filtered_instances`` ranked for ``filters.workload``, best first, in one query.

    Adds ``rank`` (1, 2, ...; NA for rows that cannot be scored), ``score_weighted_gbytes_per_s``
    (``SCORING``), ``reason`` (one sentence; when a value is missing it names what is missing) and
    ``flags`` (stale, conflict, unit corrected, curated). Scored rows come first, by score, then by
    the workload's tie-break column; rows without a score follow, never mixed in as zeros.
    """
    filters = filters or Filters()
    sql, params = ranking_sql(filters, catalog or shape(con))
    frame = con.execute(sql, params).df()
    frame["rank"] = frame["rank"].astype("Int64")
    return frame
