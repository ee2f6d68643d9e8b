"""The fault matrix, the app: catalog text never reaches markdown, searches are bounded (AppTest)."""

from __future__ import annotations

import shutil

import duckdb
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
    assert any("exit code unreadable" in m for m in slots)
