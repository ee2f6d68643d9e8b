"""The Streamlit app (AppTest): ranking, units, instance, compare and URL state, on small catalogs
built by the tests and on the real one. Health tabs and what reaches the page: test_app_health.py."""

from __future__ import annotations

import json
import os
import re
import shutil

import duckdb
import pandas as pd
import pytest

from tests.helpers import (
    AWS_PAGE,
    SMALL,
    app_tab,
    build_mirror,
    cli_refresh,
    rendered,
    reprice,
    run_app,
    said,
    shown_texts,
    with_sidebar,
)
from ui import tables

pytestmark = pytest.mark.slow  # runs refreshes or the app: left out of `make test-fast`

P5, G5, G5_12, ND96, ND48 = (
    "p5.48xlarge",
    "g5.xlarge",
    "g5.12xlarge",
    "Standard_ND96isr_T9_v9",
    "Standard_ND48is_T9_v9",
)


@pytest.fixture
def db(small_catalog_file):
    return small_catalog_file


@pytest.fixture(scope="module")
def first_view(small_catalog_file):
    """The app as it first renders the small catalog, shared by the tests that only read it."""
    with pytest.MonkeyPatch.context() as mp:
        yield run_app(mp, small_catalog_file)


def ranking_table(app):
    return app_tab(app, "Ranking").dataframe[0].value


def claims_table(tab):
    """The Instance tab's claims table (the one with a "figure" column)."""
    return next(d.value for d in tab.dataframe if "figure" in d.value.columns)


def spec_of(element) -> dict:
    return json.loads(element.proto.spec)


def chart_data(element) -> pd.DataFrame:
    """The rows a Vega-Lite chart element draws (sent as Arrow)."""
    import pyarrow as pa

    return pa.ipc.open_stream(element.proto.data.data).read_pandas()


def test_app_says_when_there_is_no_catalog(tmp_path, monkeypatch):
    app = run_app(monkeypatch, tmp_path / "none.duckdb")
    assert shown_texts(app, "error")[0].startswith(f"No catalog at {tmp_path / 'none.duckdb'}.")


def test_ranking_plans_a_model_by_default(first_view):
    """Issue 13: the ranking is the planner's (Llama 3.1 70B serving, the first preset shown), best
    tokens/s first, with the layout, the cost and the verdict; rows it cannot plan come last with the
    reason, never as zeros."""
    app = first_view
    assert [t.label for t in app.tabs] == [
        "Ranking",
        "Compare",
        "Instance",
        "Measurements",
        "What's missing",
        "Conflicts",
        "Catalog status",
    ]
    assert app.radio(key="mode").value == "Plan a model"
    assert (app.selectbox(key="model").value, app.segmented_control(key="task").value) == (
        "llama-3.1-70b",
        "Serve",
    )
    ranking = app_tab(app, "Ranking")
    assert ranking.subheader[0].value == (
        "Serving llama-3.1-70b: every instance ranked by output tokens/s, most first"
    )
    table = ranking_table(app)
    assert list(table.columns[:7]) == [
        "instance",
        "rank",
        "provider",
        "nodes",
        "layout (TP×PP×EP×DP)",
        "output tokens/s",
        "USD/M output tokens",
    ]
    assert list(table["instance"]) == [P5, ND96, ND48, G5_12, G5]
    first = table.iloc[0]
    # 8 x H100 SXM (80 GiB) serving the app's 32 conversations at once, as the planner plans it
    # (tests/unit/test_planner_cases.py works the arithmetic); 55.04 USD/h / (tokens/s x 3,600) x 10^6.
    from planner.models import ServeWorkload, preset
    from planner.plan import plan
    from tests.helpers import planner_node

    node = planner_node("H100-SXM-80GB", 8, memory_gb=80)  # AWS's "80 GiB", planned as 80 GB
    alone = plan(preset("llama-3.1-70b"), ServeWorkload(batch_sequences=32), node).best
    assert (first["layout (TP×PP×EP×DP)"], first["output tokens/s"]) == (
        alone.layout.label,
        round(alone.tokens_per_s),
    )
    assert (first["USD/M output tokens"], first["decode step (ms)"]) == (
        round(55.04 / 3600 / alone.tokens_per_s * 1e6, 2),
        round(alone.step.step_s * 1e3, 1),
    )
    assert (first["bottleneck link"], first["model fits"], first["bound by"]) == (
        "NVSwitch",
        "one NVLink domain",
        "HBM-bound",
    )
    assert first["verdict"].startswith(
        "Llama 3.1 70B fits one NVLink domain (4 GPUs at least); on 1 x p5.48xlarge"
    )
    unplanned = table.iloc[3]
    assert pd.isna(unplanned["rank"]) and pd.isna(unplanned["output tokens/s"]) and unplanned["nodes"] == 2
    assert unplanned["verdict"] == (
        "Llama 3.1 70B cannot be planned on 2 x g5.12xlarge: no dense BF16 peak for A10G-24GB in the "
        "datasheet table: compute time unknown."
    )
    assert said(ranking, "planned:") == "planned: 3 of 5 · with a cost: 3"


def test_the_link_view_shows_bandwidths_not_indices(db, monkeypatch):
    """Issue 13: 'Links only' keeps the bandwidths in the chosen units, ordered by a column; no index."""
    app = run_app(monkeypatch, db, mode="Links only")
    ranking = app_tab(app, "Ranking")
    assert ranking.subheader[0].value == "Links only: bandwidths per instance"
    table = ranking.dataframe[0].value
    assert list(table.columns[:10]) == [
        "instance",
        "provider",
        "GPUs",
        "GPU",
        "GPU-GPU link",
        "GPU-GPU GB/s/GPU two-way",
        "fabric",
        "fabric GB/s/GPU one-way",
        "USD/GPU-hour",  # the small mirror's price tables price every row
        "USD/GPU-hour per one-way fabric GB/s/GPU",
    ]
    assert not [c for c in table.columns if "index" in c or c in ("rank", "why")]
    # Fabric, fastest first: 50, 25, 1.25 and 1.25 (the 900 GB/s NVSwitch before PCIe), 0.3125 GB/s per GPU.
    assert list(table["instance"]) == [P5, ND96, ND48, G5_12, G5]
    first = table.iloc[0]
    assert (first["GPU-GPU basis"], first["TP confined to one node"]) == ("inferred", "yes")
    assert (first["GPU-GPU GB/s/GPU two-way"], first["fabric GB/s/GPU one-way"], first["fabric"]) == (
        900,
        50,
        "EFA",
    )
    # Issue 21: it said 18, a two-way NVLink figure over a one-way NIC; one way each it is 450 / 50.
    assert first["GPU-GPU ÷ fabric, one way each (x)"] == 9
    assert (
        first["USD/GPU-hour per one-way fabric GB/s/GPU"] == 0.138
    )  # 55.04 / 8 = 6.88 USD per GPU-hour / 50 GB/s
    assert table.loc[1, "flags"] == "unit corrected"  # ND96isr: "200 GB/s ... HDR InfiniBand"
    assert said(ranking, "rows:") == (
        "rows: 5 · TP spans instances (rack-scale NVLink): 0 · on a GPU fabric (InfiniBand, EFA, RoCE, "
        "TCPX): 3 · GPU-to-GPU bandwidth not known: 0 · fabric bandwidth not known: 0"
    )


def test_key_columns_fit_beside_the_sidebar_at_1280_pixels(db, monkeypatch):
    """The key columns' widths add up to what the main area holds at 1280x800 (measured in Chromium:
    see test_e2e.py), in both views; the instance column is pinned so it stays while the rest scrolls."""
    app = run_app(monkeypatch, db, mode="Links only")
    config = json.loads(app_tab(app, "Ranking").dataframe[0].proto.columns)
    key = [
        "instance",
        "provider",
        "GPUs",
        "GPU",
        "GPU-GPU link",
        "GPU-GPU GB/s/GPU two-way",
        "fabric",
        "fabric GB/s/GPU one-way",
    ]
    widths = [config[c]["width"] for c in [*key, "USD/GPU-hour"]]
    assert all(isinstance(w, int) for w in widths) and sum(widths) <= 900
    assert config["instance"]["pinned"] is True
    app = run_app(monkeypatch, db)
    config = json.loads(app_tab(app, "Ranking").dataframe[0].proto.columns)
    key = [
        "instance",
        "rank",
        "provider",
        "nodes",
        "layout (TP×PP×EP×DP)",
        "output tokens/s",
        "USD/M output tokens",
    ]
    assert sum(config[c]["width"] for c in key) <= 900 and config["instance"]["pinned"] is True


def test_units_apply_to_every_bandwidth_column(db, monkeypatch):
    app = run_app(monkeypatch, db, mode="Links only", unit="Gb/s", per="node")
    table = ranking_table(app).set_index("instance")
    assert table.loc[P5, "fabric Gb/s/node one-way"] == 3200  # as AWS states it
    assert table.loc[P5, "GPU-GPU Gb/s/node two-way"] == 900 * 8 * 8  # says its direction (issue 21)
    assert table.loc[G5, "front-end Gb/s/node one-way"] == 2.5
    # Issue 21: HBM is never a per-node Gb/s figure ("214,400 Gb/s per node").
    assert table.loc[P5, "GPU memory (HBM) GB/s/GPU"] == 3350
    assert not [c for c in table.columns if "memory" in c and "Gb/s" in c]
    app = run_app(monkeypatch, db, mode="Links only", unit="GB/s", per="node")
    assert ranking_table(app).set_index("instance").loc[ND96, "fabric GB/s/node one-way"] == 200


def test_training_by_cost_reranks_and_retitles(db, monkeypatch):
    """Switching to training and to cost: the title, the cost columns and the order follow."""
    app = run_app(monkeypatch, db, model="llama-3.1-405b")
    app.segmented_control(key="task").set_value("Train").run()
    app.segmented_control(key="by").set_value("cost").run()
    assert not app.exception
    ranking = app_tab(app, "Ranking")
    assert ranking.subheader[0].value == (
        "Training llama-3.1-405b: every instance ranked by USD to train one token budget, cheapest first"
    )
    table = ranking.dataframe[0].value
    # Every row trains the same budget, 20 tokens per parameter, on 1,024 GPUs (128 p5.48xlarge, 128
    # of the 8-GPU Azure boxes, 256 of the 4-GPU ones): dollars and days compare like for like.
    assert list(table["instance"][:3]) == [P5, ND96, ND48]
    assert list(table["nodes"][:3]) == [128, 128, 256]
    assert (table["tokens to train"][:3] == 20 * 405_853_388_800).all()
    priced = table[table["USD to train"].notna()]
    assert priced["USD to train"].is_monotonic_increasing
    first = table.loc[0]
    budget, per_billion = first["tokens to train"], first["USD/B tokens"]
    assert first["USD to train"] == pytest.approx(per_billion * budget / 1e9, rel=1e-3)
    assert first["days to train"] == pytest.approx(budget / first["trained tokens/s"] / 86_400, rel=1e-3)
    assert table.loc[4, "verdict"] == (
        "Llama 3.1 405B cannot be planned on 1024 x g5.xlarge: does not fit in 1024 x g5.xlarge."
    )


def test_the_inferred_toggle_changes_the_tiles(db, monkeypatch):
    """Defect (issue 14): the tiles did not move when inferred values were excluded."""
    app = run_app(monkeypatch, db, mode="Links only", inferred="false")
    assert said(app_tab(app, "Ranking"), "rows:") == (
        "rows: 5 · TP spans instances (rack-scale NVLink): 0 · on a GPU fabric (InfiniBand, EFA, RoCE, "
        "TCPX): 3 · GPU-to-GPU bandwidth not known: 4 · fabric bandwidth not known: 0"
    )
    app = run_app(monkeypatch, db, inferred="false")  # every NVSwitch figure here is inferred: 70B needs TP
    assert said(app_tab(app, "Ranking"), "planned:") == "planned: 0 of 5 · with a cost: 0"
    verdict = ranking_table(app).set_index("instance").loc[P5, "verdict"]
    assert verdict == (
        "Llama 3.1 70B cannot be planned on 1 x p5.48xlarge: needs the NVSwitch bandwidth for the PP send, "
        "and it is not stated."
    )


def test_the_caption_counts_the_providers_shown(db, monkeypatch):
    """Defect (issue 14): the caption counted the catalog's providers, not those selected."""
    app = run_app(monkeypatch, db, provider=["azure"])
    assert rendered(app.caption[0].value).startswith(
        "2 instance types from 1 provider shown, of 5 from 2 in the catalog."
    )


def test_filters_that_match_nothing_say_so(db, monkeypatch):
    app = run_app(monkeypatch, db, q="no such gpu")
    assert app_tab(app, "Ranking").info[0].value.startswith("No instance matches the filters")
    app = run_app(monkeypatch, db, q="no such gpu", view="Instance")
    assert app_tab(app, "Instance").info[0].value.startswith("No instance matches the filters")
    app = run_app(
        monkeypatch, db, mode="Links only", gpus=["8"], link=["NVSwitch"], sort="fabric, fastest first"
    )
    assert list(ranking_table(app)["instance"]) == [P5, ND96]
    app = run_app(monkeypatch, db, gpus=["8"], link=["NVSwitch"])
    assert list(ranking_table(app)["instance"]) == [P5, ND96]


def test_the_first_row_is_the_instance_until_another_is_picked(db, monkeypatch):
    app = run_app(monkeypatch, db, view="Instance", mode="Links only")
    instance = app_tab(app, "Instance")
    assert shown_texts(instance, "subheader") == [f"{P5} (aws)"]
    levels = instance.dataframe[0].value
    assert list(levels["level"]) == [
        "GPU memory (HBM)",
        "GPU-to-GPU, one way",
        "fabric, one way",
        "front-end, one way",
    ]
    assert list(levels["GB/s per GPU, one way"]) == [3350.0, 450.0, 50.0, 50.0]
    assert list(levels["as claimed"]) == [
        "3,350 GB/s per GPU",
        "900 GB/s per GPU two-way",
        "50 GB/s per GPU one-way",
        "50 GB/s per GPU one-way",
    ]
    assert levels.loc[2, "quote"] == "3200 Gigabit"
    assert levels.loc[2, "source"] == f"https://{AWS_PAGE}"
    app.selectbox(key="instance").select(f"{G5} (aws)").run()
    instance = app_tab(app, "Instance")
    assert shown_texts(instance, "subheader") == [f"{G5} (aws)"]
    assert list(instance.dataframe[0].value["basis"]) == ["inferred", "not-applicable", "stated", "stated"]
    claims = claims_table(instance).set_index("figure")
    assert claims.loc["GPUs per instance", "quote (the source's own words)"] == "1 x NVIDIA A10G GPU"
    assert claims.loc["GPUs per instance", "source"] == f"https://{AWS_PAGE}"


def test_claims_name_figures_in_words_and_round_values(db, monkeypatch):
    """Defect (issue 14): raw column names and unrounded values (85.89934592) in Provenance."""
    app = run_app(monkeypatch, db, view="Instance", instance=f"{P5} (aws)")
    claims = claims_table(app_tab(app, "Instance"))
    assert "gpu_memory_gb" not in set(claims["figure"]) and "inter_node_gbits_per_s" not in set(
        claims["figure"]
    )
    memory = claims[claims["figure"] == "GPU memory per GPU"].iloc[0]
    assert memory["value"] == "85.9 GB"  # "640 GiB (8 x 80 GiB)" = 85.89934592 GB per GPU
    fabric = claims[claims["figure"] == "fabric bandwidth per node, one-way"].iloc[0]
    assert fabric["value"] == "3,200 Gbit/s"
    assert not any(c.startswith(("value_", "source_url", "unit_suspect")) for c in claims.columns)


def test_compare_two_instances_in_the_same_units_on_one_axis(db, monkeypatch):
    app = run_app(monkeypatch, db, view="Compare", compare=[f"{P5} (aws)", f"{ND96} (azure)"], per="node")
    compare = app_tab(app, "Compare")
    table = compare.dataframe[1].value.set_index("level")
    assert list(table.index) == ["GPU memory (HBM)", "GPU-to-GPU", "fabric", "front-end"]
    assert list(table.columns) == [
        f"{P5} (aws)",
        f"{P5} (aws) source",
        f"{P5} (aws) source link",  # the source in words (a local copy says so), and its web page
        f"{ND96} (azure)",
        f"{ND96} (azure) source",
        f"{ND96} (azure) source link",
    ]
    assert table.loc["fabric", f"{P5} (aws)"] == "400 GB/s per node one-way · stated · EFA"
    assert table.loc["fabric", f"{ND96} (azure)"] == "200 GB/s per node one-way · stated · InfiniBand"
    assert table.loc["GPU-to-GPU", f"{P5} (aws)"] == "7,200 GB/s per node two-way · inferred · NVSwitch"
    # Issue 21: HBM never turns into a per-node figure.
    assert table.loc["GPU memory (HBM)", f"{P5} (aws)"] == "3,350 GB/s per GPU · inferred · H100-SXM-80GB"
    assert table.loc["fabric", f"{P5} (aws) source"] == f"https://{AWS_PAGE}"
    assert table.loc["fabric", f"{P5} (aws) source link"] == f"https://{AWS_PAGE}"
    spec = spec_of(compare.get("vega_lite_chart")[0])
    assert spec["layer"][0]["encoding"]["xOffset"]["sort"] == [f"{P5} (aws)", f"{ND96} (azure)"]
    assert spec["layer"][0]["encoding"]["y"]["scale"] == {"type": "log", "domain": [0.1, 1_000_000.0]}
    assert spec["layer"][0]["encoding"]["y"]["title"] == "GB/s per node, one way (log)"
    drawn = chart_data(compare.get("vega_lite_chart")[0])
    bars = {
        (i, level): v for i, level, v in zip(drawn["instance"], drawn["level"], drawn["value"], strict=True)
    }
    # One way, like the readings: 900 GB/s two-way per GPU is 450 one way, 3,600 per node; no HBM bar.
    assert bars[(f"{P5} (aws)", "GPU-to-GPU")] == 3600 and "GPU memory" not in {k[1] for k in bars}
    # Side by side, the bar labels stand upright on their bars (they ran into each other).
    assert spec["layer"][1]["mark"]["angle"] == -90


def test_compare_defaults_to_the_first_rows_of_the_table(db, monkeypatch):
    app = run_app(monkeypatch, db, view="Compare", q=f"{P5}, {G5}")
    compare = app_tab(app, "Compare")
    assert "Showing the first 2 rows of the table" in compare.caption[0].value
    assert list(compare.dataframe[1].value.columns[1::3]) == [f"{P5} (aws)", f"{G5} (aws)"]


def test_the_cliff_axis_is_the_same_for_every_instance(db, monkeypatch):
    """Defect (issue 14): the axis rescaled per instance (10-10,000, 1-10,000, 0.1-100)."""
    domains = set()
    for name in (f"{P5} (aws)", f"{G5} (aws)", f"{ND48} (azure)"):
        app = run_app(monkeypatch, db, view="Instance", instance=name)
        spec = spec_of(app_tab(app, "Instance").get("vega_lite_chart")[0])
        domains.add(tuple(spec["layer"][0]["encoding"]["y"]["scale"]["domain"]))
    assert domains == {(0.1, 10_000.0)}


def test_a_shared_url_reproduces_the_view(db, monkeypatch):
    """Every filter, the workload, the units, the comparison, the instance and the tab come from the URL."""
    query = {
        "mode": "Plan a model",
        "model": "mixtral-8x7b",
        "task": "Train",
        "seq_len": "4096",
        "q": "aws",
        "gpus": ["1", "4"],
        "unit": "Gb/s",
        "stale": "false",
        "instance": f"{G5_12} (aws)",
        "compare": [f"{G5_12} (aws)", f"{G5} (aws)"],
    }
    app = run_app(monkeypatch, db, **query)
    assert app.radio(key="mode").value == "Plan a model"
    assert (app.selectbox(key="model").value, app.segmented_control(key="task").value) == (
        "mixtral-8x7b",
        "Train",
    )
    assert app.number_input(key="seq_len").value == 4096
    assert app.text_input(key="q").value == "aws"
    assert app.multiselect(key="gpus").value == ["1", "4"]
    assert app.toggle(key="stale").value is False
    assert app.selectbox(key="instance").value == f"{G5_12} (aws)"
    assert app.multiselect(key="compare").value == [f"{G5_12} (aws)", f"{G5} (aws)"]
    table = ranking_table(app)
    assert list(table["instance"]) == [G5_12, G5] and "trained tokens/s" in table
    assert app_tab(app, "Ranking").subheader[0].value.startswith("Training mixtral-8x7b")
    app = run_app(monkeypatch, db, **{**query, "mode": "Links only"})
    assert "fabric Gb/s/GPU one-way" in ranking_table(app)
    app = run_app(monkeypatch, db, **query, view="Instance")
    assert shown_texts(app_tab(app, "Instance"), "subheader") == [f"{G5_12} (aws)"]


def test_a_stale_provider_is_marked_everywhere(tmp_path, monkeypatch):
    db, mirror = tmp_path / "c.duckdb", build_mirror(tmp_path / "m")
    assert cli_refresh(mirror, db, *SMALL) == 0
    (mirror / AWS_PAGE).unlink()
    assert cli_refresh(mirror, db, *SMALL) == 1
    app = run_app(monkeypatch, db)
    table = ranking_table(app)
    assert set(table.loc[table["provider"] == "aws", "flags"]) == {"stale"}
    app = run_app(monkeypatch, db, mode="Links only")
    table = ranking_table(app)
    assert set(table.loc[table["provider"] == "aws", "flags"]) == {"stale"}
    app = run_app(monkeypatch, db, view="Instance")
    (warning,) = shown_texts(app_tab(app, "Instance"), "warning")
    assert warning.startswith("Stale since") and "HTTP 404" in warning
    app = run_app(monkeypatch, db, stale="false")
    assert set(ranking_table(app)["provider"]) == {"azure"}


def test_a_refreshed_catalog_shows_up_without_a_restart(small_catalog, monkeypatch):
    mirror, db = small_catalog
    app = run_app(monkeypatch, db, view="Catalog status")
    assert app_tab(app, "Catalog status").success[0].value.startswith("No stale rows")
    (mirror / AWS_PAGE).unlink()
    assert cli_refresh(mirror, db, *SMALL) == 1  # replaces the file the app reads
    app.run()
    assert not app.exception
    assert shown_texts(app_tab(app, "Catalog status"), "warning")[0].startswith("aws: 3 rows stale since")


@pytest.mark.shared
def test_question_one_8_gpu_nvswitch_boxes_by_fabric(real_catalog_file, monkeypatch):
    """'Which 8-GPU NVSwitch instances have the fastest fabric?': Links only, a search (2 steps)."""
    app = run_app(monkeypatch, real_catalog_file, mode="Links only", q="8-GPU NVSwitch")
    table = ranking_table(app)
    assert set(table["GPUs"]) == {8} and set(table["GPU-GPU link"]) == {"NVSwitch"}
    fabric = table["fabric GB/s/GPU one-way"]
    assert fabric.notna().tolist() == sorted(fabric.notna(), reverse=True)  # unknown fabrics last
    known = fabric.dropna().tolist()
    assert known == sorted(known, reverse=True) and known[0] == 100  # p6-b300: 6,400 Gb/s over 8 GPUs
    top = set(table.loc[fabric == 50, "instance"])  # 3,200 Gb/s over 8 GPUs
    assert {"p5.48xlarge", "Standard_ND96isr_H100_v5", "a3-ultragpu-8g", "BM.GPU.B200.8"} <= top
    assert "a3-highgpu-8g" in set(table["instance"]) and "a3-highgpu-8g" not in top


def test_prices_appear_when_the_catalog_has_them(small_catalog_file, tmp_path, monkeypatch):
    """No price column or filter without prices; with them, both, and an order by price."""
    unpriced = tmp_path / "unpriced.duckdb"
    shutil.copyfile(small_catalog_file, unpriced)
    with duckdb.connect(str(unpriced)) as con:
        con.execute("DELETE FROM prices")
        reprice(con)
    app = run_app(monkeypatch, unpriced, mode="Links only")
    assert "USD/GPU-hour" not in ranking_table(app)
    assert "max_price" not in [w.key for w in app.number_input]
    db = tmp_path / "priced.duckdb"  # a new file, as a refresh writes one
    shutil.copyfile(unpriced, db)
    with duckdb.connect(str(db)) as con:
        for instance_type, usd in (("p5.48xlarge", 55.04), ("g5.12xlarge", 5.672)):
            con.execute(
                "INSERT INTO prices (provider, instance_type, region, usd_per_hour, spot_usd_per_hour, "
                "quote, context, notes, source_url, fetched_at, valid_from, valid_to) "
                "VALUES ('aws', ?, 'us-east-1', ?, NULL, ?, 'test', '', "
                "'https://example.test/prices', now(), now(), NULL)",
                [instance_type, usd, f"${usd}"],
            )
        reprice(con)
    app = run_app(monkeypatch, db, mode="Links only", sort="price per GPU-hour, cheapest first")
    assert "max_price" in [w.key for w in app.number_input]
    table = ranking_table(app)
    assert list(table["instance"])[:2] == [G5_12, P5]  # 1.42 then 6.88 USD per GPU-hour
    assert list(table["USD/GPU-hour"])[:2] == [1.42, 6.88] and table["USD/GPU-hour"].isna().sum() == 3
    app = run_app(monkeypatch, db, mode="Links only", max_price="2")
    assert list(ranking_table(app)["instance"]) == [G5_12]
    app = run_app(monkeypatch, db, max_price="2")  # the planner's ranking follows the same filters
    assert list(ranking_table(app)["instance"]) == [G5_12]


def test_downloads_say_what_they_are_and_keep_counts_whole():
    """Issue 21: downloads carried no "data as of" or filter, and counts came out as "8.0"."""
    from catalog.read.filters import Filters, describe
    from ui import tables

    lines = ["interconnect-catalog, data as of 2026-12-02", f"filter: {describe(Filters(gpu_counts=(8,)))}"]
    frame = pd.DataFrame({"instance": ["a", "b"], "GPUs": [8.0, 0.125], "NVLink domain (GPUs)": [8.0, None]})
    text = tables.csv_bytes(frame, lines).decode()
    assert text.splitlines()[:3] == [
        "# interconnect-catalog, data as of 2026-12-02",
        "# filter: GPUs per instance 8",
        "instance,GPUs,NVLink domain (GPUs)",
    ]
    assert text.splitlines()[3:] == ["a,8,8", "b,0.125,"]
    import pyarrow.parquet as pq

    path = tables.parquet_bytes(frame, lines)
    table = pq.read_table(pa_buffer(path))
    assert str(table.schema.field("NVLink domain (GPUs)").type) == "int64"
    assert table.schema.metadata[b"interconnect-catalog"].decode().endswith("GPUs per instance 8")
    assert describe(Filters()) == "no filter"


def pa_buffer(data: bytes):
    import pyarrow as pa

    return pa.BufferReader(data)


def test_garbage_in_the_url_is_named_not_dropped(db, monkeypatch):
    """Issue 21: `?instance=nonexistent&model=foo`, `?gpus=banana` were dropped without a word."""
    app = run_app(monkeypatch, db, instance="nonexistent", model="foo", gpus="banana", colour="red")
    warnings = shown_texts(app, "warning")
    assert "The link's instance='nonexistent' is not one the app can show: ignored." in warnings
    assert any(
        w.startswith("The link's model='foo' is not one the app can show (expected one of") for w in warnings
    )
    assert any(w.startswith("The link's gpus='banana'") for w in warnings)
    assert "The link's parameter 'colour' is not one the app knows: ignored." in warnings
    assert len(warnings) == 4 and all("\n" not in w for w in warnings)
    app = run_app(monkeypatch, db, min_fabric="lots", instance=f"{P5} (aws)", mode="Links only")
    assert shown_texts(app, "warning") == [
        "The link's min_fabric='lots' is not one the app can show (expected a number from 0 to 30,000): "
        "ignored."
    ]
    app.run()  # said once, when the link is opened
    assert shown_texts(app, "warning") == []


def test_jargon_explains_itself_on_hover(db, monkeypatch):
    """Issue 21: TP×PP×EP×DP, HBM-bound, paraphrased, curated, basis had no one-line explanation."""
    app = run_app(monkeypatch, db)
    config = json.loads(app_tab(app, "Ranking").dataframe[0].proto.columns)
    assert config["layout (TP×PP×EP×DP)"]["help"].startswith("TP×PP×EP×DP: tensor × pipeline")
    assert "HBM-bound" in config["bound by"]["help"]
    app = run_app(monkeypatch, db, mode="Links only")
    config = json.loads(app_tab(app, "Ranking").dataframe[0].proto.columns)
    assert "paraphrased:" in config["GPU-GPU basis"]["help"] and "Curated:" in config["flags"]["help"]
    assert app.toggle(key="curated").help.startswith("Curated: facts a person read")
    app = run_app(monkeypatch, db, view="Instance", instance=f"{G5} (aws)")
    instance = app_tab(app, "Instance")
    assert "inferred:" in json.loads(instance.dataframe[0].proto.columns)["basis"]["help"]
    # Issue 21: "/ 1 GPUs"; the Model help named a folder of the repository.
    assert instance.dataframe[0].value.loc[2, "how (per GPU)"] == "2.5 Gb/s per node / 8 / 1 GPU"
    assert "planner/presets" not in (run_app(monkeypatch, db).selectbox(key="model").help or "")


def test_an_unstated_fabric_reads_not_stated(small_catalog_file, tmp_path, monkeypatch):
    """Issue 21: the instance summary said "fabric unknown fabric"."""
    db = tmp_path / "c.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE instances SET inter_node_fabric = 'unknown' WHERE instance_type = 'g5.xlarge'")
    app = run_app(monkeypatch, db, view="Instance", instance=f"{G5} (aws)")
    summary = shown_texts(app_tab(app, "Instance"), "caption")[0]
    assert "fabric not stated" in summary and "unknown fabric" not in summary


def test_a_claim_says_whether_it_was_read_from_the_page_or_a_copy():
    """Issue 21: the same claim from AWS's page and from the third-party copy looked like duplicates."""
    from ui.instances import claims_frame

    page = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html"
    claims = pd.DataFrame(
        {
            "field": ["inter_node_gbits_per_s"] * 2,
            "value": [3200.0, 3200.0],
            "value_text": [None, None],
            "unit": ["Gbit/s"] * 2,
            "basis": ["stated"] * 2,
            "quote": ["3200 Gigabit"] * 2,
            "source_url": [f"https://{AWS_PAGE}", "copy:reference/aws/ac.html-tables.md"],
            "evidence": ["verbatim"] * 2,
            "original_url": [None, page],
            "unit_suspect": [False, False],
        }
    )
    shown = claims_frame(claims, history=False)
    assert list(shown["read from"]) == ["the page itself", f"a third-party copy of {page}"]


def test_hidden_columns_live_in_the_url_and_leave_the_table_and_download(db, monkeypatch):
    """Issue 21: hiding a column in the grid stayed in one browser; the link and the downloads showed
    every column. The "Hide columns" box is bound to the URL (``hide``, ``plan_hide``)."""
    import io

    app = run_app(monkeypatch, db, mode="Links only", hide=["provider", "GPU"])
    ranking = app_tab(app, "Ranking")
    table = ranking.dataframe[0].value
    assert "provider" not in table.columns and "GPU" not in table.columns and "instance" in table.columns
    assert app.multiselect(key="hide").value == ["provider", "GPU"]
    download = next(b for b in ranking.get("download_button") if b.proto.label == "Download CSV")
    assert download is not None  # the CSV is built from the frame shown
    from ui import tables

    shown = tables.csv_bytes(table, []).decode()
    assert pd.read_csv(io.StringIO(shown)).columns.tolist() == table.columns.tolist()
    plan = app_tab(run_app(monkeypatch, db, plan_hide=["bound by"]), "Ranking").dataframe[0].value
    assert "bound by" not in plan.columns and "verdict" in plan.columns


def test_every_header_reads_in_full_on_hover(db, monkeypatch):
    """Issue 21: headers cut short at 1280 px had no way to be read; each now has a hover text (its
    own help, or the header itself)."""
    for query in ({"mode": "Links only"}, {}):
        element = app_tab(run_app(monkeypatch, db, **query), "Ranking").dataframe[0]
        config = json.loads(element.proto.columns)
        assert all(config[column].get("help") for column in element.value.columns), query
    element = app_tab(run_app(monkeypatch, db, mode="Links only"), "Ranking").dataframe[0]
    helps = json.loads(element.proto.columns)
    assert helps["GPU"]["help"].startswith("GPU model") and helps["provider"]["help"] == "provider"


def _sidebar_places(app) -> dict[str, int]:
    """Where each keyed widget sits among the sidebar's top-level children."""
    return {
        child.key: index
        for index, child in app.sidebar.children.items()
        if getattr(child, "key", None) is not None
    }


def test_switching_the_mode_leaves_the_filters_in_place(monkeypatch, db):
    """Issue 21 (speed): the model and workload (Plan a model) or the order (Links only) sit in one
    box, so the filters, units and toggles below keep their places in the sidebar and the browser
    redraws only what changed (every one moved a place and was redrawn on each switch)."""
    app = run_app(monkeypatch, db)
    planned = _sidebar_places(app)
    app.radio(key="mode").set_value("Links only").run()
    linked = _sidebar_places(app)
    assert "model" not in planned and "sort" not in linked  # inside the box, not top-level
    for key in ("q", "provider", "gpus", "unit", "per", "min_fabric", "stale", "inferred"):
        assert planned[key] == linked[key], key
    assert app.selectbox(key="sort").value == "fabric, fastest first"


def test_the_ranking_table_keeps_its_key_across_views_orders_and_units(monkeypatch, db):
    """Issue 21 (speed): a grid whose key changes is a new element, which the browser builds again
    from nothing (grid, canvas, column sizes) instead of updating it. The Ranking tab's table keeps
    one key whether it shows the plan or the links, in any order and units; only a header click
    (which must leave no column selected) gives it a new one."""
    app = run_app(monkeypatch, db)
    ids = [app_tab(app, "Ranking").dataframe[0].proto.id]
    for change in (
        lambda: app.segmented_control(key="by").set_value("cost"),
        lambda: with_sidebar(app).segmented_control(key="task").set_value("Train"),
        lambda: app.radio(key="mode").set_value("Links only"),
        lambda: app.selectbox(key="sort").set_value("GPU, A to Z"),
        lambda: with_sidebar(app).segmented_control(key="unit").set_value("Gb/s"),
        lambda: app.radio(key="mode").set_value("Plan a model"),
    ):
        change().run()
        assert not app.exception
        ids.append(app_tab(app, "Ranking").dataframe[0].proto.id)
    assert ids[0] and set(ids) == {ids[0]}


def test_a_filter_reruns_only_the_main_area_from_the_widgets_current_values(monkeypatch, db):
    """Issue 21 (speed): a filter that changes nothing in the sidebar reruns only the main area
    (``ui.sidebar.main_only``): the browser does not redraw the sidebar's ~27 elements. The main area
    reads every widget afresh, not the last full run's values: after two such changes in a row the
    caption, the table's order and the downloads' about lines follow both. The units change the
    fabric box's label, so they rerun the whole page."""
    app = run_app(monkeypatch, db)
    app.radio(key="mode").set_value("Links only").run()
    assert app.sidebar.children  # the box swapped its widgets: a full run
    order, provider = app.selectbox(key="sort"), app.multiselect(key="provider")
    picked = provider.options[0]
    provider.set_value([picked]).run()
    assert not app.exception and not app.sidebar.children  # the main area alone
    order.set_value("GPU, A to Z").run()  # the sidebar as the browser still shows it
    assert not app.exception and not app.sidebar.children
    assert re.search(r" from 1 provider shown", rendered(app.caption[0].value))
    ranking = app_tab(app, "Ranking")
    assert set(ranking.dataframe[0].value["provider"]) == {picked}
    assert "Ordered by GPU, A to Z" in shown_texts(ranking, "caption")[0]
    about = "\n".join(app.session_state[tables.ABOUT_KEY])
    assert picked in about and "order: GPU, A to Z" in about
    with_sidebar(app).segmented_control(key="unit").set_value("Gb/s").run()
    assert app.number_input(key="min_fabric").label.startswith("Fabric at least (Gb/s")


def test_a_search_the_sidebar_refuses_reruns_the_whole_page(monkeypatch, db):
    """The sidebar says why a search is refused, so a search that brings or clears that line reruns
    the whole page; any other search reruns only the main area."""
    app = run_app(monkeypatch, db)
    app.text_input(key="q").input("p5.48xlarge").run()
    assert not app.sidebar.children
    with_sidebar(app).text_input(key="q").input(",".join("a" * 30)).run()
    assert app.sidebar.error and "search not applied" in app.sidebar.error[0].value
    app.text_input(key="q").input("p5.48xlarge").run()
    assert app.sidebar.children and not app.sidebar.error


def test_a_filter_after_a_refresh_replaced_the_file_reruns_the_whole_page(monkeypatch, db, tmp_path):
    """The main area's own reruns keep the last full run's catalog, facets and regions; once a refresh
    has swapped in a new file, a filter reruns the whole page instead, so the sidebar and the rows come
    from the same file (and nothing is cached under the old file's version)."""
    own = tmp_path / "catalog.duckdb"
    shutil.copyfile(db, own)
    app = run_app(monkeypatch, own)
    stat = own.stat()
    os.utime(own, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # as a refresh's swap would
    app.multiselect(key="provider").set_value([app.multiselect(key="provider").options[0]]).run()
    assert not app.exception and app.sidebar.children  # the whole page, from the new file


def test_a_filter_changed_with_what_changes_the_sidebar_in_one_interaction_reruns_the_whole_page(
    monkeypatch, db
):
    """Two changes can reach the server as one interaction (the browser's second message while a run
    is busy): a filter's keyed rerun must not win over the view's, the workload's or the units' full
    one, or the main area would draw the last full run's view, workload or units and the sidebar
    would keep them."""
    app = run_app(monkeypatch, db)
    provider = app.multiselect(key="provider").options[0]
    app.radio(key="mode").set_value("Links only")
    app.multiselect(key="provider").set_value([provider])
    app.run()
    assert not app.exception and app.sidebar.children
    # the link view's order picker, at its first order: the sidebar follows the view
    assert app.selectbox(key="sort").value == "fabric, fastest first"
    assert "Serving" not in " ".join(s.value for s in app_tab(app, "Ranking").subheader)
    app.radio(key="mode").set_value("Plan a model")
    app.run()
    app.segmented_control(key="task").set_value("Train")
    app.segmented_control(key="by").set_value("cost")
    app.run()
    assert not app.exception and app_tab(app, "Ranking").subheader[0].value.startswith("Training")
    app.segmented_control(key="unit").set_value("Gb/s")
    app.toggle(key="stale").set_value(False)
    app.run()
    assert app.number_input(key="min_fabric").label.startswith("Fabric at least (Gb/s")
