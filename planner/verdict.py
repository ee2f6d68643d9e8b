"""How a plan reads: where the model fits, the bottleneck, the links it rests on, one sentence."""

from __future__ import annotations

import math

from normalize.vocab import LINK_LABELS, SCALE_UP_LINKS
from planner.conversions import SECONDS_PER_HOUR, TOKENS_PER_BILLION, TOKENS_PER_MILLION
from planner.hardware import Cluster, LinkLevel
from planner.models import ServeWorkload, TrainWorkload
from planner.result import Plan
from planner.step import StepCost
from planner.training import token_budget

_SCALE_UP_NAMES = {LINK_LABELS[link] for link in SCALE_UP_LINKS}
SECONDS_PER_DAY = 24 * SECONDS_PER_HOUR
#: Below this share of the step, collectives that partly run behind compute are said to be hidden.
HIDDEN_SHARE = 0.005


def fits_label(replica_gpus: int, cluster: Cluster) -> str:
    """The smallest container one model replica fits: one GPU, one NVLink domain (which a GB200
    rack stretches over several instances), one node, or N nodes."""
    if replica_gpus <= 1:
        return "one GPU"
    inner = cluster.levels[0]
    if inner.name in _SCALE_UP_NAMES and inner.gpus is not None and replica_gpus <= inner.gpus:
        return "one NVLink domain"
    if replica_gpus <= cluster.node.gpus:
        return "one node"
    return f"{math.ceil(replica_gpus / cluster.node.gpus)} nodes"


def bottleneck(step: StepCost) -> tuple[str, str] | None:
    """(collective, link) of the collective taking the longest, or None when there is none."""
    timed = [t for t in step.transfers if t.seconds]
    if not timed:
        return None
    worst = max(timed, key=lambda t: t.seconds or 0.0)
    return worst.collective, worst.link


def bound(step: StepCost) -> str:
    """Whether compute or HBM reads set the step's floor."""
    return "compute-bound" if (step.compute_s or 0.0) >= (step.memory_s or 0.0) else "HBM-bound"


def comm_share(step: StepCost) -> float | None:
    """Communication time the step waits for (not hidden behind compute) / step time."""
    exposed = step.exposed_comm_s
    if step.step_s is None or exposed is None or step.step_s == 0:
        return None
    return exposed / step.step_s


def used_levels(plan: Plan) -> list[LinkLevel]:
    """The link levels the best layout moves bytes over, innermost first."""
    best = plan.best
    if best is None:
        return []
    steps = [best.step] + ([best.prefill] if best.prefill else [])
    names = {name for step in steps for t in step.transfers if t.bytes_per_gpu for name in t.levels}
    return [lv for lv in plan.cluster.levels if lv.name in names]


def basis_text(plan: Plan) -> str:
    """The bandwidths the best layout uses, each with its basis: 'NVSwitch 450 GB/s one way per GPU
    (inferred)'."""
    levels = used_levels(plan)
    if not levels:
        return "no GPU-to-GPU traffic"
    return "; ".join(
        f"{lv.name} {number(lv.figure.gbytes_per_s or 0)} GB/s one way per GPU ({lv.figure.basis})"
        for lv in levels
    )


def usd_per_million_tokens(plan: Plan) -> float | None:
    """Serving cost all-in: the cluster's USD per second / output tokens per second x 10^6 (each
    output token carries its share of the prompts' prefill)."""
    return _usd_per_tokens(plan, TOKENS_PER_MILLION)


def usd_per_million_split(plan: Plan) -> tuple[float | None, float | None]:
    """Serving cost per million (input, output) tokens, each at its own rate: a step of TPOT holds
    the output tokens' decode (``decode_s``, the step with no prompt mixed in) and the prompts'
    prefill (the rest), so input = USD/s x (TPOT − decode) / prompt tokens per step and output =
    USD/s x decode / output tokens per step. Input x prompt / output + output = the all-in figure."""
    price, best, work = plan.cluster_usd_per_hour, plan.best, plan.workload
    if (
        price is None
        or best is None
        or not isinstance(work, ServeWorkload)
        or not best.concurrency
        or best.tpot_s is None
        or best.decode_s is None
    ):
        return None, None
    per_s = price / SECONDS_PER_HOUR
    prompts = best.concurrency * work.prompt_tokens / work.output_tokens  # prompt tokens per step
    return (
        per_s * (best.tpot_s - best.decode_s) / prompts * TOKENS_PER_MILLION,
        per_s * best.decode_s / best.concurrency * TOKENS_PER_MILLION,
    )


def usd_per_billion_tokens(plan: Plan) -> float | None:
    """Training cost: the cluster's USD per second / trained tokens per second x 10^9."""
    return _usd_per_tokens(plan, TOKENS_PER_BILLION)


def _usd_per_tokens(plan: Plan, tokens: float) -> float | None:
    price, best = plan.cluster_usd_per_hour, plan.best
    if price is None or best is None or not best.tokens_per_s:
        return None
    return price / SECONDS_PER_HOUR / best.tokens_per_s * tokens


def usd_per_step(plan: Plan) -> float | None:
    """Training cost of one optimizer step: the cluster's USD per second x step seconds."""
    price, best = plan.cluster_usd_per_hour, plan.best
    if price is None or best is None or best.step.step_s is None:
        return None
    return price / SECONDS_PER_HOUR * best.step.step_s


def number(value: float) -> str:
    """A figure for a sentence: 6,120 · 450 · 12.5 · 0.42."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def duration(seconds: float) -> str:
    """'3.1 ms', '12.4 s', '85 µs'."""
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _comm_clause(step: StepCost) -> str:
    worst, share = bottleneck(step), comm_share(step)
    if worst is None or share is None:
        return f"no communication, {bound(step)}"
    if step.hidden_s and share < HIDDEN_SHARE:
        return f"its collectives behind compute (the largest the {worst[0]} over {worst[1]}), {bound(step)}"
    part = f"{share:.0%}" if share >= 0.005 else "under 1%"  # never "with 0% of it in the ..."
    return f"{part} of it in the {worst[0]} over {worst[1]}, {bound(step)}"


def _caveats(plan: Plan) -> str:
    parts = [
        f"uses the {lv.figure.basis} {lv.name} figure, "
        f"{number(lv.figure.gbytes_per_s or 0)} GB/s one way per GPU"
        for lv in used_levels(plan)
        if lv.figure.basis in ("measured", "expected")
    ]
    for s in plan.sensitivity:
        low, high = (number(t) if t is not None else "unknown" for t in s.tokens_per_s)
        parts.append(f"the {s.link} figure is {s.basis} ({low} to {high} tokens/s at half or double it)")
    skipped = {r.problem for r in plan.results if r.problem}
    parts.extend(sorted(f"some layouts not planned: {p}" for p in skipped))
    return "".join(f"; {p}" for p in parts)


def _fit(plan: Plan) -> str:
    """'one NVLink domain (4 GPUs at least)', or 'one GPU'."""
    gpus = plan.min_gpus
    return plan.fits if gpus is None or gpus == 1 else f"{plan.fits} ({gpus} GPUs at least)"


def verdict(plan: Plan) -> str:
    """One sentence: fit, best layout, throughput, the bottleneck, the cost, and what it depends on."""
    model, cluster, best = plan.model.name, plan.cluster, plan.best
    where = f"{cluster.nodes} x {cluster.node.instance_type}"
    if best is None:
        return f"{model} cannot be planned on {where}: {plan.reason}."
    tokens_per_s, step_s = best.tokens_per_s, best.step.step_s
    assert tokens_per_s is not None and step_s is not None, "the best layout is one with a step time"
    if isinstance(plan.workload, TrainWorkload):
        budget = token_budget(plan.model, plan.workload)
        days = budget / tokens_per_s / SECONDS_PER_DAY
        per_billion = usd_per_billion_tokens(plan)
        money = "" if per_billion is None else f", ${per_billion * budget / TOKENS_PER_BILLION:,.0f}"
        return (
            f"{model} training fits {_fit(plan)} on {where} as {best.layout.label}: "
            f"{duration(step_s)} per step, {number(tokens_per_s)} tokens/s, "
            f"{_comm_clause(best.step)}; {budget:.3g} tokens in {number(days)} days{money}"
            f"{_caveats(plan)}."
        )
    cost = usd_per_million_tokens(plan)
    split = usd_per_million_split(plan)
    money = "" if cost is None else f"; ${cost:,.2f} per million output tokens with their prompts"
    if cost is not None and split[0] is not None and split[1] is not None:
        money += f" (input ${split[0]:,.3g}, output ${split[1]:,.3g} per million, each at its own rate)"
    target = plan.workload.target_tokens_per_s
    goal = ""
    if target:
        need = math.ceil(target / tokens_per_s)
        goal = (
            f"; meets the {number(target)} tokens/s target"
            if need <= 1
            else f"; {number(target)} tokens/s needs {need} such clusters"
        )
    at = "" if best.concurrency is None else f" at {number(best.concurrency)} conversations at once"
    ttft = "" if best.ttft_s is None else f", TTFT {duration(best.ttft_s)}"
    return (
        f"{model} fits {_fit(plan)}; on {where} the best layout is {best.layout.label}{at}: "
        f"{number(tokens_per_s)} output tokens/s ({number(1 / step_s)} per conversation), a "
        f"{duration(step_s)} decode step (TPOT{ttft}) with "
        f"{_comm_clause(best.step)}{money}{goal}{_caveats(plan)}."
    )
