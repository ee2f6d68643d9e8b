"""The fault matrix, the app: catalog text never reaches markdown, searches are bounded (AppTest)."""

from __future__ import annotations

import shutil

import duckdb
import pandas as pd
import pytest

from tests.helpers import app_tab, run_app

pytestmark = pytest.mark.slow

HOSTILE = "[click me](https://evil.example/x) ![pixel](http://127.0.0.1:9/p.png)"


def test_a_tampered_exit_code_and_build_time_are_never_markdown(small_catalog_file, tmp_path, monkeypatch):
    db = tmp_path / "tampered.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute("ALTER TABLE refreshes ALTER exit_code TYPE VARCHAR")
        con.execute("ALTER TABLE refreshes ALTER finished_at TYPE VARCHAR")
        con.execute("UPDATE refreshes SET exit_code = ?, finished_at = ?", [HOSTILE, HOSTILE])
    app = run_app(monkeypatch, db, view="Catalog status")
    status = app_tab(app, "Catalog status")
    slots = [m.value for m in (*app.markdown, *app.caption, *status.markdown, *status.caption)]
    assert not [m for m in slots if "evil.example" in m or "127.0.0.1" in m]
    # The status line says so in text (ui.text.show escapes it), never passing the value on.
    from ui.health import exit_text

    assert exit_text(pd.DataFrame({"exit_code": [HOSTILE]})) == "exit code unreadable"


def test_a_search_with_thousands_of_alternatives_is_refused_in_one_line(
    small_catalog_file, tmp_path, monkeypatch
):
    db = tmp_path / "c.duckdb"  # a copy: the app's cached connection must not hold the shared file
    shutil.copyfile(small_catalog_file, db)
    link = ", ".join(f"p{n}.48xlarge" for n in range(10_500))  # the 62 KB link, 10,500 alternatives
    app = run_app(monkeypatch, db, q=link, mode="Links only")  # once 25 s and 3.26 GB
    errors = [e.value for e in app.sidebar.error]
    assert errors == [f"Search: {len(link):,} characters, over the cap of 500; search not applied."]
    app = run_app(monkeypatch, db, q=",".join(["h100"] * 21), mode="Links only")
    assert [e.value for e in app.sidebar.error] == [
        "Search: 21 alternatives (separated by commas), over the cap of 20; search not applied."
    ]


def test_the_search_caps_hold_for_every_caller():
    from catalog.read.filters import MAX_SEARCH_CHARS, parse_search

    assert parse_search("H100 SXM, B200") == (("h100", "sxm"), ("b200",))
    with pytest.raises(ValueError, match=f"over the cap of {MAX_SEARCH_CHARS}"):
        parse_search("x" * (MAX_SEARCH_CHARS + 1))
    with pytest.raises(ValueError, match="41 terms, over the cap of 40"):
        parse_search(" ".join(["a"] * 41))
