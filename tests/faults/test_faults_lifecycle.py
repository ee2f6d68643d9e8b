"""The fault matrix: a catalog's life (issue 23). A corrupt catalog moved aside and rebuilt keeps the
measurements a user imported into it (or, when they cannot be read back, is left alone with a clear
error); a clock set back cannot make history run backwards; a hard link to ``--db`` cannot run a
second refresh of the same file."""

from __future__ import annotations

import contextlib
import os
import shutil

import duckdb
import pytest

from catalog.cli import main
from catalog.lock import refresh_lock
from catalog.read.connect import check_catalog
from normalize.errors import CorruptCatalog, EnvironmentProblem
from tests.helpers import SMALL, Clock, query, run

BLOCK_BYTES = 256 * 1024
P2P = (
    "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n"
    "     0 770.00 800.00\n     1 800.00 770.00\n"
)


def imported(db, tmp_path) -> None:
    reading = tmp_path / "p2p.txt"
    reading.write_text(P2P)
    args = ["measurements", "import", str(reading), "--provider", "aws", "--instance", "p5.48xlarge"]
    assert main([*args, "--db", str(db)]) == 0


def damaged_copies(db):
    """Copies of ``db`` with one damaged block each that still open, with whether the user's readings
    can be read back from them."""
    for offset in range(db.stat().st_size - BLOCK_BYTES, BLOCK_BYTES, -BLOCK_BYTES):
        bad = db.with_name(f"bad-{offset}.duckdb")
        shutil.copyfile(db, bad)
        with open(bad, "r+b") as handle:
            handle.seek(offset + 100)
            handle.write(b"\xff" * 512)
        try:
            check_catalog(bad)
            continue  # the damage is in free space
        except (CorruptCatalog, duckdb.Error):
            pass
        try:
            with duckdb.connect(str(bad), read_only=True) as con:
                con.execute("SELECT * FROM measurements WHERE source = 'user'").fetchall()
            yield bad, True
        except duckdb.Error:
            yield bad, False


@pytest.mark.slow
def test_a_corrupt_catalog_rebuilt_keeps_the_imported_measurements(small_catalog, tmp_path, capsys):
    mirror, db = small_catalog
    imported(db, tmp_path)
    bad = next((bad for bad, readable in damaged_copies(db) if readable), None)
    assert bad is not None, "no damaged block that leaves the imported readings readable"
    shutil.copyfile(bad, db)
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "rebuilt the catalog from scratch, keeping the 1 measurements imported into it" in err
    assert query(db, "SELECT count(*), max(value) FROM measurements WHERE source = 'user'") == [(1, 800.0)]


def test_a_file_that_is_no_catalog_at_all_is_still_rebuilt(small_catalog, capsys):
    mirror, db = small_catalog
    db.write_bytes(b"not a database" * 1000)
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db), "--quiet"]) == 0
    assert "rebuilt the catalog from scratch" in capsys.readouterr().err


def test_a_clock_set_back_is_refused_and_writes_nothing(small_catalog, capsys):
    mirror, db = small_catalog  # built at the real time, after Clock's 2026-12-01
    before = db.read_bytes()
    with pytest.raises(
        EnvironmentProblem, match=r"before .*'s latest change at .*: its history would run backwards"
    ):
        run(db, mirror, Clock())
    assert db.read_bytes() == before


def test_a_clock_set_back_a_year_is_one_line_and_exit_4(small_catalog, tmp_path, monkeypatch, capsys):
    from datetime import datetime

    from records import clock

    _, db = small_catalog
    before = db.read_bytes()
    monkeypatch.setattr(clock, "utcnow", lambda: datetime(2025, 12, 3, 6))
    reading = tmp_path / "p2p.txt"
    reading.write_text(P2P)
    args = ["measurements", "import", str(reading), "--provider", "aws", "--instance", "p5.48xlarge"]
    assert main([*args, "--db", str(db)]) == 4
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        last.startswith("error: the clock says 2025-12-03 06:00:00 UTC, before ") and "fix the clock" in last
    )
    assert db.read_bytes() == before


def test_a_hard_link_to_the_catalog_cannot_run_a_second_refresh(small_catalog, tmp_path, capsys):
    mirror, db = small_catalog
    alias = tmp_path / "alias.duckdb"
    os.link(db, alias)
    with refresh_lock(db):  # a refresh of the catalog under its own name is running
        code = main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(alias), "--quiet"])
    assert code == 3
    assert "under another name (a hard link)" in capsys.readouterr().err
    with contextlib.suppress(FileNotFoundError):
        assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(alias), "--quiet"]) == 0


@pytest.mark.parametrize("damage", ["a damaged block", "no catalog at all"])
def test_an_import_into_a_corrupt_catalog_is_one_line_and_moves_nothing(
    small_catalog, tmp_path, capsys, damage
):
    """An import has nothing to rebuild a corrupt catalog from (once it moved the file aside, started an
    empty one and died with a CatalogException traceback, leaving no catalog at --db): exit 4, one line,
    the catalog byte-identical where it was and the file to import untouched."""
    _, db = small_catalog
    imported(db, tmp_path)
    if damage == "no catalog at all":
        db.write_bytes(b"not a database" * 1000)
    else:
        shutil.copyfile(next(bad for bad, _ in damaged_copies(db)), db)
    before = db.read_bytes()
    capsys.readouterr()
    reading = tmp_path / "more.txt"
    reading.write_text(P2P.replace("800.00", "700.00"))
    args = ["measurements", "import", str(reading), "--provider", "aws", "--instance", "p5.48xlarge"]
    assert main([*args, "--db", str(db)]) == 4
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: catalog {db} is unreadable: "), lines
    assert db.read_bytes() == before
    assert not list(db.parent.glob(f"{db.name}.corrupt-*")) and not list(db.parent.glob(f"{db.name}.tmp-*"))
    assert reading.read_text() == P2P.replace("800.00", "700.00")
