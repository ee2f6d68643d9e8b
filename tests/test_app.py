"""The Streamlit app (AppTest) against small catalogs built by the tests, and the real one."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from app import cliff_chart
from catalog.read import queries
from catalog.read.connect import connect_readonly
from tests.helpers import AWS_PAGE, ROOT, SMALL, build_mirror, cli_refresh

pytestmark = pytest.mark.slow  # runs refreshes or the app: left out of `make test-fast`

TABS = ["Ranking", "Bandwidth cliff", "Provenance", "What's missing", "Conflicts", "Catalog status"]


refresh = cli_refresh


@pytest.fixture
def catalog_db(small_catalog, monkeypatch):
    _, db = small_catalog
    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(db))
    return db


@pytest.fixture
def stale_db(tmp_path, monkeypatch):
    """The small catalog after a second refresh that could not fetch the AWS page."""
    db, mirror = tmp_path / "c.duckdb", build_mirror(tmp_path / "m")
    assert refresh(mirror, db, *SMALL) == 0
    (mirror / AWS_PAGE).unlink()
    assert refresh(mirror, db, *SMALL) == 1
    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(db))
    return db


@pytest.fixture(scope="module")
def first_view(small_catalog_file):
    """The app as it first renders the small catalog, shared by the tests that only read it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INTERCONNECT_CATALOG_DB", str(small_catalog_file))
        yield run_app()


def run_app() -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not app.exception
    return app


def tab(app: AppTest, label: str):
    return app.tabs[TABS.index(label)]


def test_app_lists_the_catalog(catalog_db):
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not app.exception
    frames = [df.value for df in app.dataframe]
    assert any("p5.48xlarge" in set(frame["instance_type"]) for frame in frames)


def test_app_says_when_there_is_no_catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(tmp_path / "none.duckdb"))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30).run()
    assert not app.exception
    assert "No catalog" in app.error[0].value


def test_ranking_tab_shows_scores_reasons_and_basis(first_view):
    app = first_view
    assert [t.label for t in app.tabs] == TABS
    ranking = tab(app, "Ranking")
    assert ranking.subheader[0].value == "Tensor parallelism (inside the NVLink domain)"
    table = ranking.dataframe[0].value
    assert list(table["instance_type"]) == [
        "p5.48xlarge",
        "Standard_ND96isr_T9_v9",
        "Standard_ND48is_T9_v9",
        "g5.12xlarge",
        "g5.xlarge",
    ]
    first = table.iloc[0]
    assert first["reason"] == "NVSwitch 900 GB/s per GPU (inferred), 8-GPU domain: TP up to 8"
    assert (first["intra_node_basis"], first["tp_confined_to_one_node"]) == ("inferred", "yes")
    assert table.loc[1, "flags"] == "unit corrected"  # ND96isr: "200 GB/s ... HDR InfiniBand"
    assert "score_weighted_gbytes_per_s" in table and "fabric_gbytes_per_s_per_gpu" in table
    metrics = {m.label: m.value for m in ranking.metric}
    assert metrics["rows scored"] == "5 of 5" and metrics["TP confined to one node"] == "5"


def test_switching_the_workload_reranks(catalog_db):
    app = run_app()
    app.radio(key="workload").set_value("pipeline").run()
    assert not app.exception
    ranking = tab(app, "Ranking")
    assert ranking.subheader[0].value == "Pipeline parallelism (across nodes)"
    table = ranking.dataframe[0].value
    assert list(table["instance_type"])[2:4] == ["g5.12xlarge", "Standard_ND48is_T9_v9"]
    assert table.loc[0, "reason"] == "fabric 50 GB/s per GPU over EFA: 3,200 Gb/s per node (stated)"
    app.radio(key="workload").set_value("expert").run()
    assert tab(app, "Ranking").dataframe[0].value.loc[0, "score_weighted_gbytes_per_s"] == pytest.approx(
        212.132, abs=1e-3
    )


def test_the_top_ranked_instance_is_shown_until_another_is_selected(catalog_db):
    app = run_app()
    assert app.selectbox(key="instance").value == "p5.48xlarge (aws)"
    cliff = tab(app, "Bandwidth cliff")
    assert cliff.subheader[0].value == "p5.48xlarge (aws)"
    assert list(cliff.dataframe[0].value["gbytes_per_s"]) == [3350.0, 900.0, 50.0, 50.0]
    spec = json.loads(cliff.get("vega_lite_chart")[0].proto.spec)
    assert spec["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"

    app.selectbox(key="instance").select("g5.xlarge (aws)").run()
    assert not app.exception
    cliff = tab(app, "Bandwidth cliff")
    assert cliff.subheader[0].value == "g5.xlarge (aws)"
    levels = cliff.dataframe[0].value
    assert list(levels["basis"]) == ["inferred", "not-applicable", "stated", "stated"]
    assert levels.loc[2, "gbytes_per_s"] == 0.3125
    provenance = tab(app, "Provenance")
    assert provenance.subheader[0].value == "Claims behind g5.xlarge (aws)"
    claims = provenance.dataframe[0].value.set_index("field")
    assert claims.loc["gpu_count", "quote"] == "1 x NVIDIA A10G GPU"
    assert claims.loc["gpu_count", "source_url"] == f"https://{AWS_PAGE}"


def test_provenance_tab_shows_quotes_and_history_toggle(catalog_db):
    app = run_app()
    app.selectbox(key="instance").select("Standard_ND96isr_T9_v9 (azure)").run()
    claims = tab(app, "Provenance").dataframe[0].value
    fabric = claims[claims["field"] == "inter_node_gbits_per_s"]
    assert fabric["unit_suspect"].all() and set(fabric["value"]) == {1600.0}
    app.toggle(key="claim_history").set_value(True).run()
    assert not app.exception
    assert "valid_to" in tab(app, "Provenance").dataframe[0].value


def test_missing_conflicts_and_status_tabs_on_a_healthy_catalog(first_view):
    app = first_view
    missing = tab(app, "What's missing").dataframe[0].value.set_index("provider")
    assert missing.loc["aws", "rows"] == 3 and missing.loc["azure", "unit_suspect_rows"] == 1
    assert tab(app, "Conflicts").success[0].value == "No field has current claims that disagree."
    status = tab(app, "Catalog status")
    metrics = {m.label: m.value for m in status.metric}
    assert (metrics["mode"], metrics["exit code"]) == ("mirror", "0")
    assert status.success[0].value.startswith("No stale rows")
    assert list(status.dataframe[0].value["outcome"]) == ["ok", "ok"]


def test_a_stale_provider_is_marked_everywhere(stale_db):
    app = run_app()
    table = tab(app, "Ranking").dataframe[0].value
    assert set(table.loc[table["provider"] == "aws", "flags"]) == {"stale"}
    status = tab(app, "Catalog status")
    assert {m.label: m.value for m in status.metric}["exit code"] == "1"
    warning = status.warning[0].value
    assert warning.startswith("aws: 3 rows stale since") and "HTTP 404" in warning
    assert "Stale since" in tab(app, "Bandwidth cliff").warning[0].value  # p5.48xlarge, stale, ranks first
    app.toggle(key="include_stale").set_value(False).run()
    assert set(tab(app, "Ranking").dataframe[0].value["provider"]) == {"azure"}


def test_filters_that_match_nothing_say_so(catalog_db):
    app = run_app()
    app.text_input(key="gpu_search").input("no such gpu").run()
    assert not app.exception
    assert tab(app, "Ranking").info[0].value.startswith("No instance matches the filters")
    assert tab(app, "Bandwidth cliff").info[0].value.startswith("No instance matches the filters")
    app.text_input(key="gpu_search").input("").run()
    app.multiselect(key="gpu_counts").set_value([8]).run()
    table = tab(app, "Ranking").dataframe[0].value
    assert sorted(table["instance_type"]) == ["Standard_ND96isr_T9_v9", "p5.48xlarge"]


def test_a_refreshed_catalog_shows_up_without_a_restart(catalog_db, tmp_path):
    app = run_app()
    assert tab(app, "Catalog status").success[0].value.startswith("No stale rows")
    mirror = tmp_path / "m"
    (mirror / AWS_PAGE).unlink()
    assert refresh(mirror, catalog_db, *SMALL) == 1  # replaces the file the app reads
    app.run()
    assert not app.exception
    assert tab(app, "Catalog status").warning[0].value.startswith("aws: 3 rows stale since")


def test_cliff_chart_labels_missing_and_inferred_levels(catalog_db):
    with connect_readonly(catalog_db) as con:
        cliff = queries.cliff(con, "aws", "g5.xlarge")
    spec = cliff_chart(cliff).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert [r["label"] for r in rows] == [
        "600 GB/s (inferred)",
        "not applicable",
        "0.312 GB/s (stated)",
        "0.312 GB/s (stated)",
    ]
    bars, _ = spec["layer"]
    assert bars["encoding"]["y"]["scale"] == {"type": "log", "domain": [0.1, 1800.0]}
    assert bars["encoding"]["strokeDash"]["scale"]["domain"] == ["stated", "inferred"]


def test_the_real_catalog_answers_the_question(real_catalog_file, monkeypatch):
    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(real_catalog_file))
    app = run_app()
    table = tab(app, "Ranking").dataframe[0].value
    top = table.iloc[0]
    assert top["gpu_model"].startswith(("GB200", "GB300")) and top["tp_confined_to_one_node"] == "no"
    assert table["rank"].isna().any() and table["rank"].dropna().is_monotonic_increasing
    assert "a3-highgpu-8g" in set(tab(app, "Conflicts").dataframe[0].value["instance_type"])


def test_status_tab_lists_what_changed_between_refreshes(tmp_path, monkeypatch):
    db, mirror = tmp_path / "c.duckdb", build_mirror(tmp_path / "m")
    assert refresh(mirror, db, *SMALL) == 0
    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(db))
    assert tab(run_app(), "Catalog status").info[-1].value.startswith("No figure has changed")
    page = mirror / AWS_PAGE
    page.write_text(page.read_text().replace("3200 Gigabit", "6400 Gigabit"))
    assert refresh(mirror, db, *SMALL) == 0
    changed = tab(run_app(), "Catalog status").dataframe[-1].value
    row = changed[changed["field"] == "inter_node_gbits_per_s"].iloc[0]
    assert (row["instance_type"], row["before"], row["after"], row["unit"]) == (
        "p5.48xlarge",
        "3200.0",
        "6400.0",
        "Gbit/s",
    )
