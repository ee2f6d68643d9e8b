"""The catalog snapshot that ships in the repository, so a fresh clone has data without a network.

``dump`` writes the current rows and claims as JSON lines (one row per line: diffs stay
reviewable); ``load`` builds a catalog file from them. ``make snapshot`` regenerates the snapshot
from a refresh, and a test checks it still equals what the parsers make of ../shared/mirror.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import duckdb

from catalog.store import CLAIM_COLUMNS, INSTANCE_COLUMNS, CatalogWriter
from scrapers.http import utcnow

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "data" / "snapshot"
INSTANCES_FILE = "instances.jsonl"
CLAIMS_FILE = "claims.jsonl"


def dump(db_path: Path, out_dir: Path) -> None:
    """Write the catalog's instances and current claims to ``out_dir`` in a stable order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(db_path), read_only=True) as con:
        con.execute(
            f"COPY (SELECT {', '.join(INSTANCE_COLUMNS)} FROM instances ORDER BY provider, instance_type) "
            f"TO '{out_dir / INSTANCES_FILE}' (FORMAT JSON)"
        )
        con.execute(
            f"COPY (SELECT {', '.join(CLAIM_COLUMNS)} FROM current_claims "
            "ORDER BY provider, instance_type, field, source_url, context, quote, qualifiers) "
            f"TO '{out_dir / CLAIMS_FILE}' (FORMAT JSON)"
        )


def load(source_dir: Path, db_path: Path) -> int:
    """Build the catalog at ``db_path`` from a snapshot directory; returns the instance count."""
    for name in (INSTANCES_FILE, CLAIMS_FILE):
        if not (source_dir / name).is_file():
            raise FileNotFoundError(f"snapshot file {source_dir / name} is missing")
    started = utcnow()
    writer = CatalogWriter(db_path)
    try:
        con = writer.con
        for table, name in (("instances", INSTANCES_FILE), ("claims", CLAIMS_FILE)):
            con.execute(
                f"INSERT INTO {table} BY NAME SELECT * FROM read_json(?, format='newline_delimited')",
                [str(source_dir / name)],
            )
        count = con.execute("SELECT count(*) FROM instances").fetchone()[0]
        writer.write_refresh(f"snapshot-{uuid.uuid4().hex[:6]}", started, utcnow(), "snapshot", 0, [])
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    return count
