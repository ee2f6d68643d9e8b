"""Set-up as a new user meets it: what `make app` installs and serves on, a busy port, what `seed` says."""

from __future__ import annotations

import shutil
import socket
import subprocess

import pytest

from catalog.cli import main
from devtools.port import port_problem
from tests.helpers import ROOT


def dry_run(*args: str) -> list[str]:
    """The commands `make ARGS` would run on a machine with no .venv and no catalog (``make -n``)."""
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    done = subprocess.run(
        [
            "make",
            "-n",
            "--no-print-directory",
            "-C",
            str(ROOT),
            *args,
            "VENV=/nonexistent/venv",
            "DB=/nonexistent/c.duckdb",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_make_app_installs_the_runtime_dependencies_only_and_takes_a_port():
    commands = dry_run("app", "PORT=8600")
    installs = [c for c in commands if "pip install" in c]
    assert len(installs) == 1 and installs[0].endswith("-r /nonexistent/venv/runtime-requirements.txt")
    assert not any("[dev]" in c or " -e " in c for c in commands)  # nothing is built for the app
    port_check, serve = commands[-2:]
    assert port_check.endswith("-m devtools.port 8600")
    assert serve.endswith("-m ui.serve --server.port 8600")


def test_make_test_adds_the_dev_extra():
    installs = [c for c in dry_run("test") if "pip install" in c]
    assert installs[0].endswith("runtime-requirements.txt") and installs[-1].endswith("-e '.[dev]'")


def test_a_busy_port_is_named_with_the_way_out():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        problem = port_problem(str(port))
    assert problem is not None and f"port {port} is already in use" in problem
    assert "make app PORT=" in problem and "\n" not in problem


def test_a_free_port_passes_and_a_bad_one_names_the_variable():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    assert port_problem(str(free)) is None
    assert port_problem("http") == "PORT must be a whole number from 1 to 65535, got 'http'"
    assert port_problem("70000") is not None


def test_seed_says_what_it_built(tmp_path, capsys):
    import duckdb

    db = tmp_path / "c.duckdb"
    assert main(["seed", "--db", str(db)]) == 0
    err = capsys.readouterr().err
    with duckdb.connect(str(db), read_only=True) as con:
        counted = con.execute("SELECT count(*), count(DISTINCT provider) FROM instances").fetchone()
        instances, providers = counted
        prices, built = con.execute("SELECT count(*), max(fetched_at) FROM current_prices").fetchone()
    assert f"{instances:,} instances from {providers} providers" in err
    assert f"{prices:,} current prices" in err
    assert f"data as of {built:%Y-%m-%d %H:%M} UTC" in err


def test_make_lint_checks_the_workflows_with_actionlint():
    assert any(c.endswith("bin/actionlint .github/workflows/*.yml") for c in dry_run("lint"))


def test_the_refresh_workflow_runs_make_targets_that_exist():
    """.github/workflows/refresh.yml runs the same make targets CI runs; each is one make knows. Its
    refresh is the command `make refresh` runs, run directly: make exits 2 whenever a command fails,
    so the exit code it reads (1 goes on, 2 to 5 stop) would always be 2."""
    import re

    workflow = (ROOT / ".github" / "workflows" / "refresh.yml").read_text()
    commands = re.findall(r"(?:^\s*|run: |\|\| )make ([a-z][a-z-]*)", workflow, re.M)  # run steps only
    targets = set(commands)
    assert {"seed", "runtime", "compat", "test", "release"} <= targets
    for target in sorted(targets):
        assert dry_run(target), target
    assert "on:\n  schedule:" in workflow and "workflow_dispatch:" in workflow
    assert '"$code" -gt 1' in workflow  # exit 2 to 5 stop before the tests: nothing is published
    run = re.search(r"^\s*(\S.*?)\s*>\s*refresh\.log.*\n\s*code=\$\?", workflow, re.M)
    recipe = dry_run("refresh", "QUIET=1")
    made = " ".join(" ".join(recipe[recipe.index("touch /nonexistent/venv/.runtime") + 1 :]).split())
    made = made.replace(" \\ ", " ")
    made = made.replace("/nonexistent/venv", ".venv").replace("/nonexistent/c.duckdb", "data/catalog.duckdb")
    assert run and run.group(1) == made, (run, made)


def test_make_release_writes_where_out_says():
    assert dry_run("release", "OUT=/tmp/r")[-1].endswith(
        "-m catalog release --db /nonexistent/c.duckdb --out /tmp/r"
    )
