"""Hand-worked plans: every expected figure is worked out in the comments from the model's published
sizes and the GPUs' datasheet figures (normalize/gpus.csv), and the planner must land on it.

Defaults used throughout: compute efficiency 0.5, 90% of GPU memory usable, activations moved in
bf16 (2 bytes), serving 32 sequences per replica with 2,048-token prompts and 512 output tokens.
"""

from __future__ import annotations

import math

import pytest

from planner.hardware import Cluster, fabric_gbytes_per_s_per_gpu, one_way_gbytes_per_s
from planner.layouts import Layout
from planner.link_costs import LINK_COSTS, NVLS_EFFICIENCY, NVLS_LATENCY_S
from planner.memory import serve_memory
from planner.models import ServeWorkload, TrainWorkload, preset
from planner.plan import plan
from planner.serve_pass import serve_pass
from planner.step import Options
from planner.training import train_memory
from planner.verdict import bottleneck, comm_share, verdict
from tests.helpers import planner_node

OPTIONS = Options(compute_efficiency=0.5)  # one share for every kernel, as the hand-worked figures use
HBM_SHARE = 0.896  # planner/hbm_efficiency.csv: Hopper's stream share (FlashMLA) of the datasheet HBM
GEMM_HBM_SHARE = 0.686  # the share a GEMM streaming its weights reaches (DeepGEMM's README table)
NVLINK_LATENCY = LINK_COSTS["nvswitch"].ring_latency_s.value  # 36.7 µs, the Simple ring's
NVLS_LATENCY = NVLS_LATENCY_S.value  # 17.41 µs
NVLINK_EFFICIENCY = LINK_COSTS["nvswitch"].ring_efficiency.value  # 370 / 450
EFA_LATENCY = LINK_COSTS["efa"].ring_latency_s.value  # 50.58 µs
EFA_EFFICIENCY = LINK_COSTS["efa"].ring_efficiency.value  # 29.61 / 50
TREE_EFFICIENCY = LINK_COSTS["efa"].tree_efficiency.value  # 57.17 / 1.875 / 50


def decode(model, layout, cluster, sequences, prompt=2048, output=512):
    """One decode step alone (no prefill mixed in): ``sequences`` each add a token, attending to
    prompt + output / 2 tokens."""
    return serve_pass(
        model, layout, cluster, OPTIONS, sequences=sequences, new_tokens=1, context_tokens=prompt + output / 2
    )


def transfer(step, collective):
    return next(t for t in step.transfers if t.collective == collective)


def test_the_seed_figures():
    # 400 Gb/s = 50 GB/s: a 400 Gb/s NIC is 50 GB/s each way; p5's 3,200 Gb/s over 8 GPUs is the same.
    assert fabric_gbytes_per_s_per_gpu(400, 1) == 50
    assert fabric_gbytes_per_s_per_gpu(3200, 8) == 50
    # NVLink 900 GB/s / 50 GB/s = 18: the seed's ratio sets a two-way figure against a one-way one.
    assert 900 / fabric_gbytes_per_s_per_gpu(400, 1) == 18
    # One way each (what a collective's bytes travel), NVLink is 450 GB/s: 9x the NIC.
    assert one_way_gbytes_per_s(900) / fabric_gbytes_per_s_per_gpu(400, 1) == 9
    node = planner_node("H100-SXM-80GB", 8)
    assert [(lv.name, lv.gpus, lv.figure.gbytes_per_s) for lv in node.links] == [
        ("NVSwitch", 8, 450.0),
        ("EFA", None, 50.0),
    ]


def test_70b_on_8_h100_sxm_tp8_over_nvswitch():
    model, work = preset("llama-3.1-70b"), ServeWorkload()
    cluster = Cluster(planner_node("H100-SXM-80GB", 8, memory_gb=80))
    step = decode(model, Layout(8, 1, 1, 1), cluster, 32)
    # One decode step: 32 sequences each add a token, attending to 2,048 + 512/2 = 2,304 tokens.
    # All-reduce message = 32 tokens x 8,192 hidden x 2 bytes = 524,288 bytes, 2 per layer x 80
    # layers = 160 calls. An H100 board reduces in its NVSwitch (NVLink SHARP): each call is 17.41
    # µs (link_costs: LL128's latency, Mooncake#3484) + 524,288 / (450 GB/s x 0.609) = 1.91 µs;
    # LL128 would take 17.41 + 917,504 / 222.4 GB/s = 21.5 µs, the Simple ring 36.7 + 917,504 /
    # (450 x 0.822) = 39.2 µs. 160 x 19.32 µs = 3.09 ms, 2.79 ms of it latency: the calls' fixed
    # cost, not the bytes, is what a decode step pays.
    tp = transfer(step, "TP all-reduce")
    assert (tp.message_bytes, tp.count, tp.algorithm, tp.link) == (524_288, 160, "nvls", "NVSwitch")
    call = NVLS_LATENCY + 524_288 / (450e9 * NVLS_EFFICIENCY.value)
    assert tp.seconds == pytest.approx(160 * call)
    assert tp.latency_s == pytest.approx(160 * NVLS_LATENCY)
    # The kernels run one after another (planner/serve_pass.py), each the longer of its compute
    # (989.5 TFLOPS x 0.5 here) and its reads:
    # - GEMMs: 32 x 2 x 70,553,706,496 / 8 = 564,429,651,968 FLOP = 1.14 ms; they read the GPU's
    #   weights, 70,553,706,496 x 2 / 8 = 17,638,426,624 bytes, and move their activations: per
    #   token and layer (8,192 + 10,240 / 8) + (8,192 / 8 + 8,192) + (8,192 + 3 x 28,672 / 8 + 8,192)
    #   = 45,824 elements x 2 bytes x 32 tokens x 80 layers = 234,618,880 bytes; at 3,350 GB/s x
    #   0.686 (a GEMM streaming its weights, DeepGEMM's table) = 7.78 ms: HBM-bound.
    gemm = next(k for k in step.kernels if k.kernel == "dense_gemm")
    assert gemm.flops == 564_429_651_968 and gemm.hbm_bytes == 17_638_426_624 + 234_618_880
    assert gemm.seconds == pytest.approx((17_638_426_624 + 234_618_880) / (3350e9 * GEMM_HBM_SHARE))
    # - attention: 32 x 4 x 80 x 2,304 x 8,192 / 8 = 24,159,191,040 FLOP (0.05 ms) over a KV read of
    #   32 x 2,304 x 327,680 / 8 = 3,019,898,880 bytes at 3,350 x 0.896 (FlashMLA's) = 1.01 ms;
    attention = next(k for k in step.kernels if k.kernel == "attention")
    assert attention.flops == 24_159_191_040 and attention.hbm_bytes == 3_019_898_880
    assert attention.seconds == pytest.approx(3_019_898_880 / (3350e9 * HBM_SHARE))
    # - the norms, residual adds and SwiGLU (LLM-Viewer's list): (8 x 8,192 + 3 x 28,672 / 8) x 2
    #   bytes x 32 x 80 = 390,594,560 bytes = 0.13 ms.
    elementwise = next(k for k in step.kernels if k.kernel == "elementwise")
    assert elementwise.hbm_bytes == 390_594_560
    kernels = (17_873_045_504 / GEMM_HBM_SHARE + (3_019_898_880 + 390_594_560) / HBM_SHARE) / 3350e9
    # Step = 7.78 + 1.01 + 0.13 + 3.09 = 12.0 ms, of which the all-reduces are 26% (5% if they cost
    # only their bytes at the line rate). One max(compute, reads) over the whole step, as the
    # planner once took it, would have hidden the KV read behind the GEMMs' reads.
    assert step.step_s == pytest.approx(kernels + 160 * call)
    assert comm_share(step) == pytest.approx(160 * call / step.step_s)
    # Memory per GPU: 17.64 GB weights + KV 32 x 2,560 x 327,680 / 8 = 3.36 GB + activations
    # 34 x 8,192 x 8,192 / 8 = 0.29 GB = 21.28 GB of 72 GB usable.
    memory = serve_memory(model, work, Layout(8, 1, 1, 1), 32)
    assert memory.total_bytes == 17_638_426_624 + 3_355_443_200 + 285_212_672
    found = plan(model, work, cluster.node)
    # One GPU cannot hold 141 GB of weights; two can (70.6 GB each, and one conversation's KV in
    # 72 GB usable): one NVLink domain, one node. At the batch that fills memory every layout is
    # compute-bound at 0.5 of the peak, and the layouts with fewer TP all-reduces come first.
    assert (found.fits, found.cluster.nodes, found.min_gpus) == ("one NVLink domain", 1, 2)
    assert found.best.concurrency > 64
    assert "NVSwitch figure is inferred" in verdict(found)


def test_70b_on_8_l4_over_pcie():
    # The same model on eight L4s (g6.48xlarge): 16 sequences per replica so that KV fits next to
    # 17.6 GB of weights in AWS's "22 GiB" (23.62 GB, 21.26 GB usable).
    model, work = preset("llama-3.1-70b"), ServeWorkload(batch_sequences=16)
    cluster = Cluster(planner_node("L4-24GB", 8, fabric_gbits_per_s=100, memory_gb=23.622320128))
    step = decode(model, Layout(8, 1, 1, 1), cluster, 16)
    # Message 16 x 8,192 x 2 = 262,144 bytes; 2 x 7/8 x 262,144 x 160 = 73,400,320 bytes per GPU
    # at PCIe Gen4 x16 64 GB/s two-way / 2 = 32 GB/s, of which a ring of 8 on PCIe reaches 28/64
    # (nccl#1639), plus 42.14 µs per call (nccl#1530): 160 x (42.14 + 32.77) µs = 11.99 ms.
    tp = transfer(step, "TP all-reduce")
    assert (tp.bytes_per_gpu, tp.link, tp.algorithm) == (73_400_320, "PCIe", "ring")
    assert tp.seconds == pytest.approx(160 * 42.14e-6 + 73_400_320 / (32e9 * 28 / 64))
    # HBM, kernel by kernel: the GEMMs' 17,638,426,624 weight bytes + 45,824 activation elements x
    # 2 bytes x 16 tokens x 80 layers (117,309,440) at 300 GB/s x 0.686; the KV read, 16 x 2,304 x
    # 327,680 / 8 = 1,509,949,440 bytes, and the norms, adds and SwiGLU, 76,288 x 2 x 16 x 80 =
    # 195,297,280 bytes, at 300 x 0.896 (L4 borrows Hopper's shares): 86.4 + 6.3 = 92.6 ms.
    reads = (17_638_426_624 + 117_309_440) / GEMM_HBM_SHARE + (1_509_949_440 + 195_297_280) / HBM_SHARE
    assert step.memory_s == pytest.approx(reads / 300e9)
    # Compute: 16 x 147,147,210,752 / 8 = 294,294,421,504 FLOP at 121 x 0.5 TFLOPS = 4.86 ms.
    assert step.compute_s == pytest.approx(294_294_421_504 / 60.5e12)
    # L4's HBM is 11x slower than H100's, so the all-reduces are 11.99 / (92.6 + 11.99) = 11%.
    assert comm_share(step) == pytest.approx(tp.seconds / (reads / 300e9 + tp.seconds))
    found = plan(model, work, cluster.node, nodes=1)
    assert found.fits == "one node"
    assert all(r.layout.replica_gpus == 8 for r in found.results)  # fewer GPUs do not hold 141 GB
    assert bottleneck(found.best.step)[1] == "PCIe"


@pytest.mark.parametrize(("node_gbits_per_s", "per_gpu_gbytes_per_s"), [(3200, 50), (400, 6.25)])
def test_405b_across_two_nodes(node_gbits_per_s, per_gpu_gbytes_per_s):
    model = preset("llama-3.1-405b")
    node = planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=node_gbits_per_s, memory_gb=80)
    # 3,200 Gb/s per node / 8 / 8 GPUs = 50 GB/s per GPU; 400 Gb/s per node = 6.25 GB/s per GPU.
    assert node.fabric.figure.gbytes_per_s == per_gpu_gbytes_per_s
    found = plan(model, ServeWorkload(batch_sequences=32), node)
    # 811.7 GB of bf16 weights need more than one node's 8 x 72 GB: two nodes, TP8 inside each
    # NVLink domain and two pipeline stages across the fabric.
    assert (found.cluster.nodes, found.fits, found.best.layout) == (2, "2 nodes", Layout(8, 2, 1, 1))
    step = decode(model, Layout(8, 2, 1, 1), Cluster(node, 2), 32)
    # A decode pass runs as 2 micro-batches of 16 sequences. Each stage boundary sends 16 x 16,384 x
    # 2 / 8 TP ranks = 65,536 bytes per GPU per micro-batch over EFA: 50.58 µs (dstack#3961) +
    # 65,536 / (F x 0.592) each.
    pp = transfer(step, "PP send")
    assert (pp.bytes_per_gpu, pp.link, pp.count) == (131_072, "EFA", 2)
    per_gpu = per_gpu_gbytes_per_s * 1e9
    assert pp.seconds == pytest.approx(2 * (EFA_LATENCY + 65_536 / (per_gpu * EFA_EFFICIENCY)))
    # The TP all-reduces stay on NVSwitch either way: 63 layers x 2 x 2 micro-batches = 252 calls of
    # 524,288 bytes by NVLink SHARP, 17.41 µs + 524,288 / (450 GB/s x 0.609) each.
    tp = transfer(step, "TP all-reduce")
    assert tp.seconds == pytest.approx(252 * (NVLS_LATENCY + 524_288 / (450e9 * NVLS_EFFICIENCY.value)))
    # ... and everything for TP16 across the two nodes: a tree (two nodes) sends the message once
    # per node over its 8 GPUs' share of the NICs, at EFA's tree share 0.61 (nccl#527), bounded by the
    # node's own reduction (NVLink SHARP on H100); the ring would send 2 x 15/16 of it.
    across = Cluster(node, 2)
    wide = decode(model, Layout(16, 1, 1, 1), across, 32)
    tp16 = transfer(wide, "TP all-reduce")
    assert (tp16.link, tp16.algorithm, tp16.count) == ("NVSwitch + EFA", "tree", 252)
    node_rate = 8 * per_gpu_gbytes_per_s * 1e9 * TREE_EFFICIENCY
    inner = max(450e9 * NVLINK_EFFICIENCY / (2 * 7 / 8), 450e9 * NVLS_EFFICIENCY.value)  # NVLS in the node
    assert tp16.seconds == pytest.approx(252 * (EFA_LATENCY + 1_048_576 / min(node_rate, inner)))


def test_deepseek_v3_expert_all_to_all_over_the_fabric_dominates():
    model, work = preset("deepseek-v3"), ServeWorkload(batch_sequences=256)
    layout = Layout(1, 1, 32, 1)  # experts spread over all 32 GPUs of 4 nodes
    results = {}
    for gbits in (3200, 400):
        cluster = Cluster(planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=gbits, memory_gb=80), 4)
        results[gbits] = (decode(model, layout, cluster, 256), serve_memory(model, work, layout, 256))
    # Per GPU: 17.09 GB of non-expert fp8 weights + 653.9e9 / 32 = 20.43 GB of experts + KV for
    # 256 / 32 = 8 sequences x 2,560 x 70,272 bytes = 1.44 GB + 0.06 GB activations: it fits 72 GB.
    assert results[400][1].total_bytes == 17_091_229_184 + 20_434_649_088 + 1_439_170_560 + 62_390_272
    # Each GPU dispatches its 8 tokens to 8 experts: 8 x 8 x 7,168 x 2 bytes = 917,504 bytes, and
    # combines them back: 2 all-to-alls x 58 MoE layers = 116; the others wait for the busiest rank,
    # which moves 1 + sqrt(2 ln 32) x sqrt(1 / 64 + 0.480^2) = 2.306 times that (routing's chance on
    # its 64 picks and the router's skew measured on DeepSeek R1 at EP32): 2,115,652 bytes. Of each,
    # 7/32 stays on the node and 24/32 crosses the fabric over each GPU's own share at EFA's 0.592,
    # plus EFA's 50.58 µs per call: 12.1 ms at 50 GB/s, 55.6 ms at 6.25 GB/s.
    busiest = 1 + math.sqrt(2 * math.log(32)) * math.sqrt(1 / 64 + 0.480**2)
    a2a = {g: transfer(r[0], "EP all-to-all") for g, r in results.items()}
    assert (a2a[400].count, a2a[400].link) == (116, "NVSwitch + EFA")
    assert a2a[400].message_bytes == pytest.approx(917_504 * busiest)
    for gbits, per_gpu in ((3200, 50e9), (400, 6.25e9)):
        crossing = 688_128 * busiest / (per_gpu * EFA_EFFICIENCY)
        assert a2a[gbits].seconds == pytest.approx(116 * (EFA_LATENCY + crossing))
    # HBM, kernel by kernel (every kernel here is bound by its reads, at 0.5 of the FP8 peak):
    # - the dense GEMMs read 17,091,229,184 weight bytes and move, per token and layer, (7,168 +
    #   16,384 + 576) + (16,384 + 7,168) + 3/61 x (7,168 + 3 x 18,432 + 7,168) activation elements
    #   (MLA's 512 + 64 latent; three dense layers of 61): x 2 bytes x 8 tokens x 61 layers;
    # - the experts: the 256 tokens' 8 picks touch 1 − (1 − 8/256)^256 = 99.97% of the GPU's
    #   20,434,649,088 expert bytes; routing moves 58/61 x 8 x (7,168 + 3 x 2,048 + 7,168) elements
    #   per token and layer, on the busiest of 32 ranks: 1 + sqrt(2 ln 32) x sqrt(1 / 64 + 0.480^2)
    #   = 2.32 times the mean (routing's chance on 64 picks a rank, and the router's skew measured
    #   on DeepSeek R1 at EP32: a CV of 0.480 per rank of 8 experts);
    # both at 3,350 GB/s x 0.686; the KV read, 8 x 2,304 x 70,272 bytes, and the norms, adds,
    # SwiGLU and routing's gather and reduce, (8 x 7,168 + 3/61 x 3 x 18,432 + 58/61 x (8 x 3 x
    # 2,048 + 2 x 9 x 7,168)) elements x 976, at 3,350 x 0.896: 16.9 ms in all.
    touched = 1 - (1 - 8 / 256) ** 256
    per_token = 2 * 8 * 61  # bytes per element x tokens per GPU x layers
    dense = 17_091_229_184 + per_token * (24_128 + 23_552 + 3 / 61 * 69_632)
    experts = 20_434_649_088 * touched + per_token * 58 / 61 * 8 * 20_480 * busiest
    stream = 8 * 2304 * 70_272 + per_token * (57_344 + 3 / 61 * 55_296 + 58 / 61 * (49_152 + 129_024))
    kernels = (dense + experts) / (3350e9 * GEMM_HBM_SHARE) + stream / (3350e9 * HBM_SHARE)
    assert all(k.memory_s >= k.compute_s for k in results[400][0].kernels)
    assert results[400][0].memory_s == pytest.approx(kernels)
    # At 400 Gb/s the all-to-all is 55.6 / (16.9 + 55.6) = 77% of the step; at 3,200 Gb/s 42%.
    for gbits in (3200, 400):
        seconds = a2a[gbits].seconds
        assert comm_share(results[gbits][0]) == pytest.approx(seconds / (kernels + seconds), rel=1e-3)
    assert bottleneck(results[400][0]) == ("EP all-to-all", "NVSwitch + EFA")
    # Left to choose, the planner keeps the experts' all-to-all inside the NVLink domain.
    slow = plan(model, work, planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=400, memory_gb=80), nodes=4)
    assert slow.best.layout.tp * slow.best.layout.ep <= 8
    assert all(t.link == "NVSwitch" for t in slow.best.step.transfers if t.collective == "EP all-to-all")


def test_405b_training_memory_per_gpu():
    model, work = preset("llama-3.1-405b"), TrainWorkload()
    layout = Layout(8, 12, 1, 1, "full")  # 96 GPUs: 12 nodes of 8
    memory = train_memory(model, work, layout)
    # 405,853,388,800 / 96 = 4,227,639,466.7 parameters per GPU: bf16 weights and gradients 8.46 GB
    # each, Adam state 12 bytes each = 50.73 GB (one data-parallel rank: nothing to shard over).
    assert memory.weights_bytes == memory.gradient_bytes == pytest.approx(405_853_388_800 / 96 * 2)
    assert memory.optimizer_bytes == pytest.approx(405_853_388_800 / 96 * 12)
    # A Llama 405B layer keeps, per token (h 16,384; Q 128 x 128; K and V 8 x 128; SwiGLU 53,248):
    # attention: the norm's input, the projections' input, Q, K, V, O = 16,384 x 2 + 16,384 x 2 +
    # 1,024 x 2 = 67,584 elements; MLP: the norm's input, fc1's input, gate, up, down's input =
    # 16,384 x 2 + 53,248 x 3 = 192,512 elements: 260,096 x 2 bytes = 520,192 (31.75 x h, not GPT-3's
    # 34). TP8 splits the 8,192 tokens of a micro-batch: 1,024 each, 532,676,608 bytes a layer.
    # Full recomputation keeps each layer's input: 2 x 16,384 x 1,024 = 33,554,432 bytes, for
    # 126 / 12 layers x min(12 stages, 512 micro-batches) = 126 layer-micro-batches, plus the layer
    # being recomputed (532,676,608) and the last stage's fp32 logits, 4 x 1,024 x 128,256 =
    # 525,336,576: 5.29 GB in all.
    assert memory.activation_bytes == 33_554_432 * 126 + 532_676_608 + 525_336_576
    # 72.93 GB: over the 72 GB usable of an 80 GB GPU, under AWS's 80 GiB (85.9 GB) x 0.9 = 77.3 GB.
    assert memory.total_bytes == pytest.approx(72.9286e9, rel=1e-5)
    selective = train_memory(model, work, Layout(8, 12, 1, 1, "selective"))
    # Selective recomputation keeps the whole 532,676,608 bytes per layer-micro-batch: 67.1 GB.
    assert selective.activation_bytes == 532_676_608 * 126 + 525_336_576


def test_serving_memory_is_what_the_formula_says():
    model, work = preset("llama-3.1-8b"), ServeWorkload()
    memory = serve_memory(model, work, Layout(1, 1, 1, 1), 32)
    # 8,030,261,248 x 2 bytes; KV 32 x 2,560 x 131,072 bytes; activations 34 x 8,192 x 4,096.
    assert (memory.weights_bytes, memory.kv_cache_bytes, memory.activation_bytes) == (
        16_060_522_496,
        10_737_418_240,
        1_140_850_688,
    )
