"""catalog.read.plan: every catalog instance planned and ranked, prices and measurements used when the
catalog has them, unplannable rows last with their reason; and `python -m catalog plan`."""

from __future__ import annotations

import json
from datetime import datetime

import duckdb
import pandas as pd
import pytest

from catalog import snapshot
from catalog.cli import main
from catalog.read.connect import connect_readonly
from catalog.read.plan import COLUMNS, instance_plans, rank, rank_rows
from catalog.read.plan_inputs import NODE_COLUMNS, dense_peaks, node_groups
from catalog.read.queries import DERIVED_COLUMNS, Filters, instances_sql, plain_sql
from catalog.read.shape import shape
from planner.models import ServeWorkload, TrainWorkload, preset
from planner.plan import plan
from planner.verdict import verdict
from tests.helpers import planner_node

SERVE_70B = (preset("llama-3.1-70b"), ServeWorkload())


def p5_tokens_per_s() -> float:
    """What the planner gives 70B on 8 x H100 SXM over 3,200 Gb/s EFA built from the datasheet
    figures and AWS's "80 GiB" read as the 80 GB every H100 SXM has (gpu_memory_nominal_gb;
    tests/unit/test_planner_cases.py works the arithmetic): the test catalog's p5 row has them."""
    return plan(*SERVE_70B, planner_node("H100-SXM-80GB", 8, memory_gb=80)).best.tokens_per_s


# Karpenter's on-demand table for us-east-1 (aws/karpenter-provider-aws, zz_generated.pricing_aws.go).
P5_QUOTE = '"p5.48xlarge": 55.040000, "p5.4xlarge": 6.880000,'
PRICING_URL = (
    "https://raw.githubusercontent.com/aws/karpenter-provider-aws/main/pkg/providers/pricing/"
    "zz_generated.pricing_aws.go"
)


def insert_price(db, instance_type, region, usd_per_hour, quote=P5_QUOTE):
    with duckdb.connect(str(db)) as con:
        con.execute(
            "INSERT INTO prices (provider, instance_type, region, usd_per_hour, spot_usd_per_hour, "
            "quote, context, "
            "notes, source_url, fetched_at, valid_from, valid_to) VALUES "
            "('aws', ?, ?, ?, NULL, ?, 'InitialOnDemandPricesAWS', '', ?, NULL, ?, NULL)",
            [instance_type, region, usd_per_hour, quote, PRICING_URL, datetime(2026, 12, 1)],
        )


def insert_measurement(db, provider, instance_type, kind, metric, value, **extra):
    columns = {"direction": None, "nodes": None, "gpus": None, "port_count": None} | extra
    with duckdb.connect(str(db)) as con:
        con.execute(
            """INSERT INTO measurements (source, provider, instance_type, kind, metric, value, direction,
                                         nodes, gpus, port_count, source_url, locator, quote, notes)
               VALUES ('user', ?, ?, ?, ?, ?, ?, ?, ?, ?, 'https://example.org/run', 'line 1', 'x', '')""",
            [provider, instance_type, kind, metric, value, *columns.values()],
        )


def test_rank_plans_every_row_and_puts_the_unplannable_last(small_catalog_file):
    with connect_readonly(small_catalog_file) as con:
        frame = rank(con, *SERVE_70B)
    assert list(frame["instance_type"]) == [
        "p5.48xlarge",  # 8 x H100 (80 GiB)
        "Standard_ND96isr_T9_v9",  # 8 x H100 (80 GB): the same layout and speed; ties go by provider
        "Standard_ND48is_T9_v9",  # 4 x H100: one TP4 replica, half the tokens
        "g5.12xlarge",  # A10G: no datasheet compute peak, so no time at all
        "g5.xlarge",
    ]
    assert list(frame["rank"].astype("object")) == [1, 2, 3, pd.NA, pd.NA]
    p5 = frame.iloc[0]
    assert (p5["fits"], p5["nodes"], p5["bottleneck_link"]) == ("one NVLink domain", 1, "NVSwitch")
    assert p5["concurrency"] > 64 and p5["tpot_s"] == pytest.approx(1 / p5["tokens_per_s_per_user"])
    assert p5["tokens_per_s"] == pytest.approx(p5_tokens_per_s())
    assert p5["min_gpus"] == 2  # 141 GB of weights: 2 x 77.3 GB hold them and some conversations
    assert frame.iloc[2]["tokens_per_s"] < p5["tokens_per_s"]  # 4 x H100: fewer GPUs, fewer tokens
    assert p5["bandwidth_basis"] == "NVSwitch 450 GB/s one way per GPU (inferred)"
    assert 0 < p5["comm_share"] < 0.4  # NCCL's per-call latency on every collective of a step
    unplanned = frame.iloc[3]
    assert (
        unplanned["reason"] == "no dense BF16 peak for A10G-24GB in the datasheet table: compute time unknown"
    )
    assert (
        frame.iloc[3:]["tokens_per_s"].isna().all() and frame.iloc[3:]["usd_per_million_tokens"].isna().all()
    )
    # The small mirror's price table has p5.48xlarge at 55.04 USD/h in us-east-1.
    assert p5["usd_per_million_tokens"] == pytest.approx(55.04 / 3600 / p5["tokens_per_s"] * 1e6)


def test_training_ranks_at_one_token_budget_on_clusters_of_one_size(small_catalog_file):
    with connect_readonly(small_catalog_file) as con:
        frame = rank(con, preset("llama-3.1-405b"), TrainWorkload(), filters=Filters(providers=("aws",)))
    p5 = frame.iloc[0]
    # No budget stated: Chinchilla's 20 tokens per parameter, 20 x 405,853,388,800 = 8.12e12 tokens,
    # on 1,024 GPUs for every instance (128 p5.48xlarge), so days and dollars compare like for like.
    assert (p5["instance_type"], p5["nodes"], p5["token_budget"]) == (
        "p5.48xlarge",
        128,
        20 * 405_853_388_800,
    )
    assert p5["days_to_train"] == pytest.approx(p5["token_budget"] / p5["tokens_per_s"] / 86_400)
    alone = plan(
        preset("llama-3.1-405b"),
        TrainWorkload(),
        planner_node("H100-SXM-80GB", 8, memory_gb=80),
        nodes=128,
    )
    assert p5["step_s"] == pytest.approx(alone.best.step.step_s) and p5["layout"] == alone.best.layout.label
    # Four 24 GB A10Gs per node: 256 of them make the 1,024 GPUs; the A10G has no BF16 peak stored.
    g5 = frame[frame["instance_type"] == "g5.12xlarge"].iloc[0]
    assert g5["nodes"] == 256 and g5["reason"].startswith("no dense BF16 peak for A10G-24GB")
    one = frame[frame["instance_type"] == "g5.xlarge"].iloc[0]  # 1,024 x one 24 GB GPU cannot hold it
    assert one["reason"] == "does not fit in 1024 x g5.xlarge"


def test_prices_give_the_cost_and_rank_by_it(small_catalog):
    _, db = small_catalog
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM prices")  # only the two prices below
    insert_price(db, "p5.48xlarge", "us-east-1", 55.04)
    insert_price(db, "p5.48xlarge", "us-west-2", 61.0)
    with connect_readonly(db) as con:
        frame = rank(con, *SERVE_70B, by="cost")
        tokens = frame.iloc[0]["tokens_per_s"]
        plans = instance_plans(con, "p5.48xlarge", *SERVE_70B)
    p5 = frame.iloc[0]
    # The cheapest region's $55.04 an hour / 3,600 s / tokens/s x 10^6 = USD per million tokens.
    assert p5["usd_per_hour"] == 55.04
    assert p5["usd_per_million_tokens"] == pytest.approx(55.04 / 3600 / tokens * 1e6)
    usd = 55.04 / 3600 / p5_tokens_per_s() * 1e6
    assert p5["usd_per_million_tokens"] == pytest.approx(usd)
    assert f"${usd:,.2f} per million output tokens" in p5["verdict"]
    # Unpriced rows are not ranked by cost, yet come before the rows that cannot be planned.
    assert list(frame["rank"].astype("object"))[:2] == [1, pd.NA]
    assert frame.iloc[1]["instance_type"] == "Standard_ND96isr_T9_v9"
    assert plans[0][1].cluster.node.price_detail == "cheapest on-demand, us-east-1"


def test_a_measured_gpu_link_replaces_the_inferred_one(small_catalog):
    _, db = small_catalog
    # nvbandwidth's device-to-device read, one way, on an H100 SXM board: the lowest and highest GPU
    # pair Spare Cores measured on GCP's a3-highgpu-8g (369.7 and 372.1 GB/s), set here on the test
    # catalog's p5 row (also 8 x H100 SXM) to exercise the adapter.
    for value in (369.7, 372.1):
        insert_measurement(
            db, "aws", "p5.48xlarge", "measured", "gpu_to_gpu_gbytes_per_s", value, direction="one-way"
        )
    insert_measurement(db, "aws", "p5.48xlarge", "measured", "gpu_to_gpu_gbytes_per_s", 999.0)  # no direction
    with connect_readonly(db) as con:
        [(provider, plan)] = instance_plans(con, "p5.48xlarge", *SERVE_70B)
    nvswitch = plan.cluster.node.links[0]
    assert (provider, nvswitch.figure.gbytes_per_s, nvswitch.figure.basis) == ("aws", 370.9, "measured")
    assert "uses the measured NVSwitch figure, 371 GB/s one way per GPU" in verdict(plan)
    assert "inferred" not in verdict(plan)  # no sensitivity: the figure it rests on was measured


def test_expected_ports_replace_the_fabric_claim_and_busbw_across_nodes_does_not(small_catalog):
    _, db = small_catalog
    # A health check expecting 8 ports of 400 Gb/s: 3,200 Gb/s per node / 8 / 8 GPUs = 50 GB/s per GPU,
    # where the page claims 1,600 Gb/s (25 GB/s per GPU).
    insert_measurement(
        db, "azure", "Standard_ND96isr_T9_v9", "expected", "ib_port_gbits_per_s", 400.0, port_count=8
    )
    # A two-node all_reduce busbw above any NIC's rate (part of the ring stays on NVLink): never the fabric.
    insert_measurement(
        db, "aws", "p5.48xlarge", "measured", "nccl_allreduce_busbw_gbytes_per_s", 487.09, nodes=2, gpus=16
    )
    with connect_readonly(db) as con:
        [(_, azure)] = instance_plans(con, "Standard_ND96isr_T9_v9", *SERVE_70B)
        [(_, aws)] = instance_plans(con, "p5.48xlarge", *SERVE_70B)
    assert (azure.cluster.node.fabric.figure.gbytes_per_s, azure.cluster.node.fabric.figure.basis) == (
        50,
        "expected",
    )
    assert (aws.cluster.node.fabric.figure.gbytes_per_s, aws.cluster.node.fabric.figure.basis) == (
        50,
        "stated",
    )
    assert aws.cluster.node.links[0].figure.basis == "inferred"


def test_a_single_node_busbw_is_the_gpu_link(small_catalog):
    _, db = small_catalog
    insert_measurement(
        db, "aws", "p5.48xlarge", "measured", "nccl_allreduce_busbw_gbytes_per_s", 483.05, nodes=1, gpus=8
    )
    with connect_readonly(db) as con:
        [(_, plan)] = instance_plans(con, "p5.48xlarge", *SERVE_70B)
    assert plan.cluster.node.links[0].figure.gbytes_per_s == 483.05


def test_a_catalog_without_prices_or_measurements_tables_still_plans(small_catalog):
    _, db = small_catalog
    with duckdb.connect(str(db)) as con:
        con.execute("DROP VIEW current_prices")
        con.execute("DROP TABLE prices")
        con.execute("DROP TABLE measurements")
    with connect_readonly(db) as con:
        frame = rank(con, *SERVE_70B)
    assert frame.iloc[0]["tokens_per_s"] == pytest.approx(p5_tokens_per_s())
    assert frame["usd_per_million_tokens"].isna().all()


def test_family_level_gpus_share_a_peak_only_when_their_parts_agree():
    assert dense_peaks("A100-40GB") == (312, None)  # SXM and PCIe A100 40GB: both 312 TFLOPS BF16
    assert dense_peaks("H100-80GB") == (None, None)  # SXM 989.5, PCIe 756.5: not guessed
    assert dense_peaks("H100-SXM-80GB") == (989.5, 1979)


def test_the_shipped_catalog_plans(tmp_path):
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    with connect_readonly(db) as con:
        serve = rank(con, *SERVE_70B)
        train = rank(con, preset("llama-3.1-405b"), TrainWorkload())
        (rows,) = con.execute("SELECT count(*) FROM instances").fetchone()
    for frame in (serve, train):
        planned = frame[frame["tokens_per_s"].notna()]
        assert len(planned) >= 30 and len(frame) == rows  # every row: planned, or last with its reason
        assert frame.loc[frame["tokens_per_s"].isna(), "reason"].str.len().gt(0).all()
        assert planned["rank"].tolist() == list(range(1, len(planned) + 1))
    # Blackwell boxes lead (the same hardware ties on tokens/s, the cheapest first)
    top = serve.head(5)
    assert top["gpu_model"].str.match(r"G?B[23]00").all()
    assert top["tokens_per_s"].is_monotonic_decreasing
    p5 = train[train["instance_type"] == "p5.48xlarge"].iloc[0]
    assert (p5["nodes"], p5["fits"]) == (128, "4 nodes")  # 1,024 GPUs; 32 of them hold one copy
    ranked = train[train["rank"].notna()]
    assert ranked["days_to_train"].is_monotonic_increasing  # fastest first at one token budget
    assert (ranked["nodes"] * ranked["gpus_per_node"] >= 1024).all()


#: Every filter ``plain_sql`` asks itself, one at a time and together, and the ones it leaves to
#: ``instances_sql`` (they read a derived column).
PLAIN_FILTERS = (
    Filters(),
    Filters(providers=("aws", "gcp")),
    Filters(gpu_counts=(8,), intra_links=("nvswitch", "pcie"), fabrics=("efa", "infiniband")),
    Filters(min_scale_up_domain_gpus=8, peer_access=("yes",)),
    Filters(min_fabric_gbits_per_s_per_node=1600, include_inferred=False),
    Filters(include_inferred=False, include_stale=False, include_curated=False, spot=True),
)
DERIVED_FILTERS = (
    Filters(search="H100"),
    Filters(region="us-east-1"),
    Filters(max_usd_per_gpu_hour=3.0),
    Filters(min_fabric_gbytes_per_s_per_gpu=50),
    Filters(min_gpu_memory_gb=80, min_total_gpu_memory_gb=640),
)


def test_plain_rows_group_as_the_derived_ones_do(tmp_path):
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    with connect_readonly(db) as con:
        catalog = shape(con)
        for filters in PLAIN_FILTERS:
            plain = plain_sql(filters, catalog, NODE_COLUMNS)
            assert plain is not None, filters
            groups = [
                node_groups(con, *sql, filters.region, filters.spot)
                for sql in (plain, instances_sql(filters, catalog))
            ]
            assert groups[0] == groups[1] and groups[0], filters
        assert all(plain_sql(filters, catalog, NODE_COLUMNS) is None for filters in DERIVED_FILTERS)


def test_every_column_instances_sql_adds_is_one_plain_sql_knows_it_lacks(tmp_path):
    """``plain_sql`` is chosen by the names in ``DERIVED_COLUMNS``: a derived column missing there
    could let a filter on it read the base column of the same name instead."""
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    with connect_readonly(db) as con:
        catalog = shape(con)
        base = {column[0] for column in con.execute("SELECT * FROM instances LIMIT 0").description}
        for filters in (*PLAIN_FILTERS, *DERIVED_FILTERS):
            sql, params = instances_sql(filters, catalog)
            added = {column[0] for column in con.execute(f"{sql} LIMIT 0", params).description} - base
            assert added - {"flags"} <= set(DERIVED_COLUMNS), (filters, added - set(DERIVED_COLUMNS))


def test_cli_plan_table_json_and_csv(small_catalog_file, capsys):
    db = str(small_catalog_file)
    assert main(["plan", "--model", "llama-3.1-70b", "--workload", "serve", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "p5.48xlarge" in out and "conc" in out and "TPOT" in out and f"{p5_tokens_per_s():,.0f}" in out
    assert "1. aws p5.48xlarge: Llama 3.1 70B fits one NVLink domain (2 GPUs at least)" in out
    usd = 55.04 / 3600 / p5_tokens_per_s() * 1e6
    assert f"{usd:,.2f}" in out  # p5.48xlarge's $ per million output tokens at the small mirror's price
    assert (
        main(
            [
                "plan",
                "--model",
                "llama-3.1-70b",
                "--workload",
                "serve",
                "--top",
                "2",
                "--format",
                "json",
                "--db",
                db,
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert [r["instance_type"] for r in rows] == ["p5.48xlarge", "Standard_ND96isr_T9_v9"]
    with connect_readonly(small_catalog_file) as con:  # every row, planned or not: COLUMNS in order
        ranked = rank_rows(con, *SERVE_70B)
    assert ranked[-1]["reason"] and all(list(row) == list(COLUMNS) for row in ranked)
    assert (
        main(
            [
                "plan",
                "--model",
                "llama-3.1-8b",
                "--workload",
                "train",
                "--format",
                "csv",
                "--top",
                "0",
                "--db",
                db,
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rank,provider,instance_type") and len(lines) == 6


def test_cli_plan_one_instance_in_full(small_catalog_file, capsys):
    args = ["plan", "--model", "llama-3.1-70b", "--workload", "serve", "--db", str(small_catalog_file)]
    assert main([*args, "--instance", "p5.48xlarge", "--batch", "64"]) == 0
    out = capsys.readouterr().out
    # 64 conversations: weights, the KV cache of each GPU's share, and one prefill chunk's activations.
    assert "memory per GPU" in out and "KV cache" in out and "GB of 72.0 GB usable" in out
    assert "at 64 conversations at once" in out and "links used: NVSwitch 450 GB/s one way per GPU" in out
    assert main([*args, "--instance", "p9.nothing"]) == 2
    assert "unknown instance type p9.nothing" in capsys.readouterr().err  # checked before planning


def test_cli_plan_reads_a_model_file_and_refuses_bad_input(small_catalog_file, tmp_path, capsys):
    db = str(small_catalog_file)
    model = tmp_path / "mine.toml"
    model.write_text(
        'name = "Mine"\nsource_url = "https://example.org"\nsource_note = "a test"\n'
        "params_total = 1_000_000_000\nparams_active = 1_000_000_000\nlayers = 16\nhidden_size = 2048\n"
        "attention_heads = 16\nkv_heads = 4\nhead_dim = 128\nffn_hidden_size = 8192\nvocab_size = 32000\n"
    )
    assert main(["plan", "--model", str(model), "--workload", "serve", "--top", "1", "--db", db]) == 0
    assert "Mine fits one GPU" in capsys.readouterr().out
    assert main(["plan", "--model", "gpt-9", "--workload", "serve", "--db", db]) == 2
    assert "no preset or file 'gpt-9'; presets: deepseek-v3" in capsys.readouterr().err
    assert main(["plan", "--model", "llama-3.1-8b", "--workload", "serve", "--batch", "0", "--db", db]) == 2
    assert "--batch must be a whole number from 1" in capsys.readouterr().err
    assert (
        main(["plan", "--model", "llama-3.1-8b", "--workload", "serve", "--db", str(tmp_path / "no.duckdb")])
        == 4  # no catalog: the environment's, as for every read command (once 1, a stale provider's code)
    )
    capsys.readouterr()
    assert main(["plan", "--model", "llama-3.1-8b", "--workload", "serve", "--nodes", "0", "--db", db]) == 2
    assert capsys.readouterr().err.startswith("error: --nodes must be a whole number from 1")


def test_a_ranking_from_the_command_line_loads_none_of_the_modules_plan_does_not_use(small_catalog_file):
    """plan's path is kept lean on purpose (issue 19's start-up ratio): a module it stops needing
    should not come back through a stray import."""
    import subprocess
    import sys

    code = (
        "import runpy, sys\n"
        "sys.argv = ['catalog', 'plan', '--model', 'llama-3.1-70b', '--workload', 'serve', '--db', "
        f"{str(small_catalog_file)!r}]\n"
        "try:\n    runpy.run_module('catalog', run_name='__main__')\nexcept SystemExit as exit:\n"
        "    code = exit.code\n"
        "unused = ('logging', 'statistics', 'fractions', 'pint', 'pandas', 'catalog.read.prices')\n"
        "print(code, [m for m in unused if m in sys.modules], file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "0 []", done.stderr[-2000:]
