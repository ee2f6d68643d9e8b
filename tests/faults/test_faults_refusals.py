"""The fault matrix, refusals where tracebacks were: one line naming the input, the exit code the
fault table gives, nothing written.

Odd nvbandwidth JSON shapes, a tampered snapshot for ``seed`` (and absurd values it loaded with no
gate), ``cheapest --limit -1`` and ``export`` of a partly corrupt catalog once ended in a traceback,
an unchecked catalog, or a silently wrong answer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalog import snapshot
from catalog.cli import main
from tests.helpers import query

EXIT_ENVIRONMENT = 4
BLOCK_BYTES = 262144  # DuckDB's block size


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if line.startswith("error: ")]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


# -- nvbandwidth JSON of another shape -------------------------------------------------------------

CASE = {"name": "device_to_device_memcpy_read_ce", "status": "Passed", "bandwidth_matrix": [["N/A", "300.5"]]}


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ({"nvbandwidth": []}, "$.nvbandwidth is list, not an object"),
        ({"nvbandwidth": "error"}, "$.nvbandwidth is str, not an object"),
        ({"nvbandwidth": {"testcases": {"a": 1}}}, "$.nvbandwidth.testcases is dict, not an array"),
        ({"nvbandwidth": {"testcases": [7]}}, "$.nvbandwidth.testcases[0] is int, not an object"),
        (
            {"nvbandwidth": {"testcases": [{**CASE, "bandwidth_matrix": 5}]}},
            "$.nvbandwidth.testcases[0].bandwidth_matrix is int, not an array",
        ),
        (
            {"nvbandwidth": {"testcases": [{**CASE, "bandwidth_matrix": [5]}]}},
            "$.nvbandwidth.testcases[0].bandwidth_matrix[0] is int, not an array",
        ),
        (
            {"nvbandwidth": {"testcases": [{**CASE, "bandwidth_matrix": [[{"x": 1}, "3"]]}]}},
            "$.nvbandwidth.testcases[0].bandwidth_matrix[0][0] is dict, not a bandwidth",
        ),
        ({"nvbandwidth": {"testcases": [{**CASE, "name": 5}]}}, "$.nvbandwidth.testcases[0].name is int"),
        ({"nvbandwidth": {"version": [1], "testcases": [CASE]}}, "$.nvbandwidth.version is list"),
        ("deep", "JSON nested too deeply"),
    ],
)
def test_nvbandwidth_json_of_another_shape_is_refused_in_one_line(
    small_catalog_file, tmp_path, capsys, document, why
):
    db = tmp_path / "c.duckdb"
    shutil.copyfile(small_catalog_file, db)
    path = tmp_path / "nvbandwidth.json"
    text = (
        '{"nvbandwidth": ' + "[" * 100_000 + "]" * 100_000 + "}"
        if document == "deep"
        else json.dumps(document)
    )
    path.write_text(text)
    code = main(
        [
            "measurements",
            "import",
            str(path),
            "--provider",
            "aws",
            "--instance",
            "p5.48xlarge",
            "--db",
            str(db),
        ]
    )
    assert code == 1
    error = one_line(capsys)
    assert error.startswith(f"error: {path}: line 1: ") and why in error
    assert query(db, "SELECT count(*) FROM measurements WHERE source = 'user'") == [(0,)]


# -- seed from a tampered snapshot ----------------------------------------------------------------


@pytest.fixture
def tampered(tmp_path) -> Path:
    """A copy of the shipped snapshot, free to damage."""
    copy = tmp_path / "snapshot"
    shutil.copytree(snapshot.DEFAULT_DIR, copy)
    return copy


def rewrite(path: Path, change) -> None:
    lines = path.read_text().splitlines()
    path.write_text("\n".join(change(lines)) + "\n")


def first_row(name: str, **values):
    """Damage the first p5.48xlarge line of a snapshot file with ``values``."""

    def change(lines: list[str]) -> list[str]:
        at = next(i for i, line in enumerate(lines) if '"p5.48xlarge"' in line)
        row = json.loads(lines[at])
        row.update(values)
        return [*lines[:at], json.dumps(row), *lines[at + 1 :]]

    return name, change


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (("instances.jsonl", lambda lines: ["{not json", *lines[1:]]), "cannot be read, nothing seeded"),
        (first_row("instances.jsonl", intra_node_gbytes_per_s=99_000.0), "99000 GB/s per GPU exceeds 2000"),
        (
            first_row("instances.jsonl", inter_node_gbits_per_s=1e308, inter_node_gbytes_per_s=1.25e307),
            "exceeds 30000 Gbit/s per node",
        ),
        (first_row("instances.jsonl", intra_node_link="warp-drive"), "'warp-drive' is not a valid Link"),
        (first_row("instances.jsonl", intra_node_basis="rumoured"), "'rumoured' is not a valid Basis"),
        (first_row("instances.jsonl", gpu_count=-8.0), "gpu_count must be positive, got -8.0"),
        (
            first_row("prices.jsonl", usd_per_hour=None, published_per_hour=None),
            "a price row with neither an on-demand nor a spot price",
        ),
        (first_row("measurements.jsonl", direction="sideways"), "direction must be one of"),
        # the published price and its USD figure changed together, so the bound is what refuses them
        (
            first_row("prices.jsonl", usd_per_hour=-5.0, published_per_hour=-5.0),
            "usd_per_hour -5.0 is not a plausible hourly price",
        ),
        (first_row("prices.jsonl", usd_per_hour=9000.0, published_per_hour=9000.0), "USD per GPU-hour"),
        (first_row("prices.jsonl", usd_per_hour=60.0), "60.0 USD is not 55.04 USD x 1.0"),  # USD ≠ published
        (("meta.json", lambda lines: ["{}"]), "has no readable 'built_at'"),
        # measurements: held to what a refresh or an import stores (once loaded with no gate)
        (first_row("measurements.jsonl", value=-100.0), "needs a positive finite value, got -100.0"),
        (first_row("measurements.jsonl", value=1e12), "1e+12 is beyond any real link"),
        (first_row("measurements.jsonl", metric="warp_gbits_per_s"), "unknown metric 'warp_gbits_per_s'"),
        (first_row("measurements.jsonl", kind="rumoured"), "kind must be one of"),
        (first_row("measurements.jsonl", quote=" "), "a measurement needs the source text"),
        (
            first_row("measurements.jsonl", source="user", value=9_000.0),
            "outside physical bounds: ib_port_gbits_per_s 9000 exceeds 800 Gbit/s per port",
        ),
    ],
)
def test_seed_refuses_a_tampered_snapshot_in_one_line(tampered, tmp_path, capsys, damage, why):
    name, change = damage
    rewrite(tampered / name, change)
    db = tmp_path / "seeded.duckdb"
    assert main(["seed", "--from", str(tampered), "--db", str(db)]) == EXIT_ENVIRONMENT
    error = one_line(capsys)
    assert f"snapshot {tampered}" in error or str(tampered / name) in error
    assert why in error, error
    assert not db.exists()  # nothing seeded, not even a half-built file


def test_seed_from_the_shipped_snapshot_passes_the_gates(tmp_path):
    assert main(["seed", "--db", str(tmp_path / "seeded.duckdb")]) == 0


def test_seed_keeps_a_scraped_reading_outside_the_bounds_as_a_refresh_does(tampered, tmp_path):
    """A refresh stores a source's reading outside the physical bounds (never a claim or a fill), so a
    snapshot dumped from it seeds; an imported one is refused (above), as the import refuses it."""
    rewrite(tampered / "measurements.jsonl", first_row("measurements.jsonl", value=9_000.0)[1])
    db = tmp_path / "seeded.duckdb"
    assert main(["seed", "--from", str(tampered), "--db", str(db)]) == 0
    assert query(db, "SELECT count(*) FROM measurements WHERE value = 9000") == [(1,)]


# -- cheapest --limit, export of a partly corrupt catalog -------------------------------------------


@pytest.mark.parametrize("limit", ["-1", "0", "ten"])
def test_cheapest_limit_must_be_a_whole_number_of_at_least_one(small_catalog_file, capsys, limit):
    with pytest.raises(SystemExit) as stopped:
        main(["cheapest", "--limit", limit, "--db", str(small_catalog_file)])
    assert stopped.value.code == 2
    assert f"--limit: expected a whole number of at least 1, got '{limit}'" in capsys.readouterr().err


def test_export_of_a_partly_corrupt_catalog_is_one_line_and_no_half_file(
    small_catalog_file, tmp_path, capsys
):
    """Every block of the small catalog damaged in turn (the file still opens): an export that reads
    the damaged block says so in one line and leaves no half-written file."""
    refused = 0
    for offset in range(BLOCK_BYTES, small_catalog_file.stat().st_size - BLOCK_BYTES, BLOCK_BYTES):
        bad = tmp_path / f"bad-{offset}.duckdb"
        shutil.copyfile(small_catalog_file, bad)
        with open(bad, "r+b") as handle:
            handle.seek(offset + 100)
            handle.write(b"\xff" * 512)
        for table in ("instances", "claims", "prices", "fetches", "measurements"):
            out = tmp_path / f"{table}.csv"
            code = main(["export", "--db", str(bad), "--table", table, "--format", "csv", "--out", str(out)])
            if code == 0:
                capsys.readouterr()
                continue
            assert code == EXIT_ENVIRONMENT
            assert one_line(capsys).startswith(f"error: catalog {bad} is unreadable: ")
            assert not out.exists()
            refused += 1
    assert refused > 0


# -- model files for plan --------------------------------------------------------------------------

TINY_MODEL = (
    'name = "x"\nsource_url = "u"\nsource_note = "n"\nlayers = 16\nhidden_size = 2048\nattention_heads = 16\n'
    "kv_heads = 4\nhead_dim = 128\nffn_hidden_size = 8192\nvocab_size = 32000\nparams_total = 1000000000\n"
    "params_active = 1000000000\n"
)


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        # once accepted as one layer (a bool is an int to Python)
        ("true.toml", TINY_MODEL.replace("layers = 16", "layers = true"), "layers must be a positive whole"),
        ("bool.toml", TINY_MODEL.replace("params_total = 1000000000", "params_total = true"), "params_total"),
        # once a ValueError and a RecursionError traceback
        ("digits.json", '{"layers": 1' + "0" * 5000 + "}", "not a model file: Exceeds the limit"),
        ("deep.json", '{"a":' * 100_000 + "1" + "}" * 100_000, "not a model file: maximum recursion depth"),
        ("nested.json", "[" * 100_000 + "]" * 100_000, "not TOML or JSON"),
        (
            "inf.toml",
            TINY_MODEL.replace("layers = 16", "layers = inf"),
            "layers must be a positive whole number, got inf",
        ),
        (
            "nan.toml",
            TINY_MODEL.replace("layers = 16", "layers = nan"),
            "layers must be a positive whole number, got nan",
        ),
        (
            "minus.toml",
            TINY_MODEL.replace("layers = 16", "layers = -16"),
            "layers must be a positive whole number, got -16",
        ),
        (
            "nan-params.toml",
            TINY_MODEL.replace("params_total = 1000000000", "params_total = nan"),
            "params_total must be a positive number, got nan",
        ),
    ],
)
def test_a_hostile_model_file_is_refused_in_one_line(small_catalog_file, tmp_path, capsys, name, text, why):
    model = tmp_path / name
    model.write_text(text)
    code = main(["plan", "--model", str(model), "--workload", "serve", "--db", str(small_catalog_file)])
    assert code == 2
    error = one_line(capsys)
    assert error.startswith(f"error: {model}: ") and why in error, error


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        (["--nodes", "1000000000"], "--nodes must be a whole number from 1 to 1,024, got '1000000000'"),
        (["--nodes", "-1"], "--nodes must be a whole number from 1 to 1,024"),
        (["--batch", "1000000000000"], "--batch must be a whole number from 1 to 10,000,000"),
        (["--context", "1000000000000"], "--context must be a whole number from 1 to 10,000,000"),
        (["--output", "nan"], "--output must be a whole number from 1 to 10,000,000, got 'nan'"),
        (["--tokens-per-s", "inf"], "--tokens-per-s must be a positive number up to 1e+09, got 'inf'"),
        (["--tpot-ms", "-5"], "--tpot-ms must be a positive number up to 1e+09, got '-5'"),
        (["--efficiency", "7"], "--efficiency must be from 0.01 to 1, got 7"),
        (["--layout", "TP99999999xPP1xEP1xDP1"], "--layout must look like TP4xPP2xEP1xDP1"),
        (["--model", "m" * 100_000], "--model is 100,000 characters long; at most 4,096"),
        (
            ["--workload", "train", "--tokens", "1e12", "--days", "0"],
            "--days must be a positive number up to 10000",
        ),
        (["--workload", "train", "--tokens", "1e12", "--days", "1e400"], "--days must be a positive number"),
        (
            ["--workload", "train", "--tokens", "-1"],
            "--tokens must be a positive number up to 1e+16, got '-1'",
        ),
        (["--ttft-ms", "nan"], "--ttft-ms must be a positive number up to 1e+09, got 'nan'"),
        (["--tokens-per-s", "1e30"], "--tokens-per-s must be a positive number up to 1e+09, got '1e30'"),
        (["--precision", "fp3"], "--precision for serving is bf16, fp8 or fp4, got 'fp3'"),
    ],
)
def test_every_plan_number_and_string_is_capped_in_one_line(small_catalog_file, capsys, flags, why):
    """``--nodes 1000000000`` once ran for minutes and a 1 MB model name cost 3.3 GB."""
    args = [
        "plan",
        "--model",
        "llama-3.1-70b",
        "--workload",
        "serve",
        *flags,
        "--db",
        str(small_catalog_file),
    ]
    assert main(args) == 2
    assert why in one_line(capsys)


def test_a_model_file_over_its_cap_is_refused_unread(small_catalog_file, tmp_path, capsys):
    model = tmp_path / "big.toml"
    with open(model, "wb") as handle:
        handle.truncate(50_000_000)  # sparse: 50 MB of zeros
    args = ["plan", "--model", str(model), "--workload", "serve", "--db", str(small_catalog_file)]
    assert main(args) == 2
    assert f"--model: {model} is larger than 1,000,000 bytes" in one_line(capsys)


@pytest.mark.parametrize("top", ["-1", "ten"])
def test_plan_top_must_be_a_whole_number_of_rows(small_catalog_file, capsys, top):
    """``--top -1`` once printed every row, as ``0`` does, without a word."""
    with pytest.raises(SystemExit) as stopped:
        main(
            [
                "plan",
                "--model",
                "llama-3.1-70b",
                "--workload",
                "serve",
                "--top",
                top,
                "--db",
                str(small_catalog_file),
            ]
        )
    assert stopped.value.code == 2
    assert f"--top: expected a whole number of rows (0: all), got '{top}'" in capsys.readouterr().err
