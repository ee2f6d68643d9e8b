"""Plan a model's workload on every catalog instance and rank them by its time or cost.

``rank`` is what the app's ranking and ``python -m catalog plan`` show: one row per instance with
the best layout, where the model fits, the step's time and its communication share, the bottleneck
link, tokens/s, the cost where the catalog has a price, the bandwidths used with their basis, and a
verdict sentence. Rows that cannot be planned (a figure missing, the model too big) come last with
the reason, never as zeros. How catalog rows become planner inputs is ``catalog.read.plan_inputs``;
the arithmetic is the ``planner`` package's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from catalog.read.plan_inputs import (
    NODE_COLUMNS,
    Measurement,
    cheapest_prices,
    measurements_by_instance,
    measurements_of,
    node_from_row,
    node_groups,
    price_words,
)
from catalog.read.queries import Filters, filtered_instances, instances_sql, plain_sql
from catalog.read.shape import shape
from catalog.read.text import known
from normalize.factors import CURRENCY
from planner.conversions import TOKENS_PER_BILLION, bytes_to_gb
from planner.hardware import MISSING, Cluster, LinkLevel, Node
from planner.layouts import Layout
from planner.memo import store
from planner.models import ModelSpec, TrainWorkload
from planner.plan import days_to_train, plan
from planner.result import Plan, Workload
from planner.step import Options
from planner.training import token_budget
from planner.verdict import (
    basis_text,
    bottleneck,
    bound,
    comm_share,
    usd_per_billion_tokens,
    usd_per_million_split,
    usd_per_million_tokens,
    usd_per_step,
    verdict,
)

if TYPE_CHECKING:
    import pandas as pd

RANK_BY = ("time", "cost")
#: The cost column each workload ranks by: serving per million output tokens; training the dollars
#: to train the token budget (every row trains the same budget, so rows compare at equal work).
COST_COLUMN = {"serve": "usd_per_million_tokens", "train": "usd_to_train"}
#: The time column each workload ranks by (most tokens/s first; fewest days first).
TIME_COLUMN = {"serve": "tokens_per_s", "train": "days_to_train"}


#: The name a plan is computed under when it is shared by every instance with the same hardware; the
#: one place a name reaches a plan's text (a "does not fit in up to N x NAME" reason) is renamed back.
_SHARED_NAME = "\x00instance\x00"


T = TypeVar("T")


def _copy(value: T, **changes: Any) -> T:
    """A frozen value (a ``Node``, ``LinkLevel``, ``Figure`` or ``Plan``: dataclasses whose instance
    dictionary holds their fields alone) with ``changes``, built directly: ``dataclasses.replace``
    checks every field first, at twice the cost, and a ranking makes some 2,000 of these."""
    return type(value)(**(vars(value) | changes))


def _hardware(node: Node) -> Node:
    """``node`` without what only names, prices or explains it: instances with the same hardware get
    the same plan (names, prices, bases of memory figures and how a link figure was derived enter a
    plan's text and costs, never its layouts or times)."""
    links = tuple(_plain(level) for level in node.links)
    return _copy(
        node,
        provider="",
        instance_type=_SHARED_NAME,
        memory_basis="",
        hbm_basis="",
        links=links,
        usd_per_hour=None,
        price_detail="",
    )


#: ``_plain`` by link level: the same levels recur on many rows.
_PLAIN: dict[LinkLevel, LinkLevel] = {}


def _plain(level: LinkLevel) -> LinkLevel:
    """``level`` without how its figure was derived (the figure's ``detail``)."""
    found = _PLAIN.get(level)
    if found is None:
        found = level if not level.figure.detail else _copy(level, figure=_copy(level.figure, detail=""))
        found = store(_PLAIN, level, found)
    return found


def _inside_one_node(hardware: Node) -> Node:
    """``hardware`` without its fabric: a plan on one node never uses the fabric (the node count
    follows from memory, every group stays inside), so nodes equal but for their fabric share it."""
    return _copy(hardware, links=(*hardware.links[:-1], _copy(hardware.fabric, figure=MISSING, kind="")))


def _as_node(shared: Plan, node: Node) -> Plan:
    """A plan computed for ``_hardware(node)``, told of ``node`` itself (its name and price)."""
    reason = shared.reason.replace(_SHARED_NAME, node.instance_type) if shared.reason else shared.reason
    return _copy(shared, cluster=Cluster(node, shared.cluster.nodes), reason=reason)


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
    """The token budget (``planner.training.token_budget``) at the plan's USD per billion tokens
    (None without a price)."""
    work, per_billion = result.workload, usd_per_billion_tokens(result)
    if not isinstance(work, TrainWorkload) or per_billion is None:
        return None
    return per_billion * token_budget(result.model, work) / TOKENS_PER_BILLION


def _budget(result: Plan) -> float | None:
    """Training: the tokens every row is ranked at training (None when serving)."""
    work = result.workload
    return token_budget(result.model, work) if isinstance(work, TrainWorkload) else None


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
    split = usd_per_million_split(result)
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
        "usd_per_million_input_tokens": split[0],
        "usd_per_million_output_tokens": split[1],
        "usd_per_step": usd_per_step(result) if result.workload.kind == "train" else None,
        "usd_per_billion_tokens": usd_per_billion_tokens(result) if result.workload.kind == "train" else None,
        "days_to_train": days_to_train(result),
        "usd_to_train": _usd_to_train(result),
        "token_budget": _budget(result),
        "bandwidth_basis": basis_text(result),
    }


COLUMNS = (
    "rank", "provider", "instance_type", "gpu_model", "gpus_per_node", "nodes", "layout", "fits", "min_gpus",
    "step_s", "comm_s", "comm_share", "bottleneck_link", "bound", "tokens_per_s", "concurrency",
    "tokens_per_s_per_user", "ttft_s", "tpot_s", "usd_per_hour", "price_region", "price_kind", "currency",
    "price_flag", "usd_per_million_tokens", "usd_per_million_input_tokens", "usd_per_million_output_tokens",
    "usd_per_step", "usd_per_billion_tokens", "days_to_train",
    "usd_to_train", "token_budget", "bandwidth_basis", "verdict",
    "reason", "flags", "tp", "pp", "ep", "dp",
)  # fmt: skip


#: A ranking's row before it is filled: every column, None, in ``COLUMNS``' order.
_BLANK: dict[str, Any] = dict.fromkeys(COLUMNS)


def _hardware_plans(
    rows: list[dict],
    measured: dict[tuple[str, str], list[Measurement]],
    plan_one: Callable[[Node], Plan],
) -> dict[Any, tuple[Node, Plan] | str]:
    """For the first row of each hardware group (``node_groups``): its node, unpriced, with the plan
    its hardware gets (``plan_one``, once per distinct ``_hardware``), or the reason it has none."""
    planned: dict[Node, Plan] = {}
    planned_inside: dict[Node, Plan] = {}  # plans of one node, by the hardware inside it
    found: dict[Any, tuple[Node, Plan] | str] = {}
    for row in rows:
        node = node_from_row(row, None, measured.get((row["provider"], row["instance_type"])))
        if isinstance(node, str):
            found[row["hardware_group"]] = node  # the reason it cannot be planned
            continue
        hardware = _hardware(node)
        shared = planned.get(hardware)
        if shared is None:
            inside = _inside_one_node(hardware)
            shared = planned[hardware] = planned_inside.get(inside) or plan_one(hardware)
            if shared.cluster.nodes == 1:
                planned_inside.setdefault(inside, shared)
        found[row["hardware_group"]] = (node, shared)
    return found


def _group_rows(
    con: duckdb.DuckDBPyConnection,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None,
    filters: Filters,
    options: Options | None,
    layout: Layout | None = None,
) -> list[dict[str, Any]]:
    """``_row`` of every row matching ``filters``, planned once per node group (``node_groups``): a
    group's verdict is written for a stand-in name, then each row gets its own name back. The
    node and plan of a group come from its hardware group's, with the group's own price."""
    catalog = shape(con)
    sql, params = plain_sql(filters, catalog, NODE_COLUMNS) or instances_sql(filters, catalog)
    rows = node_groups(con, sql, params, filters.region, filters.spot, catalog.tables)
    first_of: dict[Any, dict] = {}
    hardware_first: dict[Any, dict] = {}
    for row in rows:
        first_of.setdefault(row["node_group"], row)  # a group is planned for its first row
        hardware_first.setdefault(row["hardware_group"], row)
    keys = [(r["provider"], r["instance_type"]) for r in hardware_first.values()]
    measured = measurements_of(con, keys, catalog.tables)
    hardware = _hardware_plans(
        list(hardware_first.values()),
        measured,
        lambda shared: plan(
            model, workload, shared, nodes=nodes, options=options, layout=layout, ranking=True
        ),
    )
    by_group: dict[Any, dict[str, Any]] = {}
    for row in first_of.values():
        base = hardware[row["hardware_group"]]
        result: Plan | str = base if isinstance(base, str) else _priced(base, row, filters.spot)
        by_group[row["node_group"]] = _BLANK | _row(row, result)
    found = []
    for row in rows:
        out = by_group[row["node_group"]].copy()  # in COLUMNS' order, the row's own columns its own
        name = out["instance_type"] = row["instance_type"]
        out["provider"], out["gpu_model"], out["flags"] = row["provider"], row["gpu_model"], row["flags"]
        out["gpus_per_node"], out["price_flag"] = row["gpu_count"], row.get("price_flag")
        for column in ("verdict", "reason"):
            if isinstance(out[column], str):
                out[column] = out[column].replace(_SHARED_NAME, name)
        found.append(out)
    return found


def _priced(base: tuple[Node, Plan], row: dict, spot: bool) -> Plan:
    """A hardware group's plan told of ``row``'s provider and price (as ``node_from_row`` prices a
    node), under the stand-in name."""
    node, shared = base
    usd = row["usd_per_hour_min"]
    priced = known(usd)
    return _as_node(
        shared,
        _copy(
            node,
            provider=row["provider"],
            instance_type=_SHARED_NAME,
            usd_per_hour=usd if priced else None,
            price_detail=price_words(row["price_region"], spot) if priced else "",
        ),
    )


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _sort_key(row: dict[str, Any], keys: list[str]) -> tuple:
    """Planned rows first; each key ascending (cost, days to train), but tokens/s descending, missing
    last; then provider and instance type."""
    parts: list[Any] = [_missing(row["tokens_per_s"])]
    for key in keys:
        value = row[key]
        parts += [True, 0.0] if _missing(value) else [False, -value if key == "tokens_per_s" else value]
    return (*parts, row["provider"], row["instance_type"])


def rank_rows(
    con: duckdb.DuckDBPyConnection,
    model: ModelSpec,
    workload: Workload,
    *,
    nodes: int | None = None,
    filters: Filters | None = None,
    options: Options | None = None,
    by: str = "time",
    layout: Layout | None = None,
) -> list[dict[str, Any]]:
    """``rank`` as plain rows (dicts keyed by ``COLUMNS``, None where unknown), without pandas: the
    command line's ranking reads this, so a plan never pays for loading pandas."""
    if by not in RANK_BY:
        raise ValueError(f"rank by {by!r}; expected one of {RANK_BY}")
    filters = filters or Filters()
    found = _group_rows(con, model, workload, nodes=nodes, filters=filters, options=options, layout=layout)
    cost, time = COST_COLUMN[workload.kind], TIME_COLUMN[workload.kind]
    keys = [cost, time] if by == "cost" else [time, cost]  # a tie: cheaper (or faster) first
    found.sort(key=lambda row: _sort_key(row, keys))
    kind = "spot" if filters.spot else "on-demand"
    for position, row in enumerate(found, start=1):
        row["rank"] = None if _missing(row[keys[0]]) else position
        row["price_kind"], row["currency"] = kind, CURRENCY
    return found


#: The float and whole-number columns of a ranking (the rest are text).
FLOAT_COLUMNS = (
    "step_s", "comm_s", "comm_share", "tokens_per_s", "concurrency", "tokens_per_s_per_user", "ttft_s",
    "tpot_s", "usd_per_hour", *COST_COLUMN.values(), "usd_per_million_input_tokens",
    "usd_per_million_output_tokens", "usd_per_step", "usd_per_billion_tokens", "days_to_train",
    "token_budget",
)  # fmt: skip
INT_COLUMNS = ("rank", "nodes", "min_gpus", "tp", "pp", "ep", "dp")


def ranking_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``rank_rows`` as the DataFrame ``rank`` returns: floats, nullable whole numbers, ``COLUMNS``."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in FLOAT_COLUMNS:
        frame[column] = frame[column].astype("float64")
    for column in INT_COLUMNS:
        frame[column] = frame[column].astype("Int64")
    return frame


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

    ``by`` "time" ranks serving by output tokens/s of the planned cluster and training by the days
    it takes to train the token budget (``token_budget``: the same for every row, so clusters
    compare at equal work); "cost" by USD per million output tokens (serving) or the USD to train
    the budget (training), then unpriced planned rows by time. ``rank`` numbers the rows that have the
    ranking figure; rows without a plan come last with their ``reason``. ``step_s`` is one decode
    step when serving and one optimizer step when training. Rows with the same hardware, price and
    measurements are planned once (``plan_inputs.node_groups``). Costs follow ``filters.region`` and
    ``filters.spot`` (``price_region``, ``price_kind`` and ``currency`` say which price; ``price_flag``
    why it looks like a placeholder, when it does).
    """
    rows = rank_rows(
        con, model, workload, nodes=nodes, filters=filters, options=options, by=by, layout=layout
    )
    return ranking_frame(rows)


def order_ranked(frame: pd.DataFrame, kind: str, by: str = "time") -> pd.DataFrame:
    """``rank``'s rows (with or without their ``rank`` column) ordered by ``by`` for a workload of
    ``kind`` and numbered again: rows with the ranking figure first, best first (a tie: the cheaper
    or the faster first, then provider and name), then planned rows without it, then the rows that
    have no plan. The app orders and numbers a subset of one ranking with it, as ``rank`` of that
    subset would."""
    import pandas as pd  # the app's path; the command line's ranking (rank_rows) never loads it

    if by not in RANK_BY:
        raise ValueError(f"rank by {by!r}; expected one of {RANK_BY}")
    frame = frame.drop(columns="rank", errors="ignore")
    cost, time = COST_COLUMN[kind], TIME_COLUMN[kind]
    keys = [cost, time] if by == "cost" else [time, cost]  # a tie: cheaper (or faster) first
    frame = frame.assign(_planned=frame["tokens_per_s"].notna())
    frame = frame.sort_values(
        ["_planned", *keys, "provider", "instance_type"],
        ascending=[False, *(k != "tokens_per_s" for k in keys), True, True],
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
    """Every fitting layout of one plan, best first: memory per GPU, step, its parts, tokens/s, and
    when serving its concurrency, TPOT and TTFT."""
    import pandas as pd

    from planner.models import ServeWorkload
    from planner.serving import with_ttft

    work = result.workload
    rows = []
    for found in result.results:
        r = found
        if isinstance(work, ServeWorkload):
            r = with_ttft(result.model, work, found, result.cluster, result.options)
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
    import pandas as pd

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
