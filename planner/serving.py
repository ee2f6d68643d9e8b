"""Serving as it is run: continuous batching with chunked prefill, at the batch that gives the most
tokens/s within memory and the latency targets, or at the user's concurrency.

A replica holds B conversations at once. In steady state every step decodes one token for each of
them and, because B / output conversations finish per step and as many start, prefills B × prompt /
output prompt tokens in the same pass (chunked prefill piggybacks on decode, as vLLM and TensorRT-LLM
run it). So:

- the prompts are not spread evenly over the steps: the scheduler fills a step's token budget
  (``prefill_chunk_tokens``) with the decode tokens first and whole prompts after them, chunking
  only a prompt longer than what is left (vLLM's chunked prefill: "batches all pending decode
  requests before scheduling any prefill", https://docs.vllm.ai/en/latest/configuration/optimization.html;
  TensorRT-LLM's ``max_num_tokens``). So a share f = (B × prompt / output) / P of the steps carry
  P prompt tokens each and the rest decode alone, and a prompt's compute hides behind the weight
  reads of the step it rides in only, not behind every step's (``prompt_steps``);
- TPOT (time per output token) = the mean step: f × (B decode + P prompt tokens) + (1 − f) × (B
  decode), each the compute of its tokens, the weights read once per PP micro-batch, the decode KV
  cache read, and the collectives of its tokens with their per-call latency (2 × layers
  all-reduces per step for TP);
- output tokens/s of the cluster = DP × B / TPOT; per conversation 1 / TPOT;
- TTFT (time to first token) = one prompt's prefill pass + one step it waits for.

The batch search (``batch_sequences`` None): B runs from 1 to the most that fits in memory (at most
``MAX_BATCH_PER_REPLICA``), and the largest B meeting the TPOT and TTFT targets is taken (TPOT and
TTFT grow with B, tokens/s does not fall). With ``batch_sequences`` = C, each replica serves C / DP.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from planner.comms import Transfer
from planner.conversions import gb_to_bytes
from planner.hardware import Cluster
from planner.layouts import Layout
from planner.memo import store
from planner.memory import serve_memory
from planner.models import MAX_BATCH_PER_REPLICA, ModelSpec, ServeWorkload
from planner.result import LayoutResult
from planner.runs import engine_batch, graph_rows, waves
from planner.serve_pass import pass_kernels, serve_pass, serve_transfers
from planner.step import KernelTime, Options, StepCost


def served_model(model: ModelSpec, work: ServeWorkload) -> ModelSpec:
    """The model as served: its weights in the workload's precision ("" keeps its own), which the
    matmuls follow (``planner.step.matmul_dtype``), and its KV cache in ``work.kv_dtype``."""
    weights = work.precision or model.weight_dtype
    kv = work.kv_dtype(model)
    if (weights, kv) == (model.weight_dtype, model.kv_cache_dtype):
        return model
    return replace(model, weight_dtype=weights, kv_cache_dtype=kv)


def _limit(cluster: Cluster, options: Options) -> float:
    return gb_to_bytes(cluster.node.memory_gb_per_gpu) * options.usable_memory_fraction


def fits(model: ModelSpec, work: ServeWorkload, layout: Layout, cluster: Cluster, options: Options) -> bool:
    """Whether the layout holds its share of the workload (the user's concurrency, or one
    conversation per replica when the batch is searched)."""
    return serve_memory(model, work, layout, _per_replica(work, layout) or 1.0).total_bytes <= _limit(
        cluster, options
    )


def _per_replica(work: ServeWorkload, layout: Layout) -> float | None:
    return None if work.batch_sequences is None else work.batch_sequences / layout.dp


#: ``max_batch`` by model, workload, layout and the bytes a GPU may fill (nodes share them).
_MAX_BATCH: dict[tuple, int] = {}


def max_batch(
    model: ModelSpec, work: ServeWorkload, layout: Layout, cluster: Cluster, options: Options
) -> int:
    """The most conversations one replica holds in memory (0 if not even one), at most the cap.

    Memory is the weights, a KV cache linear in the conversations and a prefill workspace linear
    until it reaches the chunk's size: solved on each piece from ``serve_memory``'s own parts, then
    checked against it (a binary search if the check disagrees)."""
    limit = _limit(cluster, options)
    key = (model, work, layout, limit)
    found = _MAX_BATCH.get(key)
    if found is None:
        found = store(_MAX_BATCH, key, _max_batch(model, work, layout, limit))
    return found


def _max_batch(model: ModelSpec, work: ServeWorkload, layout: Layout, limit: float) -> int:

    def fits_b(b: int) -> bool:
        return serve_memory(model, work, layout, b).total_bytes <= limit

    one = serve_memory(model, work, layout, 1)
    cap = serve_memory(model, work, layout, MAX_BATCH_PER_REPLICA).activation_bytes
    kv, act = one.kv_cache_bytes, one.activation_bytes
    room = limit - one.weights_bytes
    saturated = (room - cap) / kv if kv > 0 else float(MAX_BATCH_PER_REPLICA)
    guess = saturated if act > 0 and saturated >= cap / act else room / (kv + act) if kv + act > 0 else 0.0
    b = int(max(0.0, min(float(MAX_BATCH_PER_REPLICA), math.floor(guess))))
    for _ in range(3):  # rounding: step to the exact edge, usually two checks
        if b > 0 and not fits_b(b):
            b -= 1
        elif b < MAX_BATCH_PER_REPLICA and fits_b(b + 1):
            b += 1
        else:
            return b
    low, high = 0, MAX_BATCH_PER_REPLICA
    while low < high:
        middle = (low + high + 1) // 2
        if fits_b(middle):
            low = middle
        else:
            high = middle - 1
    return low


def prompt_steps(work: ServeWorkload, b: float) -> tuple[float, float]:
    """(share of steps that carry prompts, prompt tokens each carries) at B = ``b`` per replica: the
    budget left after the B decode tokens holds as many whole prompts as fit (a chunk of one prompt
    when not even one fits); every step carries the mean B × prompt / output when the budget
    leaves less than that (module docstring)."""
    prompt, needed = work.prompt_tokens, b * work.prompt_tokens / work.output_tokens
    room = work.prefill_chunk_tokens - b
    carried = math.floor(room / prompt) * prompt if room >= prompt else room
    if carried <= needed:
        return 1.0, needed
    return needed / carried, carried


def _weighted_kernels(kernels: tuple[KernelTime, ...], share: float, label: str) -> tuple[KernelTime, ...]:
    """``kernels`` at ``share`` of their work and time, named with ``label``."""
    return tuple(
        KernelTime(
            k.kernel + label,
            k.flops * share,
            k.hbm_bytes * share,
            None if k.compute_s is None else k.compute_s * share,
            None if k.memory_s is None else k.memory_s * share,
            k.fixed_s * share,
        )
        for k in kernels
    )


def _weighted_transfers(transfers: tuple[Transfer, ...], share: float, label: str) -> tuple[Transfer, ...]:
    """``transfers`` at ``share`` of their calls, bytes and time, named with ``label``."""
    return tuple(
        Transfer(
            t.collective + label,
            t.group_gpus,
            t.count * share,
            t.message_bytes,
            t.bytes_per_gpu * share,
            t.link,
            t.levels,
            None if t.seconds is None else t.seconds * share,
            t.algorithm,
            t.latency_s * share,
        )
        for t in transfers
    )


_WITH_PROMPTS = " (steps with prompts)"

#: The kernels of ``_step``'s mean step, by model, workload, layout, options, the GPU
#: (``Cluster.gpu_key``) and the batch (with its type).
_MEAN_KERNELS: dict[tuple, StepCost] = {}


def _step_kernels(
    model: ModelSpec,
    work: ServeWorkload,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    b: float,
    padding: float = 0.0,
) -> StepCost:
    """The kernels of ``_step``'s mean step at B = ``b`` (no collectives), the steps that decode
    alone computing ``padding`` rows more (a CUDA graph's: ``planner.runs``): they depend on the
    GPU alone and are looked up."""
    prompt, out = work.prompt_tokens, work.output_tokens
    share, carried = prompt_steps(work, b)

    def at(prefill: float, rows: float = 0.0) -> StepCost:
        return pass_kernels(
            model,
            layout,
            cluster,
            options,
            sequences=b,
            new_tokens=1,
            context_tokens=prompt + out / 2,
            prefill_tokens=prefill,
            prefill_context_tokens=prompt / 2,
            padding_rows=rows,
        )

    if share >= 1.0:
        return at(carried)
    key = (model, work, layout, options, cluster.gpu_key, b, type(b), padding)
    kernels = _MEAN_KERNELS.get(key)
    if kernels is None:
        alone = _weighted_kernels(at(0.0, padding).kernels, 1.0 - share, "")
        with_prompts = _weighted_kernels(at(carried).kernels, share, _WITH_PROMPTS)
        kernels = store(_MEAN_KERNELS, key, StepCost.of_kernels(alone + with_prompts, ()))
    return kernels


def _step(
    model: ModelSpec,
    work: ServeWorkload,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    b: float,
    engine: float | None = None,
) -> StepCost:
    """The mean step at B = ``b`` per replica: the steps that carry prompts and those that decode
    alone, each at its share (``prompt_steps``), the latter padded to a captured CUDA graph's batch
    when the workload lists them (``planner.runs``; ``engine``: the engine's max batch, by default
    the one ``b`` sets). Its kernels are ``_step_kernels``; its collectives are the cluster's."""
    share, carried = prompt_steps(work, b)
    padding = 0.0
    if work.graph_batch_sizes and share < 1.0:
        padding = graph_rows(work, b, engine or engine_batch(b)) - b
    kernels = _step_kernels(model, work, layout, cluster, options, b, padding)
    if share >= 1.0:
        return kernels.with_transfers(serve_transfers(model, layout, cluster, options, b * 1 + carried))
    transfers = _weighted_transfers(
        serve_transfers(model, layout, cluster, options, b * 1 + padding), 1.0 - share, ""
    ) + _weighted_transfers(
        serve_transfers(model, layout, cluster, options, b * 1 + carried), share, _WITH_PROMPTS
    )
    return kernels.with_transfers(_merged(transfers))


def tokens_bound(
    model: ModelSpec, work: ServeWorkload, layout: Layout, cluster: Cluster, options: Options
) -> float | None:
    """The most output tokens/s ``layout`` can give when no latency target is set: DP x B / its
    step's kernels alone, at the batch ``evaluate_serving`` then takes (the user's, or the most
    that fits); the collectives only add to a step. None when a kernel has no time."""
    model = served_model(model, work)
    b = _per_replica(work, layout)
    if b is None:
        b = max(max_batch(model, work, layout, cluster, options), 1)
    step_s = _step_kernels(model, work, layout, cluster, options, b).step_s
    return None if not step_s else layout.dp * b / step_s


def _merged(transfers: tuple[Transfer, ...]) -> tuple[Transfer, ...]:
    """One transfer per collective: the calls of both kinds of step, their bytes and times summed,
    the message the calls' mean, the algorithms each kind chose."""
    by_name: dict[str, Transfer] = {}
    for t in transfers:
        name = t.collective.removesuffix(_WITH_PROMPTS)
        seen = by_name.get(name)
        if seen is None:
            by_name[name] = t if name == t.collective else replace(t, collective=name)
            continue
        calls = seen.count + t.count
        by_name[name] = Transfer(
            name,
            seen.group_gpus,
            calls,
            (seen.message_bytes * seen.count + t.message_bytes * t.count) / calls if calls else 0.0,
            seen.bytes_per_gpu + t.bytes_per_gpu,
            seen.link,
            seen.levels,
            None if seen.seconds is None or t.seconds is None else seen.seconds + t.seconds,
            " / ".join(dict.fromkeys(a for a in (seen.algorithm, t.algorithm) if a)),
            seen.latency_s + t.latency_s,
        )
    return tuple(by_name.values())


def _prefill(
    model: ModelSpec, work: ServeWorkload, layout: Layout, cluster: Cluster, options: Options
) -> StepCost:
    """One prompt's prefill pass (the same whatever the batch)."""
    prompt = work.prompt_tokens
    return serve_pass(
        model, layout, cluster, options, sequences=1, new_tokens=prompt, context_tokens=prompt / 2
    )


def _meets(work: ServeWorkload, tpot: float | None, ttft: float | None) -> bool:
    """Whether the targets asked for are met (a time that could not be computed meets them: the
    problem is reported instead; TTFT is computed whenever a TTFT target is set)."""
    tpot_ok = work.tpot_ms is None or tpot is None or tpot * 1e3 <= work.tpot_ms
    ttft_ok = work.ttft_ms is None or ttft is None or ttft * 1e3 <= work.ttft_ms
    return tpot_ok and ttft_ok


def _result(
    model: ModelSpec,
    work: ServeWorkload,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    b: float,
    problem_of: Callable[[StepCost], str | None],
    prefill: StepCost | None,
) -> LayoutResult:
    """The layout at ``b`` conversations per replica; TTFT only with ``prefill`` (one prompt's pass)."""
    step = _step(model, work, layout, cluster, options, b)
    problem = problem_of(step) or (problem_of(prefill) if prefill is not None else None)
    memory = serve_memory(model, work, layout, b)
    tpot = step.step_s
    ttft = None if prefill is None or prefill.step_s is None or tpot is None else prefill.step_s + tpot
    tokens = None if problem is not None or not tpot else layout.dp * b / tpot
    return LayoutResult(layout, memory, step, prefill, tokens, problem, layout.dp * b, tpot, ttft)


def with_ttft(
    model: ModelSpec, work: ServeWorkload, result: LayoutResult, cluster: Cluster, options: Options
) -> LayoutResult:
    """``result`` with its prefill pass and TTFT, when the search did not need them (a ranking
    compares layouts by tokens/s; the best one, and every layout a report shows, gets them)."""
    if result.prefill is not None or result.tpot_s is None:
        return result
    prefill = _prefill(served_model(model, work), work, result.layout, cluster, options)
    ttft = None if prefill.step_s is None else prefill.step_s + result.tpot_s
    return replace(result, prefill=prefill, ttft_s=ttft)


def with_decode_split(
    model: ModelSpec, work: ServeWorkload, result: LayoutResult, cluster: Cluster, options: Options
) -> LayoutResult:
    """``result`` with ``decode_s``: its step with the same conversations and no prompt mixed in, so
    a cost can be split between the output tokens (that step) and the prompts (the rest of TPOT)."""
    if result.concurrency is None or result.tpot_s is None:
        return result
    decode = serve_pass(
        served_model(model, work),
        result.layout,
        cluster,
        options,
        sequences=result.concurrency / result.layout.dp,
        new_tokens=1,
        context_tokens=work.prompt_tokens + work.output_tokens / 2,
    ).step_s
    return replace(result, decode_s=None if decode is None else min(decode, result.tpot_s))


def evaluate_serving(
    model: ModelSpec,
    work: ServeWorkload,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    problem_of: Callable[[StepCost], str | None],
) -> LayoutResult:
    """The layout at the user's concurrency, or at the batch the search picks (module docstring);
    a finite run's tokens/s when the workload is one (``planner.runs``). A layout that misses a
    latency target even at one conversation per replica says so."""
    model = served_model(model, work)
    result = _steady(model, work, layout, cluster, options, problem_of)
    return result if work.run_requests is None else _finite_run(model, work, layout, cluster, options, result)


def _finite_run(
    model: ModelSpec,
    work: ServeWorkload,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    result: LayoutResult,
) -> LayoutResult:
    """``result`` with the tokens/s of a run of ``work.run_requests``: their output over the busiest
    replica's full waves at its batch and its last wave at the rest (``planner.runs``)."""
    if result.tokens_per_s is None or not result.tpot_s or not result.concurrency or not work.run_requests:
        return result
    b = result.concurrency / layout.dp
    full, rest = waves(work, layout.dp, b)
    seconds = full * result.tpot_s
    if rest > 0:
        tail = _step(model, work, layout, cluster, options, rest, engine_batch(b)).step_s
        if tail is None:
            return result
        seconds += tail
    return replace(result, tokens_per_s=work.run_requests / seconds)


def _steady(
    model: ModelSpec,
    work: ServeWorkload,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    problem_of: Callable[[StepCost], str | None],
) -> LayoutResult:
    """``evaluate_serving``'s steady state, at most a finite run's requests per replica."""
    # TTFT matters to the search only under a TTFT target; else the best layout gets it afterwards.
    prefill = _prefill(model, work, layout, cluster, options) if work.ttft_ms is not None else None
    requests = None if work.run_requests is None else math.ceil(work.run_requests / layout.dp)

    def at(b: float) -> LayoutResult:
        return _result(model, work, layout, cluster, options, b, problem_of, prefill)

    fixed = _per_replica(work, layout)
    if fixed is not None:
        found = at(fixed if requests is None else min(fixed, requests))
        return (
            found
            if _meets(work, found.tpot_s, found.ttft_s)
            else replace(found, tokens_per_s=None, problem=_missed(work, found))
        )
    most = max_batch(model, work, layout, cluster, options)
    most = most if requests is None else min(most, requests)
    best = at(max(most, 1))
    if best.problem or _meets(work, best.tpot_s, best.ttft_s):
        return best
    low, high = 1, most
    first = at(1)
    if not _meets(work, first.tpot_s, first.ttft_s):
        return replace(first, tokens_per_s=None, problem=_missed(work, first))
    while low < high:  # the largest batch that still meets the targets
        middle = (low + high + 1) // 2
        if _meets(work, *_latencies(at(middle))):
            low = middle
        else:
            high = middle - 1
    return at(low)


def _latencies(result: LayoutResult) -> tuple[float | None, float | None]:
    return result.tpot_s, result.ttft_s


def _missed(work: ServeWorkload, result: LayoutResult) -> str:
    tpot = (result.tpot_s or 0) * 1e3
    ttft = (result.ttft_s or 0) * 1e3
    return (
        f"misses the latency target: TPOT {tpot:.3g} ms, TTFT {ttft:.4g} ms at its smallest batch"
        + (f" (targets: TPOT {work.tpot_ms:g} ms" if work.tpot_ms else " (targets: TPOT none")
        + (f", TTFT {work.ttft_ms:g} ms)" if work.ttft_ms else ", TTFT none)")
    )
