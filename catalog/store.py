"""The DuckDB catalog file: its schema, reading the previous catalog, and writing a new one atomically.

A refresh never writes into the catalog readers have open. ``CatalogWriter`` builds a new file
next to it (``<db>.tmp-<pid>``) and ``os.replace``s it into place on ``commit``; a crash before
that leaves the old file untouched. DuckDB allows one writer or many read-only readers per file,
so readers (the app, ``catalog query``) always open read-only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path

import duckdb
import pandas as pd

from catalog.models import TEXT_FIELDS, Claim, InstanceOffer
from scrapers.base import Document

INSTANCE_COLUMNS = (
    "provider",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gb",
    "gpu_memory_gbytes_per_s",
    "gpu_memory_bw_basis",
    "intra_node_link",
    "intra_node_gbytes_per_s",
    "intra_node_basis",
    "scale_up_domain_gpus",
    "inter_node_fabric",
    "inter_node_gbits_per_s",
    "inter_node_gbytes_per_s",
    "inter_node_basis",
    "nic_count",
    "frontend_gbits_per_s",
    "frontend_nic_count",
    "fabric_shares_frontend",
    "missing_intra_bw",
    "missing_inter_bw",
    "unit_suspect",
    "conflict",
    "notes",
    "source_kind",
    "source_url",
    "scraped_at",
    "stale",
    "stale_since",
    "stale_cause",
)
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
)
CLAIM_COLUMNS = (*CLAIM_IDENTITY, "fetched_at", "valid_from", "valid_to")


def schema_sql() -> str:
    """The DDL of the catalog (catalog/schema.sql)."""
    return resources.files("catalog").joinpath("schema.sql").read_text()


def connect_readonly(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection; FileNotFoundError with a hint if there is no catalog yet."""
    if not Path(path).exists():
        raise FileNotFoundError(f"no catalog at {path}; run `make refresh` or `python -m catalog seed`")
    return duckdb.connect(str(path), read_only=True)


def offer_row(offer: InstanceOffer) -> dict:
    """An instance row as the ``instances`` table stores it (enums as their values)."""
    return {name: _plain(getattr(offer, name)) for name in INSTANCE_COLUMNS}


def _plain(value):
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
        "basis": claim.basis.value,
        "qualifiers": claim.qualifiers,
        "unit_suspect": claim.unit_suspect,
        "quote": claim.quote,
        "context": claim.context,
        "source_url": claim.source_url,
        "fetched_at": fetched_at,
        "valid_from": valid_from,
        "valid_to": None,
    }


@dataclass
class PreviousCatalog:
    """What the last refresh left: rows, current claims and latest documents, by provider."""

    instances: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=INSTANCE_COLUMNS))
    claims: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=CLAIM_COLUMNS))
    documents: dict[str, Document] = field(default_factory=dict)
    path: Path | None = None

    def rows(self, provider: str) -> pd.DataFrame:
        """The provider's rows in the previous catalog."""
        return self.instances[self.instances["provider"] == provider]

    def row_count(self, provider: str) -> int:
        """How many rows the provider had in the previous catalog."""
        return int((self.instances["provider"] == provider).sum())

    def documents_of(self, provider: str) -> list[Document]:
        """The provider's latest stored documents (what a reparse replays)."""
        return [doc for doc in self.documents.values() if doc.provider == provider]


_LATEST_DOCUMENTS = """
    SELECT f.url, f.provider, f.status, f.fetched_at, d.body, f.sha256, f.etag, f.last_modified
    FROM fetches f JOIN documents d USING (sha256)
    WHERE f.status IN (200, 304)
    QUALIFY row_number() OVER (PARTITION BY f.url ORDER BY f.fetched_at DESC) = 1
"""


def read_previous(path: Path) -> PreviousCatalog:
    """The catalog at ``path`` as the next refresh needs it; empty if there is none."""
    if not Path(path).exists():
        return PreviousCatalog()
    with duckdb.connect(str(path), read_only=True) as con:
        instances = con.execute("SELECT * FROM instances").df()
        claims = con.execute("SELECT * FROM claims").df()
        documents = {
            url: Document(
                url=url,
                provider=provider,
                status=200,
                fetched_at=fetched_at,
                body=body,
                sha256=sha,
                etag=etag,
                last_modified=modified,
            )
            for url, provider, _, fetched_at, body, sha, etag, modified in con.execute(
                _LATEST_DOCUMENTS
            ).fetchall()
        }
    return PreviousCatalog(instances, claims, documents, Path(path))


def _identity_keys(frame: pd.DataFrame) -> list[tuple]:
    return [
        tuple(None if pd.isna(v) else v for v in row)
        for row in frame[list(CLAIM_IDENTITY)].itertuples(index=False, name=None)
    ]


def carried_claims(previous: pd.DataFrame, fresh: list[dict], now: datetime) -> pd.DataFrame:
    """One provider's claim history after a successful refresh.

    A fresh claim identical to a current one keeps its ``valid_from``; a current claim with no
    identical fresh claim is closed (``valid_to = now``); closed history stays as it was.
    """
    fresh_df = pd.DataFrame(fresh, columns=list(CLAIM_COLUMNS))
    if previous.empty:
        return fresh_df
    history = previous[previous["valid_to"].notna()]
    current = previous[previous["valid_to"].isna()]
    since = dict(zip(_identity_keys(current), current["valid_from"], strict=True))
    fresh_keys = _identity_keys(fresh_df)
    fresh_df["valid_from"] = [
        since.get(k, v) for k, v in zip(fresh_keys, fresh_df["valid_from"], strict=True)
    ]
    still_current = set(fresh_keys)
    vanished = current[[k not in still_current for k in _identity_keys(current)]].assign(valid_to=now)
    frames = [f for f in (history, vanished, fresh_df) if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else fresh_df


class CatalogWriter:
    """Build a new catalog file next to ``path`` and swap it in on commit."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        # A refresh killed mid-write leaves its half-built file; the caller holds the refresh lock,
        # so no other writer can own one now.
        for leftover in self.path.parent.glob(f"{self.path.name}.tmp-*"):
            leftover.unlink(missing_ok=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(str(self.tmp))
        self.con.execute(schema_sql())
        self._bodies: set[str] = set()

    def carry_history(self, previous: PreviousCatalog) -> None:
        """Copy fetch/refresh history and the bodies of the latest documents from the old file."""
        if previous.path is None:
            return
        self.con.execute("ATTACH ? AS old (READ_ONLY)", [str(previous.path)])
        for table in ("fetches", "refreshes", "provider_refreshes"):
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM old.{table}")
        self.con.execute("DETACH old")
        for doc in previous.documents.values():
            self._store_body(doc)

    def _store_body(self, doc: Document) -> None:
        if doc.sha256 and doc.body is not None and doc.sha256 not in self._bodies:
            self.con.execute("INSERT OR IGNORE INTO documents VALUES (?, ?)", [doc.sha256, doc.body])
            self._bodies.add(doc.sha256)

    def save_document(self, refresh_id: str, doc: Document) -> None:
        """Store one fetched document raw (body by hash, the fetch as a row)."""
        self._store_body(doc)
        self.con.execute(
            "INSERT INTO fetches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                refresh_id,
                doc.provider,
                doc.url,
                doc.status,
                doc.fetched_at,
                doc.bytes_received,
                doc.sha256 if doc.body is not None else None,
                doc.etag,
                doc.last_modified,
                doc.from_cache,
                doc.attempts,
                doc.error,
            ],
        )

    def stored_documents(self, refresh_id: str, provider: str) -> list[Document]:
        """The documents of one provider in this refresh, read back from the new file."""
        rows = self.con.execute(
            """SELECT f.url, f.status, f.fetched_at, d.body, f.sha256, f.etag, f.last_modified,
                      f.from_cache, f.error, f.attempts, f.bytes_received
               FROM fetches f LEFT JOIN documents d USING (sha256)
               WHERE f.refresh_id = ? AND f.provider = ?""",
            [refresh_id, provider],
        ).fetchall()
        return [
            Document(
                url=u,
                provider=provider,
                status=s,
                fetched_at=t,
                body=b,
                sha256=h,
                etag=e,
                last_modified=m,
                from_cache=c,
                error=err,
                attempts=a,
                bytes_received=n,
            )
            for u, s, t, b, h, e, m, c, err, a, n in rows
        ]

    def write_rows(self, instances: pd.DataFrame, claims: pd.DataFrame) -> None:
        """Insert instance rows and claims into the new catalog."""
        if len(instances):
            self.con.register("new_instances", instances[list(INSTANCE_COLUMNS)])
            self.con.execute("INSERT INTO instances BY NAME SELECT * FROM new_instances")
            self.con.unregister("new_instances")
        if len(claims):
            self.con.register("new_claims", claims[list(CLAIM_COLUMNS)])
            self.con.execute("INSERT INTO claims BY NAME SELECT * FROM new_claims")
            self.con.unregister("new_claims")

    def write_refresh(
        self,
        refresh_id: str,
        started: datetime,
        finished: datetime,
        mode: str,
        exit_code: int,
        providers: Iterable[dict],
    ) -> None:
        """Record this refresh and each provider's outcome."""
        self.con.execute(
            "INSERT INTO refreshes VALUES (?, ?, ?, ?, ?)", [refresh_id, started, finished, mode, exit_code]
        )
        for p in providers:
            self.con.execute(
                "INSERT INTO provider_refreshes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    refresh_id,
                    p["provider"],
                    p["outcome"],
                    p["documents"],
                    p["rows_before"],
                    p["rows_after"],
                    p["cause"],
                    p["last_success_at"],
                ],
            )

    def write_layouts(self, layouts: dict[str, dict[str, str]]) -> None:
        """Record the headers each parser expects on each page (source_layouts)."""
        for provider, pages in layouts.items():
            for url, expects in pages.items():
                self.con.execute("INSERT INTO source_layouts VALUES (?, ?, ?)", [provider, url, expects])

    def commit(self) -> None:
        """Checkpoint, close and atomically replace the catalog with the new file."""
        self.con.execute("CHECKPOINT")
        self.con.close()
        with open(self.tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        """Drop the new file; the old catalog stays as it was."""
        try:
            self.con.close()
        finally:
            self.tmp.unlink(missing_ok=True)
            self.tmp.with_name(self.tmp.name + ".wal").unlink(missing_ok=True)
