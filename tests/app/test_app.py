"""The Streamlit app (AppTest): ranking, units, instance, compare and URL state, on small catalogs
built by the tests and on the real one. Health tabs and what reaches the page: test_app_health.py."""

from __future__ import annotations

import json
import shutil

import duckdb
import pandas as pd
import pytest

from catalog.pricing import fill_price_columns
from tests.helpers import AWS_PAGE, SMALL, app_tab, build_mirror, cli_refresh, rendered, run_app, shown_texts

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
    # 8 x H100 SXM: TP4 x DP2 replicas; 2,778.8 output tokens/s; 55.04 USD/h / (2,778.8 x 3,600) x 10^6
    assert (first["layout (TP×PP×EP×DP)"], first["output tokens/s"]) == ("TP4 x PP1 x EP1 x DP2", 2779)
    assert (first["USD/M output tokens"], first["decode step (ms)"], first["comm share (%)"]) == (
        5.5,
        12.6,
        2.2,
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
    assert pd.isna(unplanned["rank"]) and pd.isna(unplanned["output tokens/s"]) and unplanned["nodes"] == 3
    assert unplanned["verdict"] == (
        "Llama 3.1 70B cannot be planned on 3 x g5.12xlarge: no dense BF16 peak for A10G-24GB in the "
        "datasheet table: compute time unknown."
    )
    assert rendered(ranking.caption[1].value) == "planned: 3 of 5 · with a cost: 3"


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
        "GPU-GPU GB/s/GPU",
        "fabric",
        "fabric GB/s/GPU",
        "USD/GPU-hour",  # the small mirror's price tables price every row
        "USD/GPU-hour per fabric GB/s/GPU",
    ]
    assert not [c for c in table.columns if "index" in c or c in ("rank", "why")]
    # Fabric, fastest first: 50, 25, 1.25 and 1.25 (the 900 GB/s NVSwitch before PCIe), 0.3125 GB/s per GPU.
    assert list(table["instance"]) == [P5, ND96, ND48, G5_12, G5]
    first = table.iloc[0]
    assert (first["GPU-GPU basis"], first["TP confined to one node"]) == ("inferred", "yes")
    assert (first["GPU-GPU GB/s/GPU"], first["fabric GB/s/GPU"], first["fabric"]) == (900, 50, "EFA")
    assert first["USD/GPU-hour per fabric GB/s/GPU"] == 0.138  # 55.04 / 8 = 6.88 USD per GPU-hour / 50 GB/s
    assert table.loc[1, "flags"] == "unit corrected"  # ND96isr: "200 GB/s ... HDR InfiniBand"
    assert rendered(ranking.caption[1].value) == (
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
        "GPU-GPU GB/s/GPU",
        "fabric",
        "fabric GB/s/GPU",
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
    assert table.loc[P5, "fabric Gb/s/node"] == 3200  # as AWS states it
    assert table.loc[P5, "GPU-GPU Gb/s/node"] == 900 * 8 * 8
    assert table.loc[G5, "front-end Gb/s/node"] == 2.5
    assert table.loc[P5, "GPU memory Gb/s/node"] == 3350 * 8 * 8
    app = run_app(monkeypatch, db, mode="Links only", unit="GB/s", per="node")
    assert ranking_table(app).set_index("instance").loc[ND96, "fabric GB/s/node"] == 200


def test_training_by_cost_reranks_and_retitles(db, monkeypatch):
    """Switching to training and to cost: the title, the cost columns and the order follow."""
    app = run_app(monkeypatch, db, model="llama-3.1-405b")
    app.segmented_control(key="task").set_value("Train").run()
    app.segmented_control(key="by").set_value("cost").run()
    assert not app.exception
    ranking = app_tab(app, "Ranking")
    assert ranking.subheader[0].value == (
        "Training llama-3.1-405b: every instance ranked by USD per billion trained tokens, cheapest first"
    )
    table = ranking.dataframe[0].value
    # 12 x p5.48xlarge: 62.45 USD per 340 s step, 14,889 USD per billion tokens; 13 x ND96isr: 16,835
    assert list(table["instance"][:3]) == [P5, ND96, ND48]
    assert (table.loc[0, "nodes"], table.loc[0, "USD/B tokens"], table.loc[0, "USD/step"]) == (
        12,
        14888.7,
        62.45,
    )
    assert table.loc[0, "layout (TP×PP×EP×DP)"] == "TP4 x PP24 x EP1 x DP1, full recompute"
    assert table.loc[0, "trained tokens/s"] == 12323  # 12,322.5: rounded, never past the units digit
    assert table.loc[4, "verdict"] == (
        "Llama 3.1 405B cannot be planned on 64 x g5.xlarge: does not fit in up to 64 x g5.xlarge "
        "(its weights and state alone need 308)."
    )


def test_the_inferred_toggle_changes_the_tiles(db, monkeypatch):
    """Defect (issue 14): the tiles did not move when inferred values were excluded."""
    app = run_app(monkeypatch, db, mode="Links only", inferred="false")
    assert rendered(app_tab(app, "Ranking").caption[1].value) == (
        "rows: 5 · TP spans instances (rack-scale NVLink): 0 · on a GPU fabric (InfiniBand, EFA, RoCE, "
        "TCPX): 3 · GPU-to-GPU bandwidth not known: 4 · fabric bandwidth not known: 0"
    )
    app = run_app(monkeypatch, db, inferred="false")  # every NVSwitch figure here is inferred: 70B needs TP
    assert rendered(app_tab(app, "Ranking").caption[1].value) == "planned: 0 of 5 · with a cost: 0"
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
    assert list(levels["level"]) == ["GPU memory", "GPU-to-GPU", "fabric", "front-end"]
    assert list(levels["GB/s per GPU"]) == [3350.0, 900.0, 50.0, 50.0]
    assert levels.loc[2, "quote"] == "3200 Gigabit"
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
    fabric = claims[claims["figure"] == "fabric bandwidth per node"].iloc[0]
    assert fabric["value"] == "3,200 Gbit/s"
    assert not any(c.startswith(("value_", "source_url", "unit_suspect")) for c in claims.columns)


def test_compare_two_instances_in_the_same_units_on_one_axis(db, monkeypatch):
    app = run_app(monkeypatch, db, view="Compare", compare=[f"{P5} (aws)", f"{ND96} (azure)"], per="node")
    compare = app_tab(app, "Compare")
    table = compare.dataframe[0].value.set_index("level (GB/s per node)")
    assert list(table.index) == ["GPU memory", "GPU-to-GPU", "fabric", "front-end"]
    assert list(table.columns) == [
        f"{P5} (aws)",
        f"{P5} (aws) source",
        f"{ND96} (azure)",
        f"{ND96} (azure) source",
    ]
    assert table.loc["fabric", f"{P5} (aws)"] == "400 · stated · EFA"
    assert table.loc["fabric", f"{ND96} (azure)"] == "200 · stated · InfiniBand"
    assert table.loc["GPU-to-GPU", f"{P5} (aws)"] == "7,200 · inferred · NVSwitch"
    assert table.loc["fabric", f"{P5} (aws) source"] == f"https://{AWS_PAGE}"
    spec = spec_of(compare.get("vega_lite_chart")[0])
    assert spec["layer"][0]["encoding"]["xOffset"]["sort"] == [f"{P5} (aws)", f"{ND96} (azure)"]
    assert spec["layer"][0]["encoding"]["y"]["scale"] == {"type": "log", "domain": [0.1, 1_000_000.0]}


def test_compare_defaults_to_the_first_rows_of_the_table(db, monkeypatch):
    app = run_app(monkeypatch, db, view="Compare", q=f"{P5}, {G5}")
    compare = app_tab(app, "Compare")
    assert "Showing the first 2 rows of the table" in compare.caption[0].value
    assert list(compare.dataframe[0].value.columns[1::2]) == [f"{P5} (aws)", f"{G5} (aws)"]


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
    assert "fabric Gb/s/GPU" in ranking_table(app)
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
    fabric = table["fabric GB/s/GPU"]
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
        fill_price_columns(con)
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
        fill_price_columns(con)
    app = run_app(monkeypatch, db, mode="Links only", sort="price per GPU-hour, cheapest first")
    assert "max_price" in [w.key for w in app.number_input]
    table = ranking_table(app)
    assert list(table["instance"])[:2] == [G5_12, P5]  # 1.42 then 6.88 USD per GPU-hour
    assert list(table["USD/GPU-hour"])[:2] == [1.42, 6.88] and table["USD/GPU-hour"].isna().sum() == 3
    app = run_app(monkeypatch, db, mode="Links only", max_price="2")
    assert list(ranking_table(app)["instance"]) == [G5_12]
    app = run_app(monkeypatch, db, max_price="2")  # the planner's ranking follows the same filters
    assert list(ranking_table(app)["instance"]) == [G5_12]
