"""`catalog release --out DIR`: the files, their checksums, reproducibility, and Parquet that readers can
filter without reading it all (row groups sorted by provider and GPU model)."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pytest

from catalog.cli import EXIT_ENVIRONMENT, main
from catalog.release import ROW_GROUP_ROWS, TABLES
from catalog.release_manifest import NOT_RECORDED, SPARE_CORES
from catalog.store import INSTANCE_COLUMNS
from tests.helpers import STORAGE_NUMBER, storage_number

FILES = {f"{t}.parquet" for t in TABLES} | {"catalog.duckdb", "instances.json", "schema.md", "manifest.json"}
# What two catalogs seeded from the same snapshot share byte for byte: not the run that built them
# (refreshes) and not the DuckDB file, whose block layout DuckDB does not keep from one write to the next.
FACTS = sorted(FILES - {"catalog.duckdb", "refreshes.parquet"})


def seed(db) -> None:
    assert main(["seed", "--db", str(db)]) == 0


def release(db, out) -> None:
    assert main(["release", "--db", str(db), "--out", str(out)]) == 0


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    db = tmp_path_factory.mktemp("catalog") / "catalog.duckdb"
    seed(db)
    return db


@pytest.fixture(scope="module")
def released(catalog, tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "r"
    release(catalog, out)
    return out


def sums(directory) -> dict[str, str]:
    lines = (directory / "SHA256SUMS").read_text().splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines)}


def test_a_release_holds_every_file_and_its_checksum(released):
    assert {p.name for p in released.iterdir()} == FILES | {"SHA256SUMS"}
    listed = sums(released)
    assert set(listed) == FILES
    for name, digest in listed.items():
        assert hashlib.sha256((released / name).read_bytes()).hexdigest() == digest, name


def test_two_releases_of_one_catalog_are_byte_identical_but_for_the_duckdb_file(catalog, released, tmp_path):
    again = tmp_path / "again"
    release(catalog, again)
    first, second = sums(released), sums(again)
    assert {n for n in FILES if first[n] != second[n]} <= {"catalog.duckdb"}
    assert all(first[n] == second[n] for n in FILES - {"catalog.duckdb"})
    with (
        duckdb.connect(str(released / "catalog.duckdb"), read_only=True) as a,
        duckdb.connect(str(again / "catalog.duckdb"), read_only=True) as b,
    ):
        for table in TABLES:  # the same rows in the same order, whatever the bytes
            sql = f"SELECT * FROM {table}"
            assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), table


def test_two_catalogs_seeded_from_one_snapshot_release_the_same_facts(released, tmp_path):
    other_db, other = tmp_path / "other.duckdb", tmp_path / "other"
    seed(other_db)
    release(other_db, other)
    first, second = sums(released), sums(other)
    assert [n for n in FACTS if first[n] != second[n]] == []


def test_the_duckdb_file_is_compatible_and_holds_no_document_bodies(released):
    db = released / "catalog.duckdb"
    assert storage_number(db) == STORAGE_NUMBER
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM documents").fetchall() == [(0,)]
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
        assert con.execute("SELECT count(*) FROM claim_conflicts").fetchone()[0] > 0  # the views work
    manifest = json.loads((released / "manifest.json").read_text())
    assert {t: d["rows"] for t, d in manifest["tables"].items()} == counts


def test_the_manifest_says_how_old_each_provider_is_and_under_which_licence(catalog, released):
    manifest = json.loads((released / "manifest.json").read_text())
    with duckdb.connect(str(catalog), read_only=True) as con:
        providers = [
            r[0] for r in con.execute("SELECT DISTINCT provider FROM instances ORDER BY 1").fetchall()
        ]
        built = con.execute("SELECT max(fetched_at) FROM current_claims").fetchone()[0]
        spare = con.execute(
            "SELECT count(*) FROM measurements WHERE source_url LIKE ?", [SPARE_CORES + "/%"]
        ).fetchone()[0]
        derived = con.execute(  # gpu_model claims from nvidia-smi product names
            "SELECT count(*) FROM claims WHERE source_url LIKE ?", [SPARE_CORES + "/%"]
        ).fetchone()[0]
    assert list(manifest["data_as_of"]) == providers
    assert manifest["data_as_of"]["aws"]["last_fetched_at"] == f"{built:%Y-%m-%dT%H:%M:%S}Z"
    assert (
        sum(p["instances"] for p in manifest["data_as_of"].values())
        == manifest["tables"]["instances"]["rows"]
    )
    by_source = {s["source"]: s for s in manifest["sources"]}
    assert spare > 0 and by_source[SPARE_CORES]["licence"] == "CC-BY-SA-4.0"
    assert derived > 0 and by_source[SPARE_CORES]["rows"] == {"measurements": spare, "claims": derived}
    assert manifest["licence"]["cc_by_sa_4_0"]["measurements_rows"] == spare
    assert manifest["licence"]["cc_by_sa_4_0"]["claims_rows"] == derived
    assert "CC BY-SA 4.0" in manifest["licence"]["cc_by_sa_4_0"]["statement"]
    for source in manifest["sources"]:  # a licence with where it is stated, or says none is recorded
        assert source["licence_basis"] and (source["licence"] or source["licence_basis"] == NOT_RECORDED)
    assert "built_at" not in json.dumps(manifest)  # no build time: a release of the same data is the same


def test_schema_md_lists_every_column_with_its_meaning(released):
    from records.columns import INSTANCES

    text = (released / "schema.md").read_text()
    for table in TABLES:
        assert f"## `{table}`" in text
    for column in INSTANCES:  # the instances column table's words, one line per column
        meaning = " ".join(column.doc.split()).replace("|", "\\|")
        assert f"| `{column.name}` | " in text and f" | {meaning} |" in text, column.name
    bases = " \\| ".join(("stated", "paraphrased", "inferred", "expected", "measured"))
    assert f"| `basis` | VARCHAR | no | {bases} |" in text  # a comment of schema.sql, escaped


def test_instances_json_is_the_instances_table_in_parquet_order(released):
    rows = json.loads((released / "instances.json").read_text())
    parquet = duckdb.sql(
        f"SELECT provider, instance_type FROM read_parquet('{released / 'instances.parquet'}')"
    ).fetchall()
    assert [(r["provider"], r["instance_type"]) for r in rows] == parquet
    assert list(rows[0]) == list(INSTANCE_COLUMNS)


def test_parquet_row_groups_are_sorted_so_pyarrow_skips_them(released):
    pq = pytest.importorskip("pyarrow.parquet")
    path = released / "instances.parquet"
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups > 1
    assert all(meta.row_group(i).num_rows <= ROW_GROUP_ROWS for i in range(meta.num_row_groups))
    provider = meta.schema.names.index("provider")
    spans = [
        (meta.row_group(i).column(provider).statistics.min, meta.row_group(i).column(provider).statistics.max)
        for i in range(meta.num_row_groups)
    ]
    assert spans == sorted(spans)  # sorted by provider: each provider lives in few row groups
    aws_groups = [i for i, (low, high) in enumerate(spans) if low <= "aws" <= high]
    assert 0 < len(aws_groups) < meta.num_row_groups  # the others' statistics exclude aws
    table = pq.read_table(path, filters=[("provider", "=", "aws"), ("gpu_model", "=", "H100-SXM-80GB")])
    assert sorted(table.column("instance_type").to_pylist()) == ["p5.48xlarge", "p5.4xlarge"]


def test_duckdb_pushes_provider_and_gpu_filters_into_the_parquet_scan(released, catalog):
    path = released / "instances.parquet"
    sql = (
        f"SELECT instance_type FROM read_parquet('{path}') "
        "WHERE provider = 'aws' AND gpu_model = 'H100-SXM-80GB' ORDER BY instance_type"
    )
    plan = "\n".join(row[1] for row in duckdb.sql("EXPLAIN " + sql).fetchall())
    scan = plan[plan.index("READ_PARQUET") :]
    assert "provider = 'aws'" in scan and "gpu_model = 'H100-SXM-80GB'" in scan
    with duckdb.connect(str(catalog), read_only=True) as con:
        expected = con.execute(
            "SELECT instance_type FROM instances WHERE provider = 'aws' AND gpu_model = 'H100-SXM-80GB' "
            "ORDER BY instance_type"
        ).fetchall()
    assert duckdb.sql(sql).fetchall() == expected


def test_a_release_into_a_directory_with_files_is_refused_and_touches_nothing(catalog, tmp_path, capsys):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["release", "--db", str(catalog), "--out", str(out)]) == EXIT_ENVIRONMENT
    assert "not an empty directory" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_a_release_of_no_catalog_says_so(tmp_path, capsys):
    assert main(["release", "--db", str(tmp_path / "none.duckdb"), "--out", str(tmp_path / "r")]) == 4
    assert "no catalog at" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
