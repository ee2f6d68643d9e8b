"""Plan a model's workload on every catalog instance and rank them by its time or cost.

``rank`` is what the app's ranking and ``python -m catalog plan`` show: one row per instance with
the best layout, where the model fits, the step's time and its communication share, the bottleneck
link, tokens/s, the cost where the catalog has a price, the bandwidths used with their basis, and a
verdict sentence. Rows that cannot be planned (a figure missing, the model too big) come last with
the reason, never as zeros. How catalog rows become planner inputs is ``catalog.read.plan_inputs``;
the arithmetic is the ``planner`` package's.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from catalog.read.plan_inputs import cheapest_prices, measurements_by_instance, node_from_row
from catalog.read.queries import Filters, filtered_instances
from planner.conversions import bytes_to_gb
from planner.models import ModelSpec
from planner.plan import plan
from planner.result import Plan, Workload
from planner.step import Options
from planner.verdict import (
    basis_text,
    bottleneck,
    bound,
    comm_share,
    usd_per_billion_tokens,
    usd_per_million_tokens,
    usd_per_step,
    verdict,
)

RANK_BY = ("time", "cost")
#: The cost column each workload ranks by.
COST_COLUMN = {"serve": "usd_per_million_tokens", "train": "usd_per_billion_tokens"}


def plan_rows(
    con: duckdb.DuckDBPyConnection,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None = None,
    filters: Filters | None = None,
    options: Options | None = None,
) -> list[tuple[dict, Plan | str]]:
    """Every ``filtered_instances`` row with its plan, or the reason it has none."""
    frame = filtered_instances(con, filters or Filters())
    prices, measured = cheapest_prices(con), measurements_by_instance(con)
    found = []
    for row in frame.to_dict("records"):
        key = (row["provider"], row["instance_type"])
        node = node_from_row(row, prices.get(key), measured.get(key))
        found.append(
            (
                row,
                node if isinstance(node, str) else plan(model, workload, node, nodes=nodes, options=options),
            )
        )
    return found


def _row(row: dict, result: Plan | str) -> dict:
    out = {
        "provider": row["provider"],
        "instance_type": row["instance_type"],
        "gpu_model": row["gpu_model"],
        "gpus_per_node": row["gpu_count"],
        "flags": row["flags"],
    }
    if isinstance(result, str):
        return out | {"reason": result, "verdict": f"Not planned: {result}."}
    best = result.best
    out |= {
        "nodes": result.cluster.nodes,
        "fits": result.fits,
        "min_gpus": result.min_gpus,
        "usd_per_hour": result.cluster_usd_per_hour,
        "verdict": verdict(result),
        "reason": result.reason,
    }
    if best is None:
        return out
    worst = bottleneck(best.step)
    layout = best.layout
    return out | {
        "layout": layout.label,
        "tp": layout.tp,
        "pp": layout.pp,
        "ep": layout.ep,
        "dp": layout.dp,
        "step_s": best.step.step_s,
        "comm_s": best.step.comm_s,
        "comm_share": comm_share(best.step),
        "bottleneck_link": worst[1] if worst else "none",
        "bound": bound(best.step),
        "tokens_per_s": best.tokens_per_s,
        "usd_per_million_tokens": usd_per_million_tokens(result) if result.workload.kind == "serve" else None,
        "usd_per_step": usd_per_step(result) if result.workload.kind == "train" else None,
        "usd_per_billion_tokens": usd_per_billion_tokens(result) if result.workload.kind == "train" else None,
        "bandwidth_basis": basis_text(result),
    }


COLUMNS = (
    "rank", "provider", "instance_type", "gpu_model", "gpus_per_node", "nodes", "layout", "fits", "min_gpus",
    "step_s", "comm_s", "comm_share", "bottleneck_link", "bound", "tokens_per_s", "usd_per_hour",
    "usd_per_million_tokens", "usd_per_step", "usd_per_billion_tokens", "bandwidth_basis", "verdict",
    "reason", "flags", "tp", "pp", "ep", "dp",
)  # fmt: skip


def rank(
    con: duckdb.DuckDBPyConnection,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None = None,
    filters: Filters | None = None,
    options: Options | None = None,
    by: str = "time",
) -> pd.DataFrame:
    """One row per instance, best first, for ``model`` and ``workload`` (columns: ``COLUMNS``).

    ``by`` "time" ranks by tokens/s of the planned cluster (serving: output tokens; training:
    trained tokens); "cost" by USD per million output tokens (serving) or per billion trained
    tokens (training), then unpriced planned rows by time. ``rank`` numbers the rows that have the
    ranking figure; rows without a plan come last with their ``reason``. ``step_s`` is one decode
    step when serving and one optimizer step when training.
    """
    if by not in RANK_BY:
        raise ValueError(f"rank by {by!r}; expected one of {RANK_BY}")
    rows = [
        _row(row, result)
        for row, result in plan_rows(con, model, workload, nodes=nodes, filters=filters, options=options)
    ]
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "rank"])
    for column in (
        "step_s",
        "comm_s",
        "comm_share",
        "tokens_per_s",
        "usd_per_hour",
        *COST_COLUMN.values(),
        "usd_per_step",
    ):
        frame[column] = frame[column].astype("float64")
    for column in ("nodes", "min_gpus", "tp", "pp", "ep", "dp"):
        frame[column] = frame[column].astype("Int64")
    cost = COST_COLUMN[workload.kind]
    keys = [cost, "tokens_per_s"] if by == "cost" else ["tokens_per_s", cost]  # a tie: cheaper first
    frame["_planned"] = frame["tokens_per_s"].notna()
    frame = frame.sort_values(
        ["_planned", *keys, "provider", "instance_type"],
        ascending=[False, *(k == cost for k in keys), True, True],
        na_position="last",
        kind="stable",
    ).drop(columns="_planned")
    ranked = frame[keys[0]].notna().to_numpy()
    ranks = pd.array([i + 1 if r else None for i, r in enumerate(ranked)], dtype="Int64")
    frame.insert(0, "rank", ranks)  # type: ignore[arg-type]  # pandas-stubs omits ExtensionArray values
    return frame.reset_index(drop=True)


def instance_plans(
    con: duckdb.DuckDBPyConnection,
    instance_type: str,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None = None,
    options: Options | None = None,
) -> list[tuple[str, Plan | str]]:
    """(provider, plan or the reason it has none) for every provider's ``instance_type``."""
    found = plan_rows(
        con, model, workload, nodes=nodes, options=options, filters=Filters(search=instance_type)
    )
    return [(row["provider"], result) for row, result in found if row["instance_type"] == instance_type]


def layouts_frame(result: Plan) -> pd.DataFrame:
    """Every fitting layout of one plan, best first: memory per GPU, step, its parts, tokens/s."""
    rows = []
    for r in result.results:
        step = r.step
        rows.append(
            {
                "layout": r.layout.label,
                "memory_gb_per_gpu": bytes_to_gb(r.memory.total_bytes),
                "step_s": step.step_s,
                "compute_s": step.compute_s,
                "memory_s": step.memory_s,
                "comm_s": step.comm_s,
                "tokens_per_s": r.tokens_per_s,
                "problem": r.problem or "",
            }
        )
    return pd.DataFrame(rows)


def transfers_frame(result: Plan) -> pd.DataFrame:
    """The best layout's collectives in one step: bytes per GPU, the link, the seconds."""
    best = result.best
    if best is None:
        return pd.DataFrame(
            columns=["collective", "group_gpus", "count", "message_bytes", "bytes_per_gpu", "link", "seconds"]
        )
    return pd.DataFrame(
        [
            {
                "collective": t.collective,
                "group_gpus": t.group_gpus,
                "count": t.count,
                "message_bytes": t.message_bytes,
                "bytes_per_gpu": t.bytes_per_gpu,
                "link": t.link,
                "seconds": t.seconds,
            }
            for t in best.step.transfers
        ]
    )
