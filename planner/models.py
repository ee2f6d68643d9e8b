"""What is planned: a model (its published configuration) and a workload (serving or training).

A model is read from a preset (``planner/presets/<name>.toml``) or from a user's TOML/JSON text with
the same keys; an unknown or missing key, a non-positive size or an inconsistent MoE shape is a
``ParseError`` naming the key and the value. Counts (parameters, layers, heads) are plain numbers;
every other figure carries its unit in its name.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import MISSING, dataclass, fields
from importlib import resources

from normalize.errors import ParseError
from planner.conversions import BYTES_PER_ELEMENT

#: The two workloads the planner knows.
WORKLOADS = ("serve", "train")


@dataclass(frozen=True)
class ModelSpec:
    """A transformer as its published configuration describes it.

    ``ffn_hidden_size`` is the MLP width of dense layers. A mixture of experts sets ``experts``
    (routed experts per MoE layer), ``experts_per_token``, ``expert_ffn_hidden_size`` and, when its
    first layers are dense, ``dense_layers``; shared experts count with the non-expert weights.
    ``kv_lora_rank`` > 0 selects multi-head latent attention (DeepSeek): the KV cache then holds
    ``kv_lora_rank + rope_head_dim`` elements per token per layer, replicated on every TP rank.
    """

    name: str
    source_url: str
    source_note: str
    params_total: float
    params_active: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden_size: int
    vocab_size: int
    weight_dtype: str = "bf16"
    kv_cache_dtype: str = "bf16"
    experts: int = 0
    experts_per_token: int = 0
    expert_ffn_hidden_size: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    kv_lora_rank: int = 0
    rope_head_dim: int = 0

    def __post_init__(self) -> None:
        _check_model(self)

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def expert_params(self) -> float:
        """Routed-expert parameters: MoE layers x experts x 3 matrices (gate, up, down), each
        hidden size x expert width."""
        return float(self.moe_layers * self.experts * 3 * self.hidden_size * self.expert_ffn_hidden_size)

    @property
    def non_expert_params(self) -> float:
        """Everything else (attention, dense MLPs, shared experts, embeddings, norms)."""
        return self.params_total - self.expert_params

    @property
    def attention_dim(self) -> int:
        """heads x head dim: the width the attention FLOPs scale with."""
        return self.attention_heads * self.head_dim

    @property
    def kv_elements_per_token_per_layer(self) -> int:
        """K and V (2 x KV heads x head dim), or MLA's latent plus its RoPE key."""
        if self.is_mla:
            return self.kv_lora_rank + self.rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token adds across all layers, unsharded."""
        return self.kv_elements_per_token_per_layer * self.layers * BYTES_PER_ELEMENT[self.kv_cache_dtype]


def _check_model(m: ModelSpec) -> None:
    where = f"model {m.name!r}"
    for name in ("params_total", "params_active"):
        value = getattr(m, name)
        if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise ParseError(f"{where}: {name} must be a positive number, got {value!r}")
    for name in (
        "layers",
        "hidden_size",
        "attention_heads",
        "kv_heads",
        "head_dim",
        "ffn_hidden_size",
        "vocab_size",
    ):
        if not (isinstance(getattr(m, name), int) and getattr(m, name) > 0):
            raise ParseError(f"{where}: {name} must be a positive whole number, got {getattr(m, name)!r}")
    for name in ("weight_dtype", "kv_cache_dtype"):
        if getattr(m, name) not in BYTES_PER_ELEMENT:
            raise ParseError(
                f"{where}: {name} {getattr(m, name)!r} is not one of {sorted(BYTES_PER_ELEMENT)}"
            )
    if m.attention_heads % m.kv_heads:
        raise ParseError(
            f"{where}: attention_heads {m.attention_heads} is not a multiple of kv_heads {m.kv_heads}"
        )
    if m.params_active > m.params_total:
        raise ParseError(
            f"{where}: params_active {m.params_active:g} exceeds params_total {m.params_total:g}"
        )
    if m.is_moe:
        if not 0 < m.experts_per_token <= m.experts or m.expert_ffn_hidden_size <= 0:
            raise ParseError(
                f"{where}: a mixture of experts needs 0 < experts_per_token <= experts "
                "and an expert_ffn_hidden_size"
            )
        if not 0 <= m.dense_layers < m.layers or m.expert_params >= m.params_total:
            raise ParseError(f"{where}: its experts ({m.expert_params:.4g} parameters) exceed params_total")
    elif m.params_active != m.params_total:
        raise ParseError(f"{where}: a dense model has params_active == params_total")


@dataclass(frozen=True)
class ServeWorkload:
    """Serving: each model replica holds ``batch_sequences`` conversations at once, each reading a
    ``prompt_tokens`` prompt and writing ``output_tokens``; ``target_tokens_per_s`` (output tokens,
    whole cluster) is what the user needs, if they said. ``prefill_chunk_tokens`` bounds the tokens
    one prefill pass holds activations for (chunked prefill)."""

    batch_sequences: int = 32
    prompt_tokens: int = 2048
    output_tokens: int = 512
    target_tokens_per_s: float | None = None
    prefill_chunk_tokens: int = 8192
    kind: str = "serve"

    def __post_init__(self) -> None:
        for name in ("batch_sequences", "prompt_tokens", "output_tokens", "prefill_chunk_tokens"):
            _positive_int("serving workload", name, getattr(self, name))
        if self.target_tokens_per_s is not None and not (
            math.isfinite(self.target_tokens_per_s) and self.target_tokens_per_s > 0
        ):
            raise ParseError(
                f"serving workload: target_tokens_per_s must be positive, got {self.target_tokens_per_s!r}"
            )


#: Optimizer state per parameter, as the element formats it keeps (fp32 master weights and moments).
OPTIMIZER_STATES = {"adam": ("fp32", "fp32", "fp32"), "sgd": ("fp32", "fp32")}
#: Activation recomputation choices; "auto" takes selective where it fits and full otherwise.
RECOMPUTE = ("auto", "selective", "full")


@dataclass(frozen=True)
class TrainWorkload:
    """Training: ``global_batch_tokens`` per optimizer step in sequences of ``sequence_tokens``,
    micro-batches of ``micro_batch_sequences``; ``precision`` is the matmul format (bf16 or fp8;
    weights and gradients are kept in bf16 either way); ``optimizer`` adam or sgd (with momentum),
    its state sharded across data-parallel ranks when ``shard_optimizer`` (ZeRO-1); ``recompute``
    selective, full, or auto (selective where it fits, else full)."""

    global_batch_tokens: int = 512 * 8192
    sequence_tokens: int = 8192
    micro_batch_sequences: int = 1
    precision: str = "bf16"
    optimizer: str = "adam"
    shard_optimizer: bool = True
    recompute: str = "auto"
    kind: str = "train"

    def __post_init__(self) -> None:
        for name in ("global_batch_tokens", "sequence_tokens", "micro_batch_sequences"):
            _positive_int("training workload", name, getattr(self, name))
        if self.precision not in ("bf16", "fp8"):
            raise ParseError(f"training workload: precision must be bf16 or fp8, got {self.precision!r}")
        if self.optimizer not in OPTIMIZER_STATES:
            raise ParseError(f"training workload: optimizer must be one of {sorted(OPTIMIZER_STATES)}")
        if self.recompute not in RECOMPUTE:
            raise ParseError(
                f"training workload: recompute must be one of {RECOMPUTE}, got {self.recompute!r}"
            )
        if self.global_batch_tokens < self.sequence_tokens:
            raise ParseError("training workload: global_batch_tokens is less than one sequence")

    @property
    def global_batch_sequences(self) -> float:
        return self.global_batch_tokens / self.sequence_tokens


def _positive_int(what: str, name: str, value: object) -> None:
    if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        raise ParseError(f"{what}: {name} must be a positive whole number, got {value!r}")


_MODEL_KEYS = {f.name for f in fields(ModelSpec)}
_REQUIRED = {f.name for f in fields(ModelSpec) if f.default is MISSING}


def model_from_mapping(data: dict, origin: str) -> ModelSpec:
    """A model from a parsed TOML/JSON table; ParseError naming ``origin`` for a bad key or value."""
    if not isinstance(data, dict):
        raise ParseError(f"{origin}: a model is a table of keys, got {type(data).__name__}")
    unknown = sorted(set(data) - _MODEL_KEYS)
    if unknown:
        raise ParseError(
            f"{origin}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_MODEL_KEYS))}"
        )
    missing = sorted(_REQUIRED - set(data))
    if missing:
        raise ParseError(f"{origin}: missing key(s) {', '.join(missing)}")
    try:
        return ModelSpec(**data)
    except ParseError as exc:
        raise ParseError(f"{origin}: {exc}") from exc


def model_from_text(text: str, origin: str) -> ModelSpec:
    """A model from TOML or JSON text (JSON when it starts with '{'); ``origin`` names it in errors."""
    try:
        data = json.loads(text) if text.lstrip().startswith("{") else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ParseError(f"{origin}: not TOML or JSON: {exc}") from exc
    return model_from_mapping(data, origin)


def preset_names() -> list[str]:
    """The shipped presets, by file name (``llama-3.1-70b``)."""
    folder = resources.files("planner").joinpath("presets")
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def preset(name: str) -> ModelSpec:
    """A shipped preset by name; ParseError listing the presets for an unknown one."""
    if name not in preset_names():
        raise ParseError(f"unknown model preset {name!r}; presets: {', '.join(preset_names())}")
    text = resources.files("planner").joinpath("presets", f"{name}.toml").read_text(encoding="utf-8")
    return model_from_text(text, f"preset {name}")
