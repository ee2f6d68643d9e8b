"""Ranking rows for a workload: one number per workload, in GB/s, built from the links that workload
stresses, plus a sentence saying why (``SCORING`` is the text the app shows):

- tensor:   intra-node GB/s per GPU x log2(max_tp_degree_gpus); a single GPU scores 0.
- pipeline: fabric GB/s per GPU, x 0.5 when the fabric is plain Ethernet or of unstated type.
- expert:   sqrt(pipeline score x intra-node GB/s per GPU); a single GPU scores its pipeline score.

A value the catalog does not have is never read as zero or as good: a row whose score needs it gets
no score (and no rank) and comes after every scored row, whatever that row's score.
"""

from __future__ import annotations

import math

import duckdb
import pandas as pd

from catalog.read.queries import WORKLOADS, Filters, filtered_instances
from catalog.read.text import fmt, known
from normalize.vocab import FABRIC_LABELS, GPU_FABRICS, LINK_LABELS, Fabric, Link

#: Weight of a fabric that is not one of ``GPU_FABRICS`` (plain or unnamed Ethernet).
ETHERNET_WEIGHT = 0.5

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


def _basis(row, column: str) -> str:
    basis = row.get(column)
    return f" ({basis})" if basis in ("stated", "inferred", "expected", "measured") else ""


def _not_stated(row, basis_column: str, include_inferred: bool) -> str:
    if row.get(basis_column) == "inferred" and not include_inferred:
        return "only inferred from the GPU datasheet (inferred values excluded)"
    return "not stated by the provider"


def _tensor(row, include_inferred: bool) -> tuple[float | None, str]:
    link = Link(row["intra_node_link"])
    if link == Link.SINGLE_GPU:
        return 0.0, "single GPU: no tensor parallelism inside the instance"
    if link == Link.UNKNOWN:
        return None, "GPU-to-GPU link unknown: not stated by the provider"
    name, bw = LINK_LABELS[link], row["intra_node_gbytes_per_s"]
    if not known(bw):
        return None, f"{name}, bandwidth unknown: {_not_stated(row, 'intra_node_basis', include_inferred)}"
    degree = row["max_tp_degree_gpus"]
    if not known(degree):
        return None, f"{name} {fmt(bw)} GB/s per GPU, but the GPUs per instance are not stated"
    degree = int(degree)
    score = bw * math.log2(degree)
    basis = _basis(row, "intra_node_basis")
    if link == "pcie":
        gpus = f"{degree} GPUs per host" if degree > 1 else "one GPU per host: no TP"
        return score, f"PCIe only: TP crosses PCIe at {fmt(bw)} GB/s{basis}, {gpus}"
    confined = row["confined_to_one_node"]
    span = " spanning instances" if known(confined) and not confined else ""
    return score, f"{name} {fmt(bw)} GB/s per GPU{basis}, {degree}-GPU domain{span}: TP up to {degree}"


def _pipeline(row, include_inferred: bool) -> tuple[float | None, str]:
    fabric = Fabric(row["inter_node_fabric"])
    name = FABRIC_LABELS[fabric]
    per_gpu, gbits = row["fabric_gbytes_per_s_per_gpu"], row["inter_node_gbits_per_s"]
    if not known(gbits):
        why = _not_stated(row, "inter_node_basis", include_inferred)
        if fabric == Fabric.UNKNOWN:
            return None, f"fabric unknown: {why}"
        return None, f"{name}, bandwidth unknown: {why}"
    if not known(per_gpu):
        return None, f"{name} {fmt(gbits)} Gb/s per node, but the GPUs per instance are not stated"
    node = f"{fmt(gbits)} Gb/s per node{_basis(row, 'inter_node_basis')}"
    if fabric in GPU_FABRICS:
        return per_gpu, f"fabric {fmt(per_gpu)} GB/s per GPU over {name}: {node}"
    score = per_gpu * ETHERNET_WEIGHT
    if fabric == Fabric.ETHERNET:
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
    if not known(bw):
        return None, f"{fabric_reason}; {_tensor(row, include_inferred)[1]}"
    domain = row["max_tp_degree_gpus"]
    inside = f" ({int(domain)}-GPU domain)" if known(domain) and link != "pcie" else ""
    link_text = f"{LINK_LABELS[Link(link)]} {fmt(bw)} GB/s per GPU{_basis(row, 'intra_node_basis')}{inside}"
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


def ranking(con: duckdb.DuckDBPyConnection, filters: Filters | None = None) -> pd.DataFrame:
    """``filtered_instances`` ranked for ``filters.workload``, best first.

    Adds ``rank`` (1, 2, ...; NA for rows that cannot be scored), ``score_weighted_gbytes_per_s``
    (``SCORING``), ``reason`` (one sentence) and ``flags``. Scored rows come first, by score, then
    by the workload's tie-break column; rows without a score follow, never mixed in as zeros.
    """
    filters = filters or Filters()
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
