"""The fault matrix, round three: numbers, names and options a user types (CLI and Python API), the
metadata service probe asks, a declared file prefix, a release cut short, a measured figure its GPU
cannot reach, and the refresh workflow's log (issue 23). Each once ran unbounded, answered with no
rows, a traceback or a wrong figure; each is now one line naming the input and its cap."""

from __future__ import annotations

import asyncio
import errno
import json
import math
import re
import shutil
import subprocess
import time

import httpx
import pytest

from catalog import Catalog, probe
from catalog.cli import main
from devtools.mirror_server import Reply
from fetch.http import under
from fetch.transports import MetadataOnly
from records.clock import utcnow
from tests.helpers import ROOT, Clock, query, run

LAMBDA_CSV = "/raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv"


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if line.startswith("error: ")]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


# -- probe ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--tool-timeout-s", "nan"),  # once: a hanging tool hung probe forever
        ("--tool-timeout-s", "-1"),  # once: every tool "timed out after -1s", exit 0
        ("--tool-timeout-s", "0"),
        ("--tool-timeout-s", "inf"),
        ("--metadata-timeout-s", "nan"),
    ],
)
def test_a_probe_timeout_that_disables_the_limit_is_refused(tmp_path, capsys, flag, value):
    assert main(["probe", "--out", str(tmp_path / "p.json"), flag, value]) == 2
    assert re.fullmatch(
        rf"error: {flag} \S+: must be a number of seconds above 0, at most [\d,]+", one_line(capsys)
    )
    assert not (tmp_path / "p.json").exists()


def _endless(request: httpx.Request) -> httpx.Response:
    async def body():
        while True:
            yield b"p5.48xlarge" * 6000

    return httpx.Response(200, content=body())


def _dripping(request: httpx.Request) -> httpx.Response:
    async def body():
        while True:
            await asyncio.sleep(0.05)
            yield b"p"

    return httpx.Response(200, content=body())


@pytest.mark.parametrize("answer", [_endless, _dripping])
def test_a_metadata_service_answering_without_end_is_cut(answer):
    """Off a cloud anyone on the local network can answer 169.254.169.254: an endless answer once
    grew probe to 19 GB in 5 minutes, never ending. Each answer is capped at 4,096 bytes, all of them
    asked within a deadline."""

    async def detect():
        transport = MetadataOnly(probe.ENDPOINTS, inner=httpx.MockTransport(answer))
        async with httpx.AsyncClient(transport=transport, timeout=1.0) as client:
            return await probe.detect_instance(client, deadline_s=1.0)

    started = time.perf_counter()
    provider, instance, how = asyncio.run(detect())
    assert time.perf_counter() - started < 5
    assert (provider, instance) == (None, None)
    assert how.startswith("no metadata service answered")


# -- a declared file is no folder -----------------------------------------------------------------


def test_a_file_prefix_matches_that_file_only():
    prefixes = ("https://h.example/catalogs/v8/lambda/vms.csv", "https://h.example/docs/")
    assert under("https://h.example/catalogs/v8/lambda/vms.csv", prefixes)
    assert under("https://h.example/catalogs/v8/lambda/vms.csv?token=1", prefixes)
    assert under("https://h.example/docs/a/b.md", prefixes)
    for url in (
        "https://h.example/catalogs/v8/lambda/vms.csv-pwn",
        "https://h.example/catalogs/v8/lambda/vms.csv/x",
    ):
        assert not under(url, prefixes)


def test_a_redirect_from_a_skypilot_csv_to_a_sibling_file_is_refused(mirror_server, tmp_path):
    """``vms.csv`` → ``vms.csv-pwn`` passed the ``startswith`` check: its rows were published, exit 0."""
    mirror_server.scripts.clear()
    mirror_server.requests.clear()
    mirror_server.script(LAMBDA_CSV, Reply(302, headers={"Location": "https:/" + LAMBDA_CSV + "-pwn"}))
    clock = Clock()
    clock.now = utcnow()
    try:
        report = run(tmp_path / "c.duckdb", mirror_server.base_url, clock, providers=["lambda"])
    finally:
        mirror_server.scripts.clear()
    (outcome,) = report.outcomes
    assert outcome.cause is not None and "vms.csv-pwn is not under lambda's declared sources" in outcome.cause
    assert not [path for path, _ in mirror_server.requests if path.endswith("-pwn")]


# -- plan, cheapest, the command line ---------------------------------------------------------------


def test_a_plan_efficiency_of_almost_nothing_is_refused(small_catalog_file, capsys):
    """1e-300 once priced a million tokens at a 300-digit number of dollars, exit 0."""
    args = ["plan", "--db", str(small_catalog_file), "--model", "llama-3.1-8b", "--workload", "serve"]
    assert main([*args, "--efficiency", "1e-300"]) == 2
    assert one_line(capsys) == "error: --efficiency must be from 0.01 to 1, got 1e-300"


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--gpus", "nan"], "--gpus: nan is not a number of GPUs above 0, at most 1,024"),
        (["--gpus", "-8"], "--gpus: -8 is not a number of GPUs above 0, at most 1,024"),
        (["--gpus", "1e400"], "--gpus: inf is not a number of GPUs above 0, at most 1,024"),
        (
            ["--min-fabric-gbits", "nan"],
            "--min-fabric-gbits: nan is not a fabric from 0 to 30,000 Gbit/s per node",
        ),
        (
            ["--min-fabric-gbits", "inf"],
            "--min-fabric-gbits: inf is not a fabric from 0 to 30,000 Gbit/s per node",
        ),
    ],
)
def test_a_cheapest_number_no_row_can_have_is_refused(small_catalog_file, capsys, flags, why):
    """Each once answered '(no rows)' with exit 0; --min-fabric-gbits nan dropped the filter in silence."""
    assert main(["cheapest", "--db", str(small_catalog_file), *flags]) == 2
    assert one_line(capsys) == f"error: {why}"


def test_the_read_sides_fabric_bound_is_the_gates():
    from catalog.read import prices
    from normalize import bounds

    assert prices.FABRIC_MAX_GBITS_PER_S == bounds.FABRIC_MAX_GBITS_PER_S


def test_thousands_of_options_are_refused_before_parsing(small_catalog_file, capsys):
    """argparse's time grows with the square of the options: 20,000 --provider once took 62 s."""
    args = ["plan", "--db", str(small_catalog_file), "--model", "llama-3.1-8b", "--workload", "serve"]
    started = time.perf_counter()
    assert main([*args, *["--provider", "aws"] * 20_000]) == 2
    assert time.perf_counter() - started < 2
    assert one_line(capsys) == "error: 20,003 options on one command line; at most 1,000"


@pytest.mark.parametrize(
    "args",
    [
        ["cheapest", "--region", "\x1b[2Jus"],
        ["plan", "--model", "llama-3.1-8b", "--workload", "serve", "--provider", "\x1b]0;pwn\x07aws"],
        ["query", 'SELECT * FROM "\x1b[2Jtable"'],
    ],
)
def test_an_error_echoing_an_escape_sequence_prints_it_as_text(small_catalog_file, capsys, args):
    """The refusal named the input with its raw escape sequence: a terminal obeyed it."""
    assert main([*args, "--db", str(small_catalog_file)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b" in err


def test_query_prints_a_column_name_with_an_escape_as_text(small_catalog_file, capsys):
    assert main(["query", "--db", str(small_catalog_file), 'SELECT 1 AS "\x1b[2Jpwn"']) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and out.splitlines()[0] == "\\x1b[2Jpwn"


# -- the Python API -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "why"),
    [
        (lambda c: c.query("SELECT 1", timeout_s=math.nan), "timeout_s=nan: a number of seconds"),
        (lambda c: c.query("SELECT 1", timeout_s=-1), "timeout_s=-1: a number of seconds"),
        (lambda c: c.query("SELECT 1", timeout_s=math.inf), "timeout_s=inf: a number of seconds"),
        (lambda c: c.query("SELECT 1", timeout_s="x"), "timeout_s='x': a number of seconds"),
        (lambda c: c.instances(gpus=math.nan), "gpus: nan is not a number of GPUs"),
        (lambda c: c.instances(gpus="x"), "gpus='x': not a number"),
        (lambda c: c.instances(min_fabric_gbits=math.nan), "min_fabric_gbits: nan is not a fabric"),
        (lambda c: c.instances(provider=[f"p{i}" for i in range(101)]), "provider: 101 values, at most 100"),
        (lambda c: c.plan("llama-3.1-8b", "serve", top=-1), "top=-1: a whole number of rows"),
        (lambda c: c.plan("llama-3.1-8b", "serve", top="x"), "top='x': a whole number of rows"),
        (lambda c: c.plan("llama-3.1-8b", "serve", provider=[f"p{i}" for i in range(101)]), "101 values"),
    ],
)
def test_an_api_value_no_answer_can_come_from_is_a_value_error(small_catalog_file, call, why):
    """The API's timeout once took NaN, -1 and inf (no limit), gpus=NaN answered no rows,
    min_fabric_gbits=NaN every row, top=-1 all rows and top='x' a TypeError."""
    with pytest.raises(ValueError, match=re.escape(why)):
        call(Catalog.open(small_catalog_file))


def test_an_api_list_of_100000_repeats_is_asked_once(small_catalog_file):
    """``plan(provider=['aws'] * 100_000)`` once ran past 120 s (each a command-line option)."""
    started = time.perf_counter()
    frame = Catalog.open(small_catalog_file).plan("llama-3.1-8b", "serve", provider=["aws"] * 100_000)
    assert time.perf_counter() - started < 30
    assert set(frame["provider"]) == {"aws"}


# -- a release cut short ------------------------------------------------------------------------------


def test_a_release_cut_short_by_a_full_disk_leaves_nothing_behind(
    small_catalog_file, tmp_path, monkeypatch, capsys
):
    """Once exit 4 but the half-written directory stayed: a catalog.duckdb and Parquet files, no
    SHA256SUMS, ready to be published by mistake."""
    from catalog import release

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "rel" / "manifest.json"))

    monkeypatch.setattr(release, "manifest", full)
    out = tmp_path / "rel"
    assert main(["release", "--db", str(small_catalog_file), "--out", str(out)]) == 4
    assert "No space left on device" in one_line(capsys)
    assert not out.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["release", "--db", str(small_catalog_file), "--out", str(empty)]) == 4
    assert empty.is_dir() and not list(empty.iterdir())  # the user's own directory stays, emptied


# -- a measured figure its GPU cannot reach -------------------------------------------------------------


def test_a_measured_figure_far_past_its_gpus_link_never_fills_the_row(real_catalog_file, tmp_path):
    """1,999 GB/s (under the 2,000 GB/s bound, 6.7x a V100's 300 GB/s NVLink) once filled p3.16xlarge
    as measured; a real copy reaches 0.87x its link at most. 250 GB/s still fills it."""
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    where = "provider = 'aws' AND instance_type = 'p3.16xlarge'"
    assert query(db, f"SELECT gpu_model, intra_node_basis FROM instances WHERE {where}") == [
        ("V100-SXM2-16GB", "missing")
    ]

    def imported(gbytes_per_s: float) -> tuple:
        matrix = tmp_path / f"p2p-{gbytes_per_s:g}.txt"
        matrix.write_text(
            "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n"
            f"     0 770.00 {gbytes_per_s:.2f}\n     1 {gbytes_per_s:.2f} 770.00\n"
        )
        flags = ["--provider", "aws", "--instance", "p3.16xlarge"]
        assert main(["measurements", "import", "--db", str(db), *flags, str(matrix)]) == 0
        return query(db, f"SELECT intra_node_gbytes_per_s, intra_node_basis FROM instances WHERE {where}")[0]

    assert imported(1_999) == (None, "missing")
    assert imported(250) == (250.0, "measured")


# -- the refresh workflow ------------------------------------------------------------------------------


def _step(name: str) -> str:
    """The ``run:`` script of a step of .github/workflows/refresh.yml."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "refresh.yml").read_text())
    (step,) = [s for s in workflow["jobs"]["refresh"]["steps"] if s.get("name") == name]
    return step["run"]


HOSTILE_LOG = "::add-mask::secret\n::error file=x::pwned\n```\n[click](https://evil.example) <img src=x>\n"


def test_the_refresh_log_never_runs_workflow_commands(tmp_path):
    """The log quotes documents (row names, causes); its lines reach the job log between
    stop-commands markers, never as commands."""
    bin_dir = tmp_path / "bin"
    python = tmp_path / ".venv" / "bin" / "python"  # the refresh, run directly (make's 2 hides its code)
    for program in (bin_dir, python.parent):
        program.mkdir(parents=True)
    (bin_dir / "make").write_text("#!/bin/sh\nexit 0\n")
    python.write_text(f"#!/bin/sh\nprintf '%s' '{HOSTILE_LOG}'\nexit 1\n")
    for program in (bin_dir / "make", python):
        program.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "GITHUB_OUTPUT": str(tmp_path / "out")}
    done = subprocess.run(
        ["bash", "-e", "-c", _step("Refresh")], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[start].removeprefix("::stop-commands::")
    end = lines.index(f"::{token}::")
    assert lines[start + 1 : end] == HOSTILE_LOG.splitlines()
    own = "::warning::some provider kept its last good rows (stale); see the summary above"
    assert [line for line in lines[:start] + lines[end + 1 :] if line.startswith("::")] == [own]
    assert (tmp_path / "out").read_text() == "code=1\n"


def test_the_release_notes_show_the_log_as_code_only(tmp_path):
    """The summary once went between ``` fences: a log line of ``` ended the block and the rest
    rendered as markdown (a link, an image) in the release notes."""
    (tmp_path / "refresh.log").write_text(HOSTILE_LOG)
    script = _step("Publish the release").split("gh release create", 1)[0]
    env = {"PATH": "/usr/bin:/bin", "REFRESH_CODE": "1"}
    subprocess.run(
        ["bash", "-e", "-c", script.replace("${{ github.run_number }}", "1")],
        cwd=tmp_path,
        env=env,
        check=True,
    )
    notes = (tmp_path / "notes.md").read_text().splitlines()
    log = notes[notes.index("Some providers kept their last good rows (stale). Refresh summary:") + 2 :]
    assert log and all(line.startswith("    ") for line in log), log


# -- seed: what a refresh would never store ------------------------------------------------------------


def _first_row_renamed(snapshot, name: str) -> None:
    path = snapshot / "instances.jsonl"
    first, *rest = path.read_text().splitlines()
    row = json.loads(first)
    row["instance_type"] = name
    path.write_text("\n".join([json.dumps(row), *rest]) + "\n")


def _many_rows(snapshot, count: int) -> None:
    path = snapshot / "instances.jsonl"
    row = json.loads(path.read_text().splitlines()[0])
    with open(path, "a") as handle:
        for n in range(count):
            handle.write(json.dumps({**row, "instance_type": f"zz{n}"}) + "\n")


def _sparse(snapshot, size: int) -> None:
    with open(snapshot / "claims.jsonl", "wb") as handle:
        handle.truncate(size)


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda s: _first_row_renamed(s, "p5\x1b[2J"), "a name with control characters (\\x1b)"),
        (lambda s: _many_rows(s, 6_000), "rows, over the cap of 5,000"),  # once 200,000 seeded (739 MB)
        (lambda s: _sparse(s, 70_000_000), "70,000,000 bytes, over the 64,000,000-byte cap"),
    ],
)
def test_seed_refuses_what_a_refresh_never_stores(tmp_path, capsys, damage, why):
    """A name with an escape sequence (a refresh stores it escaped and flagged), more rows than a
    provider may have, a file far past any catalog: each once seeded as it came."""
    snapshot = tmp_path / "snapshot"
    shutil.copytree(ROOT / "data" / "snapshot", snapshot)
    damage(snapshot)
    db = tmp_path / "seeded.duckdb"
    assert main(["seed", "--from", str(snapshot), "--db", str(db)]) == 4
    assert why in one_line(capsys)
    assert not db.exists()
