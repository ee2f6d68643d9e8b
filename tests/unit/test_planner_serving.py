"""Serving as it is run (planner/serving.py), FP4 matmuls, and models from a Hugging Face config.json."""

from __future__ import annotations

import dataclasses
import json

import pytest

from normalize.errors import ParseError
from planner.hardware import Cluster
from planner.layouts import Layout
from planner.link_costs import NVLS_LATENCY_S
from planner.models import ServeWorkload, model_from_hf_config, preset
from planner.plan import plan
from planner.serve_pass import serve_pass
from planner.serving import prompt_steps, served_model
from planner.step import Options, matmul_dtype
from tests.helpers import planner_node

LLAMA_70B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 8192,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def test_the_batch_search_fills_memory_and_the_targets_cut_it():
    model, node = preset("llama-3.1-70b"), planner_node("H100-SXM-80GB", 8)
    searched = plan(model, ServeWorkload(), node).best
    fixed = plan(model, ServeWorkload(batch_sequences=32), node).best
    # At 32 conversations the board is latency-bound; filling memory gives more tokens/s per board
    # and a slower TPOT for each conversation.
    assert searched.concurrency > 32 and searched.tokens_per_s > fixed.tokens_per_s
    assert fixed.concurrency == 32 and searched.tpot_s > fixed.tpot_s
    assert searched.tokens_per_s == pytest.approx(searched.concurrency / searched.tpot_s)
    # A TPOT target between the two picks the largest batch that meets it.
    target_ms = (fixed.tpot_s + searched.tpot_s) / 2 * 1e3
    capped = plan(model, ServeWorkload(tpot_ms=target_ms), node).best
    assert capped.tpot_s * 1e3 <= target_ms and fixed.tokens_per_s <= capped.tokens_per_s
    # A target nothing meets leaves no plan, and the reason says why.
    none = plan(model, ServeWorkload(tpot_ms=0.01), node)
    assert none.best is None and "misses the latency target" in none.reason


def test_a_decode_step_pays_two_all_reduces_per_layer_with_their_latency():
    model, node = preset("llama-3.1-70b"), planner_node("H100-SXM-80GB", 8)
    result = plan(model, ServeWorkload(batch_sequences=32), node, layout=Layout(8, 1, 1, 1)).best
    # The mean step (the steps that decode alone and those that carry prompts, each at its share)
    # still makes 160 calls.
    [tp] = [t for t in result.step.transfers if t.collective == "TP all-reduce"]
    assert tp.count == pytest.approx(160) and tp.latency_s == pytest.approx(160 * NVLS_LATENCY_S.value)
    assert result.ttft_s > result.tpot_s  # a prompt's prefill and the step it waits for


def test_fp4_runs_at_the_fp4_peak_on_blackwell_and_beats_fp8():
    model = preset("llama-3.1-70b")
    b200, h100 = planner_node("B200-SXM-180GB", 8), planner_node("H100-SXM-80GB", 8)
    fp4 = plan(model, ServeWorkload(precision="fp4"), b200).best
    fp8 = plan(model, ServeWorkload(precision="fp8"), b200).best
    assert fp4.tokens_per_s > fp8.tokens_per_s
    served = dataclasses.replace(model, weight_dtype="fp4")
    assert matmul_dtype(served, Cluster(b200)) == "fp4" and matmul_dtype(served, Cluster(h100)) == "fp8"
    with pytest.raises(ParseError, match="precision must be one of bf16, fp8, fp4"):
        ServeWorkload(precision="int3")


def test_a_hugging_face_config_gives_the_published_sizes():
    model = model_from_hf_config(json.dumps(LLAMA_70B_CONFIG), "llama70")
    assert model.params_total == preset("llama-3.1-70b").params_total == 70_553_706_496
    mixtral = {
        "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2,
    }  # fmt: skip
    m = model_from_hf_config(json.dumps(mixtral), "mixtral")
    published = preset("mixtral-8x7b")
    assert (m.params_total, m.params_active) == (published.params_total, published.params_active)
    stated = {**LLAMA_70B_CONFIG, "num_parameters": 70.55e9}
    assert model_from_hf_config(json.dumps(stated), "x").params_total == 70_553_706_496
    wrapped = {"architectures": ["X"], "text_config": LLAMA_70B_CONFIG}
    assert model_from_hf_config(json.dumps(wrapped), "x").layers == 80


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"num_hidden_layers": True}, "num_hidden_layers"),
        ({"num_hidden_layers": 0}, "num_hidden_layers"),
        ({"hidden_size": 10**30}, "hidden_size"),
        ({"hidden_size": 8192.5}, "hidden_size"),
        ({"vocab_size": None}, "vocab_size"),
        ({"num_local_experts": 8, "num_experts_per_tok": 9}, "num_experts_per_tok"),
        ({"num_parameters": 7e9}, "num_parameters"),
        ({"num_key_value_heads": 7}, "kv_heads"),
    ],
)
def test_an_impossible_config_is_one_line_naming_the_field(change, field):
    config = {**LLAMA_70B_CONFIG, **change}
    with pytest.raises(ParseError) as raised:
        model_from_hf_config(json.dumps(config), "bad")
    assert field in str(raised.value) and "\n" not in str(raised.value)


def test_hostile_config_text_is_refused():
    for text in ("[" * 100_000 + "]" * 100_000, '{"a":' * 50 + "1" + "}" * 50, "x" * 2_000_000, "[]"):
        with pytest.raises(ParseError):
            model_from_hf_config(text, "hostile")


def test_a_forced_layout_is_planned_exactly_or_says_why_not():
    from planner.layouts import _divisors

    model, node = preset("llama-3.1-70b"), planner_node("H100-SXM-80GB", 8)
    forced = plan(model, ServeWorkload(batch_sequences=64), node, layout=Layout(4, 1, 1, 2))
    assert [r.layout for r in forced.results] == [Layout(4, 1, 1, 2)] and forced.best.concurrency == 64
    two_nodes = plan(model, ServeWorkload(), node, layout=Layout(8, 2, 1, 1))
    assert two_nodes.cluster.nodes == 2 and two_nodes.best is not None
    for layout, why in (
        (Layout(3, 1, 1, 1), "uses 3 GPUs, the cluster has 8"),
        (Layout(16, 1, 1, 1), "wider than the 8-GPU NVLink domain"),
        (Layout(1, 1, 1, 8), "needs"),
        (Layout(1, 1, 2, 4), "does not divide the model's 0 routed experts"),
    ):
        result = plan(model, ServeWorkload(), node, layout=layout)
        assert result.best is None and why in result.reason and result.reason.startswith("--layout")
    assert _divisors(12) == [1, 2, 3, 4, 6, 12] and _divisors(1) == [1] and len(_divisors(2**40)) == 41


def test_a_token_budget_and_a_deadline_choose_the_cluster():
    from planner.models import TrainWorkload
    from planner.plan import cluster_sizes, days_to_train

    model, node = preset("llama-3.1-8b"), planner_node("H100-SXM-80GB", 8)
    budget = 1e12  # a trillion tokens
    alone = plan(model, TrainWorkload(token_budget=budget, cluster_gpus=64), node)
    days = days_to_train(alone)
    assert alone.cluster.nodes == 8 and days == pytest.approx(budget / alone.best.tokens_per_s / 86_400)
    # Half the days needs a bigger cluster: the fewest nodes of the ladder that make it, no fewer.
    fast = plan(model, TrainWorkload(token_budget=budget, deadline_days=days / 2), node)
    assert fast.cluster.nodes > 8 and days_to_train(fast) <= days / 2
    ladder = cluster_sizes(1, 4096)
    smaller = max(n for n in ladder if n < fast.cluster.nodes)
    assert fast.cluster.nodes in ladder
    assert days_to_train(plan(model, TrainWorkload(token_budget=budget), node, nodes=smaller)) > days / 2
    never = plan(model, TrainWorkload(token_budget=budget, deadline_days=1e-6), node)
    assert never.best is None and never.reason.startswith("--days:")
    bad_values = (
        {"token_budget": 0},
        {"token_budget": float("nan")},
        {"deadline_days": 0},
        {"cluster_gpus": 0},
    )
    for bad in bad_values:
        with pytest.raises(ParseError):
            TrainWorkload(**bad)


def test_prompts_ride_whole_in_a_share_of_the_steps_within_the_token_budget():
    # 164 conversations of 1,000 / 1,000 tokens need 164 prompt tokens a step on average; the budget
    # (8,192 tokens) holds the 164 decode tokens and 8 whole prompts after them, so one step in
    # 8,000 / 164 = 48.8 carries 8,000 prompt tokens and the others decode alone.
    work = ServeWorkload(prompt_tokens=1000, output_tokens=1000, precision="fp8")
    assert prompt_steps(work, 164) == (pytest.approx(164 / 8000), 8000)
    # A prompt longer than the room left is chunked: 20,000-token prompts in chunks of 8,192 - 19.
    long = ServeWorkload(prompt_tokens=20000, output_tokens=2000)
    assert prompt_steps(long, 19) == (pytest.approx(19 * 10 / 8173), 8173)
    # A budget too small for the mean leaves every step carrying the mean (as before).
    tight = ServeWorkload(prompt_tokens=1000, output_tokens=100, prefill_chunk_tokens=2048)
    assert prompt_steps(tight, 200) == (1.0, 2000)
    # On one H200 (FP8 70B) the step with prompts is compute-bound and the decode-only step reads
    # its weights: TPOT is the two at their shares, above one step with the prompts spread evenly
    # (where the prompts' compute would hide behind every step's weight reads).
    model, node = (
        preset("llama-3.1-70b"),
        planner_node("H200-SXM-141GB", 1, fabric="none", fabric_gbits_per_s=None),
    )
    result = plan(model, work, node, layout=Layout(1, 1, 1, 1)).best
    b = result.concurrency
    share, carried = prompt_steps(work, b)
    served, cluster = served_model(model, work), Cluster(node)

    def pass_with(prefill):
        return serve_pass(
            served,
            Layout(1, 1, 1, 1),
            cluster,
            Options(),
            sequences=b,
            new_tokens=1,
            context_tokens=1500,
            prefill_tokens=prefill,
            prefill_context_tokens=500,
        )

    assert 0 < share < 0.05
    mean = share * pass_with(carried).step_s + (1 - share) * pass_with(0.0).step_s
    assert result.tpot_s == pytest.approx(mean)
    assert result.tpot_s > 1.1 * pass_with(b * 1.0).step_s
