"""What is planned: a model (its published configuration) and a workload (serving or training).

A model is read from a preset (``planner/presets/<name>.toml``) or from a user's TOML/JSON text with
the same keys; an unknown or missing key, a non-positive size or an inconsistent MoE shape is a
``ParseError`` naming the key and the value. Counts (parameters, layers, heads) are plain numbers;
every other figure carries its unit in its name.
"""

from __future__ import annotations

import functools
import json
import math
import tomllib
from dataclasses import MISSING, fields
from importlib import resources

from normalize.errors import ParseError
from planner.conversions import BYTES_PER_ELEMENT
from planner.memo import fields_hash, state_without_hash
from records.frozen import record

#: The two workloads the planner knows.
WORKLOADS = ("serve", "train")


@record
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

    __hash__ = fields_hash  # computed once: the planner's caches are keyed on the model
    __getstate__ = state_without_hash

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @functools.cached_property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @functools.cached_property
    def expert_params(self) -> float:
        """Routed-expert parameters: MoE layers x experts x 3 matrices (gate, up, down), each
        hidden size x expert width."""
        return float(self.moe_layers * self.experts * 3 * self.hidden_size * self.expert_ffn_hidden_size)

    @functools.cached_property
    def non_expert_params(self) -> float:
        """Everything else (attention, dense MLPs, shared experts, embeddings, norms)."""
        return self.params_total - self.expert_params

    @functools.cached_property
    def attention_dim(self) -> int:
        """heads x head dim: the width the attention FLOPs scale with."""
        return self.attention_heads * self.head_dim

    @functools.cached_property
    def kv_elements_per_token_per_layer(self) -> int:
        """K and V (2 x KV heads x head dim), or MLA's latent plus its RoPE key."""
        if self.is_mla:
            return self.kv_lora_rank + self.rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    @functools.cached_property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token adds across all layers, unsharded."""
        return self.kv_elements_per_token_per_layer * self.layers * BYTES_PER_ELEMENT[self.kv_cache_dtype]


def _check_model(m: ModelSpec) -> None:
    where = f"model {m.name!r}"
    for name in ("params_total", "params_active"):
        value = getattr(m, name)
        if isinstance(value, bool) or not (
            isinstance(value, int | float) and math.isfinite(value) and value > 0
        ):
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
        _positive_int(where, name, getattr(m, name))  # `layers = true` is no count (bool is an int)
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


#: Serving formats (weights and matmuls) a user may ask for; "" keeps the model's own.
SERVE_PRECISIONS = ("", "bf16", "fp8", "fp4")
#: KV-cache formats a user may ask for; "" follows the precision (``ServeWorkload.kv_dtype``).
KV_CACHE_DTYPES = ("", "bf16", "fp8")
#: Quantized checkpoints keep their KV cache in FP8: NVIDIA's ModelOpt FP8 and FP4 checkpoints
#: (which TensorRT-LLM's performance overview serves) state ``"kv_cache_quant_algo": "FP8"`` in
#: hf_quant_config.json, and vLLM follows that directive; NVIDIA's MLPerf v5.0 llama2-70b Offline
#: configs set ``'kv_cache_dtype': 'fp8'`` for FP8 (Hopper) and FP4 (Blackwell) alike.
QUANTIZED_KV_DTYPE = "fp8"
QUANTIZED_KV_SOURCE = (
    "https://github.com/mlcommons/inference_results_v5.0/blob/main/closed/NVIDIA/configs/llama2-70b/"
    "Offline/__init__.py"
)
#: The most sequences one replica batches at once when searching for the best batch: TensorRT-LLM's
#: default ``max_batch_size`` (2,048); a user's ``batch_sequences`` may go beyond it.
MAX_BATCH_PER_REPLICA = 2048


@record
class ServeWorkload:
    """Serving as it is run: continuous batching with chunked prefill. ``batch_sequences`` is the
    concurrency of the whole cluster (conversations at once); None searches for the one that gives
    the most tokens/s within memory and the latency targets (``tpot_ms`` per output token,
    ``ttft_ms`` to the first). Each conversation reads a ``prompt_tokens`` prompt and writes
    ``output_tokens``; ``target_tokens_per_s`` (output tokens, whole cluster) is what the user
    needs, if they said. ``prefill_chunk_tokens`` is a step's token budget (decode
    tokens first, whole prompts after them: ``planner.serving``) and bounds the prompt tokens one step
    holds activations for. ``precision`` sets the weights' and matmuls' format ("" keeps the model's);
    ``kv_cache_dtype`` the KV cache's ("" follows the precision: see ``kv_dtype``).

    Two properties of a benchmark run rather than of serving, off by default (``planner.runs``):
    ``run_requests`` is a finite run's request count, all queued at once with these lengths (its
    tokens/s is the run's total over its duration, tail included); ``graph_batch_sizes`` the batch
    sizes CUDA graphs were captured at with padding on (a step that decodes alone computes its
    token-wise work for the next captured size)."""

    batch_sequences: int | None = None
    prompt_tokens: int = 2048
    output_tokens: int = 512
    target_tokens_per_s: float | None = None
    prefill_chunk_tokens: int = 8192
    tpot_ms: float | None = None
    ttft_ms: float | None = None
    precision: str = ""
    kv_cache_dtype: str = ""
    run_requests: int | None = None
    graph_batch_sizes: tuple[int, ...] = ()
    kind: str = "serve"

    __hash__ = fields_hash  # computed once: the planner's caches are keyed on the workload
    __getstate__ = state_without_hash

    def kv_dtype(self, model: ModelSpec) -> str:
        """The KV cache's format: the one asked for, else FP8 when the weights are quantized to fp8
        or fp4 (``QUANTIZED_KV_DTYPE``: as NVIDIA's quantized checkpoints and MLPerf runs keep it),
        else the model's own."""
        if self.kv_cache_dtype:
            return self.kv_cache_dtype
        return QUANTIZED_KV_DTYPE if self.precision in ("fp8", "fp4") else model.kv_cache_dtype

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "output_tokens", "prefill_chunk_tokens"):
            _positive_int("serving workload", name, getattr(self, name))
        for name in ("batch_sequences", "run_requests"):
            if getattr(self, name) is not None:
                _positive_int("serving workload", name, getattr(self, name))
        for size in self.graph_batch_sizes:
            _positive_int("serving workload", "graph_batch_sizes", size)
        sizes = self.graph_batch_sizes
        if not isinstance(sizes, tuple) or list(sizes) != sorted(set(sizes)):
            raise ParseError(f"serving workload: graph_batch_sizes must be a tuple, ascending, got {sizes!r}")
        for name in ("target_tokens_per_s", "tpot_ms", "ttft_ms"):
            value = getattr(self, name)
            if value is not None and not (
                isinstance(value, int | float) and math.isfinite(value) and value > 0
            ):
                raise ParseError(f"serving workload: {name} must be a positive number, got {value!r}")
        if self.precision not in SERVE_PRECISIONS:
            raise ParseError(
                f"serving workload: precision must be one of bf16, fp8, fp4, got {self.precision!r}"
            )
        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            raise ParseError(
                f"serving workload: kv_cache_dtype must be bf16 or fp8, got {self.kv_cache_dtype!r}"
            )


#: Optimizer state per parameter, as the element formats it keeps (fp32 master weights and moments).
OPTIMIZER_STATES = {"adam": ("fp32", "fp32", "fp32"), "sgd": ("fp32", "fp32")}
#: Activation recomputation choices; "auto" takes selective where it fits and full otherwise.
RECOMPUTE = ("auto", "selective", "full")


@record
class TrainWorkload:
    """Training: ``global_batch_tokens`` per optimizer step in sequences of ``sequence_tokens``,
    micro-batches of ``micro_batch_sequences``; ``precision`` is the matmul format (bf16 or fp8;
    weights and gradients are kept in bf16 either way); ``optimizer`` adam or sgd (with momentum),
    its state sharded across data-parallel ranks when ``shard_optimizer`` (ZeRO-1); ``recompute``
    selective, full, or auto (selective where it fits, else full). ``token_budget`` (tokens to train;
    None: ``planner.training.default_token_budget``) gives each plan its days and dollars to train.
    The cluster is ``cluster_gpus`` GPUs (the same for every instance, so plans compare at equal
    size), or with ``deadline_days`` the fewest nodes that train the budget by the deadline.
    ``overlap_all_to_all``: the experts' all-to-all runs behind other micro-batches' compute
    (DeepSeek-V3's DualPipe) rather than in line."""

    global_batch_tokens: int = 512 * 8192
    sequence_tokens: int = 8192
    micro_batch_sequences: int = 1
    precision: str = "bf16"
    optimizer: str = "adam"
    shard_optimizer: bool = True
    recompute: str = "auto"
    token_budget: float | None = None
    deadline_days: float | None = None
    cluster_gpus: int = 1024
    overlap_all_to_all: bool = True
    kind: str = "train"

    __hash__ = fields_hash  # computed once: the planner's caches are keyed on the workload
    __getstate__ = state_without_hash

    def __post_init__(self) -> None:
        for name in ("global_batch_tokens", "sequence_tokens", "micro_batch_sequences", "cluster_gpus"):
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
        for name in ("token_budget", "deadline_days"):
            value = getattr(self, name)
            if value is not None and not (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and value > 0
            ):
                raise ParseError(f"training workload: {name} must be a positive number, got {value!r}")

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
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number, 100,000 nested arrays
        raise ParseError(f"{origin}: not a model file: {str(exc).splitlines()[0][:200]}") from None
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


#: Bounds on a Hugging Face config.json: its size, its nesting, and every size in it.
MAX_CONFIG_CHARS = 1_000_000
MAX_CONFIG_DEPTH = 20
_SIZE_LIMITS = {
    "hidden_size": 1 << 17,
    "num_hidden_layers": 10_000,
    "num_attention_heads": 1 << 14,
    "num_key_value_heads": 1 << 14,
    "head_dim": 1 << 14,
    "intermediate_size": 1 << 20,
    "vocab_size": 1 << 24,
    "moe_intermediate_size": 1 << 20,
    "shared_expert_intermediate_size": 1 << 20,
    "num_local_experts": 1 << 16,
    "num_experts": 1 << 16,
    "n_routed_experts": 1 << 16,
    "n_shared_experts": 1 << 10,
    "num_experts_per_tok": 1 << 10,
    "first_k_dense_replace": 10_000,
    "kv_lora_rank": 1 << 16,
    "q_lora_rank": 1 << 16,
    "qk_rope_head_dim": 1 << 14,
    "qk_nope_head_dim": 1 << 14,
    "v_head_dim": 1 << 14,
}
#: Keys under which a config may state its parameter count.
_STATED_TOTAL_KEYS = ("num_parameters", "n_parameters", "total_params", "num_params")
#: How far a stated total may be from the count the sizes give (embeddings, norms, biases).
STATED_TOTAL_TOLERANCE = 0.03
_HF_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float8_e4m3fn": "fp8"}


def _depth(value: object, limit: int) -> int:
    """Nesting depth of parsed JSON, stopping past ``limit``."""
    if limit < 0 or not isinstance(value, dict | list):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(c, limit - 1) for c in children), default=0)


def _size(config: dict, key: str, where: str, default: int | None = None) -> int:
    """A whole, positive, bounded size from the config; ParseError naming the field otherwise."""
    if key not in config or config[key] is None:
        if default is None:
            raise ParseError(f"{where}: {key} is missing")
        return default
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseError(f"{where}: {key} must be a whole number, got {str(value)[:40]!r}")
    limit = _SIZE_LIMITS.get(key, 1 << 20)
    if not 0 < value <= limit:
        raise ParseError(f"{where}: {key} must be from 1 to {limit:,}, got {value:,}"[:300])
    return value


def _optional(config: dict, key: str, where: str) -> int:
    return _size(config, key, where, 0) if config.get(key) not in (None, 0) else 0


def _hf_counts(c: dict, where: str) -> dict:
    """The ModelSpec sizes and parameter counts a config's sizes give (attention, MLPs, experts,
    embeddings, norms)."""
    h, layers = _size(c, "hidden_size", where), _size(c, "num_hidden_layers", where)
    heads = _size(c, "num_attention_heads", where)
    kv_heads = _size(c, "num_key_value_heads", where, heads)
    head_dim = _size(c, "head_dim", where, max(1, h // heads))
    ffn = _size(c, "intermediate_size", where)
    vocab = _size(c, "vocab_size", where)
    experts = _optional(c, "n_routed_experts", where) or _optional(c, "num_local_experts", where)
    experts = experts or _optional(c, "num_experts", where)
    k = _optional(c, "num_experts_per_tok", where) if experts else 0
    expert_ffn = (_optional(c, "moe_intermediate_size", where) or ffn) if experts else 0
    shared = _optional(c, "n_shared_experts", where)
    shared_ffn = shared * expert_ffn or _optional(c, "shared_expert_intermediate_size", where)
    dense_layers = _optional(c, "first_k_dense_replace", where) if experts else 0
    kv_lora, rope = _optional(c, "kv_lora_rank", where), _optional(c, "qk_rope_head_dim", where)
    if kv_lora:
        nope = _size(c, "qk_nope_head_dim", where, head_dim)
        v_dim, q_lora = _size(c, "v_head_dim", where, nope), _optional(c, "q_lora_rank", where)
        q = (h * q_lora + q_lora * heads * (nope + rope)) if q_lora else h * heads * (nope + rope)
        attention = q + h * (kv_lora + rope) + kv_lora * heads * (nope + v_dim) + heads * v_dim * h
        head_dim = v_dim
    else:
        attention = h * heads * head_dim + 2 * h * kv_heads * head_dim + heads * head_dim * h
    moe_layers = layers - dense_layers if experts else 0
    if experts and not 0 <= dense_layers < layers:
        raise ParseError(f"{where}: first_k_dense_replace {dense_layers} must be less than num_hidden_layers")
    if experts and not 0 < k <= experts:
        raise ParseError(f"{where}: num_experts_per_tok must be from 1 to the {experts} experts, got {k}")
    routed = moe_layers * experts * 3 * h * expert_ffn
    per_moe_layer = 3 * h * shared_ffn + h * experts  # shared experts and the router
    embeddings = vocab * h * (1 if c.get("tie_word_embeddings") is True else 2)
    total = (
        layers * (attention + 2 * h)
        + (layers - moe_layers) * 3 * h * ffn
        + moe_layers * per_moe_layer
        + routed
        + embeddings
        + h
    )
    active = total - routed + moe_layers * k * 3 * h * expert_ffn
    return {
        "params_total": float(total),
        "params_active": float(active),
        "layers": layers,
        "hidden_size": h,
        "attention_heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "ffn_hidden_size": ffn,
        "vocab_size": vocab,
        "experts": experts if experts > 1 else 0,
        "experts_per_token": k if experts > 1 else 0,
        "expert_ffn_hidden_size": expert_ffn if experts > 1 else 0,
        "shared_experts": shared,
        "dense_layers": dense_layers if experts > 1 else 0,
        "kv_lora_rank": kv_lora,
        "rope_head_dim": rope if kv_lora else 0,
    }


def model_from_hf_config(text: str, name: str) -> ModelSpec:
    """A model from a Hugging Face ``config.json`` as people have it (a multimodal config's
    ``text_config`` is the language model): parameter counts computed from the sizes and checked
    against a stated total when there is one. ParseError, one line naming the field, for text
    that is not a bounded JSON object, a missing or impossible size (``layers = true``, a zero, a
    number past its bound), an inconsistent mixture of experts or a total the sizes contradict."""
    where = f"config.json {name[:100]!r}"
    if len(text) > MAX_CONFIG_CHARS:
        raise ParseError(f"{where}: {len(text):,} characters, at most {MAX_CONFIG_CHARS:,}")
    try:
        data = json.loads(text)
    except RecursionError:
        raise ParseError(f"{where}: nested deeper than {MAX_CONFIG_DEPTH} levels") from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise ParseError(f"{where}: not JSON: {str(exc).splitlines()[0][:200]}") from None
    if not isinstance(data, dict):
        raise ParseError(f"{where}: a config is a JSON object, got {type(data).__name__}")
    if _depth(data, MAX_CONFIG_DEPTH) > MAX_CONFIG_DEPTH:
        raise ParseError(f"{where}: nested deeper than {MAX_CONFIG_DEPTH} levels")
    config = data
    if "num_hidden_layers" not in data and isinstance(data.get("text_config"), dict):
        config = data["text_config"]
        where = f"{where} text_config"
    counts = _hf_counts(config, where)
    for key in _STATED_TOTAL_KEYS:
        stated = data.get(key)
        if isinstance(stated, int | float) and not isinstance(stated, bool):
            if not (math.isfinite(stated) and stated > 0):
                raise ParseError(f"{where}: {key} must be a positive number, got {stated!r}")
            if abs(counts["params_total"] / stated - 1) > STATED_TOTAL_TOLERANCE:
                raise ParseError(
                    f"{where}: {key} states {stated:.4g} parameters, "
                    f"the sizes give {counts['params_total']:.4g}"
                )
    stated_dtype = config.get("torch_dtype") or data.get("torch_dtype") or "bfloat16"
    dtype = _HF_DTYPES.get(str(stated_dtype), "bf16")
    if (
        isinstance(data.get("quantization_config"), dict)
        and "fp8" in str(data["quantization_config"]).lower()
    ):
        dtype = "fp8"
    try:
        return ModelSpec(
            name=name[:200] or "config.json",
            source_url="",
            source_note="read from a Hugging Face config.json; parameter counts computed from its sizes",
            weight_dtype=dtype,
            **counts,
        )
    except ParseError as exc:
        raise ParseError(f"{where}: {str(exc).splitlines()[0]}") from None
