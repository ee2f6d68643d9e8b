"""What the last catalog knew, read from it while a new one is built: the latest stored document
per URL (conditional GETs, reparse) and, per provider, its rows with their current claims, row
count and last success (``Previous``): what a fresh parse is held against (``catalog.carry``).

The old catalog is attached to the writer's connection under a name (``old``); nothing here writes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from enum import StrEnum
from typing import Any

import duckdb

from normalize.errors import InvalidOffer
from normalize.vocab import Basis, Evidence, Fabric, Link, PeerAccess, SellerKind
from records.documents import Document
from records.offers import TEXT_FIELDS, Claim, InstanceOffer, OfferIdentity
from records.prices import Price

log = logging.getLogger(__name__)

_ENUM_COLUMNS = {
    "gpu_memory_bw_basis": Basis,
    "intra_node_link": Link,
    "intra_node_basis": Basis,
    "inter_node_fabric": Fabric,
    "inter_node_basis": Basis,
    "gpu_peer_access": PeerAccess,
    "gpu_peer_access_basis": Basis,
}

#: Each enum's members by value: a lookup, where calling the enum is a few method calls per value.
_MEMBERS: dict[type[StrEnum], dict[str, StrEnum]] = {
    enum: {member.value: member for member in enum} for enum in set(_ENUM_COLUMNS.values())
}

#: The InstanceOffer fields an ``instances`` row stores as columns of the same name (once: ``fields``
#: builds its list anew on every call, and every published row is read back through here).
_COLUMN_FIELDS = tuple(f.name for f in fields(InstanceOffer) if f.name not in ("claims", "identity"))


def row_offer(row: Mapping, claims: tuple[Claim, ...]) -> InstanceOffer:
    """An ``instances`` row (as a mapping of its columns) back as the InstanceOffer it was written from
    (a column an older catalog lacks takes the field's default)."""
    values = {name: row[name] for name in _COLUMN_FIELDS if name in row}
    for name, enum in _ENUM_COLUMNS.items():
        if name in values:
            value = values[name]
            member = _MEMBERS[enum].get(value) if type(value) is str else None
            values[name] = member if member is not None else enum(value)  # enum() raises as it did
    if "notes" in values:
        values["notes"] = _notes(values["notes"])
    identity = OfferIdentity(
        seller_kind=SellerKind(row["seller_kind"]),
        **{name: row[name] for name in ("upstream_provider", "upstream_instance_type", "platform", "preset")},
    )
    return InstanceOffer(**values, identity=identity, claims=claims)


def _notes(stored: object) -> tuple[str, ...]:
    """A row's notes as a tuple: a list since the notes column became one, a '; '-joined string in
    catalogs written before."""
    if isinstance(stored, str):
        return tuple(note for note in stored.split("; ") if note)
    return tuple(str(note) for note in stored) if isinstance(stored, list | tuple) else ()


def _claim(row: dict) -> Claim:
    text = row["field"] in TEXT_FIELDS
    read_on = row["read_on"]
    return Claim(
        field=row["field"],
        value=row["value_text"] if text else float(row["value"]),
        quote=row["quote"],
        source_url=row["source_url"],
        context=row["context"],
        basis=Basis(row["basis"]),
        qualifiers=row["qualifiers"],
        unit_suspect=bool(row["unit_suspect"]),
        read_on=read_on if isinstance(read_on, date) or read_on is None else None,
        evidence=Evidence(row["evidence"]),
        original_url=row["original_url"],
    )


def latest_documents(con: duckdb.DuckDBPyConnection, database: str) -> dict[str, Document]:
    """The latest good stored document per URL in the catalog attached as ``database``."""
    rows = con.execute(
        f"""SELECT f.url, f.provider, f.fetched_at, d.body, f.sha256, f.etag, f.last_modified, f.required
            FROM "{database}".fetches f JOIN "{database}".documents d USING (sha256)
            WHERE f.status IN (200, 304)
            QUALIFY row_number() OVER (PARTITION BY f.url ORDER BY f.fetched_at DESC) = 1"""
    ).fetchall()
    return {
        url: Document(
            url=url,
            provider=provider,
            status=200,
            fetched_at=fetched_at,
            body=body,
            sha256=sha,
            etag=etag,
            last_modified=modified,
            required=required,
        )
        for url, provider, fetched_at, body, sha, etag, modified, required in rows
    }


@dataclass(frozen=True)
class Previous:
    """What the last catalog knew of one provider, as the refresh needs it: its rows (with their
    current claims) are what a parse that loses rows or fields is held against (catalog.carry)."""

    rows: int = 0
    scraped_rows: int = 0
    last_success_at: datetime | None = None
    claims: tuple[tuple[str, Claim], ...] = ()  # (instance type, current claim)
    instances: Mapping[str, InstanceOffer] = field(default_factory=dict)
    prices: tuple[Price, ...] = ()  # the provider's current prices
    measurements: int = 0  # readings a measurement source gave
    # The values last accepted (the first published, or those `--accept-changes` published since):
    # what a figure or a price that creeps up under the jump factor, refresh after refresh, is held against.
    accepted_claims: Mapping[str, Mapping[tuple[str, str], tuple[float, ...]]] = field(default_factory=dict)
    accepted_prices: Mapping[tuple[str, str], tuple[float | None, float | None]] = field(default_factory=dict)
    # A measurement source's readings per document: a document whose readings the parse lost keeps them.
    reading_urls: Mapping[str, int] = field(default_factory=dict)


def _records(con: duckdb.DuckDBPyConnection, sql: str, *params: object) -> list[dict[str, Any]]:
    """Rows as dicts, NULL as None (a DataFrame would turn a NULL date into NaT)."""
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def _instances(
    con: duckdb.DuckDBPyConnection, database: str, provider: str, current: tuple[tuple[str, Claim], ...]
) -> dict[str, InstanceOffer]:
    by_type: dict[str, list[Claim]] = {}
    for instance_type, claim in current:
        by_type.setdefault(instance_type, []).append(claim)
    instances = {}
    for row in _records(con, f"SELECT * FROM {database}.instances WHERE provider = ?", provider):
        name = row["instance_type"]
        try:
            instances[name] = row_offer(row, tuple(by_type.get(name, ())))
        except (InvalidOffer, ValueError) as exc:  # written by an older version under other rules
            log.warning("%s/%s: previous row unreadable, cannot be carried: %s", provider, name, exc)
    return instances


def read_previous(con: duckdb.DuckDBPyConnection, database: str, provider: str) -> Previous:
    """The provider's rows, current claims and last success in the catalog attached as ``database``."""
    [(rows, scraped)] = con.execute(
        "SELECT count(*), count(*) FILTER (source_kind = 'scraped') "
        f"FROM {database}.instances WHERE provider = ?",
        [provider],
    ).fetchall()
    [(last_success,)] = con.execute(
        f"SELECT max(last_success_at) FROM {database}.provider_refreshes WHERE provider = ?", [provider]
    ).fetchall()
    claims = _records(
        con, f"SELECT * FROM {database}.claims WHERE provider = ? AND valid_to IS NULL", provider
    )
    current = tuple((row["instance_type"], _claim(row)) for row in claims)
    present = {row[0] for row in con.execute(f"DESCRIBE {database}.prices").fetchall()}
    price_columns = ", ".join(f.name for f in fields(Price) if f.name in present)
    prices = tuple(
        Price(**row)
        for row in _records(
            con,
            f"SELECT {price_columns} FROM {database}.prices WHERE provider = ? AND valid_to IS NULL",
            provider,
        )
    )
    reading_urls = dict(
        con.execute(
            f"SELECT source_url, count(*) FROM {database}.measurements WHERE source = ? GROUP BY source_url",
            [provider],
        ).fetchall()
    )
    readings = sum(reading_urls.values())
    instances = _instances(con, database, provider, current)
    since = _accepted_at(con, database, provider)
    return Previous(
        rows,
        scraped,
        last_success,
        current,
        instances,
        prices,
        readings,
        _accepted_claims(con, database, provider, since),
        _accepted_prices(con, database, provider, since),
        reading_urls,
    )


def _accepted_at(con: duckdb.DuckDBPyConnection, database: str, provider: str) -> datetime | None:
    """When a refresh last published the provider's parse with ``--accept-changes``, or None."""
    columns = {row[0] for row in con.execute(f"DESCRIBE {database}.provider_refreshes").fetchall()}
    if "changes_accepted" not in columns:  # a catalog from before the column: nothing was accepted
        return None
    [(at,)] = con.execute(
        f"""SELECT max(r.started_at) FROM {database}.provider_refreshes p
            JOIN {database}.refreshes r USING (refresh_id) WHERE p.provider = ? AND p.changes_accepted""",
        [provider],
    ).fetchall()
    return at


# The values of each history that were current since the last acceptance, the earliest first.
_SINCE_ACCEPTED = """
    WHERE provider = $p AND (valid_to IS NULL OR $since IS NULL OR valid_to > $since) {extra}
    QUALIFY valid_from = min(valid_from) OVER (PARTITION BY {keys})
"""


def _accepted_claims(
    con: duckdb.DuckDBPyConnection, database: str, provider: str, since: datetime | None
) -> dict[str, dict[tuple[str, str], tuple[float, ...]]]:
    """Per instance type, per (field, source URL): the stated numeric values last accepted."""
    rows = con.execute(
        f"SELECT instance_type, field, source_url, value FROM {database}.claims"
        + _SINCE_ACCEPTED.format(
            keys="instance_type, field, source_url", extra="AND basis = 'stated' AND value IS NOT NULL"
        ),
        {"p": provider, "since": since},
    ).fetchall()
    accepted: dict[str, dict[tuple[str, str], tuple[float, ...]]] = {}
    for instance_type, name, url, value in rows:
        by_field = accepted.setdefault(instance_type, {})
        by_field[(name, url)] = (*by_field.get((name, url), ()), float(value))
    return accepted


def _accepted_prices(
    con: duckdb.DuckDBPyConnection, database: str, provider: str, since: datetime | None
) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """Per (instance type, region): the cheapest (on-demand, spot) price last accepted."""
    since_accepted = _SINCE_ACCEPTED.format(keys="instance_type, region", extra="")
    rows = con.execute(
        f"""SELECT instance_type, region, min(usd_per_hour), min(spot_usd_per_hour) FROM (
                SELECT * FROM {database}.prices {since_accepted}
            ) GROUP BY instance_type, region""",
        {"p": provider, "since": since},
    ).fetchall()
    return {(name, region): (usd, spot) for name, region, usd, spot in rows}
