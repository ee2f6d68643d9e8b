"""planner.models: the presets hold their published configurations, user files load with the same
keys, and a bad file or workload is a ParseError naming the key."""

from __future__ import annotations

import json

import pytest

from normalize.errors import ParseError
from planner.conversions import BYTES_PER_ELEMENT
from planner.models import (
    ServeWorkload,
    TrainWorkload,
    model_from_mapping,
    model_from_text,
    preset,
    preset_names,
)

PRESETS = [
    "deepseek-v3",
    "gpt-oss-120b",
    "gpt-oss-20b",
    "llama-3.1-405b",
    "llama-3.1-70b",
    "llama-3.1-8b",
    "mixtral-8x22b",
    "mixtral-8x7b",
    "qwen2.5-72b",
]
#: Presets whose q, k and v projections carry biases (Qwen2): hidden + 2 x KV width per layer more.
QKV_BIAS = {"qwen2.5-72b"}


def gqa_params(m) -> tuple[int, int]:
    """(total, active) parameters of a Llama/Mixtral-shaped model from its config: untied input and
    output embeddings, per layer q and o (hidden²), k and v (hidden x KV heads x head dim), a SwiGLU
    MLP of 3 x hidden x width per expert (k of them active), a router, two norms; a final norm."""
    h, kv = m.hidden_size, m.kv_heads * m.head_dim
    attention = 2 * h * h + 2 * h * kv
    mlp_width = m.expert_ffn_hidden_size if m.is_moe else m.ffn_hidden_size
    experts, active = (m.experts, m.experts_per_token) if m.is_moe else (1, 1)
    router = h * m.experts if m.is_moe else 0
    embeddings = 2 * m.vocab_size * h
    per_layer = attention + router + 2 * h
    total = m.layers * (per_layer + experts * 3 * h * mlp_width) + embeddings + h
    live = m.layers * (per_layer + active * 3 * h * mlp_width) + embeddings + h
    return total, live


def test_the_presets_are_shipped():
    assert preset_names() == PRESETS
    for name in PRESETS:
        model = preset(name)
        assert model.source_url.startswith("https://huggingface.co/")
        assert "2026-12-03" in model.source_note and "not re-fetched" in model.source_note


@pytest.mark.parametrize(
    ("name", "total", "active"),
    [
        # 8B: 32 x (41,943,040 attention + 176,160,768 MLP + 8,192 norms) + 2 x 525,336,576 + 4,096
        ("llama-3.1-8b", 8_030_261_248, 8_030_261_248),
        ("llama-3.1-70b", 70_553_706_496, 70_553_706_496),
        ("llama-3.1-405b", 405_853_388_800, 405_853_388_800),
        # Mixtral: 8 experts of 176,160,768 per layer, 2 of them active: 46.7B total, 12.9B active
        ("mixtral-8x7b", 46_702_792_704, 12_879_925_248),
        # 8 experts of 301,989,888 per layer: 140.6B total, 39.2B active (Mistral: 141B, 39B)
        ("mixtral-8x22b", 140_620_634_112, 39_152_031_744),
        # 80 x (150,994,944 attention + 10,240 biases + 726,663,168 MLP + 16,384) + 2 x 1,245,708,288
        ("qwen2.5-72b", 72_706_203_648, 72_706_203_648),
    ],
)
def test_parameter_counts_follow_from_the_published_sizes(name, total, active):
    model = preset(name)
    bias = model.layers * (model.hidden_size + 2 * model.kv_heads * model.head_dim) if name in QKV_BIAS else 0
    assert tuple(n + bias for n in gqa_params(model)) == (total, active)
    assert (model.params_total, model.params_active) == (total, active)


#: gpt-oss's published config.json sizes (https://huggingface.co/openai/gpt-oss-120b, -20b), the keys the
#: planner reads, and OpenAI's model card figures (total, active) in billions.
GPT_OSS = {
    "gpt-oss-120b": ({"num_hidden_layers": 36, "num_local_experts": 128}, (116.83, 5.13)),
    "gpt-oss-20b": ({"num_hidden_layers": 24, "num_local_experts": 32}, (20.91, 3.61)),
}
GPT_OSS_CONFIG = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
    "intermediate_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
    "num_experts_per_tok": 4, "vocab_size": 201088, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "mxfp4"},
}  # fmt: skip


@pytest.mark.parametrize("name", list(GPT_OSS))
def test_gpt_oss_presets_are_their_config_json_and_near_the_published_counts(name):
    """The presets hold what model_from_hf_config reads from the published config.json; the total is
    within 0.1% of OpenAI's (biases are not counted), and the active count is OpenAI's plus the input
    embedding it leaves out (a lookup, not a matmul)."""
    import json

    from planner.models import model_from_hf_config

    sizes, (total_b, active_b) = GPT_OSS[name]
    read = model_from_hf_config(json.dumps(GPT_OSS_CONFIG | sizes), name)
    model = preset(name)
    assert (model.params_total, model.params_active) == (read.params_total, read.params_active)
    assert (model.layers, model.experts, model.experts_per_token) == (read.layers, read.experts, 4)
    assert model.is_moe and model.weight_dtype == "fp4"  # the experts' MXFP4, >90% of the weights
    assert model.params_total / 1e9 == pytest.approx(total_b, rel=1e-3)
    embedding = model.vocab_size * model.hidden_size
    assert (model.params_active - embedding) / 1e9 == pytest.approx(active_b, rel=5e-3)


def test_llama_70b_sizes_and_kv_cache():
    m = preset("llama-3.1-70b")
    assert (m.layers, m.hidden_size, m.attention_heads, m.kv_heads, m.head_dim) == (80, 8192, 64, 8, 128)
    # K and V: 2 x 8 KV heads x 128 x 80 layers x 2 bytes (bf16) = 327,680 bytes per token
    assert m.kv_bytes_per_token == 327_680
    assert m.expert_params == 0 and m.non_expert_params == m.params_total


def test_deepseek_v3_experts_and_latent_kv_cache():
    m = preset("deepseek-v3")
    assert (m.params_total, m.params_active) == (671e9, 37e9)
    assert (m.moe_layers, m.experts, m.experts_per_token, m.weight_dtype) == (58, 256, 8, "fp8")
    # 58 MoE layers x 256 experts x 3 x 7,168 x 2,048 = 653,908,770,816 routed-expert parameters
    assert m.expert_params == 653_908_770_816
    assert m.non_expert_params == pytest.approx(17.09e9, rel=1e-3)
    # MLA caches (512 + 64) elements per token per layer: 576 x 61 layers x 2 bytes = 70,272 bytes
    assert m.is_mla and m.kv_elements_per_token_per_layer == 576
    assert m.kv_bytes_per_token == 70_272


def test_a_user_model_from_toml_and_json():
    toml = """
        name = "tiny"
        source_url = "https://example.org/tiny"
        source_note = "made up for a test"
        params_total = 1_000_000_000
        params_active = 1_000_000_000
        layers = 16
        hidden_size = 2048
        attention_heads = 16
        kv_heads = 4
        head_dim = 128
        ffn_hidden_size = 8192
        vocab_size = 32000
        kv_cache_dtype = "fp8"
    """
    model = model_from_text(toml, "tiny.toml")
    # 2 x 4 x 128 x 16 layers x 1 byte = 16,384 bytes per token
    assert model.kv_bytes_per_token == 16_384
    data = {
        k: getattr(model, k) for k in ("name", "source_url", "source_note", "params_total", "params_active")
    }
    data |= {"layers": 16, "hidden_size": 2048, "attention_heads": 16, "kv_heads": 4, "head_dim": 128}
    data |= {"ffn_hidden_size": 8192, "vocab_size": 32000, "kv_cache_dtype": "fp8"}
    assert model_from_text(json.dumps(data), "tiny.json") == model


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layrs": 80}, "unknown key.*layrs"),
        ({"layers": 0}, "layers must be a positive whole number, got 0"),
        ({"layers": 80.5}, "layers must be a positive whole number, got 80.5"),
        ({"weight_dtype": "bf17"}, "weight_dtype 'bf17' is not one of"),
        ({"kv_heads": 7}, "attention_heads 64 is not a multiple of kv_heads 7"),
        ({"params_active": 8e10}, "params_active 8e\\+10 exceeds params_total"),
        (
            {"experts": 8, "experts_per_token": 9, "expert_ffn_hidden_size": 100},
            "experts_per_token <= experts",
        ),
        ({"experts": 8, "experts_per_token": 2, "expert_ffn_hidden_size": 999_999}, "exceed params_total"),
    ],
)
def test_a_bad_model_file_names_the_key(change, message):
    data = {k: v for k, v in vars(preset("llama-3.1-70b")).items()} | change
    with pytest.raises(ParseError, match=message):
        model_from_text(json.dumps(data), "bad.json")


def test_missing_keys_and_unreadable_text():
    with pytest.raises(ParseError, match=r"bad\.toml: missing key.*hidden_size"):
        model_from_text('name = "x"\nsource_url = "u"\nsource_note = "n"', "bad.toml")
    with pytest.raises(ParseError, match=r"x\.toml: not TOML or JSON"):
        model_from_text("layers = = 3", "x.toml")
    with pytest.raises(ParseError, match="a model is a table"):
        model_from_mapping([1, 2], "list.json")
    with pytest.raises(ParseError, match="unknown model preset 'llama-4'; presets: deepseek-v3"):
        preset("llama-4")


def test_workloads_refuse_impossible_values():
    with pytest.raises(ParseError, match="batch_sequences must be a positive whole number, got 0"):
        ServeWorkload(batch_sequences=0)
    with pytest.raises(ParseError, match="target_tokens_per_s must be a positive number"):
        ServeWorkload(target_tokens_per_s=-1.0)
    with pytest.raises(ParseError, match="precision must be bf16 or fp8"):
        TrainWorkload(precision="fp4")
    with pytest.raises(ParseError, match="less than one sequence"):
        TrainWorkload(global_batch_tokens=4096, sequence_tokens=8192)
    assert TrainWorkload().global_batch_sequences == 512
    assert BYTES_PER_ELEMENT["bf16"] == 2 and BYTES_PER_ELEMENT["fp4"] == 0.5
