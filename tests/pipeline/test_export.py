"""`catalog export` without `--out` writes to standard output, never a file into the working directory."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import duckdb

from catalog.cli import EXIT_USAGE, main
from tests.helpers import ROOT


def test_csv_without_out_goes_to_stdout_and_leaves_the_directory_alone(
    small_catalog, tmp_path, capsys, monkeypatch
):
    _, db = small_catalog
    here = tmp_path / "checkout"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["export", "--format", "csv", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("provider,instance_type,")
    assert any(line.startswith("aws,p5.48xlarge,") for line in out.splitlines())
    assert list(here.iterdir()) == []


def test_json_without_out_is_one_array_on_stdout(small_catalog, tmp_path, capsys, monkeypatch):
    _, db = small_catalog
    monkeypatch.chdir(tmp_path)
    assert main(["export", "--format", "json", "--table", "current_prices", "--db", str(db)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {"provider", "region", "usd_per_hour"} <= set(rows[0])


def test_parquet_without_out_is_refused_on_a_terminal(small_catalog, capsys, monkeypatch):
    _, db = small_catalog

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    assert main(["export", "--format", "parquet", "--db", str(db)]) == EXIT_USAGE
    assert "--out FILE" in capsys.readouterr().err


def test_parquet_without_out_goes_down_a_pipe(small_catalog, tmp_path):
    _, db = small_catalog
    here = tmp_path / "checkout"
    here.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "catalog", "export", "--format", "parquet", "--db", str(db)],
        cwd=here,
        capture_output=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout[:4] == b"PAR1" and list(here.iterdir()) == []
    piped = tmp_path / "piped.parquet"
    piped.write_bytes(done.stdout)
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{piped}')").fetchall() == [(5,)]


def test_notes_are_a_list_in_the_catalog_and_json_and_one_joined_cell_in_csv(
    small_catalog, tmp_path, capsys, monkeypatch
):
    """Issue 18: a row's notes are a list (one sentence per item), never a '; '-joined string that SQL
    edits by prefix; a CSV cell joins them in order, and a note a spreadsheet would run is text."""
    _, db = small_catalog
    with duckdb.connect(str(db)) as con:
        [(kind,)] = con.execute(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_name = 'instances' AND column_name = 'notes'"
        ).fetchall()
        con.execute(
            "UPDATE instances SET notes = ['=cmd|x', 'second; with its own semicolon'] "
            "WHERE instance_type = 'p5.48xlarge'"
        )
    assert kind == "VARCHAR[]"
    monkeypatch.chdir(tmp_path)
    assert main(["export", "--format", "json", "--db", str(db)]) == 0
    rows = {r["instance_type"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["p5.48xlarge"]["notes"] == ["=cmd|x", "second; with its own semicolon"]
    assert all(isinstance(r["notes"], list) for r in rows.values())
    assert main(["export", "--format", "csv", "--db", str(db)]) == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("aws,p5.48xlarge,")]
    assert "'=cmd|x; second; with its own semicolon" in line
    query = "SELECT instance_type, notes FROM instances WHERE instance_type = 'p5.48xlarge'"
    assert main(["query", "--db", str(db), "--format", "csv", query]) == 0
    assert "p5.48xlarge,'=cmd|x; second; with its own semicolon" in capsys.readouterr().out
