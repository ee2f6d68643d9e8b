"""Hand-worked plans: every expected figure is worked out in the comments from the model's published
sizes and the GPUs' datasheet figures (normalize/gpus.csv), and the planner must land on it.

Defaults used throughout: compute efficiency 0.5, 90% of GPU memory usable, activations moved in
bf16 (2 bytes), serving 32 sequences per replica with 2,048-token prompts and 512 output tokens.
"""

from __future__ import annotations

import pytest

from planner.hardware import Cluster, fabric_gbytes_per_s_per_gpu, one_way_gbytes_per_s
from planner.layouts import Layout
from planner.memory import serve_memory, train_memory
from planner.models import ServeWorkload, TrainWorkload, preset
from planner.plan import evaluate, plan
from planner.step import Options
from planner.verdict import bottleneck, comm_share, verdict
from tests.helpers import planner_node

OPTIONS = Options()


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
    result = evaluate(model, work, Layout(8, 1, 1, 1), cluster, OPTIONS)
    step = result.step
    # One decode step: 32 sequences each add a token, attending to 2,048 + 512/2 = 2,304 tokens.
    # All-reduce message = 32 tokens x 8,192 hidden x 2 bytes = 524,288 bytes; each GPU sends
    # 2 x 7/8 x 524,288 = 917,504 bytes per all-reduce, 2 per layer x 80 layers = 160 of them:
    # 146,800,640 bytes at 450 GB/s one way (NVLink 900 two-way / 2) = 326.2 µs.
    tp = transfer(step, "TP all-reduce")
    assert (tp.message_bytes, tp.count, tp.bytes_per_gpu, tp.link) == (524_288, 160, 146_800_640, "NVSwitch")
    assert tp.seconds == pytest.approx(146_800_640 / 450e9)  # 326.2 µs, 10.2 µs per token of the batch
    # HBM per GPU: weights 70,553,706,496 x 2 / 8 = 17,638,426,624 bytes, KV read
    # 32 x 2,304 x 327,680 / 8 = 3,019,898,880 bytes: 20,658,325,504 / 3,350 GB/s = 6.1667 ms.
    assert step.hbm_bytes_per_gpu == 20_658_325_504
    assert step.memory_s == pytest.approx(20_658_325_504 / 3350e9)
    # Compute: 32 x (2 x 70,553,706,496 + 4 x 80 x 2,304 x 8,192) / 8 GPUs = 588,588,843,008 FLOP
    # at 989.5 TFLOPS x 0.5 = 1.19 ms: the step is HBM-bound.
    assert step.flops_per_gpu == 588_588_843_008
    assert step.compute_s == pytest.approx(588_588_843_008 / 494.75e12)
    # Step = 6.1667 + 0.3262 = 6.4929 ms, of which the all-reduce is 5.0%.
    assert step.step_s == pytest.approx(6.1667e-3 + 0.32622e-3, rel=1e-4)
    assert comm_share(step) == pytest.approx(0.05024, rel=1e-3)
    # Memory per GPU: 17.64 GB weights + KV 32 x 2,560 x 327,680 / 8 = 3.36 GB + activations
    # 34 x 8,192 x 8,192 / 8 = 0.29 GB = 21.28 GB of 72 GB usable.
    assert result.memory.total_bytes == 17_638_426_624 + 3_355_443_200 + 285_212_672
    found = plan(model, work, cluster.node)
    # One GPU cannot hold 141 GB of weights; four can (TP4: 42.6 GB each): one NVLink domain, one node.
    assert (found.fits, found.cluster.nodes) == ("one NVLink domain", 1)
    assert found.best.layout == Layout(4, 1, 1, 2)
    assert found.best.tokens_per_s == pytest.approx(2779, rel=1e-3)
    assert "NVSwitch figure is inferred" in verdict(found)


def test_70b_on_8_l4_over_pcie():
    # The same model on eight L4s (g6.48xlarge): 16 sequences per replica so that KV fits next to
    # 17.6 GB of weights in AWS's "22 GiB" (23.62 GB, 21.26 GB usable).
    model, work = preset("llama-3.1-70b"), ServeWorkload(batch_sequences=16)
    cluster = Cluster(planner_node("L4-24GB", 8, fabric_gbits_per_s=100, memory_gb=23.622320128))
    step = evaluate(model, work, Layout(8, 1, 1, 1), cluster, OPTIONS).step
    # Message 16 x 8,192 x 2 = 262,144 bytes; 2 x 7/8 x 262,144 x 160 = 73,400,320 bytes per GPU
    # at PCIe Gen4 x16 64 GB/s two-way / 2 = 32 GB/s: 2.294 ms (H100: 0.326 ms for twice the batch).
    tp = transfer(step, "TP all-reduce")
    assert (tp.bytes_per_gpu, tp.link) == (73_400_320, "PCIe")
    assert tp.seconds == pytest.approx(73_400_320 / 32e9)
    # HBM: 17,638,426,624 + 16 x 2,304 x 327,680 / 8 = 19,148,376,064 bytes at 300 GB/s = 63.83 ms.
    assert step.memory_s == pytest.approx(19_148_376_064 / 300e9)
    # Compute: 16 x 147,147,210,752 / 8 = 294,294,421,504 FLOP at 121 x 0.5 TFLOPS = 4.86 ms.
    assert step.compute_s == pytest.approx(294_294_421_504 / 60.5e12)
    # The all-reduce is 14x slower per token than on NVSwitch, but L4's HBM is 11x slower than
    # H100's, so it is still only 2.294 / (63.83 + 2.294) = 3.5% of the step.
    assert comm_share(step) == pytest.approx(2.29376 / (63.8279 + 2.29376), rel=1e-4)
    found = plan(model, work, cluster.node, nodes=1)
    assert found.fits == "one node"
    assert all(r.layout.replica_gpus == 8 for r in found.results)  # fewer GPUs do not hold 141 GB
    assert bottleneck(found.best.step)[1] == "PCIe"


@pytest.mark.parametrize(
    ("node_gbits_per_s", "per_gpu_gbytes_per_s", "pp_send_s", "tp16_s"),
    [
        # 3,200 Gb/s per node / 8 / 8 GPUs = 50 GB/s per GPU.
        (3200, 50, 131_072 / 50e9, 495_452_160 / 400e9),
        # 400 Gb/s per node = 6.25 GB/s per GPU.
        (400, 6.25, 131_072 / 6.25e9, 495_452_160 / 50e9),
    ],
)
def test_405b_across_two_nodes(node_gbits_per_s, per_gpu_gbytes_per_s, pp_send_s, tp16_s):
    model, work = preset("llama-3.1-405b"), ServeWorkload()
    node = planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=node_gbits_per_s, memory_gb=80)
    assert node.fabric.figure.gbytes_per_s == per_gpu_gbytes_per_s
    found = plan(model, work, node)
    # 811.7 GB of bf16 weights need more than one node's 8 x 72 GB: two nodes, TP8 inside each
    # NVLink domain and two pipeline stages across the fabric.
    assert (found.cluster.nodes, found.fits, found.best.layout) == (2, "2 nodes", Layout(8, 2, 1, 1))
    # The stage boundary sends 32 x 16,384 x 2 = 1,048,576 bytes, split over 8 TP ranks: 131,072
    # bytes per GPU per step, 2.6 µs at 50 GB/s or 21 µs at 6.25 GB/s.
    pp = transfer(found.best.step, "PP send")
    assert (pp.bytes_per_gpu, pp.link) == (131_072, "EFA")
    assert pp.seconds == pytest.approx(pp_send_s)
    # The TP all-reduces stay on NVSwitch either way: 2 x 7/8 x 1,048,576 x 126 = 231,211,008 bytes
    # at 450 GB/s = 513.8 µs. The fabric decides little for pipelined serving...
    assert transfer(found.best.step, "TP all-reduce").seconds == pytest.approx(231_211_008 / 450e9)
    # ... and everything for TP16 across the two nodes: each GPU sends 2 x 15/16 x 1,048,576 x 252
    # = 495,452,160 bytes; each node's ring share leaves over its 8 GPUs' fabric: min(450,
    # 8 x 50) = 400 GB/s at 3,200 Gb/s, min(450, 8 x 6.25) = 50 GB/s at 400 Gb/s.
    across = Cluster(node, 2)
    wide = evaluate(model, work, Layout(16, 1, 1, 1), across, Options(tp_across_domain=True)).step
    tp16 = transfer(wide, "TP all-reduce")
    assert (tp16.bytes_per_gpu, tp16.link) == (495_452_160, "NVSwitch + EFA")
    assert tp16.seconds == pytest.approx(tp16_s)


def test_deepseek_v3_expert_all_to_all_over_the_fabric_dominates():
    model, work = preset("deepseek-v3"), ServeWorkload(batch_sequences=256)
    layout = Layout(1, 1, 32, 1)  # experts spread over all 32 GPUs of 4 nodes
    results = {}
    for gbits in (3200, 400):
        cluster = Cluster(planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=gbits, memory_gb=80), 4)
        results[gbits] = evaluate(model, work, layout, cluster, OPTIONS)
    # Per GPU: 17.09 GB of non-expert fp8 weights + 653.9e9 / 32 = 20.43 GB of experts + KV for
    # 256 / 32 = 8 sequences x 2,560 x 70,272 bytes = 1.44 GB + 0.06 GB activations: it fits 72 GB.
    assert results[400].memory.total_bytes == 17_091_229_184 + 20_434_649_088 + 1_439_170_560 + 62_390_272
    # Each GPU dispatches its 8 tokens to 8 experts: 8 x 8 x 7,168 x 2 bytes = 917,504 bytes, and
    # combines them back: 2 all-to-alls x 58 MoE layers = 116. Of each, 7/32 stays on the node
    # (23,281,664 bytes at 450 GB/s = 51.7 µs) and 24/32 crosses the fabric: 79,822,848 bytes at
    # 50 GB/s = 1.60 ms, or at 6.25 GB/s = 12.77 ms.
    a2a = {g: transfer(r.step, "EP all-to-all") for g, r in results.items()}
    assert (a2a[400].message_bytes, a2a[400].count, a2a[400].link) == (917_504, 116, "NVSwitch + EFA")
    assert a2a[3200].seconds == pytest.approx(79_822_848 / 50e9)
    assert a2a[400].seconds == pytest.approx(79_822_848 / 6.25e9)
    # HBM: all weights of the GPU (256 tokens x 8 picks touch 1 − (1 − 8/256)^256 = 99.97% of its
    # experts) plus 8 x 2,304 x 70,272 bytes of KV: about 38.8 GB at 3,350 GB/s = 11.6 ms.
    touched = 1 - (1 - 8 / 256) ** 256
    hbm = 17_091_229_184 + 20_434_649_088 * touched + 8 * 2304 * 70_272
    assert results[400].step.memory_s == pytest.approx(hbm / 3350e9)
    # At 400 Gb/s the all-to-all is 12.77 / (11.6 + 12.77) = 52% of the step; at 3,200 Gb/s 12%.
    assert comm_share(results[400].step) == pytest.approx(12.7717 / (hbm / 3350e9 * 1e3 + 12.7717), rel=1e-3)
    assert comm_share(results[3200].step) == pytest.approx(1.59646 / (hbm / 3350e9 * 1e3 + 1.59646), rel=1e-3)
    assert bottleneck(results[400].step) == ("EP all-to-all", "NVSwitch + EFA")
    # Left to choose, the planner keeps the experts' all-to-all inside the NVLink domain.
    slow = plan(model, work, planner_node("H100-SXM-80GB", 8, fabric_gbits_per_s=400, memory_gb=80), nodes=4)
    assert slow.best.layout.tp * slow.best.layout.ep <= 8
    assert transfer(slow.best.step, "EP all-to-all").link == "NVSwitch"


def test_405b_training_memory_per_gpu():
    model, work = preset("llama-3.1-405b"), TrainWorkload()
    layout = Layout(8, 12, 1, 1, "full")  # 96 GPUs: 12 nodes of 8
    memory = train_memory(model, work, layout)
    # 405,853,388,800 / 96 = 4,227,639,466.7 parameters per GPU: bf16 weights and gradients 8.46 GB
    # each, Adam state 12 bytes each = 50.73 GB (one data-parallel rank: nothing to shard over).
    assert memory.weights_bytes == memory.gradient_bytes == pytest.approx(405_853_388_800 / 96 * 2)
    assert memory.optimizer_bytes == pytest.approx(405_853_388_800 / 96 * 12)
    # Full recomputation keeps each layer's input: 2 x 8,192 x 16,384 / 8 = 33,554,432 bytes, for
    # 126 / 12 layers x min(12 stages, 512 micro-batches) = 126 layer-micro-batches, plus one layer
    # being recomputed: 34 x 8,192 x 16,384 / 8 = 570,425,344 bytes. 4.80 GB in all.
    assert memory.activation_bytes == 33_554_432 * 126 + 570_425_344
    # 72.44 GB: over the 72 GB usable of an 80 GB GPU, under AWS's 80 GiB (85.9 GB) x 0.9 = 77.3 GB.
    assert memory.total_bytes == pytest.approx(72.4405e9, rel=1e-5)
    selective = train_memory(model, work, Layout(8, 12, 1, 1, "selective"))
    # Selective recomputation keeps 34 x 8,192 x 16,384 / 8 bytes per layer-micro-batch: 71.9 GB more.
    assert selective.activation_bytes == 570_425_344 * 126


def test_serving_memory_is_what_the_formula_says():
    model, work = preset("llama-3.1-8b"), ServeWorkload()
    memory = serve_memory(model, work, Layout(1, 1, 1, 1))
    # 8,030,261,248 x 2 bytes; KV 32 x 2,560 x 131,072 bytes; activations 34 x 8,192 x 4,096.
    assert (memory.weights_bytes, memory.kv_cache_bytes, memory.activation_bytes) == (
        16_060_522_496,
        10_737_418_240,
        1_140_850_688,
    )
