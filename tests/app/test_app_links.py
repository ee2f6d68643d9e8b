"""Links (AppTest): a copied link reproduces the view a ready question set up; a source the catalog
holds as a local copy is named as one, in the link view's table and its download."""

from __future__ import annotations

import pytest

from tests.helpers import app_tab, run_app

pytestmark = pytest.mark.slow

TRAIN_405B = "Train Llama 3.1 405B: what to rent, what it costs"


def test_the_link_of_a_ready_question_opens_the_same_view(small_catalog_file, monkeypatch):
    """A new user's run: "Train Llama 3.1 405B" trains 15.6T tokens (``LLAMA_405B_TOKENS_B``), but its
    link held the model, task and order only, so the link opened 20 tokens per parameter (8.1e12),
    half the days and dollars. The token budget's box is not on the serving view the question is
    picked from, and a bound widget writes a value set from code only once it has been drawn."""
    from ui.sidebar import LLAMA_405B_TOKENS_B

    app = run_app(monkeypatch, small_catalog_file)
    app.selectbox(key="ready").select(TRAIN_405B).run()
    assert app.number_input(key="train_tokens").value == LLAMA_405B_TOKENS_B
    link = dict(app.query_params)
    assert link["train_tokens"] == str(LLAMA_405B_TOKENS_B)
    picked = app_tab(app, "Ranking").dataframe[0].value
    opened = run_app(monkeypatch, small_catalog_file, **link)
    assert opened.number_input(key="train_tokens").value == LLAMA_405B_TOKENS_B
    assert app_tab(opened, "Ranking").subheader[0].value == app_tab(app, "Ranking").subheader[0].value
    shared = app_tab(opened, "Ranking").dataframe[0].value
    assert set(shared["tokens to train"].dropna()) == {LLAMA_405B_TOKENS_B * 1e9}
    cheapest = ["instance", "USD to train", "days to train"]
    assert shared[cheapest].iloc[0].tolist() == picked[cheapest].iloc[0].tolist()
    assert shared.equals(picked)


def test_a_ready_question_from_the_link_view_links_its_model(small_catalog_file, monkeypatch):
    """From the link view no plan widget is drawn: the question's model, task, order and token
    budget reach the URL all the same, and the link opens the plan it asked."""
    app = run_app(monkeypatch, small_catalog_file, mode="Links only")
    app.selectbox(key="ready").select(TRAIN_405B).run()
    link = dict(app.query_params)
    assert {k: link.get(k) for k in ("model", "task", "by", "train_tokens")} == {
        "model": "llama-3.1-405b",
        "task": "Train",
        "by": "cost",
        "train_tokens": "15600.0",
    }
    opened = run_app(monkeypatch, small_catalog_file, **link)
    assert app_tab(opened, "Ranking").dataframe[0].value.equals(app_tab(app, "Ranking").dataframe[0].value)


COPY = "copy:reference/aws/instancetypes-md-mirror/ac.html-tables.md"
PAGE = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html"
COPY_WORDS = f"a local copy of {PAGE}: reference/aws/instancetypes-md-mirror/ac.html-tables.md"


@pytest.fixture
def copied(small_catalog_file, tmp_path):
    """The small catalog with g5.12xlarge read from a local copy of AWS's page (as 73 of the shipped
    catalog's 640 rows are), its claims naming the page it copies."""
    import shutil

    import duckdb

    db = tmp_path / "copied.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE instances SET source_url = ? WHERE instance_type = 'g5.12xlarge'", [COPY])
        con.execute(
            "UPDATE claims SET source_url = ?, original_url = ? WHERE instance_type = 'g5.12xlarge'",
            [COPY, PAGE],
        )
    return db


def test_a_source_read_from_a_local_copy_is_named_not_dashed(copied, monkeypatch):
    """73 of 640 rows of the shipped catalog read '–' as their source in the link view, its CSV and
    Compare, under a caption saying '–' means the catalog has none: their source is a local copy
    (``copy:reference/...``), which no link column may open. The source column says so in words;
    the link column opens the page it copies, and only http(s) addresses."""
    from normalize.safe_text import csv_safe_frame
    from ui import tables

    downloaded = []
    keep = tables.downloads
    monkeypatch.setattr(tables, "downloads", lambda frame, *a: (downloaded.append(frame), keep(frame, *a)))
    app = run_app(monkeypatch, copied, mode="Links only")
    table = app_tab(app, "Ranking").dataframe[0].value.set_index("instance")
    assert table.loc["g5.12xlarge", "source"] == COPY_WORDS
    assert table.loc["g5.12xlarge", "source link"] == PAGE
    assert table.loc["p5.48xlarge", "source"].startswith("https://")
    assert table["source"].notna().all()  # '–': no source, and every row here has one
    links = table["source link"].dropna()
    assert links.str.match(r"https?://").all()
    csv = tables.csv_bytes(csv_safe_frame(downloaded[-1]), []).decode()
    row = next(line for line in csv.splitlines() if line.startswith("g5.12xlarge,"))
    assert COPY_WORDS in row and "–" not in row


def test_compare_names_a_local_copy_as_its_source(copied, monkeypatch):
    compare = ["g5.12xlarge (aws)", "p5.48xlarge (aws)"]
    app = run_app(monkeypatch, copied, view="Compare", compare=compare)
    frame = next(d.value for d in app_tab(app, "Compare").dataframe if "level" in d.value.columns)
    assert set(frame["g5.12xlarge (aws) source"].dropna()) == {COPY_WORDS}
    assert set(frame["g5.12xlarge (aws) source link"].dropna()) == {PAGE}
    assert frame["p5.48xlarge (aws) source link"].dropna().str.match(r"https?://").all()


def test_a_source_in_words_is_never_a_link():
    """Any text a catalog holds as a source stays text; only an http(s) URL becomes a link."""
    from ui.text import source_link, source_text

    for url in ("copy:reference/x.md", "javascript:alert(1)", "[a](https://evil.example)", "ftp://x/y", ""):
        assert source_link(url, {"copy:reference/x.md": "javascript:alert(1)"}) is None, url
    assert (
        source_text("copy:reference/x.md")
        == "a local copy (the page it copies is not recorded): reference/x.md"
    )
    assert (
        source_text("[a](https://evil.example)") == "[a](https://evil.example)"
    )  # a text cell: not markdown
    assert source_text(None) is None and source_text("") is None
    assert source_link("https://example.com/p") == "https://example.com/p"
