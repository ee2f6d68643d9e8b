"""The snapshot that ships in the repo: it loads, and it is what the parsers make of the mirror."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import duckdb
import pytest

from catalog import pipeline, snapshot
from fetch.http import make_client
from tests.helpers import MIRROR, SHARED

SEMANTIC = ", ".join(snapshot.INSTANCE_FACTS)


def test_shipped_snapshot_loads(tmp_path):
    db = tmp_path / "seeded.duckdb"
    count = snapshot.load(snapshot.DEFAULT_DIR, db)
    with duckdb.connect(str(db), read_only=True) as con:
        providers = dict(con.execute("SELECT provider, count(*) FROM instances GROUP BY 1").fetchall())
        assert count == sum(providers.values())
        assert providers["aws"] >= 10 and providers["azure"] >= 10
        assert con.execute("SELECT count(*) FROM claims WHERE valid_to IS NULL").fetchone()[0] > count
        p5 = "SELECT usd_per_hour, region FROM current_prices WHERE instance_type = 'p5.48xlarge'"
        assert con.execute(p5).fetchall() == [(55.04, "us-east-1")]
        columns = (
            "SELECT min_usd_per_hour, usd_per_gpu_hour FROM instances WHERE instance_type = 'p5.48xlarge'"
        )
        assert con.execute(columns).fetchall() == [(55.04, 6.88)]
        readings = "SELECT kind, count(DISTINCT source) FROM measurements GROUP BY 1 ORDER BY 1"
        assert con.execute(readings).fetchall() == [("expected", 7), ("measured", 1)]


def test_seeded_rows_carry_the_snapshot_build_time(tmp_path):
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    built = datetime.fromisoformat(
        json.loads((snapshot.DEFAULT_DIR / snapshot.META_FILE).read_text())["built_at"]
    )
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT DISTINCT scraped_at FROM instances").fetchall() == [(built,)]
        assert con.execute("SELECT DISTINCT valid_from FROM claims").fetchall() == [(built,)]
        assert con.execute("SELECT DISTINCT valid_from, fetched_at FROM prices").fetchall() == [
            (built, built)
        ]


def test_update_rewrites_only_when_facts_change(tmp_path):
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    out = tmp_path / "snap"
    assert snapshot.update(db, out) is True
    meta = (out / snapshot.META_FILE).read_text()
    assert snapshot.update(db, out) is False
    assert (out / snapshot.META_FILE).read_text() == meta


def test_snapshot_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"instances\.jsonl"):
        snapshot.load(tmp_path, tmp_path / "x.duckdb")


@pytest.mark.shared
def test_shipped_snapshot_matches_a_rebuild_from_the_mirror(tmp_path):
    """The snapshot ships every source's rows, claims, prices and measurements."""
    rebuilt = tmp_path / "rebuilt.duckdb"

    async def go():
        async with make_client(mirror=MIRROR) as client:
            return await pipeline.refresh(rebuilt, client, mode="mirror", copies=SHARED)

    assert asyncio.run(go()).exit_code == 0
    seeded = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, seeded)
    order = "ORDER BY provider, instance_type"
    claim_cols = (
        "provider, instance_type, field, value, value_text, basis, qualifiers, quote, source_url, "
        "evidence, original_url, read_on"
    )
    with duckdb.connect(str(rebuilt), read_only=True) as a, duckdb.connect(str(seeded), read_only=True) as b:
        rows = f"SELECT {SEMANTIC} FROM instances {order}"
        assert a.execute(rows).fetchall() == b.execute(rows).fetchall(), "run `make snapshot` and commit"
        claims = f"SELECT {claim_cols} FROM current_claims ORDER BY ALL"
        assert a.execute(claims).fetchall() == b.execute(claims).fetchall(), "run `make snapshot` and commit"
        prices = f"SELECT {', '.join(snapshot.PRICE_FACTS)} FROM current_prices ORDER BY ALL"
        assert a.execute(prices).fetchall() == b.execute(prices).fetchall(), "run `make snapshot` and commit"
        readings = f"SELECT {', '.join(snapshot.MEASUREMENT_FACTS)} FROM measurements ORDER BY ALL"
        assert a.execute(readings).fetchall() == b.execute(readings).fetchall(), (
            "run `make snapshot` and commit"
        )
