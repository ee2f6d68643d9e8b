"""Training's mechanisms worked out by hand (planner/training.py): activations per architecture, the
fewest recomputed layers, context parallelism's ring, FSDP's shards and traffic, the experts'
all-to-all across nodes, what runs behind compute, and the token budget and cluster every plan is
ranked at. Each figure in a comment is the arithmetic the assertion checks."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from catalog.cli_plan import parse_layout
from normalize.errors import ParseError
from planner.hardware import Cluster
from planner.layouts import Layout, candidate_layouts, context_splits, layout_problem
from planner.models import TrainWorkload, preset
from planner.plan import days_to_train, plan, usable_bytes
from planner.step import Options, peak_flops
from planner.training import (
    default_token_budget,
    fit_recompute,
    kernel_seconds,
    layer_activation_bytes,
    mean_layer_activation_bytes,
    remote_nodes_per_token,
    train_memory,
    train_step,
    training_efficiency,
)
from tests.helpers import planner_node

H100 = planner_node("H100-SXM-80GB", 8, memory_gb=80)


def test_activations_per_layer_follow_the_architecture():
    # Llama 3.1 70B (h 8,192; Q 64 x 128 = 8,192; K, V 8 x 128 = 1,024; SwiGLU 28,672), per token:
    # attention keeps the norm's input, Q, K, V and O in 16 bits (8,192 + 2 x 8,192 + 2 x 1,024 =
    # 26,624) and the projections' input (8,192); the MLP the norm's input, gate and up (8,192 +
    # 2 x 28,672 = 65,536) and fc1's and down's inputs (8,192 + 28,672 = 36,864). 137,216 elements
    # x 2 bytes = 274,432 = 33.5 x h: GPT-3's 34 without dropout masks, GQA and SwiGLU counted.
    llama = preset("llama-3.1-70b")
    assert layer_activation_bytes(llama) == 274_432 == 33.5 * 8192
    # FP8 training keeps the linear layers' inputs (45,056 elements) in one byte: 229,376 = 28 x h.
    assert layer_activation_bytes(llama, linear_dtype="fp8") == 92_160 * 2 + 45_056 == 28 * 8192
    # DeepSeek-V3's MoE layer (h 7,168): MLA keeps Q and K of 128 x 192, V and O of 128 x 128 and its
    # 576-wide latent (7,168 + 2 x 24,576 + 2 x 16,384 + 576 = 89,664; inputs 7,168 + 576 = 7,744);
    # the experts keep, for each of 8 routed copies, gate and up (2 x 2,048) and the copy's output,
    # with the shared expert's gate and up (7,168 + 8 x 11,264 + 4,096 = 101,376), and as linear
    # inputs each copy's input and down's input (7,168 + 8 x 9,216 + 2,048 = 82,944): 281,728 x 2 =
    # 563,456 bytes, 78.6 x h, 2.3 times GPT-3's coefficient.
    deepseek = preset("deepseek-v3")
    assert layer_activation_bytes(deepseek, moe=True) == 563_456
    assert layer_activation_bytes(deepseek, moe=True) / 7168 == pytest.approx(78.6, abs=0.01)
    # Its 3 dense layers and 58 MoE layers, averaged.
    dense = layer_activation_bytes(deepseek)
    assert mean_layer_activation_bytes(deepseek) == pytest.approx((3 * dense + 58 * 563_456) / 61)


def test_the_fewest_whole_layers_are_recomputed():
    model, work = preset("llama-3.1-70b"), TrainWorkload(global_batch_tokens=128 * 8192)
    layout = Layout(4, 8, 1, 2, virtual=5)  # Megatron-Bridge's 70B H100 layout, bf16
    limit = usable_bytes(H100, Options())
    # Selective: 10 layers x 8 micro-batches x (1 + 7 / 40) of 33.5 x 8,192 x 2,048 bytes: too much.
    selective = replace(layout, recompute="selective")
    assert train_memory(model, work, selective).total_bytes > limit
    fit = fit_recompute(model, work, layout, limit)
    assert fit is not None and fit.recompute == "full" and 0 < fit.recomputed < 1
    # Whole layers of the stage's 10: one fewer would not fit, and the share is what it recomputes.
    assert fit.recomputed * 10 == pytest.approx(round(fit.recomputed * 10))
    assert train_memory(model, work, fit).total_bytes <= limit
    fewer = replace(fit, recomputed=fit.recomputed - 0.1)
    assert train_memory(model, work, fewer).total_bytes > limit
    # The compute pays for the recomputed share only: 3 + share forward passes.
    full = kernel_seconds(model, work, replace(layout, recompute="full"), Cluster(H100, 8), Options())
    part = kernel_seconds(model, work, fit, Cluster(H100, 8), Options())
    assert sum(part.values()) / sum(full.values()) == pytest.approx((3 + fit.recomputed) / 4)


def test_context_parallel_ring_and_what_it_hides():
    model = preset("llama-3.1-405b")
    work = TrainWorkload(global_batch_tokens=8 * 131_072, sequence_tokens=131_072)
    layout = Layout(8, 16, 1, 1, virtual=4, cp=16, recompute="selective")
    cluster = Cluster(planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=3200), 256)
    step = train_step(model, work, layout, cluster, Options())
    [ring] = [t for t in step.transfers if t.collective == "CP K/V ring"]
    # Each rank holds 131,072 / 16 = 8,192 tokens; TP8 splits the 8 KV heads, one each: K and V are
    # 2 x 128 elements a token, 2 bytes each: 4,194,304 bytes a chunk, sent 15 times a layer forward
    # and 30 times backward, over 126 / 16 layers, for 8 micro-batches.
    assert ring.message_bytes == 8192 * 2 * 128 * 2 == 4_194_304
    assert ring.count == pytest.approx(126 / 16 * 15 * 3 * 8)
    # The ring runs behind the attention it feeds (at 131,072 tokens, far longer): hidden whole.
    attention = kernel_seconds(model, work, layout, cluster, Options())["attention"]
    assert ring.seconds < attention and step.hidden_s >= ring.seconds
    # CP needs the sequence cut into 2 x CP equal chunks, each rank at least 4,096 tokens.
    assert context_splits(8192, 64) == [1, 2] and context_splits(131_072, 16) == [1, 2, 4, 8, 16]
    bad = layout_problem(model, Layout(8, 1, 1, 2, cp=3), Cluster(H100, 6), sequence_tokens=8192)
    assert bad == "--layout CP3 does not split the 8,192-token sequence into 6 equal chunks"


def test_fsdp_shards_everything_and_gathers_per_micro_batch():
    model = preset("llama-3.1-70b")
    work = TrainWorkload(global_batch_tokens=64 * 8192)
    cluster = Cluster(planner_node("A100-SXM-80GB", 8, fabric_gbits_per_s=1600), 8)
    layout = Layout(1, 1, 1, 64, fsdp=True, recompute="full")
    memory = train_memory(model, work, layout)
    params = model.params_total
    # Weights, gradients and Adam state split 64 ways, plus two layers held whole while the next is
    # gathered: (P / 64 + 2 x P / 80) x 2 bytes; the optimizer P / 64 x 12.
    assert memory.weights_bytes == pytest.approx((params / 64 + 2 * params / 80) * 2)
    assert memory.optimizer_bytes == pytest.approx(params / 64 * 12)
    step = train_step(model, work, layout, cluster, Options())
    gather, scatter = (t for t in step.transfers if t.collective.startswith("FSDP"))
    # One micro-batch per rank (64 sequences over 64 ranks): the stage's bf16 weights gathered
    # twice (forward, backward) and the gradients reduce-scattered once, (n - 1) / n of 2 P each.
    assert (gather.count, scatter.count) == (2, 1)
    assert gather.bytes_per_gpu == pytest.approx(2 * 63 / 64 * params * 2)
    # All of it runs behind compute (prefetching): the step waits for none of it.
    assert step.comm_s < step.compute_s and step.exposed_comm_s == 0
    one = layout_problem(model, Layout(8, 1, 1, 1, fsdp=True), Cluster(H100, 1), sequence_tokens=8192)
    assert one == "--layout FSDP1 has no data-parallel ranks to shard over (training only)"


def test_experts_cross_the_fabric_once_per_other_node():
    model = preset("deepseek-v3")
    # 64 expert-parallel ranks over 8 nodes: a token's 8 experts sit on 7 x (1 - (7/8)^8) = 4.595
    # other nodes on average; it crosses the fabric once to each and fans out over NVLink there.
    assert remote_nodes_per_token(model, 8) == pytest.approx(7 * (1 - (7 / 8) ** 8))
    assert remote_nodes_per_token(model, 1) == 0
    work = TrainWorkload(global_batch_tokens=15360 * 4096, sequence_tokens=4096, precision="fp8")
    layout = Layout(1, 16, 64, 2, virtual=3, recompute="selective")
    cluster = Cluster(planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=3200), 256)
    step = train_step(model, work, layout, cluster, Options())
    dispatch = next(t for t in step.transfers if t.collective == "EP all-to-all (dispatch)")
    combine = next(t for t in step.transfers if t.collective.startswith("EP all-to-all (combine"))
    # Without forwarding 8 x 56 / 64 = 7 copies would cross; with it 4.595: the message is scaled to
    # 8 x 4.595 / 7 copies of a 7,168-wide token, 4,096 tokens a micro-batch, in FP8 (one byte).
    copies = 8 * remote_nodes_per_token(model, 8) / 7
    assert dispatch.message_bytes == pytest.approx(4096 * copies * 7168)
    assert combine.message_bytes == pytest.approx(2 * dispatch.message_bytes)  # bf16
    # Forward and backward: 2 a MoE layer each; the dispatch once, its three peers in bf16.
    micro = 15360 / (2 * 64)
    assert dispatch.count + combine.count == pytest.approx(4 * 58 / 16 * micro)
    # Behind the routed experts' compute (DualPipe), at most that compute.
    experts = kernel_seconds(model, work, layout, cluster, Options())["moe_gemm"]
    a2a = dispatch.seconds + combine.seconds
    in_line = train_step(model, replace(work, overlap_all_to_all=False), layout, cluster, Options())
    assert in_line.hidden_s == pytest.approx(step.hidden_s - min(a2a, experts))


def test_gradient_all_reduce_hides_behind_the_last_backward_only():
    model, work = preset("llama-3.1-8b"), TrainWorkload(global_batch_tokens=64 * 8192)
    layout = Layout(1, 1, 1, 16, recompute="selective")
    # Two nodes over a slow fabric: the all-reduce of 16 GB of bf16 gradients outlasts one backward.
    cluster = Cluster(planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=100), 2)
    step = train_step(model, work, layout, cluster, Options())
    [reduce] = [t for t in step.transfers if t.collective == "DP gradient all-reduce"]
    per_micro = step.compute_s / (64 / 16)  # four micro-batches per rank, no pipeline bubble
    assert step.hidden_s == pytest.approx(min(reduce.seconds, per_micro * 2 / 3))
    assert step.step_s == pytest.approx(max(step.compute_s, step.memory_s) + reduce.seconds - step.hidden_s)


def test_fp8_training_keeps_attention_in_bf16():
    model, work = preset("llama-3.1-8b"), TrainWorkload(precision="fp8")
    layout = Layout(1, 1, 1, 8, recompute="selective")
    cluster = Cluster(H100, 1)
    seconds = kernel_seconds(model, work, layout, cluster, Options(compute_efficiency=0.5))
    tokens = work.global_batch_tokens * 3 / 8
    # Causal attention over 8,192 tokens: 4 x 32 x 4,096 x 4,096 FLOPs a token forward, at the BF16
    # peak (989.5 TFLOPS) x 0.5; the matmuls at the FP8 peak (1,979).
    attention = tokens * 4 * 32 * 4096 * 4096 / (peak_flops(cluster, "bf16") * 0.5)
    assert seconds["attention"] == pytest.approx(attention)
    assert peak_flops(cluster, "bf16") == 989.5e12 and peak_flops(cluster, "fp8") == 1979e12
    # Every training share names the run it was read from; Blackwell's bf16 borrows its fp8 row.
    assert "1,602 tokens/s" in training_efficiency("H100-SXM-80GB", "dense_gemm", "fp8").detail
    borrowed = training_efficiency("B200-SXM-180GB", "dense_gemm", "bf16")
    assert borrowed.basis == "inferred" and "661 tokens/s" in borrowed.detail


def test_every_instance_trains_one_budget_on_one_cluster_size():
    model = preset("llama-3.1-70b")
    # No budget stated: 20 tokens per parameter (Chinchilla), 70,553,706,496 x 20 = 1.41e12.
    assert default_token_budget(model) == 20 * model.params_total
    found = plan(model, TrainWorkload(), H100)
    assert found.cluster.nodes == 128  # 1,024 GPUs of 8 per node
    days = days_to_train(found)
    assert days == pytest.approx(20 * model.params_total / found.best.tokens_per_s / 86_400)
    four = plan(model, TrainWorkload(cluster_gpus=1024), planner_node("GB200-186GB", 4))
    assert four.cluster.nodes == 256
    odd = plan(model, TrainWorkload(cluster_gpus=1000), planner_node("H100-SXM-80GB", 3, memory_gb=80))
    assert odd.cluster.nodes == math.ceil(1000 / 3)


def test_layouts_read_and_print_cp_and_fsdp():
    layout = parse_layout("TP8xCP2xPP8xEP1xDP8")
    assert (layout.cp, layout.fsdp, layout.gpus) == (2, False, 1024)
    assert layout.label == "TP8 x CP2 x PP8 x EP1 x DP8"
    sharded = parse_layout("tp1 x pp1 x ep1 x fsdp64")
    assert sharded.fsdp and sharded.label == "TP1 x PP1 x EP1 x FSDP64" and sharded.replica_gpus == 64
    with pytest.raises(ParseError, match="--layout must look like"):
        parse_layout("TP8xCP2xPP8xEP1")
    # FSDP is searched without a pipeline; every training candidate with DP > 1 has a sharded twin.
    found = candidate_layouts(preset("llama-3.1-8b"), "train", Cluster(H100, 2), sequence_tokens=8192)
    assert all(lay.pp == 1 for lay in found if lay.fsdp)
    assert {lay.cp for lay in found} == {1, 2}


def test_with_recompute_keeps_every_other_field_of_the_layout():
    """``Layout.with_recompute`` builds the layout from its fields by position (for speed): a field
    added to ``Layout`` and not passed on would be reset or shifted. Every field is given a value
    other than its default, and the result must equal ``dataclasses.replace``'s."""
    from dataclasses import fields

    other = {"int": 3, "str": "selective", "bool": True, "float": 0.25}  # by the annotation's text
    layout = Layout(**{f.name: other[f.type] for f in fields(Layout)})
    assert layout.virtual == 3 and layout.fsdp is True and layout.recomputed == 0.25
    assert layout.with_recompute("full", 0.5) == replace(layout, recompute="full", recomputed=0.5)
