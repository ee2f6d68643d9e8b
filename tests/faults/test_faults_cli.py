"""The fault matrix, part four: the command line under attack and under a failing machine.

``catalog query`` as a sandbox (no file or network access, no ATTACH, locked settings, a time limit,
Ctrl-C), corrupt catalogs, environment errors with their own exit code (4) and one line, a symlinked
``--db``, the seed-during-refresh race, and the exit codes of reparse and ``--mirror ""``.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from catalog.cli import main
from catalog.lock import refresh_lock
from catalog.read.connect import check_catalog
from devtools.mirror_server import MirrorServer
from normalize.errors import CorruptCatalog, Unpublishable
from tests.helpers import MIRROR, ROOT, SMALL, Clock, query, run

EXIT_ENVIRONMENT = 4
SLOW_SQL = "SELECT sum(hash(a.range * b.range)) FROM range(1000000) a, range(1000000) b"  # 10^12 rows
BLOCK_BYTES = 262144  # DuckDB's block size


@pytest.fixture
def small(small_catalog) -> tuple[Path, Path]:
    return small_catalog


def count(db: Path) -> int:
    return query(db, "SELECT count(*) FROM instances")[0][0]


# -- catalog query is a sandbox -----------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "COPY instances TO '{out}'",
        "SELECT 1; COPY instances TO '{out}'",
        "EXPORT DATABASE '{dir}'",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM glob('/*')",
        "SELECT * FROM read_csv('https://example.com/x.csv')",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "PRAGMA memory_limit = '100GB'",
        "ATTACH '{other}' AS other (READ_WRITE)",
    ],
)
def test_query_has_no_file_network_or_settings_access(small, tmp_path, capsys, sql):
    _, db = small
    other = tmp_path / "other.duckdb"
    shutil.copyfile(db, other)
    out = tmp_path / "out.csv"
    text = sql.format(out=out, dir=tmp_path / "export", other=other)
    assert main(["query", text, "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and ("disabled" in err or "locked" in err or "Cannot" in err), err
    assert not out.exists() and not (tmp_path / "export").exists()
    assert count(other) == 5


def test_attach_through_a_hard_link_cannot_empty_the_queried_catalog(small, tmp_path):
    _, db = small
    alias = tmp_path / "alias.duckdb"
    os.link(db, alias)
    sql = f"ATTACH '{alias}' AS a (READ_WRITE); DELETE FROM a.instances"
    assert main(["query", sql, "--db", str(db)]) == 2
    assert count(db) == 5


@pytest.mark.slow  # a subprocess, a loopback server or a query left to run
def test_a_query_past_its_time_limit_is_stopped(small, capsys):
    _, db = small
    started = time.monotonic()
    assert main(["query", SLOW_SQL, "--db", str(db), "--timeout", "0.5"]) == 2
    assert time.monotonic() - started < 10
    assert "query stopped after its time limit of 0.5 s (--timeout SECONDS" in capsys.readouterr().err


@pytest.mark.slow  # a subprocess, a loopback server or a query left to run
def test_ctrl_c_stops_a_running_query(small, capsys):
    _, db = small
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        code = main(["query", SLOW_SQL, "--db", str(db), "--timeout", "0"])
    finally:
        timer.cancel()
    assert code == 130 and time.monotonic() - started < 10
    assert "interrupted" in capsys.readouterr().err


def test_a_plain_query_still_works_and_reads_only(small, capsys):
    _, db = small
    assert main(["query", "SELECT count(*) AS n FROM instances", "--db", str(db), "--format", "csv"]) == 0
    assert capsys.readouterr().out == "n\n5\n"


# -- corrupt catalogs ---------------------------------------------------------------------------


def corrupt_block(db: Path, offset: int) -> Path:
    bad = db.with_name(f"bad-{offset}.duckdb")
    shutil.copyfile(db, bad)
    with open(bad, "r+b") as handle:
        handle.seek(offset + 100)
        handle.write(b"\xff" * 512)
    return bad


@pytest.fixture
def partly_corrupt(small) -> Path:
    """A copy of the small catalog that opens, but with one damaged data block: the first such block
    from the end (found by trying, so the test does not depend on the file's layout)."""
    _, db = small
    for offset in range(db.stat().st_size - BLOCK_BYTES, BLOCK_BYTES, -BLOCK_BYTES):
        bad = corrupt_block(db, offset)
        with contextlib.suppress(duckdb.Error), duckdb.connect(str(bad), read_only=True):
            with contextlib.suppress(CorruptCatalog):
                check_catalog(bad)
                continue
            return bad
    raise AssertionError("no block whose damage leaves the file openable")


def test_check_catalog_tells_a_partly_corrupt_catalog(small, partly_corrupt):
    _, db = small
    check_catalog(db)  # healthy: no error
    with pytest.raises(CorruptCatalog, match=r"is unreadable: Corrupt database file: computed checksum"):
        check_catalog(partly_corrupt)


def test_refresh_moves_a_corrupt_catalog_aside_and_rebuilds(small, partly_corrupt, capsys):
    mirror, db = small
    shutil.copyfile(partly_corrupt, db)
    damaged = db.read_bytes()
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"warning: catalog {db} is unreadable: Corrupt database file")
    (aside,) = db.parent.glob(f"{db.name}.corrupt-*")
    assert f"moved it to {aside} and rebuilt the catalog from scratch" in err
    assert aside.read_bytes() == damaged  # kept as it was, for whoever wants to look
    assert count(db) == 5 and query(db, "SELECT count(*) FROM refreshes") == [(1,)]


def test_a_garbage_file_is_moved_aside_too(tmp_path, small):
    mirror, _ = small
    db = tmp_path / "garbage.duckdb"
    db.write_bytes(b"this is not a catalog\n" * 1000)
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db), "--quiet"]) == 0
    assert count(db) == 5 and len(list(tmp_path.glob("garbage.duckdb.corrupt-*"))) == 1


def test_query_and_reparse_of_a_corrupt_catalog_are_clear_errors(small, partly_corrupt, capsys):
    _, db = small
    shutil.copyfile(partly_corrupt, db)
    tables = [t for (t,) in query(db, "SELECT table_name FROM duckdb_tables()")]
    codes = {t: main(["query", f"SELECT sum(hash(COLUMNS(*))) FROM {t}", "--db", str(db)]) for t in tables}
    assert set(codes.values()) == {0, EXIT_ENVIRONMENT}  # the tables in the damaged block, and the rest
    assert main(["reparse", "--db", str(db), "--quiet"]) == EXIT_ENVIRONMENT  # nothing to rebuild from
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    assert errors and all(line.startswith(f"error: catalog {db} is unreadable: Corrupt") for line in errors)
    assert "`make refresh` moves it aside and rebuilds it" in errors[0]
    assert db.read_bytes() == partly_corrupt.read_bytes() and not list(db.parent.glob("*.corrupt-*"))


# -- environment errors: exit 4 and one line ----------------------------------------------------


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_export_to_a_missing_directory(small, tmp_path, capsys):
    _, db = small
    out = tmp_path / "missing" / "x.csv"
    assert main(["export", "--format", "csv", "--out", str(out), "--db", str(db)]) == EXIT_ENVIRONMENT
    assert one_line_error(capsys).startswith(f"error: cannot write {out}: ")


def test_seed_from_a_missing_directory(tmp_path, capsys):
    args = ["seed", "--from", str(tmp_path / "nowhere"), "--db", str(tmp_path / "c.duckdb"), "--force"]
    assert main(args) == EXIT_ENVIRONMENT
    assert one_line_error(capsys) == f"error: snapshot directory {tmp_path / 'nowhere'} does not exist\n"


#: Every command that reads ``--db`` (and writes nothing to it), with the rest of its command line.
PLAN = ["plan", "--model", "llama-3.1-8b", "--workload", "serve"]
READ_COMMANDS = {
    "query": ["query", "SELECT 1"],
    "export": ["export", "--format", "csv", "--out", "{tmp}/out.csv"],
    "cheapest": ["cheapest"],
    "plan": PLAN,
    "plan --instance": [*PLAN, "--instance", "p5.48xlarge"],
    "collective": ["collective", "--instance", "p5.48xlarge", "--op", "all-reduce", "--bytes", "1M"],
    "changes": ["changes"],
    "release": ["release", "--out", "{tmp}/release"],
}
#: A bad ``--db``, and the line every read command says of it (as `query` always has).
NO_DATABASE = "error: catalog {db} is unreadable: IO Error: The file {quoted} exists, but it is not a valid"
BAD_CATALOGS = {
    "garbage": NO_DATABASE,
    "empty file": NO_DATABASE,
    "directory": "error: catalog {db} is unreadable: IO Error: Could not read from file {quoted}: Is a dir",
    "missing": "error: no catalog at {db}; run `make refresh` or `python -m catalog seed`",
}


@pytest.mark.parametrize("bad", list(BAD_CATALOGS))
@pytest.mark.parametrize("command", list(READ_COMMANDS))
def test_every_read_command_says_a_missing_or_unreadable_catalog_in_one_line(
    tmp_path, capsys, monkeypatch, command, bad
):
    """A new user's `cheapest --db bad.duckdb` or `plan --db /tmp` was "internal error (a bug ...)",
    exit 5, and a missing catalog exit 1 for `cheapest`, `plan`, `collective` and `release` but 4 for
    `query`: a catalog that is not there, or not one (garbage, an empty file, a directory), is the
    environment's, one line and exit 4 from every command that reads it; nothing written."""
    monkeypatch.delenv("INTERCONNECT_DEBUG", raising=False)
    db = tmp_path / "bad.duckdb"
    if bad == "garbage":
        db.write_bytes(b"this is not a catalog\n" * 1000)
    elif bad == "empty file":
        db.touch()
    elif bad == "directory":
        db.mkdir()
    args = [arg.format(tmp=tmp_path) for arg in READ_COMMANDS[command]]
    assert main([*args, "--db", str(db)]) == EXIT_ENVIRONMENT
    err = one_line_error(capsys)
    assert err.startswith(BAD_CATALOGS[bad].format(db=db, quoted=f'"{db}"')), err
    assert "a bug" not in err and "internal error" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if bad == "missing" else ["bad.duckdb"])


BUG = "a bug in interconnect-catalog"
DAMAGED = "IO Error: Corrupt database file: computed checksum 1 does not match 2"


@pytest.mark.parametrize(
    ("error", "code", "said"),
    [
        (duckdb.IOException(DAMAGED), 4, "is unreadable: IO Error: Corrupt database file"),
        (duckdb.BinderException('Binder Error: Referenced column "x" not found'), 5, BUG),
        (duckdb.IOException('IO Error: Could not read from file "/elsewhere.csv": Is a directory'), 5, BUG),
    ],
)  # fmt: skip
def test_a_catalog_damaged_under_a_read_is_exit_4_and_a_bug_still_exit_5(
    small, capsys, monkeypatch, error, code, said
):
    """A damaged block found half-way through `cheapest`'s read is the catalog's (4, as for `query`);
    a DuckDB error about anything else (a column the code names wrong, another file) is still a bug."""
    from catalog.read import prices

    def broken(*args, **kwargs):
        raise error

    _, db = small
    monkeypatch.delenv("INTERCONNECT_DEBUG", raising=False)
    monkeypatch.setattr(prices, "cheapest", broken)
    assert main(["cheapest", "--db", str(db)]) == code
    assert said in one_line_error(capsys)


@contextlib.contextmanager
def tmpfs(path: Path, options: str):
    """A small tmpfs at ``path`` (root only); the test skips where mounting is not permitted."""
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def cli(*args: str, limit_file_bytes: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_bytes, limit_file_bytes))

    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit if limit_file_bytes else None,
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a full tmpfs needs root")
@pytest.mark.slow  # a subprocess, a loopback server or a query left to run
def test_disk_full_is_an_environment_error_and_keeps_the_old_catalog(small, tmp_path):
    mirror, db = small
    room_mb = db.stat().st_size // 2**20 + 1
    with tmpfs(tmp_path / "full", f"size={room_mb}m") as disk:
        target = disk / "c.duckdb"
        shutil.copyfile(
            db, target
        )  # the disk's room is the old file: the new one cannot be written beside it
        before = target.read_bytes()
        done = cli("refresh", "--mirror", str(mirror), *SMALL, "--db", str(target), "--quiet")
        assert done.returncode == EXIT_ENVIRONMENT, done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith(f"error: cannot write the catalog at {target}: ") and "No space left" in last
        assert "Traceback" not in done.stderr
        assert target.read_bytes() == before and not list(disk.glob("*.tmp-*"))


@pytest.mark.slow  # a subprocess, a loopback server or a query left to run
def test_a_file_size_limit_is_an_environment_error(small, tmp_path):
    mirror, _ = small
    db = str(tmp_path / "c.duckdb")
    done = cli("refresh", "--mirror", str(mirror), *SMALL, "--db", db, "--quiet", limit_file_bytes=200_000)
    assert done.returncode == EXIT_ENVIRONMENT, done.stderr
    assert "Traceback" not in done.stderr and "File too large" in done.stderr.strip().splitlines()[-1]
    assert not list(tmp_path.glob("c.duckdb*[0-9]"))  # no half-built file left behind


def test_a_read_only_directory_is_an_environment_error(small, tmp_path, capsys):
    mirror, _ = small
    if os.geteuid() == 0:  # root writes through permissions: use a read-only mount
        context = tmpfs(tmp_path / "ro", "ro,size=1m")
    else:
        (tmp_path / "ro").mkdir(mode=0o555)
        context = contextlib.nullcontext(tmp_path / "ro")
    with context as directory:
        assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(directory / "c.duckdb")]) == (
            EXIT_ENVIRONMENT
        )
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: cannot write the catalog at {directory / 'c.duckdb'}: ")
    assert "Read-only file system" in err or "Permission denied" in err


# -- paths, locks and exit codes ----------------------------------------------------------------


def test_a_symlinked_db_is_resolved_before_locking(small, tmp_path, capsys):
    mirror, db = small
    link = tmp_path / "link.duckdb"
    link.symlink_to(db)
    with refresh_lock(db):  # a refresh of the real path is running
        assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(link), "--quiet"]) == 3
    assert "another refresh" in capsys.readouterr().err
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(link), "--quiet"]) == 0
    assert link.is_symlink() and link.resolve() == db  # the link stays a link; the target was replaced
    assert query(db, "SELECT count(*) FROM refreshes") == [(2,)]
    assert not Path(f"{link}.lock").exists()


@pytest.mark.slow  # a subprocess, a loopback server or a query left to run
def test_seed_force_during_a_refresh_is_refused_and_the_refresh_completes(tmp_path):
    db = tmp_path / "race.duckdb"
    with MirrorServer(MIRROR, latency_s=0.3) as slow:
        command = ["refresh", "--mirror", slow.base_url, "--db", str(db), "--provider", "azure", "--quiet"]
        refresh = subprocess.Popen(
            [sys.executable, "-m", "catalog", *command],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120  # a cold interpreter on a loaded machine took over 30 s
        while not list(db.parent.glob(f"{db.name}.tmp-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert refresh.poll() is None, "the refresh finished before the seed could race it"
        assert main(["seed", "--force", "--db", str(db)]) == 3  # LockHeld: the seed does not delete its file
        assert refresh.wait(timeout=120) == 0
    modes = query(db, "SELECT mode FROM refreshes ORDER BY started_at")
    assert modes[-1] == ("mirror",) and ("snapshot",) not in modes


def test_last_success_at_survives_two_failures_in_a_row(small_catalog, tmp_path):
    mirror, _ = small_catalog
    db, clock = tmp_path / "history.duckdb", Clock()
    first = clock.now
    run(db, mirror, clock)
    (mirror / "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md").unlink()
    for _ in range(2):
        clock.advance()
        assert run(db, mirror, clock).exit_code == 1
    rows = query(
        db, "SELECT outcome, last_success_at FROM provider_refreshes WHERE provider = 'aws' ORDER BY 2, 1"
    )
    assert rows == [("ok", first), ("stale", first), ("stale", first)]


@pytest.mark.shared
def test_reparse_of_a_healthy_catalog_built_from_the_shipped_mirror_exits_0(
    real_catalog_file, tmp_path, capsys
):
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    assert main(["reparse", "--db", str(db), "--quiet"]) == 0
    err = capsys.readouterr().err
    summary = {line.split()[0]: line.split()[1:] for line in err.splitlines() if line.strip()}
    assert summary["gcp"] == ["0", "34", "34", "0", "0", "0", "unchanged"]
    assert summary["oci"] == ["0", "26", "26", "0", "0", "0", "unchanged"]


def test_an_empty_mirror_is_refused_not_run_live(tmp_path, capsys):
    assert main(["refresh", "--mirror", "", "--db", str(tmp_path / "c.duckdb")]) == 2
    assert "--mirror needs a directory or URL" in capsys.readouterr().err
    assert not (tmp_path / "c.duckdb").exists()


class _Unsayable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot say")


def _json_error() -> None:
    json.loads("{")  # raised in the standard library: the line names the project's frame that called it


@pytest.mark.parametrize(
    ("debug", "error", "code", "said"),
    [
        ("", KeyError("no such column"), 5, "KeyError: 'no such column' at tests/faults/test_faults_cli.py:"),
        (
            "1",
            KeyError("no such column"),
            5,
            "KeyError: 'no such column' at tests/faults/test_faults_cli.py:",
        ),
        ("", _Unsayable(), 5, "_Unsayable at tests/faults/test_faults_cli.py:"),
        ("", None, 5, "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2"),
        ("", Unpublishable("the catalog about to be published breaks its invariants: x"), 5, "invariants: x"),
        ("", MemoryError(), 4, "error: out of memory: MemoryError"),
    ],
)
def test_an_unexpected_error_is_a_bug_exit_not_a_stale_provider(
    small, tmp_path, capsys, monkeypatch, debug, error, code, said
):
    """A crash exits 5 with one line naming it and where (once Python's own exit, a traceback and 1,
    the code of a provider kept stale: the refresh workflow would have published); the old catalog
    stands. INTERCONNECT_DEBUG=1 adds the traceback; running out of memory is the machine's (4)."""
    from catalog import finish

    mirror, db = small
    target = tmp_path / "crashed.duckdb"
    shutil.copyfile(db, target)
    before = count(target)

    def broken(*args, **kwargs):
        if error is None:
            _json_error()
        raise error

    monkeypatch.setattr(finish, "finish_rows", broken)
    monkeypatch.setenv("INTERCONNECT_DEBUG", debug)
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(target), "--quiet"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert said in err[-1] and err[-1].startswith("error: ")
    if code == 5:
        assert "a bug" in err[-1] and "please report it" in err[-1]
    if error is None:
        assert "at tests/faults/test_faults_cli.py:" in err[-1] and "json/" not in err[-1]
    assert any("Traceback" in line for line in err) == bool(debug)
    assert count(target) == before
