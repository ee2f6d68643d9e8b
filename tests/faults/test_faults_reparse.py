"""The fault matrix: ``reparse`` reparses every source it has documents for (issue 23). Measurement
sources fetch every document as optional, and a reparse once took that for "nothing stored" and left
Spare Cores, AzureHPC, GCP health and AWS OFI NCCL (1,467 of 1,487 readings) unchanged with exit 0;
``reparse --db`` a missing file once created an 8-row catalog and exited 0. A document two sources
read (Azure's health checks: the azure rows' sizes and azurehpc's expectations) is stored under the
one that fetched it last, and a reparse once gave it to that one alone (azurehpc lost 96 readings)."""

from __future__ import annotations

import shutil

import pytest

from catalog.cli import main
from tests.helpers import query

MEASUREMENT_SOURCES = ["sparecores", "azurehpc", "gcphealth", "awsofinccl"]


@pytest.mark.slow
def test_reparse_reparses_the_measurement_sources(real_catalog_file, tmp_path, capsys):
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    before = dict(query(db, "SELECT source, count(*) FROM measurements GROUP BY source"))
    providers = [arg for source in MEASUREMENT_SOURCES for arg in ("--provider", source)]
    assert main(["reparse", "--db", str(db), "--quiet", *providers]) == 0
    latest = "SELECT refresh_id FROM refreshes WHERE mode = 'reparse' ORDER BY started_at DESC LIMIT 1"
    outcomes = dict(
        query(db, f"SELECT provider, outcome FROM provider_refreshes WHERE refresh_id = ({latest})")
    )
    assert outcomes == dict.fromkeys(MEASUREMENT_SOURCES, "ok")
    after = dict(query(db, "SELECT source, count(*) FROM measurements GROUP BY source"))
    assert {s: after[s] for s in MEASUREMENT_SOURCES} == {s: before[s] for s in MEASUREMENT_SOURCES}
    assert sum(after[s] for s in MEASUREMENT_SOURCES) > 1000


@pytest.mark.slow
def test_a_document_two_sources_read_is_reparsed_for_both(real_catalog_file, tmp_path, capsys):
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    count = "SELECT (SELECT count(*) FROM measurements WHERE source = 'azurehpc'), count(*) FROM instances "
    count += "WHERE provider = 'azure' AND instance_type = 'Standard_ND96isrf_H200_v5'"
    before = query(db, count)
    assert before[0][0] > 100 and before[0][1] == 1  # a size only its health check names
    args = ["reparse", "--db", str(db), "--quiet", "--provider", "azure", "--provider", "azurehpc"]
    assert main(args) == 0
    assert query(db, count) == before


def test_reparse_of_a_missing_catalog_is_exit_4_and_creates_nothing(tmp_path, capsys):
    db = tmp_path / "missing.duckdb"
    assert main(["reparse", "--db", str(db), "--quiet"]) == 4
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: no catalog at {db} to reparse; run `make refresh` first"
    ]
    assert list(tmp_path.iterdir()) == []
