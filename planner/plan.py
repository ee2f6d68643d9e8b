"""The whole answer for one instance: the layouts that fit, their time and cost, the best one, and
a verdict sentence that names the figures it rests on.

Serving is ``planner.serving``: continuous batching with chunked prefill at the concurrency that
gives the most tokens/s within memory and the latency targets, or at the user's. Training: tokens/s
= global batch tokens / step. The best layout is the one with the most tokens/s (on one cluster,
also the cheapest per token). Without ``nodes``, the cluster is the fewest instances (up to
``MAX_AUTO_NODES``) on which some layout fits.
"""

from __future__ import annotations

import math
from dataclasses import replace

from planner.conversions import bytes_to_gb, gb_to_bytes
from planner.hardware import Cluster, Node
from planner.layouts import Layout, candidate_layouts, layout_problem
from planner.memory import serve_memory, train_memory
from planner.models import ModelSpec, ServeWorkload, TrainWorkload
from planner.result import SENSITIVITY_FACTORS, LayoutResult, Plan, Sensitivity, Workload
from planner.serving import evaluate_serving, served_model, with_decode_split, with_ttft
from planner.serving import fits as serving_fits
from planner.step import Options, StepCost, matmul_dtype, train_step
from planner.verdict import fits_label

MAX_AUTO_NODES = 64


def _problem(result_step: StepCost, cluster: Cluster, dtype: str) -> str | None:
    if result_step.compute_s is None:
        gpu = cluster.node.gpu_model
        return f"no dense {dtype.upper()} peak for {gpu} in the datasheet table: compute time unknown"
    if result_step.memory_s is None:
        return f"HBM bandwidth of {cluster.node.gpu_model} unknown"
    for transfer in result_step.transfers:
        if transfer.seconds is None:
            return f"needs the {transfer.link} bandwidth for the {transfer.collective}, and it is not stated"
    return None


def evaluate(
    model: ModelSpec, workload: Workload, layout: Layout, cluster: Cluster, options: Options
) -> LayoutResult:
    """Memory, step time and tokens/s of one layout (whether or not it fits)."""
    if isinstance(workload, TrainWorkload):
        memory = train_memory(model, workload, layout)
        step = train_step(model, workload, layout, cluster, options)
        problem = _problem(step, cluster, matmul_dtype(model, cluster, workload))
        tokens = None if step.step_s is None else workload.global_batch_tokens / step.step_s
        return LayoutResult(layout, memory, step, None, tokens, problem)
    return evaluate_serving(
        model,
        workload,
        layout,
        cluster,
        options,
        lambda step: _problem(step, cluster, _dtype(model, workload, cluster)),
    )


def _split_best(
    model: ModelSpec, workload: Workload, results: list[LayoutResult], cluster: Cluster, options: Options
) -> tuple[LayoutResult, ...]:
    """The results, the first (the best) with its TTFT and its decode share of TPOT when serving
    (what its verdict and its cost split need; the other layouts are compared by tokens/s)."""
    if results and isinstance(workload, ServeWorkload) and results[0].tokens_per_s is not None:
        best = with_ttft(model, workload, results[0], cluster, options)
        results[0] = with_decode_split(model, workload, best, cluster, options)
    return tuple(results)


def _dtype(model: ModelSpec, workload: ServeWorkload, cluster: Cluster) -> str:
    return matmul_dtype(served_model(model, workload), cluster)


def usable_bytes(node: Node, options: Options) -> float:
    """The bytes of one GPU a plan may fill."""
    return gb_to_bytes(node.memory_gb_per_gpu) * options.usable_memory_fraction


def fitting_layouts(model: ModelSpec, workload: Workload, cluster: Cluster, options: Options) -> list[Layout]:
    """The candidate layouts whose memory per GPU fits; in training each with its recomputation
    (selective where it fits, full otherwise, unless the workload fixes one)."""
    limit = usable_bytes(cluster.node, options)
    found = []
    for layout in candidate_layouts(model, workload.kind, cluster, tp_across_domain=options.tp_across_domain):
        if isinstance(workload, TrainWorkload):
            if workload.global_batch_sequences < layout.dp * layout.ep * workload.micro_batch_sequences:
                continue  # fewer sequences than data-parallel ranks
            choices = ("selective", "full") if workload.recompute == "auto" else (workload.recompute,)
            tries = (replace(layout, recompute=c) for c in choices)
            fit = next((t for t in tries if train_memory(model, workload, t).total_bytes <= limit), None)
            if fit is not None:
                found.append(fit)
        elif serving_fits(served_model(model, workload), workload, layout, cluster, options):
            found.append(layout)
    return found


def _lower_bound_nodes(model: ModelSpec, workload: Workload, node: Node, options: Options) -> int:
    """Fewest nodes whose memory could hold the whole state, however it is split."""
    if isinstance(workload, TrainWorkload):
        needed = train_memory(model, workload, Layout(1, 1, 1, 1, "full")).total_bytes
    else:
        needed = serve_memory(served_model(model, workload), workload, Layout(1, 1, 1, 1)).total_bytes
    return max(1, math.ceil(needed / usable_bytes(node, options) / node.gpus))


def _rank_key(result: LayoutResult) -> tuple:
    known = result.tokens_per_s is not None
    layout = result.layout
    return (not known, -(result.tokens_per_s or 0.0), layout.replica_gpus, layout.tp, layout.pp, layout.ep)


def plan(
    model: ModelSpec,
    workload: Workload,
    node: Node,
    *,
    nodes: int | None = None,
    options: Options | None = None,
    max_nodes: int = MAX_AUTO_NODES,
    layout: Layout | None = None,
) -> Plan:
    """Plan ``workload`` for ``model`` on ``nodes`` instances of ``node`` (the fewest that fit when
    None), or exactly ``layout`` (then the cluster is the nodes it needs)."""
    options = options or Options()
    if layout is not None:
        return forced(model, workload, node, layout, nodes=nodes, options=options)
    if isinstance(workload, TrainWorkload) and workload.deadline_days and nodes is None:
        return by_deadline(model, workload, node, options, max_nodes)
    least = _lower_bound_nodes(model, workload, node, options)
    counts = [nodes] if nodes else range(least, max_nodes + 1)
    cluster, layouts = Cluster(node, nodes or 1), []
    for count in counts:
        cluster = Cluster(node, count)
        layouts = fitting_layouts(model, workload, cluster, options)
        if layouts:
            break
    if not layouts:
        tried = nodes or max_nodes
        reason = f"does not fit in {'' if nodes else 'up to '}{tried} x {node.instance_type}"
        if least > tried:
            reason += f" (its weights and state alone need {least})"
        return Plan(model, workload, Cluster(node, tried), options, (), f"more than {tried} nodes", reason)
    results = sorted((evaluate(model, workload, lay, cluster, options) for lay in layouts), key=_rank_key)
    results = list(_split_best(model, workload, results, cluster, options))
    fits = fits_label(min(r.layout.replica_gpus for r in results), cluster)
    found = Plan(model, workload, cluster, options, tuple(results), fits)
    if found.best is None:
        return replace(found, reason=results[0].problem)
    return replace(found, sensitivity=sensitivity(found))


def sensitivity(found: Plan) -> tuple[Sensitivity, ...]:
    """For each inferred link the best layout uses, its tokens/s at half and double that link's figure."""
    best = found.best
    if best is None:
        return ()
    used = {
        name
        for t in best.step.transfers + (best.prefill.transfers if best.prefill else ())
        for name in t.levels
    }
    levels = [lv for lv in found.cluster.levels if lv.name in used and lv.figure.basis == "inferred"]
    out = []
    for level in levels:
        tokens = []
        for factor in SENSITIVITY_FACTORS:
            cluster = Cluster(found.cluster.node.with_link_scaled(level.name, factor), found.cluster.nodes)
            tokens.append(
                evaluate(found.model, found.workload, best.layout, cluster, found.options).tokens_per_s
            )
        out.append(Sensitivity(level.name, level.figure.basis, tuple(tokens)))
    return tuple(out)


def forced(
    model: ModelSpec, workload: Workload, node: Node, layout: Layout, *, nodes: int | None, options: Options
) -> Plan:
    """Exactly ``layout``: on the nodes it needs, with why it does or does not fit in ``reason``."""
    count = nodes or max(1, math.ceil(layout.gpus / node.gpus))
    cluster = Cluster(node, count)
    problem = layout_problem(model, layout, cluster, tp_across_domain=options.tp_across_domain)
    if problem is not None:
        return Plan(model, workload, cluster, options, (), "does not fit", problem)
    chosen = layout
    limit = usable_bytes(node, options)
    if isinstance(workload, TrainWorkload):
        choices = ("selective", "full") if workload.recompute == "auto" else (workload.recompute,)
        for choice in choices:
            chosen = replace(layout, recompute=choice)
            if train_memory(model, workload, chosen).total_bytes <= limit:
                break
    [result] = _split_best(
        model, workload, [evaluate(model, workload, chosen, cluster, options)], cluster, options
    )
    used = result.memory.total_bytes
    if used > limit:
        why = (
            f"--layout {chosen.label} needs {bytes_to_gb(used):.1f} GB per GPU, "
            f"{bytes_to_gb(limit):.1f} GB usable on {node.gpu_model}"
        )
        return Plan(model, workload, cluster, options, (), "does not fit", why)
    found = Plan(model, workload, cluster, options, (result,), fits_label(chosen.replica_gpus, cluster))
    if found.best is None:
        return replace(found, reason=result.problem)
    return replace(found, sensitivity=sensitivity(found))


SECONDS_PER_DAY = 86_400.0


def days_to_train(found: Plan) -> float | None:
    """Training: the token budget / tokens/s, in days (None without a budget or a time)."""
    work, best = found.workload, found.best
    if (
        not isinstance(work, TrainWorkload)
        or work.token_budget is None
        or best is None
        or not best.tokens_per_s
    ):
        return None
    return work.token_budget / best.tokens_per_s / SECONDS_PER_DAY


def by_deadline(model: ModelSpec, work: TrainWorkload, node: Node, options: Options, max_nodes: int) -> Plan:
    """The fewest nodes (up to ``max_nodes``) that train ``work.token_budget`` tokens within
    ``work.deadline_days``: doubling from the fewest that fit, then halving the gap."""
    least = _lower_bound_nodes(model, work, node, options)

    def meets(count: int) -> tuple[bool, Plan]:
        found = plan(model, work, node, nodes=count, options=options)
        days = days_to_train(found)
        return days is not None and days <= (work.deadline_days or 0), found

    count, last = max(1, least), None
    while count <= max_nodes:
        ok, found = meets(count)
        if ok:
            break
        last = (count, found)
        count *= 2
    else:
        tried = plan(model, work, node, nodes=max_nodes, options=options)
        days = days_to_train(tried)
        best = "no layout fits" if days is None else f"{days:,.1f} days at best"
        reason = (
            f"--days: {work.token_budget:.3g} tokens in {work.deadline_days:g} days needs more than "
            f"{max_nodes} x {node.instance_type} ({best})"
        )
        return _unmet(tried, reason)
    low = last[0] + 1 if last else count
    high = count
    while low < high:
        middle = (low + high) // 2
        ok, trial = meets(middle)
        if ok:
            high, found = middle, trial
        else:
            low = middle + 1
    return found


def _unmet(found: Plan, reason: str) -> Plan:
    """The plan with no layout offered, and why."""
    return replace(found, results=(), reason=reason, sensitivity=())
