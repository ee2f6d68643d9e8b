"""One step's time on one GPU: compute, HBM reads and the collectives; serving's pass here, a
training step in ``planner.training`` (which uses this module's pieces).

step = max(compute, memory) + communication: compute and HBM reads overlap each other; serving counts
the collectives as not overlapped with either (so the communication share is an upper bound), training
hides some behind compute (``StepCost.hidden_s``). All figures are per GPU of the busiest kind (an
average pipeline stage).

- compute = FLOPs per GPU / (dense peak of the matmul format × efficiency). A forward pass costs
  2 × active parameters + 4 × layers × context × heads × head dim FLOPs per token (PaLM's count,
  https://arxiv.org/abs/2204.02311, appendix B); training costs three forward passes per token, four
  with full recomputation.
- memory = bytes read from HBM per GPU / HBM bandwidth. Serving runs a pass as PP micro-batches so
  that every stage has work, and a stage reads its weight shard once per micro-batch (a mixture of
  experts only the experts some token of the micro-batch picked: T tokens routing to k of E experts
  pick a fraction 1 − (1 − k/E)^T of them). So pipeline stages do not cut a GPU's weight reads per
  pass; tensor and expert parallelism do. Each GPU also reads its KV cache. Training reads its
  weights three times per micro-batch (forward, two backward matmuls) and its optimizer state once.
- the collectives, per pass: TP all-reduces (two per layer forward, four in training) of the tokens'
  hidden states; EP all-to-alls (dispatch and combine, doubled in training) of tokens × k hidden
  vectors split over TP ranks (serving: the busiest rank's, ``planner.serve_pass``); PP sends of
  the hidden states split over TP ranks (forward, plus the gradient back in training); in training
  the gradient all-reduce over data-parallel ranks (bf16).
  Activations move in ``activation_dtype`` (bf16 by default).
"""

from __future__ import annotations

import functools

from planner.comms import Transfer, all_reduce, all_to_all, send
from planner.conversions import BYTES_PER_ELEMENT, gbytes_per_s_to_bytes_per_s, tflops_to_flops
from planner.efficiency import compute_efficiency, hbm_efficiency
from planner.hardware import Cluster
from planner.layouts import Layout, groups
from planner.memo import fields_hash, state_without_hash
from planner.models import ModelSpec, TrainWorkload
from records.frozen import record

#: Forward, backward through activations, backward through weights.
TRAIN_PASSES = 3


@record
class Options:
    """What the user may set: the share of the dense peak every kernel reaches (None: the measured
    table, ``planner.efficiency``), the share of each GPU's memory a plan may fill, the format
    activations move in, whether TP may leave the NVLink domain."""

    compute_efficiency: float | None = None
    usable_memory_fraction: float = 0.9
    activation_dtype: str = "bf16"
    tp_across_domain: bool = False

    __hash__ = fields_hash  # computed once: the planner's caches are keyed on the options
    __getstate__ = state_without_hash


@record
class KernelTime:
    """One kernel class of a pass on one GPU: its FLOPs and HBM bytes and their times (None when
    the peak or the HBM bandwidth is not known); it takes the longer of the two, plus ``fixed_s``
    (its calls' fixed cost)."""

    kernel: str
    flops: float
    hbm_bytes: float
    compute_s: float | None
    memory_s: float | None
    fixed_s: float = 0.0

    @property
    def seconds(self) -> float | None:
        if self.compute_s is None or self.memory_s is None:
            return None
        return max(self.compute_s, self.memory_s) + self.fixed_s


def _total(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v or 0.0 for v in values)


@record
class StepCost:
    """One step of one GPU: FLOPs and HBM bytes with their times (None when the peak or the HBM
    bandwidth is not known) and the collectives. With ``kernels`` (serving) the step is their
    times in turn, each the longer of its compute and its reads; without, max(compute, memory).
    ``hidden_s`` of the collectives' time runs behind compute (training's overlaps,
    ``planner.training``; serving hides none)."""

    flops_per_gpu: float
    compute_s: float | None
    hbm_bytes_per_gpu: float
    memory_s: float | None
    transfers: tuple[Transfer, ...]
    kernels: tuple[KernelTime, ...] = ()
    hidden_s: float = 0.0

    @classmethod
    def of_kernels(cls, kernels: tuple[KernelTime, ...], transfers: tuple[Transfer, ...]) -> StepCost:
        """A step made of ``kernels`` run one after another, and ``transfers``."""
        return cls(
            sum(k.flops for k in kernels),
            _total([k.compute_s for k in kernels]),
            sum(k.hbm_bytes for k in kernels),
            _total([k.memory_s for k in kernels]),
            transfers,
            kernels,
        )

    def with_transfers(self, transfers: tuple[Transfer, ...]) -> StepCost:
        """The same kernels and times with ``transfers`` as its collectives."""
        return StepCost(
            self.flops_per_gpu,
            self.compute_s,
            self.hbm_bytes_per_gpu,
            self.memory_s,
            transfers,
            self.kernels,
            self.hidden_s,
        )

    # The times below are read many times over (ranking, verdicts, costs): each is computed once.
    @functools.cached_property
    def comm_s(self) -> float | None:
        times = [t.seconds for t in self.transfers if t.seconds is not None]
        return sum(times) if len(times) == len(self.transfers) else None

    @functools.cached_property
    def exposed_comm_s(self) -> float | None:
        """The collectives' time the step waits for: all of it but what runs behind compute."""
        return None if self.comm_s is None else max(0.0, self.comm_s - self.hidden_s)

    @functools.cached_property
    def step_s(self) -> float | None:
        exposed = self.exposed_comm_s
        if self.compute_s is None or self.memory_s is None or exposed is None:
            return None
        if self.kernels:
            return (_total([k.seconds for k in self.kernels]) or 0.0) + exposed
        return max(self.compute_s, self.memory_s) + exposed


def matmul_dtype(model: ModelSpec, cluster: Cluster, training: TrainWorkload | None = None) -> str:
    """The format matmuls run in: training's precision; serving the weights' format where the GPU
    has a peak for it (fp4 on Blackwell), else the next wider one it has (fp8, then bf16)."""
    if training is not None:
        return training.precision
    node = cluster.node
    if model.weight_dtype in ("fp4", "int4") and node.dense_fp4_tflops:
        return "fp4"
    if model.weight_dtype in ("fp4", "int4", "fp8", "int8") and node.dense_fp8_tflops:
        return "fp8"
    return "bf16"


def peak_flops(cluster: Cluster, dtype: str) -> float | None:
    """The dense per-GPU peak for ``dtype`` in FLOP/s, None when the datasheet table has none."""
    node = cluster.node
    tflops = {"fp4": node.dense_fp4_tflops, "fp8": node.dense_fp8_tflops}.get(dtype, node.dense_bf16_tflops)
    return None if tflops is None else tflops_to_flops(tflops)


def _seconds(amount: float, rate: float | None) -> float | None:
    return None if rate is None else amount / rate


def forward_flops_per_token(model: ModelSpec, context_tokens: float) -> float:
    """2 × active parameters + 4 × layers × context × heads × head dim."""
    return sum(flops_by_kernel(model, context_tokens).values())


def flops_by_kernel(model: ModelSpec, context_tokens: float) -> dict[str, float]:
    """A token's forward FLOPs by kernel class: the routed experts' grouped GEMMs (2 × the active
    expert parameters), attention's products (4 × layers × context × heads × head dim), and the
    dense GEMMs (2 × every other active parameter)."""
    active_experts = (
        model.moe_layers * model.experts_per_token * 3 * model.hidden_size * model.expert_ffn_hidden_size
    )
    return {
        "dense_gemm": 2 * (model.params_active - active_experts),
        "moe_gemm": 2.0 * active_experts,
        "attention": 4.0 * model.layers * context_tokens * model.attention_dim,
    }


def compute_seconds(
    model: ModelSpec,
    cluster: Cluster,
    options: Options,
    dtype: str,
    tokens_by_context: list[tuple[float, float]],
    per_gpu: float,
) -> float | None:
    """Seconds to compute ``tokens`` tokens at each context (divided by ``per_gpu`` GPUs): each
    kernel class's FLOPs at the peak times its measured share (or the user's one share)."""
    rate = peak_flops(cluster, dtype)
    if rate is None:
        return None
    seconds = 0.0
    for tokens, context in tokens_by_context:
        for kernel, flops in flops_by_kernel(model, context).items():
            share = (
                options.compute_efficiency
                or compute_efficiency(cluster.node.gpu_model, kernel, dtype).fraction
            )
            seconds += tokens * flops / per_gpu / (rate * share)
    return seconds


def experts_touched(model: ModelSpec, tokens: float) -> float:
    """Expected share of routed experts some token picks: 1 − (1 − k/E)^T (1 for a dense model)."""
    if not model.is_moe:
        return 1.0
    return 1 - (1 - model.experts_per_token / model.experts) ** tokens


def _hbm_rate(cluster: Cluster) -> float | None:
    """The HBM bytes/s a memory-bound kernel reaches: the datasheet figure x its measured share."""
    bw = cluster.node.hbm_gbytes_per_s
    share = hbm_efficiency(cluster.node.gpu_model).fraction
    return None if bw is None else gbytes_per_s_to_bytes_per_s(bw) * share


def _pass_transfers(
    model: ModelSpec,
    layout: Layout,
    cluster: Cluster,
    options: Options,
    tokens: float,
    *,
    passes: float,
    pp_sends: int,
    workload: str,
    ep_load: float = 1.0,
) -> tuple[Transfer, ...]:
    """The collectives of ``passes`` passes through the layers (forward 1; training 2, or 3 with the
    recomputed forward) and ``pp_sends`` stage-boundary sends, over ``tokens`` tokens per attention
    group, on one GPU of an average stage; the EP all-to-alls move ``ep_load`` times the mean
    rank's tokens (the busiest rank's, which the others wait for)."""
    act = BYTES_PER_ELEMENT[options.activation_dtype]
    # Serving runs a pass as PP micro-batches, each with its own calls (and their latency).
    micro = layout.pp if workload == "serve" else 1
    hidden_bytes = tokens / micro * model.hidden_size * act
    g = groups(layout, workload)
    stage_layers = model.layers / layout.pp
    found = []
    if layout.tp > 1:
        count = 2 * passes * stage_layers * micro
        found.append(all_reduce("TP all-reduce", g["tp"], hidden_bytes, count, cluster))
    if layout.ep > 1:
        routed = hidden_bytes * model.experts_per_token / layout.tp * ep_load
        count = 2 * passes * model.moe_layers / layout.pp * micro
        found.append(all_to_all("EP all-to-all", g["ep"], routed, count, cluster))
    if layout.pp > 1:
        found.append(send("PP send", g["pp"], hidden_bytes / layout.tp, pp_sends * micro, cluster))
    return tuple(found)
