"""The command line, run in-process: refresh offline, query read-only, export, lock, exit codes."""

from __future__ import annotations

import json

import duckdb
import pytest

from catalog.cli import main
from catalog.lock import refresh_lock
from tests.helpers import MIRROR, SMALL, build_mirror


@pytest.fixture
def small(small_catalog):
    return small_catalog


def test_refresh_shows_progress_and_a_summary(tmp_path, capsys):
    mirror = build_mirror(tmp_path / "mirror")
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(tmp_path / "c.duckdb")]) == 0
    err = capsys.readouterr().err
    assert "aws      200" in err and "ec2/latest/instancetypes/ac.md" in err
    assert "azure    404" in err  # a known series page absent from this mirror
    assert (
        "aws            9       0      3       0       0      0  ok" in err
    )  # page, copy, Karpenter, prices, the three Neuron pages, the two peer-to-peer copies


def test_missing_mirror_dir_is_a_usage_error(tmp_path, capsys):
    assert (
        main(["refresh", "--mirror", str(tmp_path / "nope"), *SMALL, "--db", str(tmp_path / "c.duckdb")]) == 2
    )
    assert "does not exist" in capsys.readouterr().err


def test_query_is_read_only(small, capsys):
    _, db = small
    assert main(["query", "SELECT count(*) AS n FROM instances", "--db", str(db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 5}]
    assert main(["query", "DELETE FROM instances", "--db", str(db)]) == 2
    assert "read-only" in capsys.readouterr().err.lower()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM instances").fetchone() == (5,)


def test_query_without_catalog(tmp_path, capsys):
    assert main(["query", "SELECT 1", "--db", str(tmp_path / "none.duckdb")]) == 4  # the environment
    assert "no catalog" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_export(small, tmp_path, fmt):
    _, db = small
    out = tmp_path / f"instances.{fmt}"
    assert main(["export", "--format", fmt, "--out", str(out), "--db", str(db)]) == 0
    reader = {"csv": "read_csv", "parquet": "read_parquet", "json": "read_json"}[fmt]
    rows = duckdb.sql(
        f"SELECT instance_type, inter_node_gbits_per_s FROM {reader}('{out}') "
        "WHERE instance_type = 'p5.48xlarge'"
    ).fetchall()
    assert rows == [("p5.48xlarge", 3200.0)]


def test_serve_mirror_of_a_missing_directory_is_a_usage_error(tmp_path, capsys):
    from devtools.__main__ import main as devtools_main

    assert devtools_main(["serve-mirror", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_export_to_a_path_with_a_quote(small, tmp_path):
    _, db = small
    out = tmp_path / "o'brien's instances.csv"
    assert main(["export", "--format", "csv", "--out", str(out), "--db", str(db)]) == 0
    assert "p5.48xlarge" in out.read_text()


def test_second_refresh_exits_3_while_the_lock_is_held(small, capsys):
    mirror, db = small
    with refresh_lock(db):
        assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db)]) == 3
    assert "another refresh" in capsys.readouterr().err


def test_provider_failure_exits_1_and_names_the_cause(small, capsys):
    mirror, db = small
    (mirror / "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md").write_text("# moved\n")
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert (
        "aws            9       3      3       0       0      0  stale    LayoutError: no table with columns"
        in err
    )


def test_seed_from_a_snapshot_and_keep_existing(small, tmp_path, capsys):
    from catalog import snapshot

    _, db = small
    snapshot.dump(db, tmp_path / "snap")
    fresh = tmp_path / "seeded.duckdb"
    assert main(["seed", "--from", str(tmp_path / "snap"), "--db", str(fresh)]) == 0
    with duckdb.connect(str(fresh), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM instances").fetchone() == (5,)
        assert con.execute("SELECT mode FROM refreshes").fetchall() == [("snapshot",)]
    assert main(["seed", "--from", str(tmp_path / "snap"), "--db", str(fresh)]) == 0
    assert "keeping it" in capsys.readouterr().err


@pytest.mark.shared
def test_done_when_query_on_the_real_mirror(tmp_path, capsys):
    db = tmp_path / "c.duckdb"
    assert main(["refresh", "--mirror", str(MIRROR), *SMALL, "--db", str(db), "--quiet"]) == 0
    capsys.readouterr()
    sql = (
        "select provider, instance_type, intra_node_gbytes_per_s, intra_node_basis, inter_node_gbits_per_s, "
        "inter_node_basis, frontend_gbits_per_s from instances "
        "where instance_type in ('p5.48xlarge','Standard_ND96isr_H100_v5') order by provider"
    )
    assert main(["query", sql, "--db", str(db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {
            "provider": "aws",
            "instance_type": "p5.48xlarge",
            "intra_node_gbytes_per_s": 900.0,
            "intra_node_basis": "inferred",
            "inter_node_gbits_per_s": 3200.0,
            "inter_node_basis": "stated",
            "frontend_gbits_per_s": 3200.0,
        },
        {
            "provider": "azure",
            "instance_type": "Standard_ND96isr_H100_v5",
            "intra_node_gbytes_per_s": 900.0,
            "intra_node_basis": "inferred",
            "inter_node_gbits_per_s": 3200.0,
            "inter_node_basis": "stated",
            "frontend_gbits_per_s": 80.0,
        },
    ]


def test_a_catalog_older_than_the_claims_columns_is_refused_with_how_to_rebuild(small_catalog, capsys):
    mirror, db = small_catalog
    with duckdb.connect(str(db)) as con:  # what a catalog built before claims.evidence looks like
        con.execute("DROP VIEW claim_conflicts")
        con.execute("DROP VIEW current_claims")
        con.execute("ALTER TABLE claims DROP COLUMN evidence")
    before = db.read_bytes()
    assert main(["refresh", "--mirror", str(mirror), *SMALL, "--db", str(db), "--quiet"]) == 4  # environment
    err = capsys.readouterr().err
    assert "predates the claims column(s) evidence: rebuild it (make seed" in err
    assert db.read_bytes() == before and not list(db.parent.glob(f"{db.name}.tmp-*"))


PLAN_SERVE = ["plan", "--model", "llama-3.1-8b", "--workload", "serve"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["cheapest", "--provider", "awz"], "unknown provider awz; did you mean aws"),
        ([*PLAN_SERVE, "--provider", "awz"], "unknown provider awz; did you mean aws"),
        (
            [*PLAN_SERVE, "--instance", "p5.48xlarg"],
            "unknown instance type p5.48xlarg; did you mean p5.48xlarge",
        ),
        (["cheapest", "--region", "us-eats-1"], "unknown region us-eats-1; did you mean us-east-1"),
        # another case: still refused (names are compared as the catalog spells them), with the name to
        # type (once no suggestion: the near-miss match was case-sensitive)
        (["cheapest", "--provider", "AWS"], "unknown provider AWS; did you mean aws"),
        ([*PLAN_SERVE, "--provider", "Azure"], "unknown provider Azure; did you mean azure"),
        (
            [*PLAN_SERVE, "--instance", "P5.48XLARGE"],
            "unknown instance type P5.48XLARGE; did you mean p5.48xlarge",
        ),
    ],
)
def test_unknown_names_exit_2_with_a_did_you_mean(small_catalog_file, capsys, argv, said):
    """Issue 21: `cheapest --provider awz` and `plan --provider awz` printed "(no rows)" with exit 0."""
    assert main([*argv, "--db", str(small_catalog_file)]) == 2
    assert said in capsys.readouterr().err


def test_cheapest_in_a_region_and_on_spot_shows_the_currency(small_catalog_file, capsys):
    db = ["--db", str(small_catalog_file)]
    assert main(["cheapest", "--region", "us-east-1", "--format", "json", *db]) == 0
    rows = json.loads(capsys.readouterr().out)
    priced = [r for r in rows if r["min_usd_per_hour"] is not None]
    assert priced and {r["price_region"] for r in priced} == {"us-east-1"}
    assert {r["currency"] for r in rows} == {"USD"} and {r["price_kind"] for r in rows} == {"on-demand"}
    with duckdb.connect(str(small_catalog_file), read_only=True) as con:
        spot = con.execute(
            "SELECT count(*) FROM current_prices WHERE spot_usd_per_hour IS NOT NULL"
        ).fetchone()[0]
    assert main(["cheapest", "--spot", "--format", "json", *db]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["price_kind"] for r in rows} == {"spot"}
    assert (sum(r["min_usd_per_hour"] is not None for r in rows) > 0) == (spot > 0)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["cheapest", "--gpus", "abc"], "argument --gpus: invalid float value: 'abc'"),
        (["plan", "--model", "llama-3.1-70b", "--workload", "serve", "--top", "-2"], "argument --top"),
        (["nosuch"], "invalid choice: 'nosuch'"),
        ([], "the following arguments are required: command"),
    ],
)
def test_a_usage_error_is_one_line(argv, said, capsys):
    """argparse printed the command's whole usage before the error (ten lines for `cheapest`)."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and err[0].endswith("(--help shows the usage)"), err
