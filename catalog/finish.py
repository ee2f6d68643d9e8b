"""Rows finished in one place: every row of a new catalog is written to ``instances`` once, final.

Until then a row is as it was built: a fresh row as ``catalog.offers.build_offer`` made it
(``staging.instances``), a kept one (a stale provider's, or one this refresh left alone) as the last
catalog had it (``staging.kept``). ``finish_rows`` then joins, in this order:

1. the undoing of what an earlier derivation added to a kept row (``UNDONE``: a filled figure goes
   back to missing, a carried upstream fact back to unknown, their notes go), so that every row is
   derived from its sources' own figures, as a fresh row is;
2. what the measurements and the upstream rows add (``catalog.expectations``: derived from those
   rows, applied here by ``finish_row``, a pure function of a row and its ``RowChanges``);
3. the price columns, from the current prices (``catalog.pricing``).

Each row is inserted once, and the writer checks every row as inserted (``catalog.publish``) before
the new file replaces the old one. A derivation that fails leaves the rows as built (nothing undone,
nothing added). A snapshot's rows (``seed``) were finished by the refresh that made them: only their
price columns are joined again.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

import duckdb
import pyarrow as pa

from catalog import expectations
from catalog.expectations import DERIVED, NOTE, Derivation, Fill, Key
from catalog.peer_access import Peer
from catalog.pricing import PRICE_COLUMNS, PRICE_JOIN, prepare_prices
from catalog.store import KEPT, CatalogWriter, file_system_error
from normalize.units import gbits_to_gbytes
from normalize.vocab import Basis
from records.offers import Claim

log = logging.getLogger(__name__)

BUILT = "staging.built"  # every row as built, kept ones first, in the order they were staged
#: The same, with an earlier derivation's additions taken off: a temporary table (never in the file),
#: made once and read four times, where a view was bound and optimized again by each (most of each).
UNDONE = "temp.undone_rows"
FINISHED = "staging.finished"  # the rows a derivation changes, as finished (ADJUSTED columns)

#: The columns a derivation may change; the rest of a row is final when it is built.
ADJUSTED = (
    "intra_node_link",
    "intra_node_gbytes_per_s",
    "intra_node_basis",
    "missing_intra_bw",
    "scale_up_domain_gpus",
    "inter_node_fabric",
    "inter_node_gbits_per_s",
    "inter_node_gbytes_per_s",
    "inter_node_basis",
    "missing_inter_bw",
    "nic_count",
    "frontend_gbits_per_s",
    "gpu_peer_access",
    "gpu_peer_access_basis",
    "gpu_peer_access_evidence",
    "conflict",
    "notes",
)

_DERIVED = f"({', '.join(repr(b) for b in DERIVED)})"
_BUILT_SQL = f"""
CREATE VIEW {BUILT} AS
    SELECT *, 0 AS built_part, rowid AS built_row FROM {KEPT}
    UNION ALL BY NAME
    SELECT *, 1 AS built_part, rowid AS built_row FROM staging.instances
"""
_UNDONE_SQL = f"""
CREATE TEMP TABLE {UNDONE.removeprefix("temp.")} AS
SELECT * EXCLUDE (fabric_carried, nics_carried, frontend_filled, intra_derived, inter_derived) REPLACE (
    CASE WHEN fabric_carried THEN 'unknown' ELSE inter_node_fabric END AS inter_node_fabric,
    CASE WHEN nics_carried THEN NULL ELSE nic_count END AS nic_count,
    CASE WHEN frontend_filled THEN NULL ELSE frontend_gbits_per_s END AS frontend_gbits_per_s,
    CASE WHEN intra_derived THEN NULL ELSE intra_node_gbytes_per_s END AS intra_node_gbytes_per_s,
    CASE WHEN intra_derived THEN 'missing' ELSE intra_node_basis END AS intra_node_basis,
    CASE WHEN intra_derived THEN true ELSE missing_intra_bw END AS missing_intra_bw,
    CASE WHEN inter_derived THEN NULL ELSE inter_node_gbits_per_s END AS inter_node_gbits_per_s,
    CASE WHEN inter_derived THEN NULL ELSE inter_node_gbytes_per_s END AS inter_node_gbytes_per_s,
    CASE WHEN inter_derived THEN 'missing' ELSE inter_node_basis END AS inter_node_basis,
    CASE WHEN inter_derived THEN true ELSE missing_inter_bw END AS missing_inter_bw,
    CASE WHEN fabric_carried OR nics_carried OR frontend_filled OR intra_derived OR inter_derived
         THEN list_filter(notes, lambda x: NOT starts_with(x, '{NOTE}')) ELSE notes END AS notes
)
FROM (
    SELECT *,
        seller_kind <> 'cloud' AND len(list_filter(notes,
            lambda x: starts_with(x, '{NOTE}inter_node_fabric '))) > 0 AS fabric_carried,
        len(list_filter(notes,  -- carried to a resold row, or filled from a system description
            lambda x: starts_with(x, '{NOTE}nic_count '))) > 0 AS nics_carried,
        len(list_filter(notes,
            lambda x: starts_with(x, '{NOTE}frontend_gbits_per_s '))) > 0 AS frontend_filled,
        intra_node_basis IN {_DERIVED} AS intra_derived,
        inter_node_basis IN {_DERIVED} AS inter_derived
    FROM {BUILT}
)
"""


@dataclass
class RowChanges:
    """What one row's derivation changes, in the order it is applied."""

    carried: list[Claim] = field(default_factory=list)  # upstream facts (catalog.upstream)
    withdrawal: str | None = None  # the note of an inferred GPU-to-GPU figure withdrawn
    bridge: tuple[float, int, str] | None = None  # GB/s, GPUs per bridge domain, note
    peer: Peer | None = None
    fills: list[Fill] = field(default_factory=list)
    frontend: tuple[Claim, str] | None = None  # a front end from a system description, with its note
    nics: tuple[Claim, str] | None = None  # a NIC count from a system description, with its note
    notes: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def row_changes(derivation: Derivation) -> dict[Key, RowChanges]:
    """The derivation by row."""
    changes: dict[Key, RowChanges] = defaultdict(RowChanges)
    for provider, instance_type, claim in derivation.carried:
        changes[(provider, instance_type)].carried.append(claim)
    for key, note in derivation.withdrawals.items():
        changes[key].withdrawal = note
    for key, bridge in derivation.bridges.items():
        changes[key].bridge = bridge
    for key, peer in derivation.peers.items():
        changes[key].peer = peer
    for fill in derivation.fills:
        changes[(fill.provider, fill.instance_type)].fills.append(fill)
    for key, frontend in derivation.frontends.items():
        changes[key].frontend = frontend
    for key, nics in derivation.nic_counts.items():
        changes[key].nics = nics
    for key, notes in derivation.notes.items():
        changes[key].notes = list(notes)
    for key, notes in derivation.conflicts.items():
        changes[key].conflicts = list(notes)
    return dict(changes)


def finish_row(row: dict, changes: RowChanges) -> dict:
    """A row (its ADJUSTED columns, as built and undone) with its derivation applied (pure)."""
    row = {**row, "notes": list(row["notes"])}
    for claim in changes.carried:
        _carry(row, claim)
    if changes.withdrawal is not None and row["intra_node_basis"] == Basis.INFERRED.value:
        row.update(intra_node_gbytes_per_s=None, intra_node_basis=Basis.MISSING.value, missing_intra_bw=True)
        _note_once(row, changes.withdrawal)
    if changes.bridge is not None:
        gbytes, domain, note = changes.bridge
        row.update(
            intra_node_link="nvlink-bridge",
            intra_node_gbytes_per_s=gbytes,
            intra_node_basis=Basis.INFERRED.value,
            missing_intra_bw=False,
            scale_up_domain_gpus=domain,
        )
        _note_once(row, note)
    if changes.peer is not None:
        row.update(
            gpu_peer_access=changes.peer.access.value,
            gpu_peer_access_basis=changes.peer.basis.value,
            gpu_peer_access_evidence=changes.peer.evidence,
        )
    for fill in changes.fills:
        _fill(row, fill)
    if changes.frontend is not None and row["frontend_gbits_per_s"] is None:
        claim, note = changes.frontend
        row["frontend_gbits_per_s"] = float(claim.value)
        row["notes"].append(note)
    if changes.nics is not None and row["nic_count"] is None:
        claim, note = changes.nics
        row["nic_count"] = round(float(claim.value))
        row["notes"].append(note)
    for note in changes.notes:
        _note_once(row, note)
    if changes.conflicts:
        row["conflict"] = True
        for note in changes.conflicts:
            _note_once(row, note)
    return row


def _note_once(row: dict, note: str) -> None:
    if note not in row["notes"]:
        row["notes"].append(note)


def _carry(row: dict, claim: Claim) -> None:
    """One upstream fact into the resold row that lacks it (catalog.upstream), with a note."""
    shown = claim.value if isinstance(claim.value, str) else f"{claim.value:g}"
    note = f"{NOTE}{claim.field} {shown} {claim.qualifiers}"
    if claim.field == "inter_node_fabric":
        row["inter_node_fabric"] = claim.value
    elif claim.field == "nic_count":
        row["nic_count"] = round(float(claim.value))
    elif row["inter_node_basis"] == Basis.MISSING.value:
        gbits = float(claim.value)
        row.update(
            inter_node_gbits_per_s=gbits,
            inter_node_gbytes_per_s=gbits_to_gbytes(gbits),
            inter_node_basis=Basis.UPSTREAM.value,
            missing_inter_bw=False,
        )
    else:
        return
    row["notes"].append(note)


def _fill(row: dict, fill: Fill) -> None:
    """A missing figure filled from a derived claim, with its note."""
    value, basis = float(fill.claim.value), fill.claim.basis.value
    if fill.claim.field == "intra_node_gbytes_per_s":
        if row["intra_node_basis"] != Basis.MISSING.value:
            return
        row.update(intra_node_gbytes_per_s=value, intra_node_basis=basis, missing_intra_bw=False)
    else:
        if row["inter_node_basis"] != Basis.MISSING.value:
            return
        row.update(
            inter_node_gbits_per_s=value,
            inter_node_gbytes_per_s=gbits_to_gbytes(value),
            inter_node_basis=basis,
            missing_inter_bw=False,
        )
    row["notes"].append(fill.note)


def finish_rows(writer: CatalogWriter, now: datetime, *, derive: bool = True) -> None:
    """Insert every row the writer staged or kept into ``instances``, finished: undone, derived as of
    ``now``, priced (see the module docstring); without ``derive`` (a snapshot's finished rows) only
    priced. Once, after every source is written."""
    writer.write_staged()
    _insert_finished(writer.con, now, derive=derive)
    writer.rows_finished()


def _insert_finished(con: duckdb.DuckDBPyConnection, now: datetime, *, derive: bool) -> None:
    con.execute(_BUILT_SQL)
    source = BUILT
    derivation = None
    if derive:
        con.execute(_UNDONE_SQL)
        derivation = _derived(con, now)
    con.execute("BEGIN TRANSACTION")  # a commit per statement was most of writing the prices' tables
    prepare_prices(con, BUILT)
    if derivation is not None:
        source = UNDONE
    replaced = [f"{expr} AS {name}" for name, expr in PRICE_COLUMNS.items()]
    joins = PRICE_JOIN
    if derivation is not None:
        replaced += [f"CASE WHEN f.provider IS NULL THEN r.{c} ELSE f.{c} END AS {c}" for c in ADJUSTED]
        joins += f" LEFT JOIN {FINISHED} f ON f.provider = r.provider AND f.instance_type = r.instance_type"
    con.execute(
        f"""INSERT INTO instances BY NAME
            SELECT r.* EXCLUDE (built_part, built_row) REPLACE ({", ".join(replaced)})
            FROM {source} r {joins}
            ORDER BY r.built_part, r.built_row"""
    )
    con.execute(f"DROP TABLE IF EXISTS {UNDONE}")
    con.execute("COMMIT")


def _derived(con: duckdb.DuckDBPyConnection, now: datetime) -> Derivation | None:
    """Derive (catalog.expectations), record the derived claims and the rows it changes (FINISHED), all
    or nothing. A failure is logged and undone: None, and the rows stay as built."""
    con.execute("BEGIN TRANSACTION")
    try:
        derivation = expectations.apply(con, now, UNDONE)
        _write_finished(con, derivation)
    except Exception as exc:  # a bug here must not cost the refresh: undo, log the traceback, go on
        con.execute("ROLLBACK")
        if file_system_error(exc):  # a full disk is not a bug: the writer says so in one line
            raise
        log.exception("deriving from measurements failed; rows keep their sources' figures")
        return None
    con.execute("COMMIT")  # a full disk fails here (the WAL): the writer turns it into one line
    return derivation


def _write_finished(con: duckdb.DuckDBPyConnection, derivation: Derivation) -> None:
    """The rows the derivation changes, finished, into FINISHED (the ADJUSTED columns and the key)."""
    columns = ("provider", "instance_type", *ADJUSTED)
    con.execute(f"CREATE TABLE {FINISHED} AS SELECT {', '.join(columns)} FROM {UNDONE} LIMIT 0")
    changes = row_changes(derivation)
    if not changes:
        return
    keys = pa.table({"provider": [k[0] for k in changes], "instance_type": [k[1] for k in changes]})
    con.register("changed_keys", keys)
    cursor = con.execute(
        f"SELECT {', '.join(f'u.{c}' for c in columns)} FROM {UNDONE} u "
        "JOIN changed_keys k ON k.provider = u.provider AND k.instance_type = u.instance_type"
    )
    rows = [dict(zip(columns, values, strict=True)) for values in cursor.fetchall()]
    con.unregister("changed_keys")
    finished = [finish_row(row, changes[(row["provider"], row["instance_type"])]) for row in rows]
    schema = con.sql(f"SELECT * FROM {FINISHED}").to_arrow_table().schema
    con.register("finished_rows", pa.Table.from_pylist(finished, schema=schema))
    con.execute(f"INSERT INTO {FINISHED} SELECT * FROM finished_rows")
    con.unregister("finished_rows")
