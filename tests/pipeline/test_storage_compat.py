"""The catalog file opens in an older DuckDB: written in storage version 64 (DuckDB's v1.1.0 format).

The header check runs everywhere. The older-engine checks need ``make compat`` (duckdb 1.1.3, the
oldest engine we promise, and the duckdb shell 1.5.6, the newest 1.x CLI, in ``.venv-compat``, or
``$INTERCONNECT_COMPAT_VENV``); without it they skip with the reason, except in CI (``CI`` set), where
a missing engine fails instead of hiding the check.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.store import STORAGE_VERSION
from tests.helpers import ROOT, STORAGE_NUMBER, storage_number

COMPAT_VENV = Path(os.environ.get("INTERCONNECT_COMPAT_VENV") or ROOT / ".venv-compat")
OLD_PYTHON, OLD_SHELL = COMPAT_VENV / "bin" / "python", COMPAT_VENV / "bin" / "duckdb"
# The README's first query: the seed's four "8x H100" boxes side by side.
SEED_QUERY = """select provider, instance_type, gpu_model, intra_node_link,
  intra_node_gbytes_per_s, intra_node_basis, inter_node_fabric, inter_node_gbits_per_s,
  inter_node_gbytes_per_s, inter_node_basis, conflict from instances
  where instance_type in ('p5.48xlarge', 'a3-highgpu-8g', 'Standard_ND96isr_H100_v5', 'BM.GPU.H100.8')
  order by provider"""
# Every table and view, counted by an older engine (counts only: no timestamps cross the boundary).
COUNT_ALL = """
import duckdb, json, sys
con = duckdb.connect(sys.argv[1], read_only=True)
names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
print(json.dumps({"version": duckdb.__version__,
                  "counts": {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}}))
"""


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("seeded") / "catalog.duckdb"
    assert main(["seed", "--db", str(db)]) == 0
    return db


def old_engine() -> None:
    """Skip (or, in CI, fail) when the older engines are not installed."""
    if OLD_PYTHON.exists() and OLD_SHELL.exists():
        return
    why = f"no older DuckDB at {COMPAT_VENV} (run `make compat`)"
    if os.environ.get("CI"):
        pytest.fail(f"{why}: CI must run the storage check, not skip it")
    pytest.skip(why)


def test_the_storage_version_is_the_one_documented():
    assert STORAGE_VERSION == "v1.1.0"


def test_seed_and_refresh_write_the_compatible_format(seeded, small_catalog_file):
    assert storage_number(seeded) == STORAGE_NUMBER
    assert storage_number(small_catalog_file) == STORAGE_NUMBER  # a refresh's swapped-in file


def test_a_refresh_over_a_newer_format_file_writes_the_compatible_one(small_catalog, tmp_path):
    import duckdb

    from tests.helpers import SMALL, cli_refresh

    mirror, db = small_catalog
    newer = tmp_path / "newer.duckdb"
    with duckdb.connect(str(newer)) as con:  # the engine's own newest format, as before this change
        con.execute(f"ATTACH '{db}' AS old (READ_ONLY); COPY FROM DATABASE old TO newer")
    assert storage_number(newer) > STORAGE_NUMBER
    assert cli_refresh(mirror, newer, *SMALL) == 0
    assert storage_number(newer) == STORAGE_NUMBER


def old_shell(db: Path, sql: str) -> str:
    done = subprocess.run(
        [str(OLD_SHELL), "-readonly", "-csv", str(db), sql], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def old_python_counts(db: Path) -> dict:
    import json

    done = subprocess.run(
        [str(OLD_PYTHON), "-c", COUNT_ALL, str(db)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_an_older_engine_reads(db: Path) -> None:
    """The duckdb 1.5.6 shell runs the README's query; duckdb 1.1.3 counts every table and view as
    the current engine does."""
    import duckdb

    lines = old_shell(db, SEED_QUERY).splitlines()
    assert lines[0].startswith("provider,instance_type,gpu_model")
    assert [line.split(",")[:2] for line in lines[1:]] == [
        ["aws", "p5.48xlarge"],
        ["azure", "Standard_ND96isr_H100_v5"],
        ["gcp", "a3-highgpu-8g"],
        ["oci", "BM.GPU.H100.8"],
    ]
    old = old_python_counts(db)
    assert old["version"] == "1.1.3"
    with duckdb.connect(str(db), read_only=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        now = {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    assert old["counts"] == now and now["instances"] > 0


def test_an_older_engine_opens_the_seeded_catalog(seeded):
    old_engine()
    assert_an_older_engine_reads(seeded)


def test_an_older_engine_opens_a_release(seeded, tmp_path):
    old_engine()
    assert main(["release", "--db", str(seeded), "--out", str(tmp_path / "release")]) == 0
    assert_an_older_engine_reads(tmp_path / "release" / "catalog.duckdb")
