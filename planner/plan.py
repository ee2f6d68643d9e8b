"""The whole answer for one instance: the layouts that fit, their time and cost, the best one, and
a verdict sentence that names the figures it rests on.

Serving is ``planner.serving``: continuous batching with chunked prefill at the concurrency that
gives the most tokens/s within memory and the latency targets, or at the user's. Training: tokens/s
= global batch tokens / step. The best layout is the one with the most tokens/s (on one cluster,
also the cheapest per token). Without ``nodes``, a serving cluster is the fewest instances (up to
``MAX_AUTO_NODES``) on which some layout fits; a training cluster is the workload's
``cluster_gpus`` (rounded up to whole instances), or with a deadline the fewest instances (up to
``MAX_DEADLINE_NODES``) that train the token budget in time.
"""

from __future__ import annotations

import math
from dataclasses import replace

from planner.comms import reach
from planner.conversions import bytes_to_gb, gb_to_bytes
from planner.hardware import Cluster, Node
from planner.layouts import Layout, candidate_layouts, groups, layout_problem, tp_limit
from planner.memo import store
from planner.memory import serve_memory
from planner.models import ModelSpec, ServeWorkload, TrainWorkload
from planner.result import SENSITIVITY_FACTORS, LayoutResult, Plan, Sensitivity, Workload
from planner.serving import evaluate_serving, served_model, tokens_bound, with_decode_split, with_ttft
from planner.serving import fits as serving_fits
from planner.step import Options, StepCost, matmul_dtype
from planner.training import (
    exposed_floor_s,
    fit_recompute,
    step_floor_s,
    token_budget,
    train_memory,
    train_step,
)
from planner.verdict import fits_label

MAX_AUTO_NODES = 64
#: The most instances a deadline may ask for: 4,096 (32,768 GPUs of 8; Llama 3 405B trained on
#: 16,384 H100, arXiv 2407.21783).
MAX_DEADLINE_NODES = 4096


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


#: ``fitting_layouts`` by what it depends on: clusters of the same GPU count, TP limit and usable
#: memory get the same layouts.
_FITTING: dict[tuple, tuple[Layout, ...]] = {}
#: ``candidate_layouts`` by what it reads of a cluster: its GPUs and TP limit (clusters of every
#: memory size share them, and the caches keyed on layouts find them by identity).
_CANDIDATES: dict[tuple, tuple[Layout, ...]] = {}


def fitting_layouts(model: ModelSpec, workload: Workload, cluster: Cluster, options: Options) -> list[Layout]:
    """The candidate layouts whose memory per GPU fits; in training each with its recomputation
    (selective where it fits, full otherwise, unless the workload fixes one)."""
    limit = usable_bytes(cluster.node, options)
    key = (model, workload, options, cluster.gpus, tp_limit(cluster, options.tp_across_domain), limit)
    found = _FITTING.get(key)
    if found is None:
        found = store(_FITTING, key, tuple(_fitting_layouts(model, workload, cluster, options, limit)))
    return list(found)


def _fitting_layouts(
    model: ModelSpec, workload: Workload, cluster: Cluster, options: Options, limit: float
) -> list[Layout]:
    found = []
    sequence = workload.sequence_tokens if isinstance(workload, TrainWorkload) else 0
    key = (model, workload.kind, cluster.gpus, tp_limit(cluster, options.tp_across_domain), sequence)
    candidates = _CANDIDATES.get(key)
    if candidates is None:
        candidates = store(
            _CANDIDATES,
            key,
            tuple(
                candidate_layouts(
                    model,
                    workload.kind,
                    cluster,
                    tp_across_domain=options.tp_across_domain,
                    sequence_tokens=sequence,
                )
            ),
        )
    for layout in candidates:
        if isinstance(workload, TrainWorkload):
            if workload.global_batch_sequences < layout.dp * layout.ep * workload.micro_batch_sequences:
                continue  # fewer sequences than data-parallel ranks
            fit = fit_recompute(model, workload, layout, limit)
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


def _order_unknown(layout: Layout) -> tuple:
    """Where a layout without a time ranks (``_rank_key`` after its unknown tokens/s)."""
    return (layout.replica_gpus, layout.tp, layout.pp, layout.ep)


def _node_problem(result: LayoutResult) -> bool:
    """Whether the layout has no compute or no HBM time: the node lacks the dense peak or the HBM
    figure its step needs, which every layout's step needs alike (``planner.serve_pass`` and
    ``planner.training`` ask each peak and the HBM rate of the node, whatever the layout)."""
    return result.step.compute_s is None or result.step.memory_s is None


def _unplannable(
    model: ModelSpec, workload: Workload, cluster: Cluster, options: Options, first: LayoutResult
) -> Plan:
    """The plan of a node that no layout can be timed on, as a ranking row reads it: every layout has
    ``first``'s problem, so they rank by their GPUs and degrees (``_order_unknown``) and ``first``,
    which comes first, gives the row its reason and its fewest GPUs. The other layouts are left
    out (a full plan, ``ranking`` False, lists them all)."""
    fits = fits_label(first.layout.replica_gpus, cluster)
    return Plan(model, workload, cluster, options, (first,), fits, reason=first.problem)


#: Whether a layout's step lacks a link figure (so it has no time), on a node with its peaks and HBM
#: figure, by ``_link_key``: a ranking learns it on one node and reads it on the next.
_LACKS_LINK: dict[tuple, bool] = {}


def _link_key(
    model: ModelSpec, workload: Workload, layout: Layout, cluster: Cluster, options: Options
) -> tuple:
    """What decides whether ``layout``'s step lacks a link figure: the model, the workload, the
    layout's degrees and where each of its groups' calls run, on links with or without a figure
    (``planner.comms.reach``); not the figures' values, memory or recomputation."""
    shape = (layout.tp, layout.cp, layout.pp, layout.ep, layout.dp, layout.fsdp, layout.virtual)
    where = (shape, workload.kind, cluster.reach_key)
    reached = _REACHED.get(where)
    if reached is None:
        groups_of = groups(layout, workload.kind).values()
        reached = store(_REACHED, where, tuple(reach(g, cluster) for g in groups_of))
    return (model, workload, options, shape, reached)


#: ``_link_key``'s reach of each group, by the layout's degrees, the workload's kind and
#: ``Cluster.reach_key`` (what ``planner.comms.reach`` depends on).
_REACHED: dict[tuple, tuple] = {}


def _lacks_link(result: LayoutResult) -> bool:
    """Whether a collective of the layout's step (or prefill pass) has no time: a link it needs
    has no figure."""
    steps = (result.step,) if result.prefill is None else (result.step, result.prefill)
    return any(t.seconds is None for step in steps for t in step.transfers)


def _unless_unlinked(
    model: ModelSpec,
    workload: Workload,
    layouts: list[Layout],
    first: LayoutResult,
    cluster: Cluster,
    options: Options,
) -> list[LayoutResult] | None:
    """Every layout's result, in ``layouts``' order, or None when every layout's step lacks a link
    figure (then no layout has a time). The layouts learnt to lack one on an earlier node
    (``_LACKS_LINK``) are evaluated only when some other layout turns out not to."""
    keys = [_link_key(model, workload, layout, cluster, options) for layout in layouts]
    found: dict[int, LayoutResult] = {}
    later = []
    for index, layout in enumerate(layouts):
        if layout is first.layout:
            found[index] = first
        elif _LACKS_LINK.get(keys[index]):
            later.append(index)
        else:
            found[index] = evaluate(model, workload, layout, cluster, options)
    lacking = [store(_LACKS_LINK, keys[i], _lacks_link(result)) for i, result in found.items()]
    if all(lacking):
        return None
    found |= {i: evaluate(model, workload, layouts[i], cluster, options) for i in later}
    return [found[i] for i in sorted(found)]


def _tokens_bound(
    model: ModelSpec, workload: Workload, layout: Layout, cluster: Cluster, options: Options
) -> float | None:
    """The most tokens/s ``layout`` can give: at its compute and HBM time alone (the collectives
    only add to a step; serving's at the batch it would take with no latency target)."""
    if isinstance(workload, TrainWorkload):
        floor = step_floor_s(model, workload, layout, cluster, options)
        return None if not floor else workload.global_batch_tokens / floor
    return tokens_bound(model, workload, layout, cluster, options)


#: How much a bound may fall short of a step's tokens/s by the rounding of its sums.
_ROUNDING = 1e-9


def _may_beat(
    model: ModelSpec,
    workload: Workload,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    best: float | None,
) -> bool:
    """Whether ``layout`` may give more than ``best`` tokens/s once a training step's floor has the
    collectives that never run behind compute added to it (``exposed_floor_s``: TP's all-reduces,
    the pipeline's sends); serving's bound has nothing to add."""
    if best is None or not isinstance(workload, TrainWorkload):
        return True
    floor = step_floor_s(model, workload, layout, cluster, options)
    exposed = exposed_floor_s(model, workload, layout, cluster, options)
    if not floor or exposed is None:
        return True
    return workload.global_batch_tokens / (floor + exposed) * (1 + _ROUNDING) >= best


#: ``_by_bound`` by the layouts, ``Cluster.gpu_key`` and the bytes a GPU may fill: a bound is a step's
#: compute and HBM time (training's at its floor, serving's at the batch memory allows), which the
#: GPU alone decides, so the nodes of one GPU and memory size share it.
_BOUNDS: dict[tuple, tuple[tuple[int, float | None], ...]] = {}


def _by_bound(
    model: ModelSpec, workload: Workload, layouts: list[Layout], cluster: Cluster, options: Options
) -> tuple[tuple[int, float | None], ...]:
    """(index, ``_tokens_bound``) of each of ``layouts``, the most tokens/s first (no bound first)."""
    limit = usable_bytes(cluster.node, options)
    key = (model, workload, options, tuple(layouts), cluster.gpu_key, limit)
    found = _BOUNDS.get(key)
    if found is None:
        bounds = {i: _tokens_bound(model, workload, lay, cluster, options) for i, lay in enumerate(layouts)}
        order = sorted(bounds, key=lambda i: -(bounds[i] or math.inf))
        found = store(_BOUNDS, key, tuple((i, bounds[i]) for i in order))
    return found


def _contenders(
    model: ModelSpec,
    workload: Workload,
    layouts: list[Layout],
    first: LayoutResult,
    cluster: Cluster,
    options: Options,
) -> list[LayoutResult]:
    """What a ranking row reads of a plan in which no layout can have a problem (every link its
    calls run on has a figure, no latency target): ``first`` (the fewest GPUs, which gives the row
    its fit) and every layout that could beat the best found so far, in ``layouts``' order.
    Layouts are tried by the most tokens/s they allow (``_tokens_bound``), and one whose bound is
    below the best tokens/s found cannot be the best: it is left out, and so is one that a tighter
    bound rules out before it is evaluated (``_may_beat``)."""
    found = {next(i for i, lay in enumerate(layouts) if lay is first.layout): first}
    best = first.tokens_per_s
    for index, bound in _by_bound(model, workload, layouts, cluster, options):
        if best is not None and bound is not None and bound < best:
            break
        if index not in found and _may_beat(model, workload, layouts[index], cluster, options, best):
            found[index] = evaluate(model, workload, layouts[index], cluster, options)
            tokens = found[index].tokens_per_s
            best = tokens if best is None or (tokens is not None and tokens > best) else best
    return [found[i] for i in sorted(found)]


def _targeted(workload: Workload) -> bool:
    """Whether a latency target may leave a layout without a time (serving's TPOT or TTFT)."""
    return isinstance(workload, ServeWorkload) and (
        workload.tpot_ms is not None or workload.ttft_ms is not None
    )


def plan(
    model: ModelSpec,
    workload: Workload,
    node: Node,
    *,
    nodes: int | None = None,
    options: Options | None = None,
    max_nodes: int = MAX_AUTO_NODES,
    layout: Layout | None = None,
    exhaustive: bool = True,
    ranking: bool = False,
) -> Plan:
    """Plan ``workload`` for ``model`` on ``nodes`` instances of ``node`` (the fewest that fit when
    None), or exactly ``layout`` (then the cluster is the nodes it needs). ``exhaustive`` False (a
    deadline search's trials) skips the sensitivity to inferred links. ``ranking`` True asks only
    for what a ranking row reads (``_unplannable``, ``_contenders``,
    ``_unless_unlinked``)."""
    options = options or Options()
    if layout is not None:
        return forced(model, workload, node, layout, nodes=nodes, options=options)
    if isinstance(workload, TrainWorkload) and nodes is None:
        if workload.deadline_days:
            return by_deadline(model, workload, node, options, MAX_DEADLINE_NODES)
        nodes = math.ceil(workload.cluster_gpus / node.gpus)
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
    first = min(layouts, key=_order_unknown)
    first_result = evaluate(model, workload, first, cluster, options)
    if ranking and _node_problem(first_result):
        return _unplannable(model, workload, cluster, options, first_result)
    linked = all(lv.figure.known for lv in cluster.routed_levels)
    if ranking and linked and not _targeted(workload):
        evaluated = _contenders(model, workload, layouts, first_result, cluster, options)
    elif ranking and not linked:
        timed = _unless_unlinked(model, workload, layouts, first_result, cluster, options)
        if timed is None:
            return _unplannable(model, workload, cluster, options, first_result)
        evaluated = timed
    else:
        evaluated = [
            first_result if lay is first else evaluate(model, workload, lay, cluster, options)
            for lay in layouts
        ]
    results = sorted(evaluated, key=_rank_key)
    results = list(_split_best(model, workload, results, cluster, options))
    fits = fits_label(min(r.layout.replica_gpus for r in results), cluster)
    found = Plan(model, workload, cluster, options, tuple(results), fits)
    if found.best is None:
        return replace(found, reason=results[0].problem)
    return replace(found, sensitivity=sensitivity(found)) if exhaustive else found


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
    sequence = workload.sequence_tokens if isinstance(workload, TrainWorkload) else None
    problem = layout_problem(
        model, layout, cluster, tp_across_domain=options.tp_across_domain, sequence_tokens=sequence
    )
    if problem is not None:
        return Plan(model, workload, cluster, options, (), "does not fit", problem)
    chosen = layout
    limit = usable_bytes(node, options)
    if isinstance(workload, TrainWorkload):
        full = replace(layout, recompute="full" if workload.recompute == "auto" else workload.recompute)
        chosen = fit_recompute(model, workload, layout, limit) or full
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
    """Training: the token budget (``planner.training.token_budget``) / tokens/s, in days (None
    without a time)."""
    work, best = found.workload, found.best
    if not isinstance(work, TrainWorkload) or best is None or not best.tokens_per_s:
        return None
    return token_budget(found.model, work) / best.tokens_per_s / SECONDS_PER_DAY


#: The most a training cluster gains over its size: more nodes hold fewer activations each, so they
#: may drop a full recomputation (4 passes a token become 3); nothing else makes time fall faster
#: than nodes grow.
MAX_SCALING_GAIN = 4 / 3


def cluster_sizes(least: int, most: int) -> list[int]:
    """The node counts a deadline search tries, from ``least`` to ``most``: 1 to 4, then 5, 6, 7 x
    a power of two and the powers themselves (4, 5, 6, 7, 8, 10, 12, 14, 16, 20, ...): steps of at
    most 25%, in sizes clusters are rented in and layouts divide."""
    found, power = {1, 2, 3}, 1
    while power <= most:
        found.update(f * power for f in (4, 5, 6, 7))
        power *= 2
    return sorted(n for n in found | {most} if least <= n <= most)


def by_deadline(model: ModelSpec, work: TrainWorkload, node: Node, options: Options, max_nodes: int) -> Plan:
    """The fewest nodes of ``cluster_sizes`` (up to ``max_nodes``) that train the token budget within
    ``work.deadline_days``: from the fewest whose memory could hold the state, a miss guesses the
    size that would make it if time scaled with nodes, and from a hit the sizes below are tried
    down to the last miss."""
    deadline = work.deadline_days or 0.0
    sizes = cluster_sizes(max(1, _lower_bound_nodes(model, work, node, options)), max_nodes)
    tried: dict[int, tuple[bool, Plan]] = {}

    def meets(index: int) -> tuple[bool, Plan]:
        count = sizes[index]
        if count not in tried:
            found = plan(model, work, node, nodes=count, options=options, exhaustive=False)
            days = days_to_train(found)
            tried[count] = (days is not None and days <= deadline, found)
        return tried[count]

    index, low = 0, -1
    while True:
        ok, found = meets(index)
        if ok:
            break
        low = index
        if index == len(sizes) - 1:
            days = days_to_train(found)
            best = "no layout fits" if days is None else f"{days:,.1f} days at best"
            reason = (
                f"--days: {token_budget(model, work):.3g} tokens in {deadline:g} days needs more than "
                f"{max_nodes} x {node.instance_type} ({best})"
            )
            return _unmet(found, reason)
        days = days_to_train(found)
        if days is not None and days * sizes[index] / sizes[-1] > deadline * MAX_SCALING_GAIN:
            reason = (
                f"--days: {token_budget(model, work):.3g} tokens in {deadline:g} days needs more than "
                f"{max_nodes} x {node.instance_type} ({days:,.1f} days on {sizes[index]:,}, and more nodes "
                f"cannot gain {MAX_SCALING_GAIN:.3g} x their number)"
            )
            return _unmet(found, reason)
        guess = 2 * sizes[index] if days is None else sizes[index] * days / deadline
        index = max(index + 1, next((i for i, n in enumerate(sizes) if n >= guess), len(sizes) - 1))
    while index - 1 > low and meets(index - 1)[0]:  # the guess overshot: walk down to the first hit
        index -= 1
    return plan(model, work, node, nodes=sizes[index], options=options)


def _unmet(found: Plan, reason: str) -> Plan:
    """The plan with no layout offered, and why."""
    return replace(found, results=(), reason=reason, sensitivity=())
