"""A serving pass kernel by kernel (planner/serve_pass.py) and the mechanisms behind it: kernels that
add, GEMM shares by reduction length, Blackwell FP4's per-call cost, FP8 KV caches for quantized
weights, expert imbalance and padding, and NCCL's protocol by message size (planner/comms.py)."""

from __future__ import annotations

import dataclasses
import math
import statistics

import pytest

from normalize.errors import ParseError
from planner.comms import collective_cost
from planner.efficiency import (
    GEMM_TILE_K0,
    GROUPED_GEMM_ROW_M0,
    compute_efficiency,
    gemm_k_share,
    grouped_rows_share,
    hbm_efficiency,
)
from planner.hardware import Cluster
from planner.layouts import Group, Layout
from planner.memory import serve_memory
from planner.models import ServeWorkload, preset
from planner.plan import plan
from planner.serve_pass import (
    EXPERT_LOAD_CV,
    EXPERT_ROW_BLOCK,
    _shape_share,
    busiest_rank_share,
    expert_rows,
    gemm_calls,
    gemm_shapes,
    padded_rows_share,
    serve_pass,
)
from planner.serving import served_model
from planner.step import Options, peak_flops
from tests.helpers import planner_node


def _step(model, node, layout, sequences, prompt=1000, output=1000):
    return serve_pass(
        model,
        layout,
        Cluster(node),
        Options(),
        sequences=sequences,
        new_tokens=1,
        context_tokens=prompt + output / 2,
        prefill_tokens=sequences * prompt / output,
        prefill_context_tokens=prompt / 2,
    )


def test_kernels_run_in_turn_so_attention_pays_for_its_reads_at_a_large_batch():
    model = served_model(preset("llama-3.1-70b"), ServeWorkload(precision="fp8"))
    step = _step(model, planner_node("H100-SXM-80GB", 2), Layout(2, 1, 1, 1), 200)
    gemm = next(k for k in step.kernels if k.kernel == "dense_gemm")
    attention = next(k for k in step.kernels if k.kernel == "attention")
    assert gemm.compute_s > gemm.memory_s  # the GEMMs are compute-bound at this batch ...
    assert attention.memory_s > attention.compute_s  # ... and the decode attention reads its KV
    kernels = sum(k.seconds for k in step.kernels)
    assert step.step_s == pytest.approx(kernels + step.comm_s)
    # One max over the whole pass would have hidden the GEMMs' compute behind all the reads.
    assert kernels > max(step.compute_s, step.memory_s) * 1.05


def test_quantized_weights_keep_their_kv_cache_in_fp8_unless_asked():
    model = preset("llama-3.1-70b")
    assert ServeWorkload(precision="fp8").kv_dtype(model) == "fp8"
    assert ServeWorkload(precision="fp4").kv_dtype(model) == "fp8"
    assert ServeWorkload(precision="bf16").kv_dtype(model) == model.kv_cache_dtype == "bf16"
    assert ServeWorkload(precision="fp8", kv_cache_dtype="bf16").kv_dtype(model) == "bf16"
    work = ServeWorkload(precision="fp8")
    fp8, bf16 = served_model(model, work), served_model(model, ServeWorkload(precision="bf16"))
    assert (fp8.weight_dtype, fp8.kv_cache_dtype) == ("fp8", "fp8")
    layout = Layout(2, 1, 1, 1)
    assert serve_memory(fp8, work, layout, 10).kv_cache_bytes * 2 == pytest.approx(
        serve_memory(bf16, work, layout, 10).kv_cache_bytes
    )
    with pytest.raises(ParseError, match="kv_cache_dtype must be bf16 or fp8"):
        ServeWorkload(kv_cache_dtype="int4")


def test_a_gemm_share_grows_with_its_reduction_length_as_deepgemm_measured():
    row = compute_efficiency("H100-SXM-80GB", "dense_gemm", "fp8")  # measured at K = 7,168
    assert row.k_elements == 7168 and gemm_k_share(7168, row) == pytest.approx(row.fraction)
    # DeepGEMM's README (M = 4,096): K = 512 at 590 TFLOPS and K = 16,384 at 1,358: the fit keeps
    # their ratio within 5%.
    assert gemm_k_share(512, row) / gemm_k_share(16384, row) == pytest.approx(590 / 1358, rel=0.05)
    assert GEMM_TILE_K0 == 718 and gemm_k_share(1e9, row) <= 1
    # Tensor parallelism shortens the output and down projections' K: TP8 reaches less than TP1.
    model = preset("llama-3.1-70b")
    tp1 = _shape_share(row, gemm_shapes(model, 1)["dense_gemm"])
    tp8 = _shape_share(row, gemm_shapes(model, 8)["dense_gemm"])
    assert tp8 < gemm_k_share(model.hidden_size, row) < tp1  # TP1's down projection has K = 28,672


def test_a_grouped_gemm_share_moves_with_k_as_its_own_rows_measured():
    # DeepGEMM PR #73 (H800, 4 groups of 8,192 rows): K = 2,048 at 1,262 TFLOPS, K = 7,168 at 1,381.
    grouped = compute_efficiency("H100-SXM-80GB", "moe_gemm", "fp8")
    assert grouped.k_elements == 2048 and grouped.k0_elements == 281
    assert gemm_k_share(7168, grouped) == pytest.approx(1381 / 1979, rel=0.005)
    # The dense K0 would have put the second row at 1,550 TFLOPS, above anything measured.
    dense_k0 = dataclasses.replace(grouped, k0_elements=GEMM_TILE_K0)
    assert gemm_k_share(7168, dense_k0) * 1979 > 1540
    # A grouped share inferred from a dense row keeps the dense row's K0 (B200's FP4 experts).
    inferred = compute_efficiency("B200-SXM-180GB", "moe_gemm", "fp4")
    assert inferred.basis == "inferred" and inferred.k0_elements == GEMM_TILE_K0


#: DeepGEMM's README at its February 2025 release (H800): masked-layout grouped GEMMs, (rows a group,
#: K, TFLOPS) at N = 4,096 for K = 7,168 and N = 7,168 for K = 2,048, 1,024 rows in all; and its
#: contiguous rows of 4 groups of 8,192 at the same shapes.
MASKED = [(1024, 7168, 1233), (512, 7168, 1040), (256, 7168, 932), (1024, 2048, 925), (512, 2048, 916),
          (256, 2048, 815)]  # fmt: skip
CONTIGUOUS = {7168: 1297, 2048: 1099}


def test_a_grouped_gemm_share_falls_with_its_rows_per_group_as_deepgemm_measured():
    # No masked row is bound by its HBM reads: its FP8 weights, FP8 input and BF16 output stream at
    # gemm_weights' share of 3,350 GB/s in less than its measured time.
    hbm = 3350e9 * hbm_efficiency("H100-SXM-80GB", "gemm_weights").fraction
    for rows, k, tflops in MASKED:
        n, groups = 4096 if k == 7168 else 7168, 1024 // rows
        assert (groups * n * k + 1024 * k + 1024 * n * 2) / hbm < 2 * 1024 * n * k / (tflops * 1e12)
    # So each time over the contiguous rows' (FLOP for FLOP) is the share's fall with M / (M + M0):
    # need = ((M + M0) / M) x (8,192 / (8,192 + M0)), solved for M0; the planner takes the median.
    fits = []
    for rows, k, tflops in MASKED:
        need = CONTIGUOUS[k] / tflops
        fits.append(8192 * rows * (1 - need) / (need * rows - 8192))
    assert [round(m0) for m0 in fits] == [61, 137, 105, 226, 111, 93]
    assert round(statistics.median(fits)) == GROUPED_GEMM_ROW_M0 == 108
    # The grouped row (DeepGEMM PR #73) was run at 8,192 rows a group: its own rows keep its share.
    grouped = compute_efficiency("H100-SXM-80GB", "moe_gemm", "fp8")
    assert grouped.m_rows == 8192 and grouped_rows_share(8192, grouped) == 1
    for rows, k, tflops in MASKED:
        assert grouped_rows_share(rows, grouped) == pytest.approx(tflops / CONTIGUOUS[k], rel=0.12)
    # B200's FP4 experts take the dense FP4 row's share and its M (4,096); a row without M, none.
    inferred = compute_efficiency("B200-SXM-180GB", "moe_gemm", "fp4")
    assert inferred.m_rows == 4096 and grouped_rows_share(128, inferred) < 0.6
    assert grouped_rows_share(128, dataclasses.replace(grouped, m_rows=None)) == 1


def test_a_serving_passs_experts_run_at_the_share_of_their_rows_per_expert():
    model, h100 = preset("mixtral-8x7b"), planner_node("H100-SXM-80GB", 8)
    model = served_model(model, ServeWorkload(precision="fp8"))
    layout, sequences = Layout(1, 1, 8, 1), 64  # EP8: one expert a rank
    moe = next(k for k in _step(model, h100, layout, sequences).kernels if k.kernel == "moe_gemm")
    # 64 decode and 64 prompt tokens (1,000 / 1,000); the busiest rank's expert computes its load,
    # padded to 128-row blocks: fewer than 8,192 rows, so its share falls by M / (M + 108).
    tokens = 2 * sequences
    rows = expert_rows(model, tokens * busiest_rank_share(model, tokens, 8))[1]
    grouped = compute_efficiency(h100.gpu_model, "moe_gemm", "fp8")
    share = _shape_share(grouped, gemm_shapes(model, 1)["moe_gemm"]) * grouped_rows_share(rows, grouped)
    assert rows < 1024 and grouped_rows_share(rows, grouped) < 0.75
    assert moe.compute_s == pytest.approx(moe.flops / (peak_flops(Cluster(h100), "fp8") * share))
    # A user's --efficiency replaces every compute factor, this one too.
    forced = serve_pass(
        model,
        layout,
        Cluster(h100),
        Options(compute_efficiency=0.5),
        sequences=sequences,
        new_tokens=1,
        context_tokens=1500,
        prefill_tokens=sequences,
        prefill_context_tokens=500,
    )
    forced_moe = next(k for k in forced.kernels if k.kernel == "moe_gemm")
    assert forced_moe.compute_s == pytest.approx(forced_moe.flops / (peak_flops(Cluster(h100), "fp8") * 0.5))


def test_blackwell_fp4_gemms_pay_a_fixed_time_per_call_and_attention_stays_fp8():
    model = served_model(preset("llama-3.1-70b"), ServeWorkload(precision="fp4"))
    b200, h100 = planner_node("B200-SXM-180GB", 1), planner_node("H100-SXM-80GB", 1)
    calls = gemm_calls(model)["dense_gemm"]
    assert calls == 2 * 80 + 2 * 80 + 1  # QKV and output, gate-up and down per layer, the LM head
    gemm = next(k for k in _step(model, b200, Layout(1, 1, 1, 1), 100).kernels if k.kernel == "dense_gemm")
    assert gemm.fixed_s == pytest.approx(calls * 7.0e-6)  # DeepGEMM#348's median excess per call
    fp8 = served_model(preset("llama-3.1-70b"), ServeWorkload(precision="fp8"))
    hopper = next(k for k in _step(fp8, h100, Layout(1, 1, 1, 1), 10).kernels if k.kernel == "dense_gemm")
    assert hopper.fixed_s == 0
    # Attention's products run at the FP8 peak (its KV cache is FP8), not FP4's.
    attention = next(
        k for k in _step(model, b200, Layout(1, 1, 1, 1), 100).kernels if k.kernel == "attention"
    )
    fp8_rate = (
        peak_flops(Cluster(b200), "fp8") * compute_efficiency(b200.gpu_model, "attention", "fp8").fraction
    )
    assert attention.compute_s == pytest.approx(attention.flops / fp8_rate)


def test_experts_are_busiest_on_one_rank_and_padded_to_the_gemm_block():
    mixtral, deepseek = preset("mixtral-8x7b"), preset("deepseek-v3")
    # 1,000 tokens x 2 picks over 8 ranks: 250 each on average; chance spreads them by sqrt(250) and
    # the router's skew (TensorRT-LLM's DeepSeek R1 study: a CV of 0.480 per rank of 8 experts) by
    # 0.480 x sqrt(8) per expert, one expert per rank here: the busiest about 3.8 x the mean.
    cv = EXPERT_LOAD_CV
    assert cv == pytest.approx(1.358, rel=1e-3)
    assert busiest_rank_share(mixtral, 1000, 8) == pytest.approx(
        1 + math.sqrt(2 * math.log(8)) * math.sqrt(1 / 250 + cv**2)
    )
    # The study's own case, EP32 of 256 experts at 1,024 tokens a rank, gives its rank CV back.
    tokens = 1024 * 32 / 8
    assert busiest_rank_share(deepseek, tokens, 32) == pytest.approx(
        1 + math.sqrt(2 * math.log(32)) * math.sqrt(1 / 1024 + 0.480**2)
    )
    # Without the skew (uniform routing) the busiest rank would be within 10% of the mean.
    assert 1 + math.sqrt(2 * math.log(32) / 1024) < 1.1 < busiest_rank_share(deepseek, tokens, 32) - 1
    assert busiest_rank_share(mixtral, 1000, 1) == 1 == busiest_rank_share(preset("llama-3.1-8b"), 1000, 8)
    # Few tokens per expert: each touched expert still computes a whole 128-row block.
    few = padded_rows_share(deepseek, 32)  # 32 tokens x 8 of 256 experts: about one token each
    assert EXPERT_ROW_BLOCK == 128 and few > 50
    assert padded_rows_share(mixtral, 100_000) == pytest.approx(1 + 64 / 25_000, rel=1e-3)


@pytest.mark.parametrize(
    ("size", "nvls", "algorithm"),
    [(4, False, "ll"), (1 << 20, False, "ll128"), (64 << 20, False, "ring"), (64 << 20, True, "nvls")],
)
def test_nccl_changes_protocol_with_the_message_size(size, nvls, algorithm):
    cluster = Cluster(planner_node("H100-SXM-80GB", 8))
    cost, _ = collective_cost("all-reduce", Group(8, 1), size, cluster, nvls=nvls)
    assert cost.algorithm == algorithm
    # An A100 board has no NVLink SHARP, whatever is asked.
    a100, _ = collective_cost("all-reduce", Group(8, 1), 64 << 20, Cluster(planner_node("A100-SXM-80GB", 8)))
    assert a100.algorithm == "ring"


def test_input_and_output_tokens_cost_at_their_own_rates():
    from planner.verdict import usd_per_million_split, usd_per_million_tokens, verdict

    node = planner_node("H100-SXM-80GB", 8, usd_per_hour=98.32)
    work = ServeWorkload(prompt_tokens=4000, output_tokens=400)
    found = plan(preset("llama-3.1-70b"), work, node)
    best = found.best
    assert 0 < best.decode_s < best.tpot_s  # the same step without the prompts mixed in is shorter
    usd_in, usd_out = usd_per_million_split(found)
    per_s = 98.32 / 3600
    assert usd_out == pytest.approx(per_s * best.decode_s / best.concurrency * 1e6)
    assert usd_in == pytest.approx(per_s * (best.tpot_s - best.decode_s) / (best.concurrency * 10) * 1e6)
    assert usd_in * 10 + usd_out == pytest.approx(usd_per_million_tokens(found))
    assert "each at its own rate" in verdict(found)
    # Unpriced: no split, and no sentence about it.
    assert usd_per_million_split(plan(preset("llama-3.1-70b"), work, planner_node("H100-SXM-80GB", 8))) == (
        None,
        None,
    )


@pytest.mark.parametrize(
    ("gpu", "precision", "weights", "matmuls"),
    [
        ("B200-SXM-180GB", "fp4", "fp4", "fp4"),  # Blackwell has an FP4 peak
        ("H100-SXM-80GB", "fp4", "fp4", "fp8"),  # Hopper reads FP4 weights, multiplies in FP8
        ("H100-SXM-80GB", "fp8", "fp8", "fp8"),
        ("A100-SXM-80GB", "fp8", "fp8", "bf16"),  # no FP8 tensor cores: weights stay small, math is BF16
        ("H100-SXM-80GB", "bf16", "bf16", "bf16"),
    ],
)
def test_serving_precision_sets_the_weights_and_the_matmuls(gpu, precision, weights, matmuls):
    from planner.step import matmul_dtype

    model = preset("deepseek-v3")  # published in FP8: a bf16 request doubles its weights
    served = served_model(model, ServeWorkload(precision=precision))
    assert served.weight_dtype == weights
    assert matmul_dtype(served, Cluster(planner_node(gpu, 8))) == matmuls
    layout = Layout(8, 1, 1, 1)
    ratio = (
        serve_memory(served, ServeWorkload(), layout, 1).weights_bytes
        / serve_memory(model, ServeWorkload(), layout, 1).weights_bytes
    )
    assert ratio == {"fp4": 0.5, "fp8": 1.0, "bf16": 2.0}[precision]


@pytest.mark.parametrize("name", ["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "deepseek-v3"])
@pytest.mark.parametrize("prompt", [128, 2048, 20_000])
def test_the_largest_batch_is_solved_exactly_as_a_search_would_find_it(name, prompt):
    from planner.models import MAX_BATCH_PER_REPLICA
    from planner.serving import _limit, max_batch

    model, work = preset(name), ServeWorkload(prompt_tokens=prompt, output_tokens=512)
    for gpu, layout in (("H100-SXM-80GB", Layout(8, 1, 1, 1)), ("B200-SXM-180GB", Layout(2, 2, 1, 2))):
        cluster, options = Cluster(planner_node(gpu, 8)), Options()
        limit = _limit(cluster, options)
        low, high = 0, MAX_BATCH_PER_REPLICA  # the reference: a binary search on serve_memory
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (
                (middle, high)
                if serve_memory(model, work, layout, middle).total_bytes <= limit
                else (low, middle - 1)
            )
        assert max_batch(model, work, layout, cluster, options) == low


def test_decode_attention_over_an_fp8_kv_cache_reads_at_its_measured_share_on_blackwell():
    # vLLM PR #23647: TensorRT-LLM's decode kernel on B200 reads an FP8 cache at 4,855 of 8,000 GB/s.
    measured = hbm_efficiency("B200-SXM-180GB", "kv_cache_fp8")
    assert (measured.basis, measured.fraction) == ("measured", 0.607)
    # Hopper has no such row: it takes its stream share (FlashMLA's), saying so.
    hopper = hbm_efficiency("H100-SXM-80GB", "kv_cache_fp8")
    assert hopper.basis == "inferred" and hopper.fraction == hbm_efficiency("H100-SXM-80GB").fraction
    b200 = planner_node("B200-SXM-180GB", 1)
    fp4 = served_model(preset("llama-3.1-70b"), ServeWorkload(precision="fp4"))
    assert fp4.kv_cache_dtype == "fp8"
    attention = next(k for k in _step(fp4, b200, Layout(1, 1, 1, 1), 300).kernels if k.kernel == "attention")
    assert attention.memory_s == pytest.approx(attention.hbm_bytes / (8000e9 * 0.607))
    # A 16-bit cache on the same GPU streams at the stream share (Hopper's, borrowed): faster per byte.
    bf16 = served_model(preset("llama-3.1-70b"), ServeWorkload(precision="fp4", kv_cache_dtype="bf16"))
    wide = next(k for k in _step(bf16, b200, Layout(1, 1, 1, 1), 300).kernels if k.kernel == "attention")
    assert wide.hbm_bytes == 2 * attention.hbm_bytes
    assert wide.memory_s == pytest.approx(
        wide.hbm_bytes / (8000e9 * hbm_efficiency("B200-SXM-180GB").fraction)
    )
