"""The fault matrix: a full disk during ``refresh`` or ``measurements import`` (issue 23). DuckDB
reports ENOSPC in more than one way: an IOException while writing blocks, and a
TransactionException when the commit cannot write its WAL ("Failed to commit: Could not write file
...: No space left on device"), which once escaped as a traceback with exit 1. Either is the fault
table's one line, exit 4, the old catalog byte-identical and no half-built file left.

The full disk is simulated deterministically (the derivation step raising exactly what DuckDB
raised on a real full tmpfs); where mounting a tmpfs is allowed, the real thing runs too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import duckdb
import pytest

from catalog import expectations
from catalog.cli import main
from catalog.store import file_system_error
from tests.helpers import ROOT, SMALL

EXIT_ENVIRONMENT = 4
WAL_FULL = (
    'TransactionContext Error: Failed to commit: Could not write file "{db}.tmp-1.wal": '
    "No space left on device"
)
P2P = (
    "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n"
    "     0 770.00 48.00\n     1 48.00 770.00\n"
)


def full_disk_at_commit(monkeypatch, db) -> None:
    def fail(*_):
        raise duckdb.TransactionException(WAL_FULL.format(db=db))

    monkeypatch.setattr(expectations, "apply", fail)


def assert_one_line_and_intact(code: int, capsys, db, before: bytes) -> None:
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_ENVIRONMENT
    assert err[-1] == (
        f"error: cannot write the catalog at {db}: "
        f'Could not write file "{db}.tmp-1.wal": No space left on device'
    )
    assert not [line for line in err if "Traceback" in line]
    assert db.read_bytes() == before and not list(db.parent.glob("*.tmp-*"))


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (duckdb.TransactionException(WAL_FULL.format(db="/x/c.duckdb")), True),
        (duckdb.IOException('IO Error: Could not write file "/x": No space left on device'), True),
        (duckdb.InvalidInputException("Invalid Input Error: File too large"), True),
        (duckdb.BinderException('Binder Error: Table "t" does not have a column "c"'), False),
        (ValueError("No space left on device"), False),
    ],
)
def test_what_counts_as_the_file_system_refusing(exc, expected):
    assert file_system_error(exc) is expected


def test_a_full_disk_at_commit_during_import_is_one_line_and_exit_4(
    small_catalog, tmp_path, monkeypatch, capsys
):
    _, db = small_catalog
    before = db.read_bytes()
    reading = tmp_path / "p2p.txt"
    reading.write_text(P2P)
    full_disk_at_commit(monkeypatch, db)
    code = main(
        [
            "measurements",
            "import",
            str(reading),
            "--provider",
            "aws",
            "--instance",
            "p5.48xlarge",
            "--db",
            str(db),
        ]
    )
    assert_one_line_and_intact(code, capsys, db, before)


@pytest.mark.slow
def test_a_full_disk_at_commit_during_refresh_is_one_line_and_exit_4(small_catalog, monkeypatch, capsys):
    mirror, db = small_catalog
    before = db.read_bytes()
    full_disk_at_commit(monkeypatch, db)
    code = main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db), "--quiet"])
    assert_one_line_and_intact(code, capsys, db, before)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a full tmpfs needs root")
def test_a_real_full_tmpfs_during_import_of_the_real_catalog(real_catalog_file, tmp_path):
    """The red team's case: room for the old catalog and 1 MB, the commit's WAL write fails."""
    disk = tmp_path / "disk"
    disk.mkdir()
    size_kb = real_catalog_file.stat().st_size // 1024 + 1000
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        db = disk / "c.duckdb"
        shutil.copyfile(real_catalog_file, db)
        before = db.read_bytes()
        reading = tmp_path / "p2p.txt"
        reading.write_text(P2P)
        args = ["measurements", "import", str(reading), "--provider", "aws", "--instance", "p5.48xlarge"]
        done = subprocess.run(
            [sys.executable, "-m", "catalog", *args, "--db", str(db)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == EXIT_ENVIRONMENT, done.stderr
        assert "Traceback" not in done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert (
            last.startswith(f"error: cannot write the catalog at {db}: ")
            and "No space left on device" in last
        )
        assert db.read_bytes() == before and not list(disk.glob("*.tmp-*"))
    finally:
        subprocess.run(["umount", str(disk)], check=False)
