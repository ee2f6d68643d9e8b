"""A finite benchmark run (planner/runs.py): its waves and tail, and CUDA graph padding, off by default."""

from __future__ import annotations

import pytest

from normalize.errors import ParseError
from planner.layouts import Layout
from planner.models import ServeWorkload, preset
from planner.plan import plan
from planner.runs import engine_batch, graph_rows, waves
from tests.helpers import planner_node

#: TensorRT-LLM's performance overview's ``cuda_graph_config.batch_sizes``.
LISTED = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192)


def test_the_engine_batch_is_trtllm_bench_rounding_up():
    # finetune_setting: multiples of 32 (at least 64) below 256, of 128 below 1,024, of 256 above.
    assert [engine_batch(b) for b in (20, 217, 379, 1171, 1486, 5000)] == [64, 224, 384, 1280, 1536, 4096]


def test_a_step_pads_to_the_next_captured_batch_up_to_the_engine_batch():
    work = ServeWorkload(graph_batch_sizes=LISTED)
    # 2,048 is listed but above the engine's 1,536: the engine's own size is captured instead.
    assert graph_rows(work, 1486, 1536) == 1536 and graph_rows(work, 1025, 2048) == 2048
    assert graph_rows(work, 28, 1536) == 32 and graph_rows(work, 384, 1536) == 384
    assert graph_rows(ServeWorkload(), 1486, 1536) == 1486  # nothing listed: no graph, no padding
    with pytest.raises(ParseError, match="graph_batch_sizes"):
        ServeWorkload(graph_batch_sizes=(8, 4))


def test_a_run_is_full_waves_and_a_last_one():
    assert waves(ServeWorkload(run_requests=3000), 1, 1486) == (2, 28)
    assert waves(ServeWorkload(run_requests=3000), 2, 1409) == (1, 91)  # the busiest of 2 gets 1,500


MODEL, NODE, TP1 = preset("llama-3.1-8b"), planner_node("H100-SXM-80GB", 1), Layout(1, 1, 1, 1)


def _best(**fields):
    return plan(MODEL, ServeWorkload(prompt_tokens=1000, output_tokens=1000, precision="fp8", **fields), NODE,
                layout=TP1).best  # fmt: skip


def test_a_run_of_whole_waves_is_the_steady_state_and_a_tail_costs_its_own_steps():
    steady = _best()
    b = round(steady.concurrency)
    whole = _best(run_requests=3 * b)
    assert whole.tokens_per_s == pytest.approx(steady.tokens_per_s)
    # Three waves and one of 10: the last decodes as many steps at a small batch, each reading
    # every weight, so the run gives less than the steady state would for its tokens.
    tail = _best(run_requests=3 * b + 10)
    small = _best(batch_sequences=10)
    assert tail.tokens_per_s == pytest.approx((3 * b + 10) / (3 * steady.tpot_s + small.tpot_s))
    assert tail.tokens_per_s < steady.tokens_per_s and tail.concurrency == steady.concurrency
    # A run of fewer requests than the batch holds them all at once.
    few = _best(run_requests=100)
    assert few.concurrency == 100 and few.tokens_per_s == pytest.approx(
        _best(batch_sequences=100).tokens_per_s
    )


def test_padded_rows_cost_gemm_work_and_no_attention():
    plain, padded = _best(batch_sequences=300), _best(batch_sequences=300, graph_batch_sizes=LISTED)
    # 300 conversations replay the graph of 384 (the engine's max batch, rounded up from 300, is 384).
    kernels = {k.kernel: k for k in plain.step.kernels}
    more = {k.kernel: k for k in padded.step.kernels}
    assert more["dense_gemm"].flops == pytest.approx(kernels["dense_gemm"].flops * 384 / 300)
    assert more["attention"] == kernels["attention"]
    # Steps that carry prompts run no graph.
    assert more["dense_gemm (steps with prompts)"] == kernels["dense_gemm (steps with prompts)"]
    assert padded.tpot_s > plain.tpot_s and padded.concurrency == plain.concurrency
