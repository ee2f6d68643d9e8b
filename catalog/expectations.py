"""What the measurements add to the catalog's rows, derived on a new catalog once every source is
written and joined into the rows when they are finished (``catalog.finish``).

Claims, expectations and measurements never overwrite each other; two things cross over, each as a
claim row with its basis, the source's own text and URL, so provenance holds:

- A provider's expected fabric: the RDMA ports its own health check or topology file expects
  (``ib_port_gbits_per_s`` x ``port_count``, the largest group of one rate; conditional groups are
  left out) is a claim of ``inter_node_gbits_per_s`` with basis ``expected``. Where it disagrees
  with the page's figure it is a conflict like any other (``claim_conflicts``, the row's
  ``conflict``); where the page states none, the row takes it, marked ``expected``.
- A measured two-way GPU-to-GPU copy total fills a missing ``intra_node_gbytes_per_s`` (never a
  stated or inferred one), marked ``measured``: one-way and per-direction readings never do, they
  are not the bidirectional figure the column holds.
- An NVLink bridge the provider's health check expects: a conf that runs ``check_nvlink_status`` on a
  size of two or more bridgeable cards (A100 PCIe, H100 NVL: ``pcie-or-nvlink-bridge`` in the GPU
  table) whose page names no link makes the link ``nvlink-bridge`` (a claim with basis ``expected``
  quoting the check) and the GB/s the datasheet's bridge figure (inferred from that link).
- What GPUs report of themselves and clouds' MLPerf system descriptions state (``catalog.system_facts``):
  a measured product name is a ``gpu_model`` claim, a system description's fabric, NVSwitch and
  per-GPU NVLink figure are claims with basis ``expected`` (a disagreeing row is flagged conflict),
  and its front-end NIC fills a row that states no front end.
- GPU peer access (``catalog.peer_access``): a measured copy makes ``gpu_peer_access`` yes, a run
  that waived every device-to-device test no, basis ``measured`` with the reading as evidence; and an
  inferred GPU-to-GPU figure the readings contradict (no peer access, or more than twice what was
  measured) is withdrawn to missing, with a note naming the reading. A stated figure is never touched.

``derive`` is the pure part: rows as their sources built them (an earlier fill undone) and readings
in, claims, fills, conflicts, peers, bridges and withdrawals out. ``apply`` runs it on the catalog
and records the derived claims, idempotently: one identical to a current claim keeps its
``valid_from``, one no longer derived is closed. ``catalog.finish`` writes what it changes in a row.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import pandas as pd

from catalog import peer_access, system_facts, upstream
from catalog.peer_access import Peer
from catalog.store import CLAIM_COLUMNS, CLAIM_IDENTITY, claim_row, row_table
from catalog.validate import measured_against_datasheet, reading_problem
from normalize.gpus import BY_ID, PCIE_OR_BRIDGE
from normalize.vocab import Basis, PeerAccess
from records.measurements import CONDITIONAL
from records.offers import Claim

log = logging.getLogger(__name__)

DERIVED = (Basis.EXPECTED.value, Basis.MEASURED.value, Basis.UPSTREAM.value)
NOTE = "from measurements: "  # prefix of the notes a fill adds (removed when it is undone)

Key = tuple[str, str]
Reading = dict[str, Any]

#: The columns of a row ``derive`` reads.
ROW_COLUMNS = (
    "provider",
    "instance_type",
    "gpu_model",
    "intra_node_link",
    "intra_node_basis",
    "intra_node_gbytes_per_s",
    "inter_node_basis",
    "inter_node_gbits_per_s",
    "inter_node_fabric",
    "frontend_gbits_per_s",
    "nic_count",
    "notes",
)
_FRONTEND_SOURCES = ", ".join(f"'{source}'" for source in system_facts.FRONTEND_SOURCES)
#: The readings a claim can come from (expected port rates and NVLink checks, measured GPU-pair
#: copies and peer status, GPUs' product names, system descriptions' fabric, links and front-end
#: NICs), selected in SQL once: most of the table is other metrics.
RELEVANT_SQL = f"""
SELECT * FROM measurements
WHERE provider IS NOT NULL AND (
    (kind = 'expected' AND metric IN ('ib_port_gbits_per_s', 'nvlink_status'))
    OR (kind = 'measured' AND metric IN
        ('gpu_to_gpu_gbytes_per_s', 'gpu_to_gpu_each_way_gbytes_per_s', 'gpu_p2p_status'))
    OR metric IN ('gpu_product_name', 'node_fabric', 'gpu_interconnect', 'gpu_nvlink_gbytes_per_s')
    OR (metric = 'nic_gbits_per_s' AND source IN ({_FRONTEND_SOURCES})))
ORDER BY rowid
"""


@dataclass(frozen=True)
class Fill:
    """A missing figure of one row, filled from a derived claim."""

    provider: str
    instance_type: str
    claim: Claim
    note: str


@dataclass
class Derivation:
    """The derived claims (provider, instance type, claim, fetched_at), fills, conflicts, peer access,
    expected bridges, withdrawn figures, and the upstream facts a resold row carries (``carried``)."""

    claims: list[tuple[str, str, Claim, datetime | None]] = field(default_factory=list)
    fills: list[Fill] = field(default_factory=list)
    conflicts: dict[Key, list[str]] = field(default_factory=dict)
    peers: dict[Key, Peer] = field(default_factory=dict)
    bridges: dict[Key, tuple[float, int, str]] = field(default_factory=dict)
    withdrawals: dict[Key, str] = field(default_factory=dict)
    carried: list[tuple[str, str, Claim]] = field(default_factory=list)
    notes: dict[Key, list[str]] = field(default_factory=dict)
    frontends: dict[Key, tuple[Claim, str]] = field(default_factory=dict)
    nic_counts: dict[Key, tuple[Claim, str]] = field(default_factory=dict)

    def keys(self) -> set[Key]:
        """The rows this derivation changes."""
        return (
            {(f.provider, f.instance_type) for f in self.fills}
            | {(p, i) for p, i, _ in self.carried}
            | set(self.conflicts)
            | set(self.peers)
            | set(self.bridges)
            | set(self.withdrawals)
            | set(self.notes)
            | set(self.frontends)
            | set(self.nic_counts)
        )


def derive(rows: list[dict], measurements: list[Reading]) -> Derivation:
    """Derived claims, fills and conflicts for the catalog rows the measurements are about (pure).
    ``rows`` as their sources built them (no earlier fill), ``measurements`` in table order."""
    by_key = {(r["provider"], r["instance_type"]): r for r in rows}
    groups: dict[Key, list[Reading]] = defaultdict(list)
    for reading in measurements:
        if _within_bounds(reading) and reading["instance_type"] is not None:
            groups[(str(reading["provider"]), str(reading["instance_type"]))].append(reading)
    derivation = Derivation()
    for key in sorted(groups):
        row = by_key.get(key)
        if row is None:
            continue  # unmatched: kept in measurements, listed by the read side
        group = groups[key]
        measured = peer_access.from_measurements(group, row)
        if measured.peer is not None:
            derivation.peers[key] = measured.peer
        if measured.withdraw_note is not None:
            derivation.withdrawals[key] = NOTE + measured.withdraw_note
            row = {**row, "intra_node_basis": Basis.MISSING.value}
        bridge = _bridge(group, row)
        if bridge is not None:
            claim, fetched, figures = bridge
            derivation.claims.append((*key, claim, fetched))
            derivation.bridges[key] = figures
            row = {**row, "intra_node_basis": Basis.INFERRED.value}
            evidence = f"{claim.quote.strip()} ({claim.context}, {claim.source_url})"
            derivation.peers.setdefault(key, Peer(PeerAccess.YES, Basis.EXPECTED, evidence))
        metrics = {r["metric"] for r in group}
        fabric = _fabric_claims(group) if "ib_port_gbits_per_s" in metrics else []
        intra = _intra_claims(group, row) if "gpu_to_gpu_gbytes_per_s" in metrics else []
        for claim, fetched in fabric + intra:
            derivation.claims.append((*key, claim, fetched))
        _fills_and_conflicts(derivation, key, row)
        _system_facts(derivation, key, group, row)
    return derivation


def _system_facts(derivation: Derivation, key: Key, group: list[Reading], row: dict) -> None:
    facts = system_facts.row_facts(group, row)
    derivation.claims += [(*key, claim, _when(fetched)) for claim, fetched in facts.claims]
    if facts.notes:
        derivation.notes[key] = facts.notes
    if facts.conflicts:
        derivation.conflicts.setdefault(key, []).extend(facts.conflicts)
    if facts.frontend is not None:
        derivation.frontends[key] = facts.frontend
    if facts.nics is not None:
        derivation.nic_counts[key] = facts.nics


def _within_bounds(reading: Reading) -> bool:
    """Whether a reading passes the physical gate a page's figure must pass (catalog.validate); one
    that does not never becomes a claim or a fill, whichever source stored it."""
    value = float(reading["value"]) if _known(reading["value"]) else None
    ports = float(reading["port_count"]) if _known(reading.get("port_count")) else None
    problem = reading_problem(str(reading["metric"]), value, ports)
    if problem is not None:
        log.warning("%s %s: not derived from: %s", reading["source"], reading["locator"], problem)
    return problem is None


def _first(readings: list[Reading], *columns: str, descending: tuple[str, ...] = ()) -> Reading:
    """The first reading ordered by ``columns`` (those in ``descending`` from the largest), a missing
    value last either way, ties in table order (a stable sort, as pandas' multi-column sort_values)."""
    ordered = list(readings)
    for column in reversed(columns):
        known = [r for r in ordered if _known(r.get(column))]
        unknown = [r for r in ordered if not _known(r.get(column))]
        ordered = sorted(known, key=lambda r: r[column], reverse=column in descending) + unknown
    return ordered[0]


def _bridge(group: list[Reading], row: dict) -> tuple[Claim, datetime | None, tuple[float, int, str]] | None:
    """The NVLink bridge a health check expects on a bridgeable card whose page names no link: the
    expected link claim, and (GB/s per GPU from the datasheet, GPUs per bridge domain, row note)."""
    spec = BY_ID.get(str(row.get("gpu_model")))
    if (
        spec is None
        or spec.link != PCIE_OR_BRIDGE
        or row.get("intra_node_link") not in ("unknown", "nvlink-bridge")
    ):
        return None
    if row.get("intra_node_basis") not in (Basis.MISSING.value, Basis.INFERRED.value):
        return None
    checks = [r for r in group if r["metric"] == "nvlink_status" and r["value_text"] == "active"]
    if not checks or spec.link_gbytes_per_s is None:
        return None
    check = _first(checks, "source_url", "locator")
    claim = Claim(
        field="intra_node_link",
        value="nvlink-bridge",
        quote=check["quote"],
        source_url=check["source_url"],
        context=f"{check['tool']} › {check['locator']}",
        basis=Basis.EXPECTED,
        qualifiers="the provider's health check fails a node whose NVLinks are not all active",
    )
    domain = int(min(spec.scale_up_domain_gpus or 2, 2))
    note = (
        f"{NOTE}intra_node_link nvlink-bridge expected ({check['tool']}, {check['source_url']} "
        f"{check['locator']}); {spec.link_gbytes_per_s:g} GB/s inferred from the {spec.id} bridge"
    )
    return claim, _when(check.get("fetched_at")), (float(spec.link_gbytes_per_s), domain, note)


def _fabric_claims(group: list[Reading]) -> list[tuple[Claim, datetime | None]]:
    ports = [
        r
        for r in group
        if r["kind"] == "expected"
        and r["metric"] == "ib_port_gbits_per_s"
        and not (r["notes"] or "").startswith(CONDITIONAL)
    ]
    documents: dict[str, list[Reading]] = defaultdict(list)
    for reading in ports:
        documents[str(reading["source_url"])].append(reading)
    claims = []
    for url in sorted(documents):
        document = documents[url]
        main = _first(document, "port_count", "value", descending=("port_count", "value"))
        count = int(main["port_count"]) if _known(main["port_count"]) else 1
        others = [f"{int(r['port_count'])} x {r['value']:g}" for r in document if r is not main]
        qualifiers = f"{count} x {main['value']:g} Gbit/s expected ({main['tool']})"
        if others:
            qualifiers += "; also checked: " + ", ".join(f"{o} Gbit/s" for o in others)
        claim = Claim(
            field="inter_node_gbits_per_s",
            value=float(main["value"]) * count,
            quote=main["quote"],
            source_url=url,
            context=f"{main['tool']} › {main['locator']}",
            basis=Basis.EXPECTED,
            qualifiers=qualifiers,
        )
        claims.append((claim, _when(main.get("fetched_at"))))
    return claims


def _intra_claims(group: list[Reading], row: dict) -> list[tuple[Claim, datetime | None]]:
    if row["intra_node_basis"] != Basis.MISSING.value:
        return []
    model = row.get("gpu_model")
    totals = [
        r
        for r in group
        if r["kind"] == "measured"
        and r["metric"] == "gpu_to_gpu_gbytes_per_s"
        and r["direction"] == "two-way"
        and measured_against_datasheet(model, float(r["value"])) is None
    ]
    if not totals:
        return []
    best = _first(totals, "value", "source_url", "locator", descending=("value",))
    version = f" {best['tool_version']}" if _known(best["tool_version"]) else ""
    claim = Claim(
        field="intra_node_gbytes_per_s",
        value=float(best["value"]),
        quote=best["quote"],
        source_url=best["source_url"],
        context=f"{best['tool']}{version} › {best['locator']}",
        basis=Basis.MEASURED,
        qualifiers="measured two-way copy between one GPU pair (both directions together)",
    )
    return [(claim, _when(best.get("fetched_at")))]


def _fills_and_conflicts(derivation: Derivation, key: tuple[str, str], row: dict) -> None:
    for provider, instance_type, claim, _ in [c for c in derivation.claims if (c[0], c[1]) == key]:
        if claim.field == "intra_node_link":
            continue  # an expected bridge: written with its figure (Derivation.bridges)
        if claim.field == "intra_node_gbytes_per_s":
            note = f"{NOTE}intra_node_gbytes_per_s {claim.value:g} measured ({claim.context})"
            derivation.fills.append(Fill(provider, instance_type, claim, note))
        elif row["inter_node_basis"] in (Basis.MISSING.value, Basis.EXPECTED.value):
            if not any(
                f.claim.field == claim.field for f in derivation.fills if (f.provider, f.instance_type) == key
            ):
                note = f"{NOTE}inter_node_gbits_per_s {claim.value:g} expected: {claim.qualifiers}"
                derivation.fills.append(Fill(provider, instance_type, claim, note))
        elif not math.isclose(float(claim.value), row["inter_node_gbits_per_s"], rel_tol=1e-6):
            derivation.conflicts.setdefault(key, []).append(
                f"conflicting claims for inter_node_gbits_per_s: {row['inter_node_gbits_per_s']:g} "
                f"({row['inter_node_basis']}) vs {claim.value:g} (expected: {claim.qualifiers})"
            )


def _known(value: Any) -> bool:
    return value is not None and not pd.isna(value)


def _when(value: Any) -> datetime | None:
    return pd.Timestamp(value).to_pydatetime() if _known(value) else None


def apply(con: duckdb.DuckDBPyConnection, now: datetime, rows: str = "instances") -> Derivation:
    """Derive from the catalog's measurements, for the rows of ``rows`` (a table or view of the rows
    as their sources built them), and record the derived claims. The rows themselves are not written
    here: ``catalog.finish`` joins the derivation into them, in the same transaction."""
    about = (
        f"SELECT {', '.join(ROW_COLUMNS)} FROM {rows} r WHERE EXISTS (SELECT 1 FROM measurements m "
        "WHERE m.provider = r.provider AND m.instance_type = r.instance_type)"
    )
    derivation = derive(_records(con, about), _records(con, RELEVANT_SQL))
    carried = upstream.carried_claims(_records(con, upstream.resold_sql(rows)))
    derivation.claims += [(p, i, c, _when(f)) for p, i, c, f in carried]
    derivation.carried = [(p, i, c) for p, i, c, _ in carried]
    _sync_claims(con, derivation, now)
    return derivation


def _records(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def _sync_claims(con: duckdb.DuckDBPyConnection, derivation: Derivation, now: datetime) -> None:
    rows = [claim_row(p, i, c, fetched, now) for p, i, c, fetched in derivation.claims]
    frame = row_table(rows, CLAIM_COLUMNS)  # scanned three times below: Arrow, read in place
    same = " AND ".join(f"d.{c} IS NOT DISTINCT FROM claims.{c}" for c in CLAIM_IDENTITY)
    derived = f"basis IN {DERIVED}"
    con.register("derived", frame)
    # Every statement below joins the claims to the derived ones on their identity, basis included,
    # and only claims of a derived basis can match: a catalog built from nothing has none yet (the
    # three joins over its 4,000 claims were most of this step), and nothing to update; when every
    # new claim is of a derived basis too, none can match a stored one and all are inserted as they are.
    [(any_derived,)] = con.execute(f"SELECT EXISTS (SELECT 1 FROM claims WHERE {derived})").fetchall()
    if not any_derived and all(row["basis"] in DERIVED for row in rows):
        con.execute("INSERT INTO claims BY NAME SELECT * FROM derived")
        con.unregister("derived")
        return
    if any_derived:
        con.execute(
            f"UPDATE claims SET valid_to = NULL WHERE valid_to = $now AND {derived} "
            f"AND EXISTS (SELECT 1 FROM derived d WHERE {same})",
            {"now": now},
        )
        con.execute(
            f"UPDATE claims SET valid_to = $now WHERE valid_to IS NULL AND {derived} "
            f"AND NOT EXISTS (SELECT 1 FROM derived d WHERE {same})",
            {"now": now},
        )
    con.execute(
        "INSERT INTO claims BY NAME SELECT * FROM derived d WHERE NOT EXISTS "
        f"(SELECT 1 FROM claims WHERE claims.valid_to IS NULL AND {same})"
    )
    con.unregister("derived")
