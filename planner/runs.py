"""A finite benchmark run, where serving's steady state (``planner.serving``) is what a service sees:
what an offline benchmark that queues a fixed number of equal requests at once measures. Both parts
are off unless the workload asks for them (``ServeWorkload.run_requests``, ``graph_batch_sizes``).

- Waves. trtllm-bench's throughput runs queue every request "in rapid succession", each of the same
  prompt and output length, and report the output tokens over the run's total latency
  (TensorRT-LLM's performance overview, ``PERF_OVERVIEW``). A replica's B slots fill, the B
  conversations finish together ``output_tokens`` steps later and the next B take their slots: a
  replica's n = ceil(N / DP) requests run as floor(n / B) full waves and a last one of n mod B
  conversations, which decodes its ``output_tokens`` steps at that smaller batch, each step still
  reading every weight. The run gives N x output tokens in output x (waves x TPOT(B) + TPOT(n mod B)),
  the slowest replica's time; a run of fewer requests than B holds them all at once.
- CUDA graph padding. With ``cuda_graph_config: enable_padding`` (the overview's options), a step
  that decodes alone replays the graph captured for the smallest listed batch at or above its own,
  the missing rows filled with one dummy request (TensorRT-LLM's ``CUDAGraphRunner._get_padded_batch``,
  ``PADDING_SOURCE``): the GEMMs, the elementwise work and the collectives run for the padded rows,
  while attention reads the dummy's one-token context only. A step that carries prompts runs no
  graph. The sizes listed above the engine's max batch size are dropped and that size is captured in
  their place (``_filter_cuda_graph_batch_sizes``, ``FILTER_SOURCE``), and trtllm-bench sets the
  max batch size by rounding the requests its KV cache holds up (``engine_batch``).

Left out (none of the published runs these model is touched by them; said so they are not taken for
modelled): trtllm-bench divides its max batch by the pipeline stages and pads each micro-batch,
where this pads a replica's whole batch (the two PP2 cases come out the same either way); the
engine's max batch is taken from the batch run, which is the KV cache's capacity only when the
batch is memory-bound, as in every published case, not under a TPOT target or a fixed batch; and
the padded rows, copies of one dummy request, all route to the same experts in TensorRT-LLM, where
here they spread over the experts as real tokens do (it matters only with expert parallelism).
"""

from __future__ import annotations

import bisect
import math

from planner.models import ServeWorkload

PERF_OVERVIEW = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/docs/source/"
    "performance/perf-overview.md"
)
PADDING_SOURCE = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/7b437aaa73bf5a44b1102aee5c631074da763b8f/"
    "tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py"
)
FILTER_SOURCE = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/001e67005b4f64b69b0045456870be48ab7b2cf0/"
    "tensorrt_llm/_torch/pyexecutor/model_engine.py"
)
ENGINE_BATCH_SOURCE = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/04cba882084a25665e7f80f5bda71b35b9790b6f/"
    "tensorrt_llm/bench/build/tuning.py"
)


def engine_batch(batch: float) -> int:
    """The engine's max batch size for a replica that holds ``batch`` conversations: trtllm-bench's
    ``finetune_setting`` rounds the requests the KV cache holds up to a multiple of 32 (at least 64)
    below 256, of 128 below 1,024 and of 256 above, at most 4,096. (trtllm-bench counts those
    requests from the weights alone and so a few more than run; the planner's own count stands in.)"""
    raw = min(batch, 4096.0)
    step = 32 if raw < 256 else 128 if raw < 1024 else 256
    return max(64 if step == 32 else 0, step * math.ceil(raw / step))


def graph_rows(work: ServeWorkload, batch: float, engine: float) -> float:
    """The rows a step that decodes ``batch`` conversations alone computes: the smallest captured
    size at or above it (the listed sizes up to ``engine``, the engine's max batch, and ``engine``
    itself), or ``batch`` when no graph is captured for it."""
    sizes = work.graph_batch_sizes
    if not sizes:
        return batch
    captured = [s for s in sizes if s <= engine]
    if len(captured) < len(sizes):
        captured.append(math.floor(engine))
    at = bisect.bisect_left(captured, batch)
    return float(captured[at]) if at < len(captured) else batch


def waves(work: ServeWorkload, dp: int, batch: float) -> tuple[int, float]:
    """(full waves, conversations in the last one) of a replica holding ``batch`` at a time, in a
    run of ``work.run_requests`` over ``dp`` replicas (the busiest gets ceil(N / DP))."""
    assert work.run_requests is not None
    requests = math.ceil(work.run_requests / dp)
    full = int(requests // batch)
    return full, requests - full * batch
