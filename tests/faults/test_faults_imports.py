"""The fault matrix: imported measurements are held to the scrape's gates (issue 23). A user's
reading outside the physical bounds a page's figure must respect is refused at import, naming the
reading and the bound; a stored one never becomes a claim or a fill; and the fill runs on import,
not at the next refresh."""

from __future__ import annotations

import shutil

import pytest

from catalog.cli import main
from tests.helpers import query

V100_ROW = ("azure", "Standard_NC24s_v3")  # V100-16GB, no GPU-to-GPU figure of its own (missing)


def p2p_matrix(gbytes_per_s: float) -> str:
    """A p2pBandwidthLatencyTest bidirectional matrix whose every off-diagonal pair is ``gbytes_per_s``."""
    return (
        "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n"
        "   D\\D     0      1\n"
        f"     0 770.00 {gbytes_per_s:.2f}\n"
        f"     1 {gbytes_per_s:.2f} 770.00\n"
    )


def import_file(db, tmp_path, text: str, *instance: str) -> int:
    path = tmp_path / f"p2p-{instance[1] if instance else 'any'}.txt"
    path.write_text(text)
    flags = ["--provider", instance[0], "--instance", instance[1]] if instance else []
    return main(["measurements", "import", str(path), "--db", str(db), *flags])


@pytest.fixture
def real_db(real_catalog_file, tmp_path):
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    return db


def row(db) -> tuple:
    where = f"provider = '{V100_ROW[0]}' AND instance_type = '{V100_ROW[1]}'"
    return query(db, f"SELECT intra_node_gbytes_per_s, intra_node_basis FROM instances WHERE {where}")[0]


def test_a_99000_gb_s_reading_for_a_v100_row_is_refused_at_import(real_db, tmp_path, capsys):
    assert row(real_db) == (None, "missing")
    assert import_file(real_db, tmp_path, p2p_matrix(99_000), *V100_ROW) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].endswith(
        "outside physical bounds: gpu_to_gpu_gbytes_per_s 99000 exceeds 2000 GB/s per GPU "
        "(the scale-up bound)"
    )
    assert err[-1] == "nothing imported: fix or leave out the files above"
    assert row(real_db) == (None, "missing")
    assert query(real_db, "SELECT count(*) FROM measurements WHERE source = 'user'") == [(0,)]


def test_a_plausible_reading_fills_the_row_on_import_not_at_the_next_refresh(real_db, tmp_path):
    assert import_file(real_db, tmp_path, p2p_matrix(48.5), *V100_ROW) == 0
    assert row(real_db) == (48.5, "measured")


def test_a_reading_8x_over_the_gpus_datasheet_is_stored_but_never_fills(real_db, tmp_path):
    """1,900 GB/s is within the absolute bound: it fills a row whose GPU has no datasheet link, but
    not an RTX A6000's, 17x its 112.5 GB/s NVLink bridge (far below is no error: PCIe)."""
    a6000 = query(
        real_db,
        "SELECT provider, instance_type FROM instances WHERE gpu_model = 'RTX-A6000-48GB' "
        "AND intra_node_basis = 'missing' AND gpu_count >= 2 ORDER BY ALL LIMIT 1",
    )
    assert a6000, "the real catalog has multi-GPU RTX A6000 rows without a GPU-to-GPU figure"
    provider, instance = a6000[0]
    assert import_file(real_db, tmp_path, p2p_matrix(1_900), provider, instance) == 0
    where = f"provider = '{provider}' AND instance_type = '{instance}'"
    assert query(real_db, f"SELECT intra_node_basis FROM instances WHERE {where}") == [("missing",)]
    assert query(real_db, "SELECT count(*) FROM measurements WHERE source = 'user'") == [(1,)]
    assert import_file(real_db, tmp_path, p2p_matrix(1_900), *V100_ROW) == 0
    assert row(real_db) == (1900.0, "measured")
