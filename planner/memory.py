"""Bytes one GPU holds under a layout: weights, KV cache, activations, gradients, optimizer state.

Per GPU, with P parameters, b(x) bytes per element of format x, L layers, h hidden size, and layers
split evenly over pipeline stages (an average stage; fractions allowed):

- weights: (P_non_expert / (TP·PP) + P_expert / (TP·PP·EP)) × b(weights)
- KV cache (serving): B/EP sequences (B per replica) × (prompt + output) tokens × KV elements per
  token per layer ×
  L/PP × b(kv) / min(TP, KV heads). GQA's KV heads are split over TP ranks and repeated beyond their
  number; MLA's latent is whole on every rank (divisor 1).
- activations (serving): one prefill pass's workspace, 34 bytes × tokens × h / TP with
  tokens = min(prefill chunk, B × prompt) / EP.
- training: ``planner.training.train_memory`` (weights and gradients in ``TRAIN_WEIGHT_DTYPE``).
"""

from __future__ import annotations

from planner.conversions import BYTES_PER_ELEMENT
from planner.layouts import Layout
from planner.models import ModelSpec, ServeWorkload
from records.frozen import record

#: Activation bytes per token per hidden unit per layer, selective recomputation (Korthikanti et al.).
ACTIVATION_BYTES_SELECTIVE = 34
#: Training keeps weights and gradients on the GPU in this format, whatever the matmul precision.
TRAIN_WEIGHT_DTYPE = "bf16"


@record
class MemoryUse:
    """Bytes per GPU, by what holds them."""

    weights_bytes: float
    kv_cache_bytes: float = 0.0
    activation_bytes: float = 0.0
    gradient_bytes: float = 0.0
    optimizer_bytes: float = 0.0

    @property
    def total_bytes(self) -> float:
        return (
            self.weights_bytes
            + self.kv_cache_bytes
            + self.activation_bytes
            + self.gradient_bytes
            + self.optimizer_bytes
        )


def params_per_gpu(model: ModelSpec, layout: Layout) -> tuple[float, float]:
    """(non-expert, expert) parameters one GPU holds."""
    shard = layout.tp * layout.pp
    return model.non_expert_params / shard, model.expert_params / (shard * layout.ep)


def kv_split(model: ModelSpec, tp: int) -> int:
    """How many ways TP divides the KV cache: min(TP, KV heads) for GQA, 1 for MLA."""
    return 1 if model.is_mla else min(tp, model.kv_heads)


def serve_memory(
    model: ModelSpec, work: ServeWorkload, layout: Layout, sequences: float | None = None
) -> MemoryUse:
    """Bytes per GPU to serve ``sequences`` conversations per replica under ``layout`` (one, the
    least a replica holds, when None; formulas in the module docstring)."""
    b = 1.0 if sequences is None else sequences
    non_expert, expert = params_per_gpu(model, layout)
    weights = (non_expert + expert) * BYTES_PER_ELEMENT[model.weight_dtype]
    kv_tokens = b / layout.ep * (work.prompt_tokens + work.output_tokens)
    kv = kv_tokens * model.kv_bytes_per_token / layout.pp / kv_split(model, layout.tp)
    chunk_tokens = min(work.prefill_chunk_tokens, b * work.prompt_tokens) / layout.ep
    activations = ACTIVATION_BYTES_SELECTIVE * chunk_tokens * model.hidden_size / layout.tp
    return MemoryUse(weights, kv_cache_bytes=kv, activation_bytes=activations)
