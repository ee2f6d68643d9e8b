"""The app's planner ranking and prices (AppTest) on the shipped snapshot (``make seed``'s catalog):
the model presets in the sidebar, the ranking by time and by cost, the link view's price orders, and
one instance's prices per region with their quotes."""

from __future__ import annotations

import pytest

from catalog import snapshot
from tests.helpers import SNAPSHOT_ROWS, app_tab, rendered, run_app, shown_texts

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The catalog `make seed` builds from data/snapshot (prices and measurements included)."""
    db = tmp_path_factory.mktemp("shipped") / "catalog.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    return db


def ranking_table(app):
    return app_tab(app, "Ranking").dataframe[0].value


def test_serving_llama_70b_on_the_shipped_catalog(shipped, monkeypatch):
    """'What should I rent to serve Llama 3.1 70B?': the default view answers it."""
    app = run_app(monkeypatch, shipped)
    table = ranking_table(app)
    top = table.iloc[0]
    # 8 x B200 stated at 184,320 MiB: the 70B model fits one GPU, so 8 replicas (DP8) and no
    # communication; five boxes tie on tokens/s, and the cheapest of them comes first.
    assert (top["instance"], top["provider"], top["layout (TP×PP×EP×DP)"]) == (
        "dc_wildebeest__8xB200_180GB__160__1792",
        "primeintellect",
        "TP1 x PP1 x EP1 x DP8",
    )
    assert (top["output tokens/s"], top["USD/M output tokens"], top["comm share (%)"]) == (6915, 1.41, 0)
    p5 = table[table["instance"] == "p5.48xlarge"].iloc[0]
    assert (p5["rank"], p5["layout (TP×PP×EP×DP)"], p5["output tokens/s"], p5["USD/M output tokens"]) == (
        45,  # among the 2,779-tokens/s H100 boxes, after the cheaper ones
        "TP4 x PP1 x EP1 x DP2",
        2779,
        5.5,
    )
    # The caption counts what the table shows; the totals come from the shipped snapshot, not pins.
    planned, costed = int(table["rank"].notna().sum()), int(table["USD/M output tokens"].notna().sum())
    assert len(table) == SNAPSHOT_ROWS and 100 <= costed <= planned < SNAPSHOT_ROWS
    assert rendered(app_tab(app, "Ranking").caption[1].value) == (
        f"planned: {planned} of {SNAPSHOT_ROWS} · with a cost: {costed}"
    )
    unplanned = table[table["rank"].isna()]
    assert unplanned["output tokens/s"].isna().all()
    assert table.index[table["rank"].isna()].min() == planned  # every unplanned row after every planned one


def test_what_should_i_rent_and_what_will_it_cost(shipped, monkeypatch):
    """Ranked by cost: USD per million output tokens, cheapest first; unpriced planned rows follow."""
    app = run_app(monkeypatch, shipped, by="cost")
    table = ranking_table(app)
    assert list(table["instance"][:3]) == [
        "ccs-h200.sxm.8x",
        "h100-80gb.sxm.8x",
        "dc_wildebeest__8xB200_180GB__160__1792",
    ]
    assert list(table["USD/M output tokens"][:3]) == [0.64, 0.8, 1.41]
    assert (
        table.loc[0, "provider"] == "mithril"
        and table.loc[0, "layout (TP×PP×EP×DP)"] == "TP2 x PP1 x EP1 x DP4"
    )
    costs = table["USD/M output tokens"].dropna().tolist()
    assert costs == sorted(costs) and len(costs) >= 100


def test_training_405b_on_the_shipped_catalog(shipped, monkeypatch):
    app = run_app(monkeypatch, shipped, model="llama-3.1-405b", task="Train", by="cost")
    top = ranking_table(app).iloc[0]
    # 12 x Nebius 8 x H100 resold by Prime Intellect (Nebius's InfiniBand carried, basis upstream):
    # 19.22 USD per 340 s step, 4,583 USD per billion trained tokens
    assert (top["instance"], top["nodes"], top["USD/step"], top["USD/B tokens"]) == (
        "nebius__8xH100_80GB__128__1600",
        12,
        19.22,
        4583.47,
    )
    assert top["verdict"].startswith("Llama 3.1 405B training fits 12 nodes (96 GPUs at least)")
    # its fabric is Nebius's, carried (basis upstream); the verdict names the row it planned
    assert "12 x nebius__8xH100_80GB__128__1600" in top["verdict"]


def test_the_instance_view_says_the_plan_and_the_prices_per_region(shipped, monkeypatch):
    app = run_app(monkeypatch, shipped, view="Instance", instance="Standard_ND96isr_H100_v5 (azure)")
    instance = app_tab(app, "Instance")
    (plan,) = shown_texts(instance, "info")
    assert plan.startswith(
        "Plan: Llama 3.1 70B fits one NVLink domain (4 GPUs at least); on 1 x Standard_ND96isr"
    )
    prices = next(d.value for d in instance.dataframe if "USD/hour on demand" in d.value.columns)
    first = prices.iloc[0]
    assert (first["region"], first["USD/hour on demand"]) == ("eastus", 98.32)
    assert first["quote (the source's own words)"] == '"Standard_ND96isr_H100_v5":              98.320000'
    assert first["where in the source"] == 'initialOnDemandPrices["eastus"]'
    assert first["source"].endswith(
        "karpenter-provider-azure/main/pkg/providers/pricing/zz_generated.pricing.go"
    )
    assert prices["USD/hour on demand"].is_monotonic_increasing


def test_cheapest_nvswitch_with_a_3200_fabric_in_two_steps(shipped, monkeypatch):
    """Issue 11's question, '8 GPUs, NVSwitch, fabric >= 3,200 Gb/s, cheapest first': the link view
    with a search and the fabric floor in Gb/s per node, ordered by price."""
    app = run_app(
        monkeypatch,
        shipped,
        mode="Links only",
        q="8-GPU NVSwitch",
        unit="Gb/s",
        per="node",
        min_fabric="3200",
        sort="price per GPU-hour, cheapest first",
    )
    table = ranking_table(app)
    priced = table[table["USD/GPU-hour"].notna()]
    assert list(priced["instance"][:5]) == [
        "nebius__8xH100_80GB__128__1600",  # Prime Intellect reselling Nebius's box, its fabric carried
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",  # Nebius, 23.60 USD/h in eu-north1
        "p5.48xlarge",
        "p5en.48xlarge",
        "Standard_ND96isr_H200_v5",
    ]
    assert list(priced["USD/GPU-hour"][:5]) == [2.12, 2.95, 6.88, 7.91, 10.6]
    assert (table["fabric Gb/s/node"] >= 3200).all()


def test_price_per_fabric_gbytes_orders_the_link_view(shipped, monkeypatch):
    """'$/GPU-hour per fabric GB/s': one order in the link view."""
    app = run_app(
        monkeypatch,
        shipped,
        mode="Links only",
        q="8-GPU NVSwitch",
        sort="price per fabric GB/s, cheapest first",
    )
    table = ranking_table(app)
    column = "USD/GPU-hour per fabric GB/s/GPU"
    # Nebius: 2.95 USD per GPU-hour / 50 GB/s = 0.059; Standard_ND96asr_v4: 3.40 per GPU-hour over
    # 1,600 Gb/s / 8 / 8 = 25 GB/s per GPU = 0.136; p5.48xlarge: 6.88 / 50 = 0.138
    assert list(table["instance"][:4]) == [
        "nebius__8xH100_80GB__128__1600",  # 2.12 / 50 (Nebius's fabric, carried: basis upstream)
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",
        "Standard_ND96asr_v4",
        "p5.48xlarge",
    ]
    assert list(table[column][:4]) == [0.0424, 0.059, 0.136, 0.138]


def test_ready_questions_are_one_pick_away(shipped, monkeypatch):
    """Issue 11's and 13's questions from 'Start from a question': the sidebar takes the question's
    values (and puts them in the URL), from no filter."""
    app = run_app(monkeypatch, shipped, q="p5")
    app.selectbox(key="ready").select("8 GPUs, NVSwitch, fabric ≥ 3,200 Gb/s, cheapest first").run()
    assert app.radio(key="mode").value == "Links only" and app.text_input(key="q").value == "8-GPU NVSwitch"
    assert (app.number_input(key="min_fabric").value, app.selectbox(key="ready").value) == (3200.0, None)
    table = ranking_table(app)
    assert list(table["instance"][:2]) == [
        "nebius__8xH100_80GB__128__1600",
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",
    ]
    assert list(table["USD/GPU-hour"][:2]) == [2.12, 2.95] and (table["fabric Gb/s/node"] >= 3200).all()
    app.selectbox(key="ready").select("Serve Llama 3.1 70B: what to rent, what it costs").run()
    assert (app.radio(key="mode").value, app.text_input(key="q").value) == ("Plan a model", "")
    top = ranking_table(app).iloc[0]
    assert (top["instance"], top["USD/M output tokens"], top["output tokens/s"]) == (
        "ccs-h200.sxm.8x",
        0.64,
        3483,
    )
