"""One serving pass on one GPU, kernel by kernel: the dense GEMMs, the routed experts' grouped GEMMs
and attention each take the longer of their compute and their HBM reads, and the kernels run one
after another, so their times add (a roofline per kernel, as LLM-Viewer sums its layers,
https://arxiv.org/abs/2402.16363). A GEMM's weights and attention's KV cache are not read while the
other computes: at a large batch the GEMMs are compute-bound and attention still pays for its KV
reads, which one max(compute, memory) over the whole pass would hide.

Per GPU of an average pipeline stage, for T tokens in the pass (B decode tokens and the prompt
tokens chunked prefill mixes in):

- dense GEMMs: 2 x (active parameters - routed experts') FLOPs per token / (TP x PP x EP) at the
  dense GEMM's measured share of the peak; they read the GPU's non-expert weights once per PP
  micro-batch at the share of HBM a GEMM with few rows streams (``hbm_efficiency``'s
  ``gemm_weights``);
- routed experts: 2 x the active expert parameters per token, on the busiest EP rank (its tokens
  exceed the mean by routing's chance and the router's measured skew: ``busiest_rank_share``),
  each of its experts' rows padded, at that rank's load, to the grouped GEMM's 128-row block
  (``EXPERT_ROW_BLOCK``), at a share that falls with those rows per expert
  (``planner.efficiency.grouped_rows_share``); they read the experts some token picked,
  1 - (1 - k/E)^tokens of them;
- attention: 4 x layers x context x heads x head dim FLOPs per token (PaLM's count,
  https://arxiv.org/abs/2204.02311); decode reads its KV cache at the ``stream`` share of HBM
  (FlashMLA's), an FP8 cache at the ``kv_cache_fp8`` share (dequantizing what it reads, it streams
  less where a row measured it); prefill's products are compute-bound;
- the collectives (``planner.step``'s): TP all-reduces, EP all-to-alls (the busiest rank's tokens:
  the others wait for it) and PP sends, not overlapped with the kernels.
"""

from __future__ import annotations

import functools
import math

from planner.comms import Transfer
from planner.conversions import BYTES_PER_ELEMENT, gbytes_per_s_to_bytes_per_s
from planner.efficiency import (
    Efficiency,
    compute_efficiency,
    gemm_k_share,
    grouped_rows_share,
    hbm_efficiency,
)
from planner.hardware import Cluster
from planner.layouts import Layout
from planner.memo import store
from planner.memory import kv_split, params_per_gpu
from planner.models import ModelSpec
from planner.step import (
    KernelTime,
    Options,
    StepCost,
    experts_touched,
    flops_by_kernel,
    matmul_dtype,
    peak_flops,
)
from planner.step import _pass_transfers as pass_transfers

#: Each expert's tokens are padded to the grouped GEMM's block of rows: DeepGEMM's
#: ``get_m_alignment_for_contiguous_layout()`` returns 128, and its README: "each expert segment
#: must be aligned to the GEMM M block size" (https://github.com/deepseek-ai/DeepGEMM).
EXPERT_ROW_BLOCK = 128
EXPERT_ROW_BLOCK_SOURCE = "https://github.com/deepseek-ai/DeepGEMM"
#: Attention's products run at most in FP8 (an FP4 model's attention is FP8: the KV cache is).
ATTENTION_DTYPE = {"fp4": "fp8"}


#: A router's systematic skew: the spread of the tokens experts receive, as a coefficient of
#: variation per expert. TensorRT-LLM's EP study of DeepSeek R1 on 32 GB200 (EP32, 256 experts, 8
#: per rank) reports rank loads of mean 1,024 tokens with a standard deviation of 491.65 averaged
#: over layers (and max / mean - 1 = 1.564) without its load balancer: a rank CV of 0.480, so
#: 0.480 x sqrt(8) = 1.358 per expert (hot experts, stable over hundreds of iterations). Uniform
#: random routing would give a rank CV of 1 / sqrt(1024) = 0.031.
EXPERT_LOAD_CV = 0.480 * math.sqrt(8)
EXPERT_LOAD_CV_SOURCE = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/blogs/tech_blog/"
    "blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md"
)


def busiest_rank_share(model: ModelSpec, tokens: float, ep: int) -> float:
    """Tokens the busiest of ``ep`` expert-parallel ranks computes, over the mean. A rank's load
    (mean λ = tokens x k / EP) varies by routing's chance, a variance of about λ, and by the
    router's skew: the rank's E / EP experts, each with a load CV of ``EXPERT_LOAD_CV``, sum to a
    rank CV of EXPERT_LOAD_CV / sqrt(E / EP). The largest of EP such loads is about
    λ (1 + sqrt(2 ln EP) x CV) (the expected maximum of EP near-normal variables; the measured
    maximum, 2.56 x the mean, lies above this model's 2.26)."""
    if not model.is_moe or ep <= 1 or tokens <= 0:
        return 1.0
    mean = tokens * model.experts_per_token / ep
    skew = EXPERT_LOAD_CV / math.sqrt(model.experts / ep)
    return 1 + math.sqrt(2 * math.log(ep)) * math.sqrt(1 / mean + skew**2)


def expert_rows(model: ModelSpec, tokens: float) -> tuple[float, float]:
    """(rows a touched expert needs, rows its grouped GEMM computes) for ``tokens`` tokens: the mean
    load (tokens x k / E / the share touched) and that load padded to ``EXPERT_ROW_BLOCK`` rows (at
    least one block, half a block on average above that)."""
    touched = experts_touched(model, tokens)
    load = tokens * model.experts_per_token / model.experts / touched
    return load, max(EXPERT_ROW_BLOCK, load + EXPERT_ROW_BLOCK / 2)


def padded_rows_share(model: ModelSpec, tokens: float) -> float:
    """Rows the grouped GEMM computes over the rows it needs (``expert_rows``)."""
    if not model.is_moe or tokens <= 0:
        return 1.0
    load, padded = expert_rows(model, tokens)
    return padded / load


def _kernel(
    kernel: str,
    flops: float,
    hbm_bytes: float,
    compute_rate: float | None,
    hbm_rate: float | None,
    fixed_s: float = 0.0,
) -> KernelTime:
    return KernelTime(
        kernel,
        flops,
        hbm_bytes,
        None if compute_rate is None else flops / compute_rate,
        None if hbm_rate is None else hbm_bytes / hbm_rate,
        fixed_s,
    )


@functools.lru_cache(maxsize=64)
def gemm_calls(model: ModelSpec) -> dict[str, float]:
    """GEMM launches one token's pass makes per GPU, by kernel class: per layer the fused QKV and
    the output projection, a dense MLP's fused gate-up and down, an MoE layer's two grouped GEMMs
    (and a shared expert's two), and the LM head once."""
    shared = 2 if model.shared_experts else 0
    dense = 2 * model.layers + 2 * (model.layers - model.moe_layers) + shared * model.moe_layers + 1
    return {"dense_gemm": float(dense), "moe_gemm": 2.0 * model.moe_layers}


def _attention_widths(model: ModelSpec) -> tuple[int, int]:
    """(query width, key + value width) of the attention projections (MLA: its latent and RoPE key)."""
    kv = model.kv_lora_rank + model.rope_head_dim if model.is_mla else 2 * model.kv_heads * model.head_dim
    return model.attention_dim, kv


@functools.lru_cache(maxsize=256)
def gemm_shapes(model: ModelSpec, tp: int) -> dict[str, tuple[tuple[float, float], ...]]:
    """(parameters, reduction length K) of the GEMMs one token passes, by kernel class: the
    attention projections (K = hidden; the output projection K = heads x head dim / TP), the dense
    MLPs' gate and up (K = hidden) and down (K = MLP width / TP), every other non-expert weight
    (shared experts, the LM head) at K = hidden; a routed expert's gate and up and its down."""
    h = model.hidden_size
    q_out, kv_out = _attention_widths(model)
    dense_mlp_layers = model.layers - model.moe_layers
    attention = [
        (float(model.layers * h * (q_out + kv_out)), h),
        (float(model.layers * q_out * h), q_out / tp),
    ]
    mlp = [
        (float(dense_mlp_layers * 2 * h * model.ffn_hidden_size), h),
        (float(dense_mlp_layers * h * model.ffn_hidden_size), model.ffn_hidden_size / tp),
    ]
    routed_active = model.moe_layers * model.experts_per_token * 3 * h * model.expert_ffn_hidden_size
    rest = model.params_active - routed_active - sum(p for p, _ in attention + mlp)
    dense = (*attention, *mlp, (max(rest, 0.0), h))
    fe = model.expert_ffn_hidden_size
    routed = ((2.0 * h * fe, h), (1.0 * h * fe, fe / tp)) if model.is_moe else ()
    return {"dense_gemm": dense, "moe_gemm": routed}


@functools.lru_cache(maxsize=1024)
def _shape_share(measured: Efficiency, shapes: tuple[tuple[float, float], ...]) -> float:
    """The share a mix of GEMMs reaches: each at ``gemm_k_share`` for its K, weighted by its FLOPs
    (times add, so the shares combine harmonically)."""
    total = sum(p for p, _ in shapes)
    if total <= 0:
        return measured.fraction
    return total / sum(p / gemm_k_share(k, measured) for p, k in shapes if p > 0)


@functools.lru_cache(maxsize=256)
def activation_elements(model: ModelSpec, tp: int) -> dict[str, float]:
    """Activation elements one token moves through HBM per layer on one GPU (LLM-Viewer's layer
    list, https://github.com/hahnyuan/LLM-Viewer ``model_analyzer.py``: each linear layer loads its
    input and stores its output; the two norms and the two residual adds load and store the hidden
    state; the MLP's activation loads gate and up and stores their product), by kernel class:
    ``dense_gemm`` and ``moe_gemm`` their inputs and outputs, ``elementwise`` the norms, adds and
    activations, and an MoE layer's gather of each token into its k experts' rows and the reduce
    back. A layer's share of MoE and dense MLPs is averaged over the layers."""
    h = model.hidden_size
    q_out, kv_out = _attention_widths(model)
    moe_share = model.moe_layers / model.layers
    f, fe, k = model.ffn_hidden_size / tp, model.expert_ffn_hidden_size / tp, model.experts_per_token
    dense_io = (h + (q_out + kv_out) / tp) + (q_out / tp + h) + (1 - moe_share) * (h + 2 * f + f + h)
    routed_io = moe_share * k * (h + 3 * fe + h)
    act = (1 - moe_share) * 3 * f + moe_share * k * 3 * fe
    # Routing gathers each token's hidden state into k expert rows before the grouped GEMMs and
    # reduces the k rows back after them: each way reads or writes k + 1 hidden states.
    permute = moe_share * 2 * (k + 1) * h
    return {"dense_gemm": dense_io, "moe_gemm": routed_io, "elementwise": 8 * h + act + permute}


def serve_pass(
    model: ModelSpec,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    *,
    sequences: float,
    new_tokens: float,
    context_tokens: float,
    prefill_tokens: float = 0.0,
    prefill_context_tokens: float = 0.0,
) -> StepCost:
    """One forward pass of a replica over ``sequences`` x ``new_tokens`` tokens, each attending to
    ``context_tokens`` (decode: 1 new token per sequence; prefill: the prompt), plus
    ``prefill_tokens`` of prompts mixed into the same pass (chunked prefill), attending to
    ``prefill_context_tokens`` each (formulas in the module docstring)."""
    kernels = pass_kernels(
        model,
        layout,
        cluster,
        options,
        sequences=sequences,
        new_tokens=new_tokens,
        context_tokens=context_tokens,
        prefill_tokens=prefill_tokens,
        prefill_context_tokens=prefill_context_tokens,
    )
    tokens = sequences * new_tokens + prefill_tokens
    return kernels.with_transfers(serve_transfers(model, layout, cluster, options, tokens))


def serve_transfers(
    model: ModelSpec, layout: Layout, cluster: Cluster, options: Options, tokens: float
) -> tuple[Transfer, ...]:
    """The collectives of a pass over ``tokens`` tokens of a replica (``planner.step``'s), the EP
    all-to-alls at the busiest rank's load."""
    return pass_transfers(
        model,
        layout,
        cluster,
        options,
        tokens / layout.ep,
        passes=1,
        pp_sends=1,
        workload="serve",
        ep_load=busiest_rank_share(model, tokens / layout.pp, layout.ep),
    )


#: ``pass_kernels`` by model, layout, options, the GPU (``Cluster.gpu_key``) and the pass's tokens
#: (each with its type: a whole number is kept as one).
_KERNELS: dict[tuple, StepCost] = {}


def pass_kernels(
    model: ModelSpec,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    *,
    sequences: float,
    new_tokens: float,
    context_tokens: float,
    prefill_tokens: float = 0.0,
    prefill_context_tokens: float = 0.0,
    padding_rows: float = 0.0,
) -> StepCost:
    """``serve_pass``'s kernels, without its collectives: they depend on the GPU and not on its
    links, so every board of one GPU shares them (looked up once). ``padding_rows`` are rows a
    CUDA graph computes beyond the pass's tokens (``planner.runs``): GEMMs and elementwise work,
    no attention."""
    counts = (sequences, new_tokens, context_tokens, prefill_tokens, prefill_context_tokens, padding_rows)
    key = (model, layout, options, cluster.gpu_key, counts, tuple(map(type, counts)))
    found = _KERNELS.get(key)
    if found is None:
        found = store(
            _KERNELS, key, StepCost.of_kernels(_pass_kernels(model, layout, cluster, options, *counts), ())
        )
    return found


def _pass_kernels(
    model: ModelSpec,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    sequences: float,
    new_tokens: float,
    context_tokens: float,
    prefill_tokens: float,
    prefill_context_tokens: float,
    padding_rows: float,
) -> tuple[KernelTime, ...]:
    decode_tokens = sequences * new_tokens
    tokens = decode_tokens + prefill_tokens + padding_rows
    gpus = layout.replica_gpus
    dtype = matmul_dtype(model, cluster)
    peak = peak_flops(cluster, dtype)
    gpu = cluster.node.gpu_model
    shapes = gemm_shapes(model, layout.tp)

    def rate(kernel: str) -> float | None:
        fmt = ATTENTION_DTYPE.get(dtype, dtype) if kernel == "attention" else dtype
        rated = peak_flops(cluster, fmt) if fmt != dtype else peak
        if rated is None:
            return None
        if options.compute_efficiency:
            return rated * options.compute_efficiency
        measured = compute_efficiency(gpu, kernel, fmt)
        return rated * (_shape_share(measured, shapes[kernel]) if kernel in shapes else measured.fraction)

    hbm = cluster.node.hbm_gbytes_per_s
    hbm_bytes_per_s = None if hbm is None else gbytes_per_s_to_bytes_per_s(hbm)

    calls = gemm_calls(model)

    def fixed(kernel: str) -> float:
        """The calls' fixed cost: launches x the measured row's time per call (the layers of every
        PP micro-batch's stage add up to the whole model once per GPU)."""
        if options.compute_efficiency or peak is None:
            return 0.0
        return calls[kernel] * compute_efficiency(gpu, kernel, dtype).call_s

    def hbm_rate(kernel: str) -> float | None:
        return None if hbm_bytes_per_s is None else hbm_bytes_per_s * hbm_efficiency(gpu, kernel).fraction

    decode_flops = flops_by_kernel(model, context_tokens)
    prefill_flops = flops_by_kernel(model, prefill_context_tokens)
    weight_bytes = BYTES_PER_ELEMENT[model.weight_dtype]
    # Activations per GPU: each EP rank holds tokens / EP of the replica's, over L / PP layers.
    activation = BYTES_PER_ELEMENT[options.activation_dtype] * tokens / layout.ep * model.layers / layout.pp
    moved = activation_elements(model, layout.tp)
    non_expert, expert = params_per_gpu(model, layout)
    micro_tokens = tokens / layout.pp  # the pass runs as PP micro-batches, one stage read each
    kernels = [
        _kernel(
            "dense_gemm",
            tokens * decode_flops["dense_gemm"] / gpus,
            non_expert * layout.pp * weight_bytes + activation * moved["dense_gemm"],
            rate("dense_gemm"),
            hbm_rate("gemm_weights"),
            fixed("dense_gemm"),
        )
    ]
    busiest = busiest_rank_share(model, micro_tokens, layout.ep)
    if model.is_moe:
        padded = padded_rows_share(model, micro_tokens * busiest)  # the busiest rank's experts
        moe_rate = rate("moe_gemm")
        if moe_rate is not None and not options.compute_efficiency and micro_tokens > 0:
            rows = expert_rows(model, micro_tokens * busiest)[1]
            moe_rate *= grouped_rows_share(rows, compute_efficiency(gpu, "moe_gemm", dtype))
        kernels.append(
            _kernel(
                "moe_gemm",
                tokens * decode_flops["moe_gemm"] / gpus * busiest * padded,
                expert * experts_touched(model, micro_tokens) * layout.pp * weight_bytes
                + activation * moved["moe_gemm"] * busiest,
                moe_rate,
                hbm_rate("gemm_weights"),
                fixed("moe_gemm"),
            )
        )
    kv_read = sequences / layout.ep * context_tokens * model.kv_bytes_per_token
    kernels.append(
        _kernel(
            "attention",
            decode_tokens * decode_flops["attention"] / gpus,
            kv_read / layout.pp / kv_split(model, layout.tp),
            rate("attention"),
            hbm_rate("kv_cache_fp8" if model.kv_cache_dtype == "fp8" else "stream"),
        )
    )
    if prefill_tokens:
        kernels.append(
            _kernel(
                "attention (prefill)",
                prefill_tokens * prefill_flops["attention"] / gpus,
                0.0,
                rate("attention"),
                hbm_rate("stream"),
            )
        )
    kernels.append(_kernel("elementwise", 0.0, activation * moved["elementwise"], 1.0, hbm_rate("stream")))
    return tuple(kernels)
