"""Training: the bytes one GPU holds and the time of one optimizer step, for the layouts people run.

A layout is TP x CP x PP x EP x DP (``planner.layouts``), with the data-parallel ranks either
replicating the weights (DDP, the optimizer state sharded: ZeRO-1) or sharding weights, gradients
and optimizer state (FSDP, ZeRO-3). Per GPU, with s the sequence, b the micro-batch, h the hidden
size, L layers, m micro-batches per data-parallel rank and v interleaved chunks per stage:

Memory (``train_memory``):
- weights and gradients in bf16, Adam's fp32 master weights, m and v (12 bytes), per parameter;
  ZeRO-1 divides the optimizer state by the ranks sharing the weights (CP x EP x DP for non-expert
  weights, CP x DP for experts); FSDP divides all three, and holds two layers whole while it
  gathers the next (its prefetch).
- activations, per architecture (``layer_activation_bytes``): Korthikanti et al. 2022
  (https://arxiv.org/abs/2205.05198, section 4) count the 16-bit tensors a GPT layer keeps for its
  backward pass, 34 x s x b x h bytes with sequence parallelism and selective recomputation. The same
  count over a modern layer (no dropout masks; RMSNorm; GQA's narrower K and V; MLA's wider query and
  key; SwiGLU's gate, up and down inputs; a mixture of experts' k routed copies with their outputs)
  gives the layer's own coefficient: Llama 3.1 70B 33.5 x h, DeepSeek-V3's MoE layers 78.6 x h.
  Each rank holds s / CP tokens, split over TP; the first pipeline stage holds min(PP, m)
  micro-batches of L / PP layers, x (1 + (PP - 1) / (PP x v)) when interleaved (Korthikanti et al.,
  section 4.2.3). Full recomputation keeps each layer's input (2 x h bytes a token) and one layer's
  working set. The last stage also holds the fp32 logits, 4 x s x b x vocabulary / TP.

Time (``train_step``): step = max(compute, HBM) + the collectives not hidden behind compute.
- compute: 6 FLOPs per matmul parameter and token (8 with full recomputation), the input embedding
  being a lookup, plus causal attention (half the sequence, ``planner.step.flops_by_kernel``), at
  the dense peak of the matmul format times the share training reaches end to end
  (``training_efficiency.csv``, each row read from a published run); in FP8 training attention
  stays in BF16 (Transformer Engine's default). Times the pipeline bubble 1 + (PP - 1) / (m x v).
- collectives per micro-batch: TP all-reduces of the hidden states, EP all-to-alls, PP sends
  (``planner.step``), each over s / CP tokens; CP's ring passes each rank's K and V chunk to its
  neighbour CP - 1 times a layer forward, twice that backward (K, V and their gradients); FSDP
  gathers the stage's weights twice (forward, backward) and reduce-scatters its gradients once. Per
  step without FSDP: the gradient all-reduce over the ranks sharing the weights.
- what runs behind compute (``hidden``): the ring's exchange behind the attention it feeds (ring
  attention, https://arxiv.org/abs/2310.01889); FSDP's gathers and reduce-scatters behind the whole
  step (prefetching one layer ahead, https://arxiv.org/abs/2304.11277); the gradient all-reduce
  behind the last micro-batch's backward pass (Megatron-LM's ``--overlap-grad-reduce``); the
  experts' all-to-all behind the routed experts' compute when ``overlap_all_to_all`` (DeepSeek-V3's
  DualPipe, https://arxiv.org/abs/2412.19437 section 3.2.1: "both all-to-all and PP communication
  can be fully hidden"). Each at most the compute it runs behind; TP's all-reduces and the stage
  sends are counted in full.
"""

from __future__ import annotations

import csv
import io
import math
from functools import cache, lru_cache
from importlib import resources

from planner.comms import Transfer, all_gather, all_reduce, all_to_all, send
from planner.conversions import BYTES_PER_ELEMENT
from planner.efficiency import BORROW, Efficiency, arch_of, compute_efficiency
from planner.hardware import Cluster
from planner.layouts import Layout, groups, route
from planner.memo import store
from planner.memory import TRAIN_WEIGHT_DTYPE, MemoryUse, params_per_gpu
from planner.models import OPTIMIZER_STATES, ModelSpec, TrainWorkload
from planner.step import (
    TRAIN_PASSES,
    Options,
    StepCost,
    _hbm_rate,
    _pass_transfers,
    _seconds,
    flops_by_kernel,
    peak_flops,
)

#: Chinchilla's compute-optimal budget, about 20 training tokens per parameter (Hoffmann et al.
#: 2022, https://arxiv.org/abs/2203.15556): the token budget when the user states none.
DEFAULT_TOKENS_PER_PARAMETER = 20
#: Bytes per element of what activations and logits are kept in.
ACTIVATION_BYTES = BYTES_PER_ELEMENT["bf16"]
LOGIT_BYTES = BYTES_PER_ELEMENT["fp32"]
#: Layers whose weights FSDP holds whole at once: the one computing and the one being gathered.
FSDP_LAYERS_IN_FLIGHT = 2


def default_token_budget(model: ModelSpec) -> float:
    """20 tokens per parameter (Chinchilla), all parameters counted."""
    return DEFAULT_TOKENS_PER_PARAMETER * model.params_total


def token_budget(model: ModelSpec, work: TrainWorkload) -> float:
    """The tokens to train: the workload's budget, or ``default_token_budget``."""
    return work.token_budget if work.token_budget is not None else default_token_budget(model)


# --- memory -------------------------------------------------------------------------------------


def _attention_elements(model: ModelSpec) -> tuple[float, float]:
    """(elements kept in 16 bits, elements kept as a linear layer's input) per token by an attention
    block: the norm's input, the projections' input, Q, K, V and the output O (which flash attention's
    backward needs as well as the output projection); MLA also keeps its latent, before its norm and
    after it (the up-projection's input)."""
    h = model.hidden_size
    if model.is_mla:
        qk = model.attention_heads * (model.head_dim + model.rope_head_dim)
        v = model.attention_heads * model.head_dim
        latent = model.kv_lora_rank + model.rope_head_dim
        return h + 2 * qk + 2 * v + latent, h + latent
    q = model.attention_heads * model.head_dim
    kv = model.kv_heads * model.head_dim
    return h + 2 * q + 2 * kv, h


def _mlp_elements(model: ModelSpec, moe: bool) -> tuple[float, float]:
    """(16-bit elements, linear-input elements) per token by an MLP block. SwiGLU: the norm's input,
    gate and up (16-bit), fc1's and down's inputs (2h + 3f in all). A mixture of experts: the norm's
    input and its output (the router's and shared experts' input), and for each of the k routed
    copies its input, gate, up, down's input and output (k (2h + 3f_e)), with the shared experts'
    gate, up and down input (3 f_s)."""
    h = model.hidden_size
    if not moe:
        f = model.ffn_hidden_size
        return h + 2 * f, h + f
    k, f = model.experts_per_token, model.expert_ffn_hidden_size
    shared = model.shared_experts * f
    return h + k * (2 * f + h) + 2 * shared, h + k * (h + f) + shared


def layer_activation_bytes(model: ModelSpec, *, moe: bool = False, linear_dtype: str = "bf16") -> float:
    """Bytes per token one layer keeps for its backward pass (selective recomputation, unsharded): the
    per-architecture form of Korthikanti et al.'s 34 x h. The linear layers' inputs are kept in
    ``linear_dtype`` (FP8 training keeps them in FP8, as Transformer Engine saves its casts)."""
    parts = [_attention_elements(model), _mlp_elements(model, moe and model.is_moe)]
    kept = sum(p[0] for p in parts) * ACTIVATION_BYTES
    return kept + sum(p[1] for p in parts) * BYTES_PER_ELEMENT[linear_dtype]


@cache
def mean_layer_activation_bytes(model: ModelSpec, linear_dtype: str = "bf16") -> float:
    """``layer_activation_bytes`` averaged over the model's dense and MoE layers."""
    dense, moe = model.layers - model.moe_layers, model.moe_layers
    total = dense * layer_activation_bytes(model, linear_dtype=linear_dtype) + moe * layer_activation_bytes(
        model, moe=True, linear_dtype=linear_dtype
    )
    return total / model.layers


def micro_batches(work: TrainWorkload, layout: Layout) -> float:
    """Micro-batches per data-parallel rank per step: global sequences / (DP x EP) / micro-batch."""
    return work.global_batch_sequences / (layout.dp * layout.ep) / work.micro_batch_sequences


def _shards(work: TrainWorkload, layout: Layout) -> tuple[int, int]:
    """The ranks sharing (non-expert, expert) weights: CP x EP x DP and CP x DP."""
    return layout.cp * layout.ep * layout.dp, layout.cp * layout.dp


def _activation_terms(
    model: ModelSpec, work: TrainWorkload, layout: Layout
) -> tuple[float, float, float, float]:
    """(one layer's activations per micro-batch, what full recomputation keeps of it, the layer
    micro-batches in flight on the first stage, the logits' bytes) on one GPU."""
    tokens = work.sequence_tokens * work.micro_batch_sequences / layout.cp / layout.tp
    layer = mean_layer_activation_bytes(model, work.precision) * tokens
    kept = model.hidden_size * ACTIVATION_BYTES * tokens
    in_flight = min(layout.pp, micro_batches(work, layout)) * model.layers / layout.pp
    if layout.virtual > 1:
        in_flight *= 1 + (layout.pp - 1) / (layout.pp * layout.virtual)
    return layer, kept, in_flight, LOGIT_BYTES * tokens * model.vocab_size


def _activation_bytes(model: ModelSpec, work: TrainWorkload, layout: Layout) -> float:
    layer, kept, in_flight, logits = _activation_terms(model, work, layout)
    share = layout.recomputed_share
    working = layer if share > 0 else 0.0  # the layer being recomputed holds its whole set
    return in_flight * (share * kept + (1 - share) * layer) + working + logits


def _state_bytes(model: ModelSpec, work: TrainWorkload, layout: Layout) -> tuple[float, float]:
    """(weights, optimizer state) bytes on one GPU; gradients take what weights take."""
    non_expert, expert = params_per_gpu(model, layout)
    param_bytes = BYTES_PER_ELEMENT[TRAIN_WEIGHT_DTYPE]
    state_bytes = sum(BYTES_PER_ELEMENT[f] for f in OPTIMIZER_STATES[work.optimizer])
    shared, expert_shared = _shards(work, layout)
    if layout.fsdp:
        held = non_expert / shared + expert / expert_shared
        whole = FSDP_LAYERS_IN_FLIGHT * (non_expert + expert) / (model.layers / layout.pp)
        return (held + whole) * param_bytes, held * state_bytes
    divisors = (shared, expert_shared) if work.shard_optimizer else (1, 1)
    return (non_expert + expert) * param_bytes, state_bytes * (
        non_expert / divisors[0] + expert / divisors[1]
    )


@lru_cache(maxsize=4096)
def train_memory(model: ModelSpec, work: TrainWorkload, layout: Layout) -> MemoryUse:
    """Bytes per GPU to train ``work`` under ``layout`` (its ``recompute`` decides activations)."""
    weights, optimizer = _state_bytes(model, work, layout)
    return MemoryUse(
        weights,
        activation_bytes=_activation_bytes(model, work, layout),
        gradient_bytes=weights,
        optimizer_bytes=optimizer,
    )


def fit_recompute(model: ModelSpec, work: TrainWorkload, layout: Layout, limit: float) -> Layout | None:
    """``layout`` with the least recomputation that fits in ``limit`` bytes per GPU, None when even
    full recomputation does not: selective, else full recomputation of the fewest whole layers per
    stage that make it fit (``auto``), or exactly the workload's choice."""
    fixed, layer, kept, in_flight = _fit_terms(model, work, layout)

    def fits(share: float) -> bool:  # as _activation_bytes adds it up
        working = layer if share > 0 else 0.0
        return fixed + in_flight * (share * kept + (1 - share) * layer) + working <= limit

    if work.recompute != "full" and fits(0.0):
        return _recomputed(layout, "selective", 1.0)
    if work.recompute == "selective" or not fits(1.0):
        return None
    share = 1.0
    if work.recompute == "auto":  # the share of layers that must be recomputed, in whole layers
        room = limit - fixed - layer - in_flight * layer
        stage_layers = model.layers / layout.pp
        needed = -room / (in_flight * (layer - kept))
        share = min(1.0, math.ceil(needed * stage_layers - 1e-9) / stage_layers)
        share = share if fits(share) else 1.0
    return _recomputed(layout, "full", share)


#: ``_fit_terms`` by model, workload and layout, and ``_recomputed`` by layout and recomputation: a
#: ranking fits the same candidate layouts to every GPU memory size it meets.
_FIT_TERMS: dict[tuple, tuple[float, float, float, float]] = {}
_RECOMPUTED: dict[tuple, Layout] = {}


def _fit_terms(model: ModelSpec, work: TrainWorkload, layout: Layout) -> tuple[float, float, float, float]:
    """(the bytes recomputation cannot save: weights, gradients, optimizer state and logits; then
    ``_activation_terms``' layer, kept and in-flight terms) of ``layout`` on one GPU."""
    key = (model, work, layout)
    found = _FIT_TERMS.get(key)
    if found is None:
        weights, optimizer = _state_bytes(model, work, layout)
        layer, kept, in_flight, logits = _activation_terms(model, work, layout)
        found = store(_FIT_TERMS, key, (2 * weights + optimizer + logits, layer, kept, in_flight))
    return found


def _recomputed(layout: Layout, recompute: str, share: float) -> Layout:
    """``layout.with_recompute(recompute, share)``, one value for every memory size it fits (the
    caches keyed on layouts then find it by identity)."""
    key = (layout, recompute, share)
    found = _RECOMPUTED.get(key)
    if found is None:
        found = store(_RECOMPUTED, key, layout.with_recompute(recompute, share))
    return found


# --- how much of the peak training reaches ---------------------------------------------------------

#: Kernel classes of ``training_efficiency.csv``: every matmul of a dense layer and attention
#: (``gemm``), and the routed experts' grouped GEMMs (``moe_gemm``).
TRAIN_KERNELS = {"dense_gemm": "gemm", "attention": "gemm", "moe_gemm": "moe_gemm"}


@cache
def _training_table() -> dict[tuple[str, str, str], Efficiency]:
    text = resources.files("planner").joinpath("training_efficiency.csv").read_text(encoding="utf-8")
    return {
        (r["arch"], r["kernel"], r["format"]): Efficiency(
            float(r["fraction"]), "measured", f"{r['figure']} ({r['source_url']})"
        )
        for r in csv.DictReader(io.StringIO(text))
    }


def _training_row(arch: str, kernel: str, fmt: str) -> Efficiency | None:
    table = _training_table()
    if (arch, kernel, fmt) in table:
        return table[(arch, kernel, fmt)]
    others = [v for (a, k, _), v in table.items() if a == arch and k == kernel]
    if others:
        row = others[0]
        return Efficiency(row.fraction, "inferred", f"the {kernel} share in another format: {row.detail}")
    return None


@cache
def training_efficiency(gpu_model: str, kernel: str, fmt: str) -> Efficiency:
    """The share of ``gpu_model``'s dense ``fmt`` peak a training step's ``kernel`` matmuls reach end
    to end, as a published run measured it; an architecture without a row borrows (Blackwell and
    Ampere take Hopper's), and one with none takes the kernel table's (``planner.efficiency``)."""
    arch = arch_of(gpu_model)
    klass = TRAIN_KERNELS[kernel]
    for candidate in (arch, BORROW.get(arch or "")):
        if candidate is None:
            continue
        row = _training_row(candidate, klass, fmt)
        if row is None and klass == "moe_gemm":
            continue
        if row is not None:
            if candidate == arch:
                return row
            return Efficiency(row.fraction, "inferred", f"{candidate}'s: {row.detail}")
    kernel_row = compute_efficiency(gpu_model, kernel, fmt)
    return Efficiency(kernel_row.fraction, "inferred", f"the kernel table's: {kernel_row.detail}")


# --- time ---------------------------------------------------------------------------------------


def training_flops_by_kernel(model: ModelSpec, sequence_tokens: float) -> dict[str, float]:
    """A token's forward FLOPs by kernel in training: ``flops_by_kernel`` at causal attention's mean
    context (half the sequence), less the input embedding, which is a lookup (one vocabulary x
    hidden matrix stays: the output layer; embeddings are taken as untied, as every preset has them)."""
    found = flops_by_kernel(model, sequence_tokens / 2)
    found["dense_gemm"] = max(0.0, found["dense_gemm"] - 2.0 * model.vocab_size * model.hidden_size)
    return found


def _passes(layout: Layout) -> float:
    """Forward, backward through activations and through weights, and the recomputed share of a
    forward."""
    return TRAIN_PASSES + layout.recomputed_share


#: ``kernel_seconds`` by model, workload, layout, options and the GPU with its peaks.
_KERNELS: dict[tuple, dict[str, float] | None] = {}


def kernel_seconds(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, options: Options
) -> dict[str, float] | None:
    """Seconds one GPU computes per step, by kernel, without the pipeline bubble (None when the
    datasheet has no peak for a format it needs)."""
    node = cluster.node
    peaks = (node.gpu_model, node.dense_bf16_tflops, node.dense_fp8_tflops, node.dense_fp4_tflops)
    key = (model, work, layout, options, peaks)
    if key not in _KERNELS:
        store(_KERNELS, key, _kernel_seconds(model, work, layout, cluster, options))
    found = _KERNELS[key]
    return None if found is None else dict(found)


def _kernel_seconds(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, options: Options
) -> dict[str, float] | None:
    tokens = work.global_batch_tokens * _passes(layout) / layout.gpus
    found = {}
    for kernel, flops in training_flops_by_kernel(model, work.sequence_tokens).items():
        fmt = "bf16" if kernel == "attention" else work.precision
        rate = peak_flops(cluster, fmt)
        if rate is None:
            return None
        share = (
            options.compute_efficiency or training_efficiency(cluster.node.gpu_model, kernel, fmt).fraction
        )
        found[kernel] = tokens * flops / (rate * share)
    return found


def bubble(work: TrainWorkload, layout: Layout) -> float:
    """The pipeline's idle share on top of its work: 1 + (PP - 1) / (m x v)."""
    return 1 + (layout.pp - 1) / (micro_batches(work, layout) * layout.virtual)


def _context_transfers(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster
) -> list[Transfer]:
    """CP's ring, per step: each rank's K and V chunk (s / CP tokens, its TP share of the KV heads)
    sent on CP - 1 times per layer forward, twice that backward, once more when recomputed."""
    if layout.cp == 1:
        return []
    tokens = work.sequence_tokens * work.micro_batch_sequences / layout.cp
    if model.is_mla:
        per_token = model.attention_heads * (2 * model.head_dim + model.rope_head_dim) / layout.tp
    else:
        per_token = 2 * model.kv_heads * model.head_dim / min(layout.tp, model.kv_heads)
    chunk = tokens * per_token * ACTIVATION_BYTES
    passes = 3 + layout.recomputed_share
    count = model.layers / layout.pp * (layout.cp - 1) * passes * micro_batches(work, layout)
    return [send("CP K/V ring", groups(layout, "train")["cp"], chunk, count, cluster)]


def remote_nodes_per_token(model: ModelSpec, nodes: int) -> float:
    """Other nodes a token's k routed experts sit on, when EP spans ``nodes`` nodes and experts are
    picked evenly: (N - 1)(1 - (1 - 1/N)^k) on average."""
    if nodes <= 1:
        return 0.0
    return (nodes - 1) * (1 - (1 - 1 / nodes) ** model.experts_per_token)


def _expert_transfers(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, passes: float
) -> list[Transfer]:
    """The experts' dispatch and combine per step. Each sends a token's k routed copies of its
    hidden vector (its TP share, s / CP tokens a micro-batch), dispatch and combine once per MoE
    layer a pass. Across nodes a token crosses the fabric once per other node its experts sit on
    and is fanned out over NVLink there (DeepEP's forwarding, https://github.com/deepseek-ai/DeepEP):
    the fabric carries ``remote_nodes_per_token`` copies, not k x (n - local) / n. Under FP8
    training the forward dispatch moves FP8 (DeepSeek-V3, section 3.3.2: "we quantize the activation
    before MoE up-projections into FP8 and then apply dispatch components"); the rest moves bf16."""
    if layout.ep == 1:
        return []
    group = groups(layout, "train")["ep"]
    where = route(group, cluster)
    tokens = work.sequence_tokens * work.micro_batch_sequences / layout.cp / layout.tp
    copies = float(model.experts_per_token)
    if where.level.is_fabric and where.local < group.size:
        across = model.experts_per_token * (group.size - where.local) / group.size
        dedup = remote_nodes_per_token(model, group.size // where.local) / across
        copies *= dedup
    message = tokens * copies * model.hidden_size
    per_layer = micro_batches(work, layout) * model.moe_layers / layout.pp
    dispatch = BYTES_PER_ELEMENT["fp8" if work.precision == "fp8" else "bf16"]
    forward = 1 + layout.recomputed_share  # dispatches in FP8 when FP8 trains; the backward's in bf16
    return [
        all_to_all("EP all-to-all (dispatch)", group, message * dispatch, forward * per_layer, cluster),
        all_to_all(
            "EP all-to-all (combine and backward)",
            group,
            message * ACTIVATION_BYTES,
            (2 * passes - forward) * per_layer,
            cluster,
        ),
    ]


def _weight_transfers(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster
) -> list[Transfer]:
    """Per step: FSDP's gathers and reduce-scatters, or the gradient all-reduce (bf16 gradients,
    non-expert over CP x EP x DP, experts over CP x DP)."""
    non_expert, expert = params_per_gpu(model, layout)
    size = BYTES_PER_ELEMENT[TRAIN_WEIGHT_DTYPE]
    g = groups(layout, "train")
    found = []
    parts = [("", g["dp_ep"], non_expert * size), (" (experts)", g["dp_cp"], expert * size)]
    for what, group, buffer in parts:
        if group.size == 1 or not buffer:
            continue
        if layout.fsdp:
            m = micro_batches(work, layout)
            found.append(all_gather(f"FSDP weight all-gather{what}", group, buffer, 2 * m, cluster))
            found.append(all_gather(f"FSDP gradient reduce-scatter{what}", group, buffer, m, cluster))
        else:
            found.append(all_reduce(f"DP gradient all-reduce{what}", group, buffer, 1, cluster))
    return found


def _times(t: Transfer, factor: float) -> Transfer:
    """The same collective repeated ``factor`` times (once per micro-batch)."""
    seconds = None if t.seconds is None else t.seconds * factor
    return Transfer(
        t.collective, t.group_gpus, t.count * factor, t.message_bytes, t.bytes_per_gpu * factor,
        t.link, t.levels, seconds, t.algorithm, t.latency_s * factor,
    )  # fmt: skip


#: The collectives that run behind compute, by how their names start (``_hidden``).
_OVERLAPS = ("CP K/V ring", "FSDP", "DP gradient all-reduce", "EP all-to-all")


@cache
def _overlap(collective: str) -> str | None:
    """The first of ``_OVERLAPS`` that ``collective``'s name starts with (None: it runs exposed)."""
    return next((k for k in _OVERLAPS if collective.startswith(k)), None)


def _hidden(
    transfers: list[Transfer], by_kernel: dict[str, float], work: TrainWorkload, layout: Layout
) -> float:
    """Seconds of the collectives that run behind compute (module docstring)."""
    total = sum(by_kernel.values())
    last_backward = total / micro_batches(work, layout) * (_passes(layout) - 1) / _passes(layout)
    behind = {
        _OVERLAPS[0]: by_kernel.get("attention", 0.0),
        _OVERLAPS[1]: total,
        _OVERLAPS[2]: last_backward,
        _OVERLAPS[3]: by_kernel.get("moe_gemm", 0.0) if work.overlap_all_to_all else 0.0,
    }
    spent: dict[str, float] = {}
    for t in transfers:
        key = _overlap(t.collective)
        if key is not None and t.seconds is not None:
            spent[key] = spent.get(key, 0.0) + t.seconds
    return sum(min(seconds, behind[key]) for key, seconds in spent.items())


#: ``_train_kernels`` by model, workload, layout, options and the GPU (``Cluster.gpu_key``).
_STEP_KERNELS: dict[tuple, tuple[float, dict[str, float] | None, float | None, float, float | None]] = {}


def _train_kernels(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, options: Options
) -> tuple[float, dict[str, float] | None, float | None, float, float | None]:
    """(FLOPs, seconds by kernel, compute seconds with the bubble, HBM bytes, HBM seconds) of one
    step on one GPU: they depend on the GPU and not on its links (looked up once per GPU)."""
    key = (model, work, layout, options, cluster.gpu_key)
    found = _STEP_KERNELS.get(key)
    if found is not None:
        return found
    m = micro_batches(work, layout)
    flops_per_token = sum(training_flops_by_kernel(model, work.sequence_tokens).values())
    flops = work.global_batch_tokens * _passes(layout) * flops_per_token / layout.gpus
    by_kernel = kernel_seconds(model, work, layout, cluster, options)
    compute = None if by_kernel is None else sum(by_kernel.values()) * bubble(work, layout)
    non_expert, expert = params_per_gpu(model, layout)
    params = non_expert + expert
    state = sum(BYTES_PER_ELEMENT[f] for f in OPTIMIZER_STATES[work.optimizer])
    hbm = TRAIN_PASSES * m * params * BYTES_PER_ELEMENT[TRAIN_WEIGHT_DTYPE] + params * state
    return store(_STEP_KERNELS, key, (flops, by_kernel, compute, hbm, _seconds(hbm, _hbm_rate(cluster))))


def step_floor_s(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, options: Options
) -> float | None:
    """The least ``train_step`` can take: its compute (with the bubble) or its HBM time, whichever is
    longer (the collectives only add to it); None when either is unknown."""
    _, _, compute, _, memory = _train_kernels(model, work, layout, cluster, options)
    return None if compute is None or memory is None else max(compute, memory)


#: ``_micro_transfers`` by model, workload, layout, options and ``Cluster.links_key``.
_MICRO: dict[tuple, tuple[Transfer, ...]] = {}


def _micro_transfers(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, options: Options
) -> tuple[Transfer, ...]:
    """A step's collectives of the micro-batches' passes (TP's all-reduces, the pipeline's sends;
    the experts' are ``_expert_transfers``), each repeated once per micro-batch. Looked up by the
    cluster's links: a ranking's bound (``exposed_floor_s``) and the step both read them."""
    key = (model, work, layout, options, cluster.links_key)
    found = _MICRO.get(key)
    if found is None:
        m = micro_batches(work, layout)
        micro_tokens = work.sequence_tokens * work.micro_batch_sequences / layout.cp
        per_micro = _pass_transfers(
            model,
            layout,
            cluster,
            options,
            micro_tokens,
            passes=2 + layout.recomputed_share,
            pp_sends=2 * layout.virtual,
            workload="train",
        )
        found = store(
            _MICRO, key, tuple(_times(t, m) for t in per_micro if not t.collective.startswith("EP"))
        )
    return found


def exposed_floor_s(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, options: Options
) -> float | None:
    """The least the collectives add to ``train_step``: the micro-batches' calls that never run
    behind compute (``_hidden``), None when one has no time."""
    total = 0.0
    for t in _micro_transfers(model, work, layout, cluster, options):
        if _overlap(t.collective) is None:
            if t.seconds is None:
                return None
            total += t.seconds
    return total


def train_step(
    model: ModelSpec, work: TrainWorkload, layout: Layout, cluster: Cluster, options: Options
) -> StepCost:
    """One optimizer step of ``work`` under ``layout`` on one GPU (formulas in the module docstring)."""
    flops, by_kernel, compute, hbm, memory = _train_kernels(model, work, layout, cluster, options)
    transfers = list(_micro_transfers(model, work, layout, cluster, options))
    transfers += _expert_transfers(model, work, layout, cluster, 2 + layout.recomputed_share)
    transfers += _context_transfers(model, work, layout, cluster)
    transfers += _weight_transfers(model, work, layout, cluster)
    hidden = 0.0 if by_kernel is None else _hidden(transfers, by_kernel, work, layout)
    return StepCost(flops, compute, hbm, memory, tuple(transfers), hidden_s=hidden)
