"""The app's health tabs (What's missing, Conflicts, Catalog status), the wording that reaches users,
and provider text shown as text, never as markdown (AppTest)."""

from __future__ import annotations

import json
import shutil
import tomllib

import duckdb
import pandas as pd
import pytest

from catalog import snapshot
from tests.helpers import ROOT, app_tab, rendered, run_app, shown_texts
from ui import charts
from ui.units import Units

pytestmark = pytest.mark.slow

HOSTILE = "[click me](https://evil.example/x) ![pixel](http://127.0.0.1:9/p.png) <b>bold</b> :red[red] $x$"


def test_missing_conflicts_and_status_tabs_on_a_healthy_catalog(small_catalog_file, monkeypatch):
    app = run_app(monkeypatch, small_catalog_file, view="What's missing")
    summary = app_tab(app, "What's missing").dataframe[-1].value.set_index("provider")
    assert summary.loc["aws", "rows shown"] == 3 and summary.loc["azure", "unit corrected"] == 1
    assert summary.loc["aws", "rows with an on-demand price"] == 3  # the small mirror prices every row
    assert not any("(rows)" in c or c.endswith("_rows") for c in summary.columns)  # issue 14 wording
    assert app_tab(app, "What's missing").success[0].value.startswith("Every row shown states")
    app = run_app(monkeypatch, small_catalog_file, view="Conflicts")
    assert app_tab(app, "Conflicts").success[0].value.startswith("No field of the rows shown")
    app = run_app(monkeypatch, small_catalog_file, view="Catalog status")
    status = app_tab(app, "Catalog status")
    (built,) = shown_texts(status, "caption")[:1]
    # Issue 21: "Catalog file: data/catalog.duckdb ... exit code 0": the whole path, and in words.
    assert built.startswith(f"The catalog file {small_catalog_file.resolve()} was built ")
    assert built.endswith("UTC by a mirror refresh: every provider succeeded.")
    assert status.success[0].value.startswith("No stale rows")
    assert list(status.dataframe[1].value["outcome"]) == ["ok", "ok"]
    # Issue 21: the status tab follows the provider filter like every other tab.
    app = run_app(monkeypatch, small_catalog_file, view="Catalog status", provider=["azure"])
    status = app_tab(app, "Catalog status")
    assert list(status.dataframe[0].value["provider"]) == ["azure"]
    assert list(status.dataframe[1].value["provider"]) == ["azure"]


@pytest.mark.shared
def test_conflicts_are_one_line_per_claim_with_the_value_kept(real_catalog_file, monkeypatch):
    """Defect (issue 14): a3-highgpu-8g paired '1600 ‖ 1000' with quotes in the other order."""
    app = run_app(monkeypatch, real_catalog_file, view="Conflicts", q="a3-highgpu-8g")
    lines = app_tab(app, "Conflicts").dataframe[0].value
    # Google's table (capture), our restatement of its network page, cluster-toolkit's 8 x 200
    assert list(lines["value"]) == ["1,000 Gbit/s", "1,000 Gbit/s", "1,600 Gbit/s"]
    assert list(lines["kept by the row"]) == ["yes", "yes", "no"]
    assert lines.loc[0, "quote (the source's own words)"] == "1,000"
    assert lines.loc[1, "quote (the source's own words)"] == (
        "| A3 High | NVIDIA H100 80GB | 1,000 Gbps | GPUDirect-TCPX |"
    )
    assert lines.loc[2, "quote (the source's own words)"].endswith(
        "200 Gbps of networking throughput per GPU"
    )
    assert lines.loc[2, "why"].startswith("not kept: the row shows 1,000 Gbit/s")
    assert set(lines["figure"]) == {"fabric bandwidth per node, one-way"}


@pytest.mark.shared
def test_missing_and_conflicts_follow_the_sidebar(real_catalog_file, monkeypatch):
    """Defect (issue 14): What's missing and Conflicts ignored the sidebar filters."""
    app = run_app(monkeypatch, real_catalog_file, view="Conflicts", provider=["runpod"])
    assert set(app_tab(app, "Conflicts").dataframe[0].value["provider"]) == {"runpod"}
    app = run_app(monkeypatch, real_catalog_file, view="What's missing", provider=["oci"])
    missing = app_tab(app, "What's missing")
    assert list(missing.dataframe[1].value["provider"]) == ["oci"]
    # Issue 21: each unpriced row is an item. Issue 20: 21 of OCI's 26 rows are priced now (the
    # offer lists); the 5 shapes only Oracle's health-check template names are not.
    summary = missing.dataframe[1].value.set_index("provider")
    assert (summary.loc["oci", "rows shown"], summary.loc["oci", "rows with an on-demand price"]) == (26, 21)
    items = missing.dataframe[0].value
    assert (items["missing"] == "on-demand price").sum() == 26 - 21
    items = missing.dataframe[0].value
    assert set(items["provider"]) == {"oci"}
    p100 = items[items["instance"] == "BM.GPU2.2"].iloc[0]  # OCI names the P100 without its form factor
    assert (p100["missing"], p100["why"]) == ("GPU-to-GPU link and bandwidth", "form factor unknown")
    assert pd.isna(p100["source"])  # a local copy has no web address to link (the row cites copy:...)


@pytest.mark.shared
def test_what_is_missing_says_why_per_row(real_catalog_file, monkeypatch):
    app = run_app(monkeypatch, real_catalog_file, view="What's missing")
    items = app_tab(app, "What's missing").dataframe[0].value
    assert set(items["why"]) == {
        "not stated by the provider",
        "page not fetched",
        "form factor unknown",
        "NVLink bridge or PCIe not stated",
        "no price source lists it",  # issue 21: prices are part of what is missing
    }
    nd12 = items[(items["instance"] == "Standard_ND12s") & (items["missing"] != "on-demand price")]
    assert set(nd12["why"]) == {"page not fetched"}
    assert nd12["in detail"].str.endswith("nd-series-summary.md").all()
    assert not items["row notes"].fillna("").str.contains("TRAP").any()  # issue 14 wording


def test_data_as_of_stands_beside_when_the_file_was_built(tmp_path, monkeypatch):
    """Defect (issue 14): 'Last refresh finished' showed when the file was seeded, not when the
    providers' pages were read."""
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    built = json.loads((snapshot.DEFAULT_DIR / snapshot.META_FILE).read_text())["built_at"][:10]
    with duckdb.connect(str(db), read_only=True) as con:  # curated facts: the day a person read them
        (read_on,) = con.execute("SELECT min(read_on) FROM claims").fetchone()
    as_of = built if str(read_on) == built else f"{read_on} to {built}"
    app = run_app(monkeypatch, db, view="Catalog status")
    header = rendered(app.caption[0].value)
    assert f"Data as of {as_of} (when the providers' pages were read); file built " in header
    assert header.endswith("UTC from the shipped snapshot.")
    status = app_tab(app, "Catalog status")
    assert rendered(status.markdown[0].value) == f"Data as of {as_of} (when the providers' pages were read)"
    built_line = shown_texts(status, "caption")[0]
    assert built_line.endswith("UTC from the shipped snapshot: every provider succeeded.")
    # Issue 21: a seeded catalog said "unknown" for every provider's outcome.
    outcomes = status.dataframe[1].value
    assert set(outcomes["outcome"]) == {"seeded from the shipped snapshot (no refresh run here)"}


def test_no_internal_wording_reaches_the_page(small_catalog_file, monkeypatch):
    """Defect (issue 14): None cells, unrounded values, raw column names, Streamlit's Deploy button."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["toolbarMode"] == "viewer"  # no Deploy button, no developer menu
    app = run_app(monkeypatch, small_catalog_file, per="node")
    table = app_tab(app, "Ranking").dataframe[0]
    assert table.proto.placeholder == "–"  # an empty cell reads '–', not 'None'
    frame = table.value
    for column in frame.select_dtypes("number"):
        values = frame[column].dropna()
        assert (values.round(6) == values).all(), column  # no 85.89934592
    assert not [c for c in frame.columns if "_" in c]


def test_provider_text_is_shown_as_text_never_as_markdown(small_catalog_file, tmp_path, monkeypatch):
    """Issue 9: notes, causes and names with markdown links and images stay text. Markdown would
    not do even escaped (Streamlit links any URL in it), so they go to the page HTML-escaped."""
    db = tmp_path / "hostile.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute(
            "UPDATE instances SET notes = ?, stale = true, stale_cause = ?, stale_since = now() "
            "WHERE instance_type = 'p5.48xlarge'",
            [[f"note {HOSTILE}"], f"cause {HOSTILE}"],
        )
        for table in ("instances", "claims"):
            con.execute(
                f"UPDATE {table} SET instance_type = ? WHERE instance_type = 'g5.xlarge'",
                [f"g5 {HOSTILE}"],
            )
    app = run_app(monkeypatch, db, view="Instance", instance="p5.48xlarge (aws)")
    instance = app_tab(app, "Instance")
    assert shown_texts(instance, "warning")[0].endswith(f"cause {HOSTILE}")
    assert f"Notes: note {HOSTILE}" in shown_texts(instance, "caption")
    blocks = [e.value for e in instance.get("html")]
    assert not [b for b in blocks if "<a" in b or "<img" in b or "<b>" in b]
    assert any("&lt;b&gt;bold&lt;/b&gt;" in b for b in blocks)
    markdown = [
        m.value for m in (*instance.markdown, *instance.caption, *instance.warning, *instance.subheader)
    ]
    assert not [m for m in markdown if "evil.example" in m]  # no provider text in a markdown slot
    app = run_app(monkeypatch, db, view="Instance", instance=f"g5 {HOSTILE} (aws)")
    assert shown_texts(app_tab(app, "Instance"), "subheader") == [f"g5 {HOSTILE} (aws)"]
    app = run_app(monkeypatch, db, view="Catalog status")
    (warning,) = shown_texts(app_tab(app, "Catalog status"), "warning")
    assert warning.startswith("aws: 1 row stale since") and warning.endswith(f"cause {HOSTILE}")


def test_chart_labels_follow_the_theme():
    """Defect (issue 14): labels were black on the dark theme's near-black background."""
    cliffs = pd.DataFrame(
        {
            "provider": ["aws"] * 4,
            "instance_type": ["p5.48xlarge"] * 4,
            "level": ["GPU memory", "intra-node per GPU", "fabric per GPU", "front-end per GPU"],
            "gbytes_per_s": [3350.0, 900.0, 50.0, float("nan")],
            "direction": ["none", "two-way", "one-way", "one-way"],
            "basis": ["inferred", "inferred", "stated", "missing"],
            "link": ["H100-SXM-80GB", "NVSwitch", "EFA", "front-end network"],
            "gpu_count": [8.0] * 4,
        }
    )
    data = charts.cliff_data(cliffs, Units())
    assert list(data["label"]) == [
        "3,350 GB/s per GPU (inferred)",
        "450 GB/s per GPU one way (900 two-way, inferred)",  # one way: half the bidirectional 900
        "50 GB/s per GPU one way (stated)",
        "missing",
    ]
    colors = {
        theme: charts.cliff_spec(data, Units(), theme)["layer"][1]["mark"]["color"]
        for theme in ("dark", "light", None)
    }
    assert colors == {"dark": "#fafafa", "light": "#31333f", None: "#808495"}


def test_without_chromium_the_tests_say_why(monkeypatch, tmp_path):
    """Where Chromium is missing the e2e tests skip with this reason instead of failing."""
    from devtools import browser

    monkeypatch.setattr(browser, "CHROMIUM", tmp_path / "no-chromium")
    assert browser.missing_requirement() == (
        f"{tmp_path / 'no-chromium'} not found (install it with `make e2e`, or apt-get install chromium)"
    )


def test_how_a_file_was_built_is_said_in_our_words_only():
    from datetime import datetime

    import pandas as pd

    from ui.health import built_text

    def built(mode: str) -> str:
        return built_text(pd.DataFrame([{"finished_at": datetime(2026, 12, 3, 6, 0), "mode": mode}]))

    assert built("mirror") == "2026-12-03 06:00 UTC by a mirror refresh"
    assert built("[a](http://127.0.0.1:9/x)") == "2026-12-03 06:00 UTC by a refresh of an unknown kind"


def test_whats_missing_counts_prices(tmp_path, monkeypatch):
    """Issue 21: What's missing said "1 missing item" for OCI while 0 of its 11 rows had a price."""
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    with duckdb.connect(str(db), read_only=True) as con:
        oci_rows, priced = con.execute(
            "SELECT count(*), count(min_usd_per_hour) FROM instances WHERE provider = 'oci'"
        ).fetchone()
    app = run_app(monkeypatch, db, view="What's missing", provider=["oci"])
    missing = app_tab(app, "What's missing")
    summary = missing.dataframe[-1].value.set_index("provider")
    assert (summary.loc["oci", "rows shown"], summary.loc["oci", "rows with an on-demand price"]) == (
        oci_rows,
        priced,
    )
    assert 0 < priced < oci_rows  # the offer lists price most shapes (issue 20), not the template-only ones
    items = missing.dataframe[0].value
    prices = items[items["missing"] == "on-demand price"]
    assert len(prices) == oci_rows - priced and set(prices["why"]) == {"no price source lists it"}
    assert any(f"oci {priced} of {oci_rows} rows priced" in t for t in shown_texts(missing, "caption"))


def test_a_stated_fabric_quotes_the_page_not_a_topology_file(tmp_path, monkeypatch):
    """Issue 21: on the shipped catalog the stated 3,200 Gb/s of p5.48xlarge quoted an aws-ofi-nccl XML
    line (`<net name="rdmap79s0" ...`) and had no source link; it is the page's "3200 Gigabit"."""
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    app = run_app(monkeypatch, db, view="Instance", instance="p5.48xlarge (aws)", mode="Links only")
    levels = app_tab(app, "Instance").dataframe[0].value.set_index("level")
    fabric = levels.loc["fabric, one way"]
    assert (fabric["basis"], fabric["quote"]) == ("stated", "3200 Gigabit")
    assert fabric["source"] == "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"


def test_a_view_table_is_built_once_per_query_result(monkeypatch):
    """Issue 21 (speed): a tab's table is built from a cached query result once and kept (at 100x,
    What's missing built its 90,000 rows' links on every rerun); a new result (another filter, a
    refreshed file) builds it again, and an equal frame that is another object is not taken for it."""
    from ui import data

    built = []

    def build(frame):
        built.append(frame)
        return frame.assign(b=frame["a"] * 2)

    first, other = pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1, 2]})
    shown = data.derived(build, first)
    assert data.derived(build, first) is shown and len(built) == 1
    assert data.derived(build, other) is not shown and len(built) == 2
    monkeypatch.setattr(data, "DERIVED_ENTRIES", 1)
    data.derived(build, pd.DataFrame({"a": [3]}))
    assert data.derived(build, first) is not shown and len(built) == 4  # the oldest was dropped
    assert shown["b"].tolist() == [2, 4]
