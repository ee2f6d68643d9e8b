"""Smoke test of the Streamlit app against a small catalog built by the tests."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from catalog.cli import main
from tests.conftest import ROOT
from tests.test_pipeline import build_mirror

SMALL = ["--provider", "aws", "--provider", "azure"]  # the providers the small mirror holds


@pytest.fixture
def catalog_db(tmp_path, monkeypatch):
    db = tmp_path / "c.duckdb"
    assert (
        main(["refresh", "--mirror", str(build_mirror(tmp_path / "m")), *SMALL, "--db", str(db), "--quiet"])
        == 0
    )
    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(db))
    return db


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
