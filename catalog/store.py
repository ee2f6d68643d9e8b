"""The DuckDB catalog file: writing a new one atomically, and what it needs of the previous one.

A refresh never writes into the catalog readers have open. ``CatalogWriter.open`` takes the
catalog's lock, builds a new file next to it (``<db>.tmp-<pid>``) with the old one attached
read-only, and ``os.replace``s it into place when the ``with`` block ends cleanly; an exception or
a crash before that leaves the old file untouched. Everything carried from the old file (stale rows,
untouched providers, claim history, fetch history, document bodies) is copied in SQL here, so the
pipeline handles records only and never a storage column name. DuckDB allows one writer or many
read-only readers per file, so readers (the app, ``catalog query``) always open read-only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import fields
from datetime import datetime
from enum import Enum
from importlib import resources
from operator import attrgetter, itemgetter
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from catalog.lock import refresh_lock
from catalog.previous import Previous, latest_documents, read_previous
from catalog.publish import check_published
from catalog.read.connect import check_catalog, is_corrupt
from normalize.errors import CorruptCatalog, EnvironmentProblem
from records.clock import utcnow
from records.columns import INSTANCE_COLUMNS, instances_ddl
from records.documents import Document
from records.measurements import USER_SOURCE, Measurement
from records.offers import TEXT_FIELDS, Claim, InstanceOffer
from records.prices import Price

log = logging.getLogger(__name__)

#: The storage format every catalog file is written in: DuckDB's v1.1.0 format (storage version 64),
#: which every DuckDB from 1.1 on reads (the duckdb shell, DBeaver and other clients on a 1.x engine),
#: where the engine's own newest format would shut them out. ``tests/test_storage_compat.py`` opens a
#: seeded catalog and a release with an older engine (``make compat``). Writing it costs nothing here:
#: the catalog uses no type or compression that needs a newer format.
STORAGE_VERSION = "v1.1.0"
#: What DuckDB may hold in memory while a new catalog is written; past it, it spills to the new file's
#: temporary directory. Its default (80 % of the machine) let a 100x refresh grow past 2 GiB; at 256 MB
#: its peak was 0.59-0.61 GiB, at 128 MB 0.53-0.57, in the same time at 1x, 10x and 100x.
WRITER_MEMORY = "128MB"
#: Compression the writer does not try: FSST's training on every string column was two thirds of the
#: checkpoint's CPU (0.07 of 0.11 s for the real catalog), and the file comes out no larger without
#: it (dictionary and plain strings; 12.1 MB against 12.6). Every engine reads what is written.
UNUSED_COMPRESSION = "fsst"

# The writer's column list comes from the one column table (records/instance_columns.toml).
CLAIM_IDENTITY = (
    "provider",
    "instance_type",
    "field",
    "value",
    "value_text",
    "unit",
    "basis",
    "qualifiers",
    "unit_suspect",
    "quote",
    "context",
    "source_url",
    "evidence",
    "original_url",
)
CLAIM_COLUMNS = (*CLAIM_IDENTITY, "read_on", "fetched_at", "valid_from", "valid_to")
PRICE_IDENTITY = (
    "provider",
    "instance_type",
    "region",
    "usd_per_hour",
    "spot_usd_per_hour",
    "quote",
    "context",
    "notes",
    "source_url",
    "currency",
    "published_per_hour",
    "published_spot_per_hour",
    "usd_per_unit",
)
PRICE_COLUMNS = (*PRICE_IDENTITY, "fetched_at", "valid_from", "valid_to")
MEASUREMENT_COLUMNS = (*(f.name for f in fields(Measurement)), "fetched_at", "stale")
# What write_fresh stages per table, and how many staged rows it holds in Python before moving them to
# the new file's staging tables (a refresh at 100x the catalog stages ~800,000 rows).
STAGED_COLUMNS: dict[str, tuple[str, ...]] = {
    "instances": INSTANCE_COLUMNS,
    "claims": CLAIM_COLUMNS,
    "prices": PRICE_COLUMNS,
    "measurements": MEASUREMENT_COLUMNS,
}
SPILL_ROWS = 50_000
#: Fetch rows held in Python before they move to ``fetches`` (after the fetch history carried); a
#: refresh of the real mirror holds its ~650 until commit, one at 100x wrote 64,600 (60 MB of dicts)
#: at the end.
SPILL_FETCHES = 5_000
#: The auto-checkpoint threshold the commit sets: a transaction whose commit checkpoints is not written
#: to the WAL as well, so the last one's writes (documents, fetch history) reach the file once.
CHECKPOINT_AT_COMMIT = "0b"
#: Where kept rows (a stale provider's, one a refresh left alone, a snapshot's) wait, as they were,
#: until the rows are finished (catalog.finish); fresh ones wait in ``staging.instances``.
KEPT = "staging.kept"
FETCH_COLUMNS = (
    "refresh_id",
    "provider",
    "url",
    "status",
    "fetched_at",
    "bytes_received",
    "sha256",
    "etag",
    "last_modified",
    "from_cache",
    "attempts",
    "error",
    "required",
    "fetched_url",
)


def schema_sql() -> str:
    """The DDL of the catalog (catalog/schema.sql)."""
    return resources.files("catalog").joinpath("schema.sql").read_text()


_OFFER_VALUES = attrgetter(*INSTANCE_COLUMNS)


def offer_row(offer: InstanceOffer) -> dict:
    """An instance row as the ``instances`` table stores it (enums as their values; most values are
    stored as they are, tested here rather than in a call per value)."""
    return {
        name: value if type(value) in _AS_STORED else _plain(value)
        for name, value in zip(INSTANCE_COLUMNS, _OFFER_VALUES(offer), strict=True)
    }


_AS_STORED = frozenset({str, int, float, bool, type(None), list, tuple})


def _plain(value: object) -> object:
    if type(value) in _AS_STORED:  # most values: no attribute to look for
        return value
    if isinstance(value, Enum) and not isinstance(value, (int, float)):
        return value._value_  # its ``value``, without the descriptor call (twice, with hasattr)
    return value.value if hasattr(value, "value") and not isinstance(value, (int, float)) else value


def claim_row(
    provider: str, instance_type: str, claim: Claim, fetched_at: datetime | None, valid_from: datetime
) -> dict:
    """A claim as the ``claims`` table stores it, valid from ``valid_from`` until replaced."""
    text = claim.field in TEXT_FIELDS
    return {
        "provider": provider,
        "instance_type": instance_type,
        "field": claim.field,
        "value": None if text else float(claim.value),
        "value_text": claim.value if text else None,
        "unit": claim.unit,
        "basis": claim.basis._value_,  # an enum's value, without the descriptor call per claim
        "qualifiers": claim.qualifiers,
        "unit_suspect": claim.unit_suspect,
        "quote": claim.quote,
        "context": claim.context,
        "source_url": claim.source_url,
        "evidence": claim.evidence._value_,
        "original_url": claim.original_url,
        "read_on": claim.read_on,
        "fetched_at": fetched_at,
        "valid_from": valid_from,
        "valid_to": None,
    }


def price_row(price: Price, fetched_at: datetime | None, valid_from: datetime) -> dict:
    """A price as the ``prices`` table stores it, valid from ``valid_from`` until replaced."""
    row = _fields(price)  # a dict of its own: filled in place, not copied into another
    row.update(fetched_at=fetched_at, valid_from=valid_from, valid_to=None)
    return row


def measurement_row(measurement: Measurement, fetched_at: datetime | None) -> dict:
    """A measurement as the ``measurements`` table stores it."""
    row = _fields(measurement)
    row.update(fetched_at=fetched_at, stale=False)
    return row


def _fields(record: Price | Measurement) -> dict:
    """A flat record's fields by name, a new dict (``asdict`` deep-copies every value: 20x slower
    here): a copy of the record's ``__dict__`` when it holds its fields and nothing else, as a frozen
    record does (the rows are read by name, so the order of the keys does not matter)."""
    names, keys, values = _field_names(type(record))
    own = record.__dict__
    if own.keys() == keys:
        return dict(own)
    return dict(zip(names, values(record), strict=True))


_FIELD_NAMES: dict[type, tuple[tuple[str, ...], frozenset[str], attrgetter]] = {}


def _field_names(cls: type[Price] | type[Measurement]) -> tuple[tuple[str, ...], frozenset[str], attrgetter]:
    """A record class's field names (as a tuple and a set) and a getter of their values, once
    (``fields`` filters every field of the class on each call)."""
    if cls not in _FIELD_NAMES:
        names = tuple(f.name for f in fields(cls))
        _FIELD_NAMES[cls] = names, frozenset(names), attrgetter(*names)
    return _FIELD_NAMES[cls]


# What the operating system says when it refuses a write, as DuckDB passes it on in any of its errors
# (an IOException, or a TransactionException when the commit's WAL write fails on a full disk).
OS_REFUSALS = (
    "No space left on device",
    "Disk quota exceeded",
    "File too large",
    "Read-only file system",
    "Permission denied",
)


def file_system_error(exc: BaseException) -> bool:
    """Whether an error is the file system refusing (disk full, read-only, permissions), not a bug."""
    if isinstance(exc, OSError):
        return True
    if not isinstance(exc, duckdb.Error):
        return False
    text = str(exc)
    io = isinstance(exc, duckdb.IOException | duckdb.FatalException) and "Could not " in text
    return io or any(refusal in text for refusal in OS_REFUSALS)


def _reason(exc: BaseException) -> str:
    """What the file system said, in one line ('No space left on device: /data/catalog.duckdb')."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    text = text.split("because of error: ", 1)[-1]  # DuckDB's "Failed to create checkpoint because of ..."
    return text.removeprefix("TransactionContext Error: ").removeprefix("Failed to commit: ")


def row_table(rows: list[dict], columns: Iterable[str]) -> pa.Table | pd.DataFrame:
    """Rows for DuckDB to scan: an Arrow table, a column at a time (NaN read as NULL, as a DataFrame
    gave it; DuckDB scans Arrow without the DataFrame's per-value string conversion, which was most
    of the writer's time). A column Arrow cannot type (a string beside a number) goes as a DataFrame."""
    columns = list(columns)
    try:
        return pa.table(
            {
                c: pa.array(values, from_pandas=True)
                for c, values in zip(columns, _columns(rows, columns), strict=True)
            }
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pd.DataFrame(rows, columns=columns)


def _columns(rows: list[dict], columns: list[str]) -> list[Sequence[object]]:
    """The rows' values column by column (a missing key is None): transposed by ``zip`` when every
    row has every column, as the writer's rows do, which is a fraction of a lookup per value."""
    if len(columns) > 1:
        try:
            return list(zip(*map(itemgetter(*columns), rows), strict=True)) or [()] * len(columns)
        except KeyError:
            pass
    return [[row.get(c) for row in rows] for c in columns]


class CatalogWriter:
    """A new catalog file being built next to ``path``; use ``CatalogWriter.open(path)``."""

    def __init__(self, path: Path, *, keep_history: bool = True, rebuild_corrupt: bool = True) -> None:
        self.path = Path(path)
        self.tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        self.moved_aside: str | None = None  # what was done with a corrupt old catalog, if there was one
        self._salvaged = pd.DataFrame()  # the measurements a user imported into it, kept
        # A writer killed mid-write leaves its half-built file; we hold the lock, so it is nobody's now.
        for leftover in self.path.parent.glob(f"{self.path.name}.tmp-*"):
            leftover.unlink(missing_ok=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.has_old = keep_history and self.path.exists() and self._readable_old(rebuild_corrupt)
        self.con = duckdb.connect(
            str(self.tmp),
            config={"storage_compatibility_version": STORAGE_VERSION, "memory_limit": WRITER_MEMORY},
        )
        self.con.execute("SET enable_progress_bar = false")  # a query slowed by spilling must not draw one
        with suppress(duckdb.CatalogException):  # an engine before 1.2 has no such setting: FSST it is
            self.con.execute(f"SET disabled_compression_methods = '{UNUSED_COMPRESSION}'")
        # The file is a temporary one until _commit fsyncs it whole and swaps it in (a crash before
        # leaves a file the next writer removes), so the engine's sync of each commit's WAL, some 20 a
        # refresh at a few ms each, keeps nothing safe. An engine without the setting syncs as before.
        with suppress(duckdb.CatalogException, duckdb.InvalidInputException):
            self.con.execute("SET fsync_mode = 'none'")
        self._create_tables()
        self._insert("measurements", self._salvaged)  # a corrupt old catalog's imported readings
        if self.has_old:
            self.con.execute("ATTACH ? AS old (READ_ONLY)", [str(self.path)])
            self._refuse_an_older_schema()
        self._fetches: list[dict] = []
        self._fetch_history_carried = False
        self._bodies: dict[str, str] = {}  # fetched bodies by hash, not yet in ``documents``
        self._bodies_written: set[str] = set()  # the hashes of those that are
        # Fresh rows of every source, staged in Python and moved to the new file's staging tables every
        # SPILL_ROWS rows (so memory stays flat at 100x the catalog), written once per table at commit.
        self._fresh: dict[str, list[dict]] = {table: [] for table in STAGED_COLUMNS}
        self._staged_written = False
        self._rows_finished = False
        self._fresh_sources: list[str] = []
        self._fresh_at: datetime | None = None

    def _create_tables(self) -> None:
        """The catalog's tables, and the writer's own (``staging``), in one transaction: a commit for
        each of their 28 statements was a third of creating them."""
        self.con.execute("BEGIN TRANSACTION")
        self.con.execute(schema_sql())
        self.con.execute("CREATE SCHEMA staging")
        for table in STAGED_COLUMNS:
            self.con.execute(f"CREATE TABLE staging.{table} AS SELECT * FROM main.{table} LIMIT 0")
        # with the table's defaults: a kept row from an older catalog may lack a column of today's
        self.con.execute(instances_ddl().replace("IF NOT EXISTS instances", KEPT, 1))
        self.con.execute("COMMIT")

    def _refuse_an_older_schema(self) -> None:
        """An old catalog whose claims lack a column of this schema cannot carry its history."""
        old = {row[0] for row in self.con.execute("DESCRIBE old.claims").fetchall()}
        missing = [c for c in CLAIM_COLUMNS if c not in old]
        if missing:
            self.con.close()
            self.tmp.unlink(missing_ok=True)
            raise EnvironmentProblem(
                f"catalog {self.path} predates the claims column(s) {', '.join(missing)}: rebuild it "
                "(make seed, or refresh into a new --db)"
            )

    def _readable_old(self, rebuild_corrupt: bool) -> bool:
        """Whether the old catalog can be read in full. A corrupt one is moved aside to
        ``<db>.corrupt-<UTC time>`` (kept, not deleted) and the new one starts empty; with
        ``rebuild_corrupt`` False (a reparse, which has nothing to rebuild from) CorruptCatalog."""
        try:
            check_catalog(self.path)
        except CorruptCatalog as exc:
            if not rebuild_corrupt:
                raise
            self._salvaged = self._user_readings(exc)
            aside = self.path.with_name(f"{self.path.name}.corrupt-{utcnow():%Y%m%dT%H%M%S}")
            os.replace(self.path, aside)
            wal = Path(f"{self.path}.wal")
            if wal.exists():
                os.replace(wal, Path(f"{aside}.wal"))
            kept = len(self._salvaged)
            self.moved_aside = f"{exc}; moved it to {aside} and rebuilt the catalog from scratch" + (
                f", keeping the {kept} measurements imported into it" if kept else ""
            )
            log.warning("%s", self.moved_aside)
            return False
        return True

    def _user_readings(self, damage: CorruptCatalog) -> pd.DataFrame:
        """The measurements a user imported into a corrupt catalog, read back so that a rebuild keeps
        them (nothing to keep in a file that is no database at all). EnvironmentProblem, the file
        left where it is, when they cannot be read: a rebuild would lose them without a word."""
        try:
            with duckdb.connect(str(self.path), read_only=True) as con:
                return con.execute("SELECT * FROM measurements WHERE source = ?", [USER_SOURCE]).df()
        except duckdb.Error as exc:
            if is_corrupt(exc) and "not a valid DuckDB database file" in str(exc):
                return pd.DataFrame()
            raise EnvironmentProblem(
                f"{damage}; its imported measurements cannot be read back "
                f"({str(exc).splitlines()[0][:200]}), so it was left as it is: move it aside yourself "
                "to rebuild without them"
            ) from None

    @classmethod
    @contextmanager
    def open(
        cls, path: Path, *, keep_history: bool = True, rebuild_corrupt: bool = True
    ) -> Iterator[CatalogWriter]:
        """Hold the catalog's lock and build a new file; swap it in if the block ends cleanly.

        ``path`` is resolved first: a symlink is followed, so the lock and the swap are the target's
        and the link stays a link. With ``keep_history`` the old catalog is attached: its rows can be
        carried and its fetch history, refreshes and latest document bodies are copied (a corrupt one
        is moved aside, see ``_readable_old``). Without it (``seed``) the new file starts empty.
        LockHeld if another refresh or seed holds the lock; EnvironmentProblem if the file system
        refuses (disk full, read-only directory). Any exception aborts: the new file is removed and
        the old catalog stays exactly as it was.
        """
        target = Path(path).resolve()
        try:
            with refresh_lock(target):
                writer = cls(target, keep_history=keep_history, rebuild_corrupt=rebuild_corrupt)
                try:
                    yield writer
                    writer._commit()
                except BaseException:
                    writer._abort()
                    raise
        except (OSError, duckdb.Error) as exc:
            if isinstance(exc, EnvironmentProblem) or not file_system_error(exc):
                raise
            raise EnvironmentProblem(f"cannot write the catalog at {target}: {_reason(exc)}") from exc

    # -- what the previous catalog knew --------------------------------------------------------

    def refuse_a_clock_behind(self, now: datetime) -> None:
        """EnvironmentProblem if ``now`` is before the old catalog's latest history (a refresh, a
        claim or price becoming valid): its history would run backwards (a price valid to before it
        was valid from, ``changes --since`` missing the newest change)."""
        if not self.has_old:
            return
        (latest,) = self.con.execute(
            """SELECT greatest(max(started_at), (SELECT max(valid_from) FROM old.claims),
                                (SELECT max(valid_from) FROM old.prices)) FROM old.refreshes"""
        ).fetchone() or (None,)
        if latest is not None and now < latest:
            raise EnvironmentProblem(
                f"the clock says {now:%Y-%m-%d %H:%M:%S} UTC, before {self.path}'s latest change at "
                f"{latest:%Y-%m-%d %H:%M:%S}: its history would run backwards; fix the clock "
                "(nothing written)"
            )

    def previous_documents(self) -> dict[str, Document]:
        """The latest good stored document per URL (for conditional GETs and reparse)."""
        return latest_documents(self.con, "old") if self.has_old else {}

    def previous(self, provider: str) -> Previous:
        """The provider's rows (with their current claims) and last success in the previous catalog."""
        return read_previous(self.con, "old", provider) if self.has_old else Previous()

    # -- writing -------------------------------------------------------------------------------

    def save_documents(self, refresh_id: str, documents: Iterable[Document]) -> None:
        """Stage fetched documents: their bodies by hash (unless ``write_bodies`` wrote them already)
        and one fetch row each, written in bulk at commit."""
        self.stage_bodies(documents)
        for doc in documents:
            row = {name: getattr(doc, name, None) for name in FETCH_COLUMNS}
            row.update(refresh_id=refresh_id, sha256=doc.sha256 if doc.body is not None else None)
            self._fetches.append(row)
        if len(self._fetches) >= SPILL_FETCHES:
            self._spill_fetches()

    def stage_bodies(self, documents: Iterable[Document]) -> None:
        """Hold the bodies of fetched documents (one per hash) until ``write_bodies`` or the commit."""
        for doc in documents:
            if doc.sha256 and doc.body is not None and doc.sha256 not in self._bodies_written:
                self._bodies.setdefault(doc.sha256, doc.body)

    def write_bodies(self) -> None:
        """The bodies held so far into ``documents`` now, checkpointed straight into the file (not
        through the WAL first): done while sources still parse, the engine's writing of the largest
        table is off the commit."""
        self.con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_AT_COMMIT}'")
        self._write_bodies()  # a failure aborts the writer (no reset after it: a full disk's error stands)
        self.con.execute("RESET checkpoint_threshold")

    def _write_bodies(self) -> None:
        """The bodies held into ``documents``, by hash (the same order whichever source came first)."""
        rows = [{"sha256": k, "body": self._bodies[k]} for k in sorted(self._bodies)]
        self._insert("documents", row_table(rows, ("sha256", "body")))
        self._bodies_written.update(self._bodies)
        self._bodies.clear()

    def _spill_fetches(self) -> None:
        """Move the fetch rows held in Python to ``fetches`` (in order), after the fetch history."""
        self._carry_fetch_history()
        self._insert("fetches", row_table(self._fetches, FETCH_COLUMNS))
        self._fetches.clear()

    def _carry_fetch_history(self) -> None:
        """The old catalog's fetch rows, once, before any of this refresh's: at the first spill, or at
        commit. (A spill once went to a table of its own, copied after the history at commit: at 100x
        its 64,600 rows were written twice, and a temporary one held them in memory to the end.)"""
        if self.has_old and not self._fetch_history_carried:
            self.con.execute("INSERT INTO fetches BY NAME SELECT * FROM old.fetches")
        self._fetch_history_carried = True

    def write_fresh(
        self,
        source: str,
        offers: list[InstanceOffer],
        prices: list[Price],
        measurements: list[Measurement],
        fetched_at: dict[str, datetime],
        now: datetime,
        carried: frozenset[tuple[str, Claim]] = frozenset(),
    ) -> None:
        """Stage a source's new rows, claims, prices and measurements; ``write_staged`` writes every
        source's at once when the catalog is committed, with claim and price history carried.

        A fresh claim (or price) identical to a current one keeps its ``valid_from``; a current one
        with no identical fresh one is closed (``valid_to = now``); closed history stays as it was.
        ``carried`` claims ((instance type, claim) from the last good catalog, see catalog.carry)
        keep the ``fetched_at`` of the fetch they were read from, not this one's.
        """
        self._fresh_sources.append(source)
        self._fresh_at = now
        # ``carried`` is mostly empty: a claim is hashed (all its fields) only to look it up there
        self._fresh["instances"] += [offer_row(o) for o in offers]
        self._fresh["claims"] += [
            claim_row(
                source,
                o.instance_type,
                c,
                None if carried and (o.instance_type, c) in carried else fetched_at.get(c.source_url),
                now,
            )
            for o in offers
            for c in o.claims
        ]
        self._fresh["prices"] += [price_row(p, fetched_at.get(p.source_url), now) for p in prices]
        self._fresh["measurements"] += [
            measurement_row(m, fetched_at.get(m.source_url)) for m in measurements
        ]
        if sum(len(rows) for rows in self._fresh.values()) >= SPILL_ROWS:
            self._spill()

    def _spill(self) -> None:
        """Move the rows staged in Python into the new file: its staging tables, or (``_in_place``)
        the tables themselves."""
        for table, columns in STAGED_COLUMNS.items():
            frame = row_table(self._fresh[table], columns)
            if len(frame):
                target = table if self._in_place(table) else f"staging.{table}"
                self.con.register("spilled", frame)
                self.con.execute(f"INSERT INTO {target} BY NAME SELECT * FROM spilled")
                self.con.unregister("spilled")
            self._fresh[table].clear()

    def _in_place(self, table: str) -> bool:
        """Whether fresh rows of ``table`` go straight to it: claims, prices and measurements of a
        catalog built from nothing, which has no history to join them with and no kept row to come
        before them (copying them from staging was a third of writing them). Rows are finished from
        staging (``catalog.finish``)."""
        return not self.has_old and table != "instances"

    def write_staged(self) -> None:
        """Write the staged claims, prices and measurements of every fresh source, one statement per
        table (bulk, not per source), with claim and price history carried; once. The rows wait for
        ``catalog.finish.finish_rows``. One transaction: a commit (a WAL write) per statement cost
        more than the statements."""
        if self._staged_written:
            return
        self._staged_written = True
        self.con.execute("BEGIN TRANSACTION")
        self._spill()
        if not self._in_place("measurements"):
            self.con.execute("INSERT INTO measurements BY NAME SELECT * FROM staging.measurements")
            for table, identity in (("claims", CLAIM_IDENTITY), ("prices", PRICE_IDENTITY)):
                self._with_history(table, identity)
        self.con.execute("COMMIT")

    def rows_finished(self) -> None:
        """The rows are in ``instances``, finished (``catalog.finish.finish_rows``): staging goes (its
        memory with it: dropped in a transaction, it stayed to the end), and every later write is one
        transaction, which ``_commit`` commits."""
        self.con.execute("DROP SCHEMA staging CASCADE")
        self.con.execute("BEGIN TRANSACTION")
        self._rows_finished = True

    def _with_history(self, table: str, identity: tuple[str, ...]) -> None:
        """Insert the staged rows of ``table``, carrying the history of the fresh sources' old rows."""
        if not self._fresh_sources:
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM staging.{table}")
            return
        self.con.execute(f"CREATE TEMP VIEW fresh AS SELECT * FROM staging.{table}")
        old_columns = {row[0] for row in self.con.execute(f"DESCRIBE old.{table}").fetchall()}
        same = " AND ".join(f"f.{c} IS NOT DISTINCT FROM o.{c}" for c in identity if c in old_columns)
        current = f"FROM old.{table} o WHERE o.valid_to IS NULL AND {same}"
        self.con.execute(
            f"""INSERT INTO {table} BY NAME
                SELECT * FROM old.{table} WHERE list_contains($ps, provider) AND valid_to IS NOT NULL
                UNION ALL BY NAME
                SELECT * REPLACE ($now AS valid_to) FROM old.{table} f
                WHERE list_contains($ps, provider) AND valid_to IS NULL
                  AND NOT EXISTS (SELECT 1 FROM fresh o WHERE {same})
                UNION ALL BY NAME
                SELECT f.* REPLACE (
                    coalesce((SELECT min(o.valid_from) {current}), f.valid_from) AS valid_from,
                    coalesce(f.fetched_at, (SELECT max(o.fetched_at) {current})) AS fetched_at)
                FROM fresh f""",
            {"ps": self._fresh_sources, "now": self._fresh_at},
        )
        self.con.execute("DROP VIEW fresh")

    def keep_readings(self, source: str, urls: tuple[str, ...]) -> None:
        """A fresh source's last good readings of the documents ``urls`` (which its parse lost),
        kept and marked stale."""
        if not self.has_old or not urls:
            return
        self.con.execute(
            "INSERT INTO measurements BY NAME SELECT * REPLACE (true AS stale) FROM old.measurements "
            "WHERE source = $s AND list_contains($urls, source_url)",
            {"s": source, "urls": list(urls)},
        )

    def keep_stale(self, provider: str, cause: str, now: datetime) -> None:
        """The provider failed: its previous rows marked stale with the cause, its claims as they were."""
        if not self.has_old:
            return
        self.con.execute(
            f"""INSERT INTO {KEPT} BY NAME
               SELECT * REPLACE (true AS stale, CASE WHEN stale THEN stale_since ELSE $now END AS stale_since,
                                 $cause AS stale_cause)
               FROM old.instances WHERE provider = $p""",
            {"p": provider, "now": now, "cause": cause},
        )
        for table in ("claims", "prices"):
            self.con.execute(
                f"INSERT INTO {table} BY NAME SELECT * FROM old.{table} WHERE provider = ?", [provider]
            )
        self.con.execute(
            "INSERT INTO measurements BY NAME "
            "SELECT * REPLACE (true AS stale) FROM old.measurements WHERE source = ?",
            [provider],
        )

    def keep_untouched(self, refreshed: list[str]) -> None:
        """What every source this refresh left alone had: rows, claims, prices, measurements."""
        if not self.has_old:
            return
        for target, table, key in (
            (KEPT, "instances", "provider"),
            ("claims", "claims", "provider"),
            ("prices", "prices", "provider"),
            ("measurements", "measurements", "source"),
        ):
            self.con.execute(
                f"INSERT INTO {target} BY NAME SELECT * FROM old.{table} WHERE NOT list_contains(?, {key})",
                [refreshed],
            )

    def write_refresh(
        self,
        refresh_id: str,
        started: datetime,
        finished: datetime,
        mode: str,
        exit_code: int,
        providers: Iterable[dict],
    ) -> None:
        """Record this refresh and each provider's outcome (``provider_refreshes`` rows as dicts)."""
        self.con.execute(
            "INSERT INTO refreshes VALUES (?, ?, ?, ?, ?)", [refresh_id, started, finished, mode, exit_code]
        )
        rows = [{**row, "refresh_id": refresh_id} for row in providers]
        if rows:  # as Arrow: a DataFrame of 28 rows was 5 ms of pandas
            self._insert("provider_refreshes", row_table(rows, rows[0]))

    def write_layouts(self, layouts: dict[str, dict[str, str]]) -> None:
        """Record the headers each parser expects on each page (source_layouts)."""
        rows = [
            {"provider": provider, "url": url, "expects": expects}
            for provider, pages in layouts.items()
            for url, expects in pages.items()
        ]
        self._insert("source_layouts", row_table(rows, ("provider", "url", "expects")))

    def _insert(self, table: str, frame: pa.Table | pd.DataFrame) -> None:
        if len(frame):
            self.con.register("staged", frame)
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM staged")
            self.con.unregister("staged")

    def _carry_history(self) -> None:
        """Fetch and refresh history, and the bodies of the latest good document per URL."""
        if not self.has_old:
            return
        self._carry_fetch_history()
        for table in ("refreshes", "provider_refreshes"):
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM old.{table}")
        self.con.execute(
            """INSERT INTO documents BY NAME
               SELECT d.* FROM old.documents d
               WHERE d.sha256 IN (
                   SELECT sha256 FROM old.fetches WHERE status IN (200, 304)
                   QUALIFY row_number() OVER (PARTITION BY url ORDER BY fetched_at DESC) = 1)
                 AND NOT list_contains(?, d.sha256)""",
            [[*self._bodies, *self._bodies_written]],
        )

    def _flush_documents(self) -> None:
        """This refresh's fetch rows still held (after those spilled), and the new document bodies."""
        self._spill_fetches()
        self._write_bodies()

    def _commit(self) -> None:
        """Check every row as finished, commit the last transaction as a checkpoint (its writes, the
        largest, reach the file once, not through the WAL first), close and atomically replace the
        catalog."""
        if not self._rows_finished:
            raise RuntimeError("the rows were never finished (catalog.finish.finish_rows)")
        check_published(self.con)
        self._carry_history()
        self._flush_documents()
        self.con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_AT_COMMIT}'")
        self.con.execute("COMMIT")
        if self.has_old:
            self.con.execute("DETACH old")
        self.con.execute("CHECKPOINT")  # nothing left to write, unless the commit could not checkpoint
        self.con.close()
        with open(self.tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(self.tmp, self.path)

    def _abort(self) -> None:
        try:
            self.con.close()
        except duckdb.Error:
            log.warning("closing the half-built catalog %s failed; removing it anyway", self.tmp)
        finally:
            self.tmp.unlink(missing_ok=True)
            self.tmp.with_name(self.tmp.name + ".wal").unlink(missing_ok=True)
