"""Plan a model's workload on every catalog instance and rank them by its time or cost.

``rank`` is what the app's ranking and ``python -m catalog plan`` show: one row per instance with
the best layout, where the model fits, the step's time and its communication share, the bottleneck
link, tokens/s, the cost where the catalog has a price, the bandwidths used with their basis, and a
verdict sentence. Rows that cannot be planned (a figure missing, the model too big) come last with
the reason, never as zeros. How catalog rows become planner inputs is ``catalog.read.plan_inputs``;
the arithmetic is the ``planner`` package's.
"""

from __future__ import annotations

from dataclasses import replace

import duckdb
import pandas as pd

from catalog.read.plan_inputs import (
    cheapest_prices,
    measurements_by_instance,
    measurements_of,
    node_from_row,
    node_groups,
)
from catalog.read.prices import CURRENCY
from catalog.read.queries import Filters, filtered_instances, instances_sql
from catalog.read.shape import shape
from catalog.read.text import known
from planner.conversions import bytes_to_gb
from planner.hardware import Node
from planner.layouts import Layout
from planner.models import ModelSpec, TrainWorkload
from planner.plan import days_to_train, plan
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


#: The name a plan is computed under when it is shared by every instance with the same hardware; the
#: one place a name reaches a plan's text (a "does not fit in up to N x NAME" reason) is renamed back.
_SHARED_NAME = "\x00instance\x00"


def _hardware(node: Node) -> Node:
    """``node`` without what only names, prices or explains it: instances with the same hardware get
    the same plan (names, prices, bases of memory figures and how a link figure was derived enter a
    plan's text and costs, never its layouts or times)."""
    links = tuple(replace(level, figure=replace(level.figure, detail="")) for level in node.links)
    return replace(
        node,
        provider="",
        instance_type=_SHARED_NAME,
        memory_basis="",
        hbm_basis="",
        links=links,
        usd_per_hour=None,
        price_detail="",
    )


def _as_node(shared: Plan, node: Node) -> Plan:
    """A plan computed for ``_hardware(node)``, told of ``node`` itself (its name and price)."""
    reason = shared.reason.replace(_SHARED_NAME, node.instance_type) if shared.reason else shared.reason
    return replace(shared, cluster=replace(shared.cluster, node=node), reason=reason)


def plan_rows(
    con: duckdb.DuckDBPyConnection,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None = None,
    filters: Filters | None = None,
    options: Options | None = None,
    layout: Layout | None = None,
) -> list[tuple[dict, Plan | str]]:
    """Every ``filtered_instances`` row with its plan, or the reason it has none, costed at the price
    ``filters.region`` and ``filters.spot`` ask for. Rows with the same hardware (GPUs, memory, peaks,
    links with their figures) are planned once."""
    filters = filters or Filters()
    frame = filtered_instances(con, filters)
    prices = cheapest_prices(con, filters.region, filters.spot)
    measured = measurements_by_instance(con)
    planned: dict[Node, Plan] = {}
    found: list[tuple[dict, Plan | str]] = []
    for row in frame.to_dict("records"):
        key = (row["provider"], row["instance_type"])
        node = node_from_row(row, prices.get(key), measured.get(key), filters.spot)
        if isinstance(node, str):
            found.append((row, node))
            continue
        hardware = _hardware(node)
        if hardware not in planned:
            planned[hardware] = plan(model, workload, hardware, nodes=nodes, options=options, layout=layout)
        found.append((row, _as_node(planned[hardware], node)))
    return found


def _usd_to_train(result: Plan) -> float | None:
    """The token budget at the plan's USD per billion tokens (None without a budget or a price)."""
    work, per_billion = result.workload, usd_per_billion_tokens(result)
    if not isinstance(work, TrainWorkload) or work.token_budget is None or per_billion is None:
        return None
    return per_billion * work.token_budget / 1e9


def _row(row: dict, result: Plan | str) -> dict:
    out = {
        "provider": row["provider"],
        "instance_type": row["instance_type"],
        "gpu_model": row["gpu_model"],
        "gpus_per_node": row["gpu_count"],
        "flags": row["flags"],
        "price_flag": row.get("price_flag"),
    }
    if isinstance(result, str):
        return out | {"reason": result, "verdict": f"Not planned: {result}."}
    best = result.best
    out |= {
        "nodes": result.cluster.nodes,
        "fits": result.fits,
        "min_gpus": result.min_gpus,
        "usd_per_hour": result.cluster_usd_per_hour,
        "price_region": row.get("price_region") if result.cluster_usd_per_hour is not None else None,
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
        "concurrency": best.concurrency,
        "tokens_per_s_per_user": best.tokens_per_s_per_user,
        "ttft_s": best.ttft_s,
        "tpot_s": best.tpot_s,
        "usd_per_million_tokens": usd_per_million_tokens(result) if result.workload.kind == "serve" else None,
        "usd_per_step": usd_per_step(result) if result.workload.kind == "train" else None,
        "usd_per_billion_tokens": usd_per_billion_tokens(result) if result.workload.kind == "train" else None,
        "days_to_train": days_to_train(result),
        "usd_to_train": _usd_to_train(result),
        "bandwidth_basis": basis_text(result),
    }


COLUMNS = (
    "rank", "provider", "instance_type", "gpu_model", "gpus_per_node", "nodes", "layout", "fits", "min_gpus",
    "step_s", "comm_s", "comm_share", "bottleneck_link", "bound", "tokens_per_s", "concurrency",
    "tokens_per_s_per_user", "ttft_s", "tpot_s", "usd_per_hour", "price_region", "price_kind", "currency",
    "price_flag", "usd_per_million_tokens", "usd_per_step", "usd_per_billion_tokens", "days_to_train",
    "usd_to_train", "bandwidth_basis", "verdict",
    "reason", "flags", "tp", "pp", "ep", "dp",
)  # fmt: skip


#: The columns ``rank`` takes from each row itself (the rest comes from its node group's plan).
_OWN = ("provider", "instance_type", "gpu_model", "gpus_per_node", "flags", "price_flag")


def _group_rows(
    con: duckdb.DuckDBPyConnection,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None,
    filters: Filters,
    options: Options | None,
    layout: Layout | None = None,
) -> pd.DataFrame:
    """``_row`` of every row matching ``filters``, planned once per node group (``node_groups``): a
    group's verdict is written for a stand-in name, then each row gets its own name back."""
    sql, params = instances_sql(filters, shape(con))
    rows = node_groups(con, sql, params, filters.region, filters.spot)
    if rows.empty:
        return pd.DataFrame(columns=[c for c in COLUMNS if c != "rank"])
    firsts = rows.drop_duplicates("node_group").to_dict("records")
    measured = measurements_of(con, [(r["provider"], r["instance_type"]) for r in firsts])
    planned: dict[Node, Plan] = {}
    found = []
    for row in firsts:
        price = (row["usd_per_hour_min"], row["price_region"]) if known(row["usd_per_hour_min"]) else None
        node = node_from_row(row, price, measured.get((row["provider"], row["instance_type"])), filters.spot)
        result: Plan | str
        if isinstance(node, str):
            result = node  # the reason it cannot be planned
        else:
            hardware = _hardware(node)
            if hardware not in planned:
                planned[hardware] = plan(
                    model, workload, hardware, nodes=nodes, options=options, layout=layout
                )
            result = _as_node(planned[hardware], replace(node, instance_type=_SHARED_NAME))
        found.append({"node_group": row["node_group"], **_row(row, result)})
    groups = pd.DataFrame(found).drop(columns=list(_OWN)).set_index("node_group")
    own = rows.rename(columns={"gpu_count": "gpus_per_node"})[["node_group", *_OWN]]
    expanded = own.join(groups, on="node_group").drop(columns="node_group")
    names = expanded["instance_type"].tolist()
    for column in ("verdict", "reason"):
        expanded[column] = [
            text.replace(_SHARED_NAME, name) if isinstance(text, str) else text
            for text, name in zip(expanded[column].tolist(), names, strict=True)
        ]
    return expanded


def rank(
    con: duckdb.DuckDBPyConnection,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None = None,
    filters: Filters | None = None,
    options: Options | None = None,
    by: str = "time",
    layout: Layout | None = None,
) -> pd.DataFrame:
    """One row per instance, best first, for ``model`` and ``workload`` (columns: ``COLUMNS``).

    ``by`` "time" ranks by tokens/s of the planned cluster (serving: output tokens; training:
    trained tokens); "cost" by USD per million output tokens (serving) or per billion trained
    tokens (training), then unpriced planned rows by time. ``rank`` numbers the rows that have the
    ranking figure; rows without a plan come last with their ``reason``. ``step_s`` is one decode
    step when serving and one optimizer step when training. Rows with the same hardware, price and
    measurements are planned once (``plan_inputs.node_groups``). Costs follow ``filters.region`` and
    ``filters.spot`` (``price_region``, ``price_kind`` and ``currency`` say which price; ``price_flag``
    why it looks like a placeholder, when it does).
    """
    if by not in RANK_BY:
        raise ValueError(f"rank by {by!r}; expected one of {RANK_BY}")
    found = _group_rows(
        con, model, workload, nodes=nodes, filters=filters or Filters(), options=options, layout=layout
    )
    frame = found.reindex(columns=[c for c in COLUMNS if c != "rank"])
    for column in (
        "step_s",
        "comm_s",
        "comm_share",
        "tokens_per_s",
        "concurrency",
        "tokens_per_s_per_user",
        "ttft_s",
        "tpot_s",
        "usd_per_hour",
        *COST_COLUMN.values(),
        "usd_per_step",
        "days_to_train",
        "usd_to_train",
    ):
        frame[column] = frame[column].astype("float64")
    for column in ("nodes", "min_gpus", "tp", "pp", "ep", "dp"):
        frame[column] = frame[column].astype("Int64")
    frame["price_kind"] = "spot" if filters is not None and filters.spot else "on-demand"
    frame["currency"] = CURRENCY
    return order_ranked(frame, workload.kind, by)


def order_ranked(frame: pd.DataFrame, kind: str, by: str = "time") -> pd.DataFrame:
    """``rank``'s rows (with or without their ``rank`` column) ordered by ``by`` for a workload of
    ``kind`` and numbered again: rows with the ranking figure first, best first (a tie: the cheaper
    or the faster first, then provider and name), then planned rows without it, then the rows that
    have no plan. The app orders and numbers a subset of one ranking with it, as ``rank`` of that
    subset would."""
    if by not in RANK_BY:
        raise ValueError(f"rank by {by!r}; expected one of {RANK_BY}")
    frame = frame.drop(columns="rank", errors="ignore")
    cost = COST_COLUMN[kind]
    keys = [cost, "tokens_per_s"] if by == "cost" else ["tokens_per_s", cost]  # a tie: cheaper first
    frame = frame.assign(_planned=frame["tokens_per_s"].notna())
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
    layout: Layout | None = None,
    region: str = "",
    spot: bool = False,
) -> list[tuple[str, Plan | str]]:
    """(provider, plan or the reason it has none) for every provider's ``instance_type``, costed in
    ``region`` (any when empty) at the spot price when ``spot``."""
    found = plan_rows(
        con,
        model,
        workload,
        nodes=nodes,
        options=options,
        filters=Filters(search=instance_type, region=region, spot=spot),
        layout=layout,
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
                "concurrency": r.concurrency,
                "tpot_s": r.tpot_s,
                "ttft_s": r.ttft_s,
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


def instance_nodes(con: duckdb.DuckDBPyConnection, instance_type: str) -> list[tuple[str, Node | str]]:
    """(provider, the planner's node or the reason it has none) for every provider's ``instance_type``."""
    frame = filtered_instances(con, Filters(search=instance_type))
    prices, measured = cheapest_prices(con), measurements_by_instance(con)  # as ``collective`` asks
    found: list[tuple[str, Node | str]] = []
    for row in frame.to_dict("records"):
        if row["instance_type"] != instance_type:
            continue
        key = (row["provider"], row["instance_type"])
        found.append((row["provider"], node_from_row(row, prices.get(key), measured.get(key))))
    return found
