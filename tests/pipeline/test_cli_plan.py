"""`python -m catalog plan` and `collective` on the small catalog: the new options, their bounds and
their one-line errors (exit 2, naming the flag)."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_planner_serving import LLAMA_70B_CONFIG


def test_cli_collective_prints_the_terms_and_rejects_bad_sizes(small_catalog_file, capsys):
    from catalog.cli import main

    db = str(small_catalog_file)
    args = ["collective", "--instance", "p5.48xlarge", "--op", "all-reduce", "--db", db]
    assert main([*args, "--bytes", "512K"]) == 0
    out = capsys.readouterr().out
    # 8 x H100 by NVLink SHARP: 17.41 µs + 524,288 B / 274 GB/s = 19.3 µs (nccl-tests#212, Mooncake#3484).
    assert "19.3 µs" in out and "nvls" in out and "NVSwitch 450 GB/s one way per GPU" in out
    assert main([*args, "--bytes", "8G", "--nodes", "2", "--format", "json"]) == 0
    [row] = __import__("json").loads(capsys.readouterr().out)
    assert (row["gpus"], row["algorithm"]) == (16, "tree") and row["busbw_gbytes_per_s"] > 50
    for bad, field in (("12Q", "--bytes"), ("0", "--bytes"), ("1e99", "--bytes"), ("2T", "--bytes")):
        assert main([*args, "--bytes", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {field}") and err.count("\n") == 1
    assert main([*args, "--bytes", "1K", "--nodes", "99999999"]) == 2
    assert capsys.readouterr().err.startswith("error: --nodes")
    assert (
        main(["collective", "--instance", "x" * 10_000, "--op", "all-reduce", "--bytes", "1K", "--db", db])
        == 2
    )
    assert len(capsys.readouterr().err) < 300


def test_cli_serving_options(small_catalog_file, tmp_path, capsys):
    from catalog.cli import main

    db = str(small_catalog_file)
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA_70B_CONFIG))
    base = ["plan", "--workload", "serve", "--db", db, "--top", "1"]
    assert main([*base, "--model", str(config), "--precision", "fp8", "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["concurrency"] > 1 and row["tpot_s"] > 0 and row["ttft_s"] > row["tpot_s"]
    assert row["tokens_per_s_per_user"] == pytest.approx(1 / row["tpot_s"])
    # Input and output tokens at their own rates; with the prompts, they add up to the all-in cost.
    prompts_per_output = 2048 / 512
    assert row["usd_per_million_input_tokens"] < row["usd_per_million_output_tokens"]
    assert row["usd_per_million_input_tokens"] * prompts_per_output + row[
        "usd_per_million_output_tokens"
    ] == pytest.approx(row["usd_per_million_tokens"])
    # FP8 weights keep an FP8 KV cache unless asked: bf16 holds half the conversations.
    assert main([*base, "--model", "llama-3.1-70b", "--precision", "fp8", "--format", "json"]) == 0
    [fp8] = json.loads(capsys.readouterr().out)
    args = ["--model", "llama-3.1-70b", "--precision", "fp8", "--kv-cache", "bf16", "--format", "json"]
    assert main([*base, *args]) == 0
    [bf16] = json.loads(capsys.readouterr().out)
    assert bf16["concurrency"] < fp8["concurrency"]
    for args, field in (
        (["--model", "llama-3.1-70b", "--tpot-ms", "nan"], "--tpot-ms"),
        (["--model", "llama-3.1-70b", "--ttft-ms", "0"], "--ttft-ms"),
        (["--model", "llama-3.1-70b", "--batch", "lots"], "--batch"),
        (["--model", "llama-3.1-70b", "--context", "99999999999"], "--context"),
        (["--model", "llama-3.1-70b", "--precision", "fp2"], "--precision"),
        (["--model", "llama-3.1-70b", "--kv-cache", "int4"], "--kv-cache"),
        (["--model", "m" * 5000], "--model"),
    ):
        assert main([*base, *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and field in err and err.count("\n") == 1


def test_cli_an_slo_no_instance_meets_is_an_error(small_catalog_file, capsys):
    from catalog.cli import main

    args = ["plan", "--model", "llama-3.1-70b", "--workload", "serve", "--tpot-ms", "0.001"]
    assert main([*args, "--db", str(small_catalog_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --tpot-ms/--ttft-ms: no instance meets them") and err.count("\n") == 1


def test_cli_layout(small_catalog_file, capsys):
    from catalog.cli import main

    base = ["plan", "--model", "llama-3.1-70b", "--workload", "serve", "--db", str(small_catalog_file)]
    assert main([*base, "--instance", "p5.48xlarge", "--layout", "TP4xPP1xEP1xDP2"]) == 0
    assert "TP4 x PP1 x EP1 x DP2" in capsys.readouterr().out
    assert main([*base, "--layout", "TP4-PP1"]) == 2
    assert capsys.readouterr().err.startswith("error: --layout must look like TP4xPP2xEP1xDP1")
    assert main([*base, "--instance", "p5.48xlarge", "--layout", "TP3xPP1xEP1xDP1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --layout") and err.count("\n") == 1
    # Ranking every instance: a layout none can run is the same one-line error, though some rows
    # are unplanned for reasons of their own (no GPU count, no peak); it once printed a table of
    # "does not fit" and exited 0.
    assert main([*base, "--layout", "TP3xPP1xEP1xDP1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --layout TP3 x PP1 x EP1 x DP1 uses 3 GPUs") and err.count("\n") == 1


def test_cli_an_impossible_model_file_is_one_line_naming_the_field(small_catalog_file, tmp_path, capsys):
    from catalog.cli import main

    sizes = {
        "name": '"bad"', "source_url": '"https://example.com"', "source_note": '"x"', "params_total": "1e9",
        "params_active": "1e9", "layers": "32", "hidden_size": "4096", "attention_heads": "32",
        "kv_heads": "8", "head_dim": "128", "ffn_hidden_size": "14336", "vocab_size": "32000",
    }  # fmt: skip
    base = ["plan", "--workload", "serve", "--db", str(small_catalog_file)]
    for key, value in (("layers", "0"), ("kv_heads", "7"), ("params_active", "2e9"), ("hidden_size", "-1")):
        path = tmp_path / f"{key}.toml"
        path.write_text("\n".join(f"{k} = {value if k == key else v}" for k, v in sizes.items()))
        assert main([*base, "--model", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and key in err and err.count("\n") == 1, err


def test_cli_training_budget_and_deadline(small_catalog_file, capsys):
    from catalog.cli import main

    base = ["plan", "--model", "llama-3.1-8b", "--workload", "train", "--db", str(small_catalog_file)]
    assert main([*base, "--tokens", "1e12", "--top", "1", "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["days_to_train"] > 0 and row["usd_to_train"] == pytest.approx(
        row["usd_per_billion_tokens"] * 1e3
    )
    assert (
        main(
            [
                *base,
                "--tokens",
                "1e12",
                "--days",
                str(row["days_to_train"] / 2),
                "--top",
                "1",
                "--format",
                "json",
            ]
        )
        == 0
    )
    [fast] = json.loads(capsys.readouterr().out)
    assert fast["days_to_train"] <= row["days_to_train"] / 2 and fast["nodes"] > row["nodes"]
    for args, field in (
        (["--tokens", "0"], "--tokens"),
        (["--tokens", "nan"], "--tokens"),
        (["--days", "0"], "--days"),
        (["--days", "nan"], "--days"),
        (["--days", "1e-6"], "--days"),  # a deadline no cluster of up to 4,096 nodes meets
        (["--gpus", "0"], "--gpus"),
        (["--layout", "TP1xCP3xPP1xEP1xDP8"], "--layout"),  # 24 GPUs on 8-GPU nodes
        (["--layout", "TP1xCP2xPP1xEP1xFSDP4"], "--layout"),  # CP2 x FSDP4 is 8 GPUs; 8,192 % 4 = 0
        (["--context", "8190", "--layout", "TP1xCP2xPP1xEP1xDP4"], "--layout"),  # 8,190 % 4 != 0
    ):
        code = main([*base, *args])
        err = capsys.readouterr().err
        if args[1] == "TP1xCP2xPP1xEP1xFSDP4":
            assert code == 0  # a layout that divides plans
            continue
        assert code == 2 and err.startswith(f"error: {field}") and err.count("\n") == 1, (args, err)
    serve = ["plan", "--model", "llama-3.1-8b", "--workload", "serve", "--db", str(small_catalog_file)]
    assert main([*serve, "--gpus", "8"]) == 2
    assert capsys.readouterr().err.startswith("error: --gpus is for training")


def test_cli_plan_costs_follow_region_and_spot(small_catalog_file, capsys):
    """Issue 21: `plan` always costed each row at its cheapest on-demand price in the world; `--region`
    and `--spot` cost it as `cheapest --region R --spot` prices it, and name the currency."""
    from catalog.cli import main

    base = ["plan", "--model", "llama-3.1-70b", "--workload", "serve", "--db", str(small_catalog_file)]
    nd96 = "Standard_ND96isr_T9_v9"

    def rows(*args: str) -> dict[str, dict]:
        assert main([*base, "--top", "0", "--format", "json", *args]) == 0
        return {r["instance_type"]: r for r in json.loads(capsys.readouterr().out)}

    anywhere, there = rows(), rows("--region", "westeurope")
    assert anywhere[nd96]["usd_per_hour"] / anywhere[nd96]["nodes"] == 60.0  # eastus, the cheapest
    assert (anywhere[nd96]["price_region"], anywhere[nd96]["price_kind"]) == ("eastus", "on-demand")
    assert list(there) == [nd96]  # the only row priced in westeurope
    assert there[nd96]["usd_per_hour"] / there[nd96]["nodes"] == 66.0
    assert (there[nd96]["price_region"], there[nd96]["currency"]) == ("westeurope", "USD")
    assert there[nd96]["usd_per_million_tokens"] == pytest.approx(
        anywhere[nd96]["usd_per_million_tokens"] * 66 / 60, rel=0.02
    )
    spot = rows("--spot")
    assert {r["price_kind"] for r in spot.values()} == {"spot"}
    assert all(r["usd_per_hour"] is None for r in spot.values())  # the small catalog has no spot price
    assert main([*base, "--region", "westeurope", "--top", "1"]) == 0
    assert "Costs in USD, cheapest on-demand, westeurope" in capsys.readouterr().out
    assert main([*base, "--instance", nd96, "--region", "westeurope"]) == 0
    assert "$" in capsys.readouterr().out
    assert main([*base, "--instance", "p5.48xlarge", "--region", "westeurope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --region: 'p5.48xlarge' has no on-demand price in westeurope")
    assert main([*base, "--region", "westeurop"]) == 2
    err = capsys.readouterr().err
    assert "unknown region westeurop; did you mean westeurope" in err and err.count("\n") == 1


def test_cli_plan_turns_garbage_collection_back_on_as_it_was(small_catalog_file, capsys, monkeypatch):
    """``plan`` plans without the cyclic collector (``cli_plan._no_collections``) and leaves it as it
    found it, whether the command succeeds or fails, with what it made out of the youngest
    generation (whose next pass would walk all of it) and anything frozen before still frozen."""
    import gc

    from catalog import cli_plan
    from catalog.cli import main

    args = ["plan", "--db", str(small_catalog_file), "--workload", "serve"]
    assert gc.isenabled()
    events: list[str] = []
    planned = cli_plan._plan
    monkeypatch.setattr(cli_plan, "_plan", lambda a: (planned(a), events.append("planned"))[0])
    gc.callbacks.append(on_pass := lambda phase, info: events.append(phase))
    try:
        assert main([*args, "--model", "llama-3.1-8b", "--top", "1"]) == 0
    finally:
        gc.callbacks.remove(on_pass)
    assert gc.isenabled()
    assert events[-1] == "planned"  # no pass started as collection came back on
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert main([*args, "--model", "llama-3.1-8b", "--top", "1"]) == 0
        assert gc.get_freeze_count() == frozen  # what was frozen before stays frozen
    finally:
        gc.unfreeze()
    assert main([*args, "--model", "no-such-model"]) == 2
    assert gc.isenabled()
    gc.disable()
    try:
        assert main([*args, "--model", "llama-3.1-8b", "--top", "1"]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    capsys.readouterr()
