"""The catalog snapshot that ships in the repository, so a fresh clone has data without a network.

``dump`` writes the current rows, claims, prices and measurements as JSON lines, one row per line
and without the timestamps of the run that made them, so a diff shows exactly the facts that
changed; the time the snapshot was built is in ``meta.json`` and ``load`` gives it to every row.
``make snapshot`` rewrites the snapshot only when its facts change, and a test checks it still
equals what the parsers make of ../shared/mirror.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from collections import Counter
from dataclasses import fields
from datetime import datetime
from pathlib import Path

import duckdb

from catalog import finish
from catalog.store import (
    CLAIM_COLUMNS,
    INSTANCE_COLUMNS,
    KEPT,
    MEASUREMENT_COLUMNS,
    PRICE_COLUMNS,
    CatalogWriter,
)
from normalize.errors import EnvironmentProblem, InvalidOffer
from records.clock import utcnow
from records.measurements import USER_SOURCE, Measurement
from records.prices import Price

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "data" / "snapshot"
INSTANCES_FILE = "instances.jsonl"
CLAIMS_FILE = "claims.jsonl"
PRICES_FILE = "prices.jsonl"
MEASUREMENTS_FILE = "measurements.jsonl"
FACT_FILES = (INSTANCES_FILE, CLAIMS_FILE, PRICES_FILE, MEASUREMENTS_FILE)
META_FILE = "meta.json"
# Per-run timestamps: not facts, so not in the snapshot; on load they take the snapshot's build time.
INSTANCE_TIMES = ("scraped_at", "stale_since")
CLAIM_TIMES = ("fetched_at", "valid_from", "valid_to")
INSTANCE_FACTS = tuple(c for c in INSTANCE_COLUMNS if c not in INSTANCE_TIMES)
CLAIM_FACTS = tuple(c for c in CLAIM_COLUMNS if c not in CLAIM_TIMES)
PRICE_FACTS = tuple(c for c in PRICE_COLUMNS if c not in CLAIM_TIMES)
MEASUREMENT_FACTS = tuple(c for c in MEASUREMENT_COLUMNS if c not in ("fetched_at", "stale"))


def dump(db_path: Path, out_dir: Path, *, built_at: datetime | None = None) -> None:
    """Write the catalog's instances, current claims, current prices and measurements to ``out_dir``
    in a stable order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(db_path), read_only=True) as con:
        con.execute(
            f"COPY (SELECT {', '.join(INSTANCE_FACTS)} FROM instances ORDER BY provider, instance_type) "
            f"TO '{out_dir / INSTANCES_FILE}' (FORMAT JSON)"
        )
        con.execute(
            f"COPY (SELECT {', '.join(CLAIM_FACTS)} FROM current_claims ORDER BY ALL) "
            f"TO '{out_dir / CLAIMS_FILE}' (FORMAT JSON)"
        )
        con.execute(
            f"COPY (SELECT {', '.join(PRICE_FACTS)} FROM current_prices ORDER BY ALL) "
            f"TO '{out_dir / PRICES_FILE}' (FORMAT JSON)"
        )
        con.execute(
            f"COPY (SELECT {', '.join(MEASUREMENT_FACTS)} FROM measurements ORDER BY ALL) "
            f"TO '{out_dir / MEASUREMENTS_FILE}' (FORMAT JSON)"
        )
    meta = {"built_at": (built_at or utcnow()).isoformat(timespec="seconds")}
    (out_dir / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")


def update(db_path: Path, out_dir: Path) -> bool:
    """Rewrite the snapshot from ``db_path`` only if its facts differ; True if it was rewritten."""
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch)
        dump(db_path, fresh)
        same = all(
            (out_dir / name).is_file() and (out_dir / name).read_bytes() == (fresh / name).read_bytes()
            for name in FACT_FILES
        )
        if not same:
            out_dir.mkdir(parents=True, exist_ok=True)
            for name in (*FACT_FILES, META_FILE):
                shutil.copyfile(fresh / name, out_dir / name)
        return not same


class BadSnapshot(EnvironmentProblem):
    """A snapshot file that cannot be read, or that holds values no refresh would publish."""


#: One snapshot file: the shipped ones are 2 MB at most; a catalog at its row caps stays far under.
MAX_SNAPSHOT_FILE_BYTES = 64_000_000
MAX_SNAPSHOT_PROBLEMS = 3  # how many a refusal names before "(+N more)"


def _built_at(source_dir: Path) -> datetime:
    meta = source_dir / META_FILE
    try:
        return datetime.fromisoformat(json.loads(meta.read_text(encoding="utf-8"))["built_at"])
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise BadSnapshot(f"snapshot file {meta} has no readable 'built_at': {exc}") from None


def _gate(con: duckdb.DuckDBPyConnection, source_dir: Path, rows: str = "instances") -> None:
    """BadSnapshot naming the rows and prices the refresh's own gates would refuse (values outside
    physical bounds, inconsistent rows, implausible prices, readings no refresh or import stores): a
    seeded catalog is held to them too. ``rows``: the table the snapshot's rows were loaded into."""
    from catalog.previous import row_offer
    from catalog.price_gate import implausible
    from catalog.validate import MAX_ROWS_PER_PROVIDER, problems
    from normalize.safe_text import escaped, unsafe_characters

    found, counts = [], {}
    cursor = con.execute(f"SELECT * FROM {rows}")
    names = [d[0] for d in cursor.description]
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        where = f"{row['provider']}/{row['instance_type']}"
        try:
            offer = row_offer(row, ())
        except (InvalidOffer, ValueError, TypeError) as exc:  # InvalidOffer names the row itself
            found.append(f"{INSTANCES_FILE}: {exc}" if isinstance(exc, InvalidOffer) else f"{where}: {exc}")
            continue
        counts[(offer.provider, offer.instance_type)] = offer.gpu_count
        found += [f"{INSTANCES_FILE} {where}: {p}" for p in problems(offer)]
        if unsafe := unsafe_characters(offer.instance_type):  # a refresh stores such a name escaped
            found.append(f"{INSTANCES_FILE} {escaped(where)}: a name with control characters ({unsafe[0]})")
    for provider, many in Counter(provider for provider, _ in counts).items():
        if many > MAX_ROWS_PER_PROVIDER:  # the cap a refresh holds whatever is accepted
            found.append(
                f"{INSTANCES_FILE} {provider}: {many:,} rows, over the cap of {MAX_ROWS_PER_PROVIDER:,}"
            )
    columns = [f.name for f in fields(Price)]
    for values in con.execute(f"SELECT {', '.join(columns)} FROM prices").fetchall():
        row = dict(zip(columns, values, strict=True))
        where = f"{row['provider']}/{row['instance_type']} in {row['region']}"
        try:
            why = implausible(Price(**row), counts.get((row["provider"], row["instance_type"])))
        except (InvalidOffer, TypeError) as exc:
            why = str(exc)
        if why:
            found.append(f"{PRICES_FILE} {where}: {why}")
    found += _measurement_problems(con)
    if found:
        shown = "; ".join(found[:MAX_SNAPSHOT_PROBLEMS])
        more = f" (+{len(found) - MAX_SNAPSHOT_PROBLEMS} more)" if len(found) > MAX_SNAPSHOT_PROBLEMS else ""
        raise BadSnapshot(f"snapshot {source_dir} refused, nothing seeded: {shown}{more}")


def _measurement_problems(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The snapshot's measurements a refresh or an import would not have stored: not a valid reading
    (NaN, negative, beyond any real link, an unknown metric or kind, no quote), or an imported reading
    outside the physical bounds an import is refused at. A scraped reading outside them is kept, as a
    refresh keeps it: stored, never a claim or a fill (catalog.expectations)."""
    from catalog.validate import reading_problem

    found = []
    columns = [f.name for f in fields(Measurement)]
    for values in con.execute(f"SELECT {', '.join(columns)} FROM measurements").fetchall():
        row = dict(zip(columns, values, strict=True))
        where = f"{MEASUREMENTS_FILE} {row['source']} {row['locator']}"
        try:
            reading = Measurement(**row)
        except (InvalidOffer, TypeError) as exc:  # InvalidOffer names the source and locator itself
            found.append(f"{MEASUREMENTS_FILE} {exc}" if isinstance(exc, InvalidOffer) else f"{where}: {exc}")
            continue
        if reading.source == USER_SOURCE:
            problem = reading_problem(reading.metric, reading.value, reading.port_count)
            if problem:
                found.append(f"{where}: outside physical bounds: {problem}")
    return found


def load(source_dir: Path, db_path: Path) -> int:
    """Build the catalog at ``db_path`` from a snapshot directory; returns the instance count.
    BadSnapshot (one line naming the file and the problem) for a file that cannot be read or a value
    the refresh's gates would refuse; the catalog at ``db_path`` is then left as it was."""
    for name in (*FACT_FILES, META_FILE):
        if not (source_dir / name).is_file():
            raise FileNotFoundError(f"snapshot file {source_dir / name} is missing")
        size = (source_dir / name).stat().st_size
        if size > MAX_SNAPSHOT_FILE_BYTES:  # read before any gate: 200,000 rows once took 12 s and 739 MB
            cap = f"over the {MAX_SNAPSHOT_FILE_BYTES:,}-byte cap; nothing seeded"
            raise BadSnapshot(f"snapshot file {source_dir / name}: {size:,} bytes, {cap}")
    built_at = _built_at(source_dir)
    try:
        return _load(source_dir, db_path, built_at)
    except duckdb.Error as exc:  # the writer has made what the file system says an EnvironmentProblem
        first = str(exc).splitlines()[0][:300]
        raise BadSnapshot(f"snapshot {source_dir} cannot be read, nothing seeded: {first}") from None


def _load(source_dir: Path, db_path: Path, built_at: datetime) -> int:
    started = utcnow()
    with CatalogWriter.open(db_path, keep_history=False) as writer:
        con = writer.con
        con.execute(  # finished by the refresh that made the snapshot: kept as they are
            f"INSERT INTO {KEPT} BY NAME SELECT *, ? AS scraped_at "
            "FROM read_json(?, format='newline_delimited')",
            [built_at, str(source_dir / INSTANCES_FILE)],
        )
        con.execute(
            "INSERT INTO claims BY NAME SELECT *, ? AS fetched_at, ? AS valid_from "
            "FROM read_json(?, format='newline_delimited')",
            [built_at, built_at, str(source_dir / CLAIMS_FILE)],
        )
        con.execute(
            "INSERT INTO prices BY NAME SELECT *, ? AS fetched_at, ? AS valid_from "
            "FROM read_json(?, format='newline_delimited', columns=?)",
            [built_at, built_at, str(source_dir / PRICES_FILE), _json_types(con, "prices", PRICE_FACTS)],
        )
        con.execute(
            "INSERT INTO measurements BY NAME SELECT *, ? AS fetched_at "
            "FROM read_json(?, format='newline_delimited', columns=?)",
            [
                built_at,
                str(source_dir / MEASUREMENTS_FILE),
                _json_types(con, "measurements", MEASUREMENT_FACTS),
            ],
        )
        [(count,)] = con.execute(f"SELECT count(*) FROM {KEPT}").fetchall()
        _gate(con, source_dir, KEPT)
        finish.finish_rows(writer, started, derive=False)  # the price columns joined again
        writer.write_refresh(f"snapshot-{uuid.uuid4().hex[:6]}", started, utcnow(), "snapshot", 0, [])
    return count


def _json_types(con: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...]) -> dict[str, str]:
    """The table's own column types, for reading a file that may hold no row (nothing to detect from)."""
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall())
    return {c: types[c] for c in columns}
