"""What the measurements add to the catalog's rows, run on a new catalog once every source is written.

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

``apply`` is idempotent: derived claims identical to current ones keep their ``valid_from``, ones
no longer derived are closed, and a row filled earlier whose figure is no longer derived goes back
to missing. ``derive`` is the pure part.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import pandas as pd

from catalog import peer_access, system_facts, upstream
from catalog.peer_access import Peer
from catalog.store import CLAIM_COLUMNS, CLAIM_IDENTITY, claim_row, file_system_error
from catalog.validate import measured_against_datasheet, reading_problem
from normalize.gpus import BY_ID, PCIE_OR_BRIDGE
from normalize.units import gbits_to_gbytes
from normalize.vocab import Basis, PeerAccess
from records.measurements import CONDITIONAL
from records.offers import Claim

log = logging.getLogger(__name__)

DERIVED = (Basis.EXPECTED.value, Basis.MEASURED.value, Basis.UPSTREAM.value)
NOTE = "from measurements: "  # prefix of the notes a fill adds (removed when it is undone)


@dataclass(frozen=True)
class Fill:
    """A missing figure of one row, filled from a derived claim."""

    provider: str
    instance_type: str
    claim: Claim
    note: str


@dataclass
class Derivation:
    """The derived claims (provider, instance type, claim, fetched_at), fills and conflicts."""

    claims: list[tuple[str, str, Claim, datetime | None]] = field(default_factory=list)
    fills: list[Fill] = field(default_factory=list)
    conflicts: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    peers: dict[tuple[str, str], Peer] = field(default_factory=dict)
    bridges: dict[tuple[str, str], tuple[float, int, str]] = field(default_factory=dict)
    withdrawals: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    frontends: dict[tuple[str, str], tuple[Claim, str]] = field(default_factory=dict)
    nic_counts: dict[tuple[str, str], tuple[Claim, str]] = field(default_factory=dict)


def derive(instances: pd.DataFrame, measurements: pd.DataFrame) -> Derivation:
    """Derived claims, fills and conflicts for the catalog rows the measurements are about (pure)."""
    rows = {(r["provider"], r["instance_type"]): r for r in instances.to_dict("records")}
    derivation = Derivation()
    for (provider, instance_type), group in _relevant(measurements).groupby(
        ["provider", "instance_type"], sort=True
    ):
        key = (str(provider), str(instance_type))
        row = rows.get(key)
        if row is None:
            continue  # unmatched: kept in measurements, listed by the read side
        measured = peer_access.from_measurements(group.to_dict("records"), row)
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
        metrics = set(group["metric"])  # most groups hold copies only: skip the pandas work they need not
        fabric = _fabric_claims(group) if "ib_port_gbits_per_s" in metrics else []
        intra = _intra_claims(group, row) if "gpu_to_gpu_gbytes_per_s" in metrics else []
        for claim, fetched in fabric + intra:
            derivation.claims.append((*key, claim, fetched))
        _fills_and_conflicts(derivation, key, row)
        _system_facts(derivation, key, group, row)
    return derivation


def _system_facts(derivation: Derivation, key: tuple[str, str], group: pd.DataFrame, row: dict) -> None:
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


def _relevant(measurements: pd.DataFrame) -> pd.DataFrame:
    """The readings a claim can come from (expected port rates, measured GPU-pair copies and peer
    status), selected once rather than per instance: most of the table is other metrics."""
    ports = (measurements["kind"] == "expected") & (measurements["metric"] == "ib_port_gbits_per_s")
    peer_metrics = ("gpu_to_gpu_gbytes_per_s", "gpu_to_gpu_each_way_gbytes_per_s", "gpu_p2p_status")
    copies = (measurements["kind"] == "measured") & measurements["metric"].isin(peer_metrics)
    links = (measurements["kind"] == "expected") & (measurements["metric"] == "nvlink_status")
    described = measurements["metric"].isin(
        ("gpu_product_name", "node_fabric", "gpu_interconnect", "gpu_nvlink_gbytes_per_s")
    ) | (
        (measurements["metric"] == "nic_gbits_per_s")
        & measurements["source"].isin(system_facts.FRONTEND_SOURCES)
    )
    relevant = measurements[ports | copies | links | described]
    keep = [_within_bounds(r) for r in relevant.to_dict("records")]
    return relevant[pd.Series(keep, index=relevant.index, dtype=bool)]


def _within_bounds(reading: dict) -> bool:
    """Whether a reading passes the physical gate a page's figure must pass (catalog.validate); one
    that does not never becomes a claim or a fill, whichever source stored it."""
    value = float(reading["value"]) if _known(reading["value"]) else None
    ports = float(reading["port_count"]) if _known(reading.get("port_count")) else None
    problem = reading_problem(str(reading["metric"]), value, ports)
    if problem is not None:
        log.warning("%s %s: not derived from: %s", reading["source"], reading["locator"], problem)
    return problem is None


def _bridge(group: pd.DataFrame, row: dict) -> tuple[Claim, datetime | None, tuple[float, int, str]] | None:
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
    checks = group[(group["metric"] == "nvlink_status") & (group["value_text"] == "active")]
    if checks.empty or spec.link_gbytes_per_s is None:
        return None
    check = checks.sort_values(["source_url", "locator"]).iloc[0]
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


def _fabric_claims(group: pd.DataFrame) -> list[tuple[Claim, datetime | None]]:
    ports = group[(group["kind"] == "expected") & (group["metric"] == "ib_port_gbits_per_s")]
    ports = ports[~ports["notes"].fillna("").str.startswith(CONDITIONAL)]
    claims = []
    for url, document in ports.groupby("source_url", sort=True):
        main = document.sort_values(["port_count", "value"], ascending=False).iloc[0]
        count = int(main["port_count"]) if _known(main["port_count"]) else 1
        others = [
            f"{int(ports)} x {value:g}"
            for index, ports, value in zip(
                document.index, document["port_count"], document["value"], strict=True
            )
            if index != main.name
        ]
        qualifiers = f"{count} x {main['value']:g} Gbit/s expected ({main['tool']})"
        if others:
            qualifiers += "; also checked: " + ", ".join(f"{o} Gbit/s" for o in others)
        claim = Claim(
            field="inter_node_gbits_per_s",
            value=float(main["value"]) * count,
            quote=main["quote"],
            source_url=str(url),
            context=f"{main['tool']} › {main['locator']}",
            basis=Basis.EXPECTED,
            qualifiers=qualifiers,
        )
        claims.append((claim, _when(main.get("fetched_at"))))
    return claims


def _intra_claims(group: pd.DataFrame, row: dict) -> list[tuple[Claim, datetime | None]]:
    if row["intra_node_basis"] != Basis.MISSING.value:
        return []
    totals = group[
        (group["kind"] == "measured")
        & (group["metric"] == "gpu_to_gpu_gbytes_per_s")
        & (group["direction"] == "two-way")
    ]
    model = row.get("gpu_model")
    plausible = [measured_against_datasheet(model, float(v)) is None for v in totals["value"]]
    totals = totals[pd.Series(plausible, index=totals.index, dtype=bool)]
    if totals.empty:
        return []
    best = totals.sort_values(["value", "source_url", "locator"], ascending=[False, True, True]).iloc[0]
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


def apply(con: duckdb.DuckDBPyConnection, now: datetime) -> Derivation | None:
    """Derive from the catalog's measurements and write claims, fills and conflict flags, all or
    nothing. A failure is logged and undone: the rows keep their sources' own figures (None)."""
    con.execute("BEGIN TRANSACTION")
    try:
        derivation = _apply(con, now)
    except Exception as exc:  # a bug here must not cost the refresh: undo, log the traceback, go on
        con.execute("ROLLBACK")
        if file_system_error(exc):  # a full disk is not a bug: the writer says so in one line
            raise
        log.exception("deriving from measurements failed; rows keep their sources' figures")
        return None
    con.execute("COMMIT")  # a full disk fails here (the WAL): the writer turns it into one line
    return derivation


def _apply(con: duckdb.DuckDBPyConnection, now: datetime) -> Derivation:
    instances = con.execute(
        "SELECT provider, instance_type, gpu_model, intra_node_link, intra_node_basis, "
        "intra_node_gbytes_per_s, inter_node_fabric, frontend_gbits_per_s, nic_count, notes, "
        "inter_node_basis, inter_node_gbits_per_s FROM instances"
    ).df()
    measurements = con.execute("SELECT * FROM measurements WHERE provider IS NOT NULL").df()
    derivation = derive(_undone(instances), measurements)
    _undo_fills(con)
    carried = upstream.carried_claims(con.execute(upstream.RESOLD_SQL).df())
    derivation.claims += [(p, i, c, _when(f)) for p, i, c, f in carried]
    _sync_claims(con, derivation, now)
    for provider, instance_type, claim, _ in carried:
        _carry(con, provider, instance_type, claim)
    for (provider, instance_type), note in derivation.withdrawals.items():
        con.execute(
            """UPDATE instances SET intra_node_gbytes_per_s = NULL, intra_node_basis = 'missing',
                   missing_intra_bw = true,
                   notes = CASE WHEN list_contains(notes, $note) THEN notes
                                ELSE list_append(notes, $note) END
               WHERE provider = $p AND instance_type = $i AND intra_node_basis = 'inferred'""",
            {"note": note, "p": provider, "i": instance_type},
        )
    for (provider, instance_type), (gbytes, domain, note) in derivation.bridges.items():
        con.execute(
            """UPDATE instances SET intra_node_link = 'nvlink-bridge', intra_node_gbytes_per_s = $g,
                   intra_node_basis = 'inferred', missing_intra_bw = false, scale_up_domain_gpus = $d,
                   notes = CASE WHEN list_contains(notes, $note) THEN notes
                                ELSE list_append(notes, $note) END
               WHERE provider = $p AND instance_type = $i""",
            {"g": gbytes, "d": domain, "note": note, "p": provider, "i": instance_type},
        )
    for (provider, instance_type), peer in derivation.peers.items():
        con.execute(
            """UPDATE instances SET gpu_peer_access = $a, gpu_peer_access_basis = $b,
                   gpu_peer_access_evidence = $e WHERE provider = $p AND instance_type = $i""",
            {
                "a": peer.access.value,
                "b": peer.basis.value,
                "e": peer.evidence,
                "p": provider,
                "i": instance_type,
            },
        )
    for fill in derivation.fills:
        _fill(con, fill)
    for (provider, instance_type), (claim, note) in derivation.frontends.items():
        con.execute(
            """UPDATE instances SET frontend_gbits_per_s = $v, notes = list_append(notes, $note)
               WHERE provider = $p AND instance_type = $i AND frontend_gbits_per_s IS NULL""",
            {"v": float(claim.value), "note": note, "p": provider, "i": instance_type},
        )
    for (provider, instance_type), (claim, note) in derivation.nic_counts.items():
        con.execute(
            """UPDATE instances SET nic_count = CAST($v AS INTEGER), notes = list_append(notes, $note)
               WHERE provider = $p AND instance_type = $i AND nic_count IS NULL""",
            {"v": float(claim.value), "note": note, "p": provider, "i": instance_type},
        )
    for (provider, instance_type), notes in derivation.notes.items():
        for note in notes:
            _add_note(con, provider, instance_type, note)
    for (provider, instance_type), notes in derivation.conflicts.items():
        con.execute(
            "UPDATE instances SET conflict = true WHERE provider = $p AND instance_type = $i",
            {"p": provider, "i": instance_type},
        )
        for note in notes:
            _add_note(con, provider, instance_type, note)
    return derivation


def _add_note(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str, note: str) -> None:
    con.execute(
        """UPDATE instances SET notes = CASE WHEN list_contains(notes, $note) THEN notes
                                             ELSE list_append(notes, $note) END
           WHERE provider = $p AND instance_type = $i""",
        {"note": note, "p": provider, "i": instance_type},
    )


def _undone(instances: pd.DataFrame) -> pd.DataFrame:
    """The rows as their sources gave them: a basis from an earlier fill reads as missing."""
    undone = instances.copy()
    for column in ("intra_node_basis", "inter_node_basis"):
        undone.loc[undone[column].isin(DERIVED), column] = Basis.MISSING.value
    if "notes" in undone:
        for column in ("frontend_gbits_per_s", "nic_count"):
            filled = [_noted(notes, f"{NOTE}{column} ") for notes in undone["notes"]]
            undone.loc[pd.Series(filled, index=undone.index, dtype=bool), column] = None
    return undone


def _noted(notes: Any, prefix: str) -> bool:
    return (
        notes is not None and not isinstance(notes, float) and any(str(n).startswith(prefix) for n in notes)
    )


def _sync_claims(con: duckdb.DuckDBPyConnection, derivation: Derivation, now: datetime) -> None:
    rows = [claim_row(p, i, c, fetched, now) for p, i, c, fetched in derivation.claims]
    frame = pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))
    same = " AND ".join(f"d.{c} IS NOT DISTINCT FROM claims.{c}" for c in CLAIM_IDENTITY)
    derived = f"basis IN {DERIVED}"
    con.register("derived", frame)
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


def _carry(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str, claim: Claim) -> None:
    """One upstream fact into the resold row that lacks it (catalog.upstream), with a note."""
    shown = claim.value if isinstance(claim.value, str) else f"{claim.value:g}"
    note = f"{NOTE}{claim.field} {shown} {claim.qualifiers}"
    params = {"p": provider, "i": instance_type, "note": note, "v": claim.value}
    notes = "list_append(notes, $note)"
    where = "WHERE provider = $p AND instance_type = $i"
    if claim.field == "inter_node_fabric":
        con.execute(f"UPDATE instances SET inter_node_fabric = $v, notes = {notes} {where}", params)
    elif claim.field == "nic_count":
        con.execute(f"UPDATE instances SET nic_count = CAST($v AS INTEGER), notes = {notes} {where}", params)
    else:
        con.execute(
            f"""UPDATE instances SET inter_node_gbits_per_s = $v, inter_node_gbytes_per_s = $gb,
                   inter_node_basis = 'upstream', missing_inter_bw = false, notes = {notes}
                {where} AND inter_node_basis = 'missing'""",
            {**params, "gb": gbits_to_gbytes(float(claim.value))},
        )


def _undo_fills(con: duckdb.DuckDBPyConnection) -> None:
    """Rows filled by an earlier derivation go back to missing before this one fills them again."""
    notes = f"list_filter(notes, lambda x: NOT starts_with(x, '{NOTE}'))"
    con.execute(
        f"""UPDATE instances SET inter_node_fabric = 'unknown', notes = {notes}
            WHERE {_has_note(NOTE + "inter_node_fabric ")} AND seller_kind <> 'cloud'"""
    )
    con.execute(  # carried to a resold row (catalog.upstream) or filled from a system description
        f"""UPDATE instances SET nic_count = NULL, notes = {notes} WHERE {_has_note(NOTE + "nic_count ")}"""
    )
    con.execute(
        f"""UPDATE instances SET frontend_gbits_per_s = NULL, notes = {notes}
            WHERE {_has_note(NOTE + "frontend_gbits_per_s ")}"""
    )
    con.execute(
        f"""UPDATE instances SET intra_node_gbytes_per_s = NULL, intra_node_basis = 'missing',
                   missing_intra_bw = true, notes = {notes}
            WHERE intra_node_basis IN {DERIVED}"""
    )
    con.execute(
        f"""UPDATE instances SET inter_node_gbits_per_s = NULL, inter_node_gbytes_per_s = NULL,
                   inter_node_basis = 'missing', missing_inter_bw = true, notes = {notes}
            WHERE inter_node_basis IN {DERIVED}"""
    )


def _has_note(prefix: str) -> str:
    """SQL that is true for a row with a note starting with ``prefix``."""
    return f"len(list_filter(notes, lambda x: starts_with(x, '{prefix}'))) > 0"


def _fill(con: duckdb.DuckDBPyConnection, fill: Fill) -> None:
    value, basis = float(fill.claim.value), fill.claim.basis.value
    params = {"v": value, "b": basis, "note": fill.note, "p": fill.provider, "i": fill.instance_type}
    notes = "list_append(notes, $note)"
    if fill.claim.field == "intra_node_gbytes_per_s":
        con.execute(
            f"""UPDATE instances SET intra_node_gbytes_per_s = $v, intra_node_basis = $b,
                       missing_intra_bw = false, notes = {notes}
                WHERE provider = $p AND instance_type = $i AND intra_node_basis = 'missing'""",
            params,
        )
    else:
        con.execute(
            f"""UPDATE instances SET inter_node_gbits_per_s = $v, inter_node_gbytes_per_s = $gb,
                       inter_node_basis = $b, missing_inter_bw = false, notes = {notes}
                WHERE provider = $p AND instance_type = $i AND inter_node_basis = 'missing'""",
            {**params, "gb": gbits_to_gbytes(value)},
        )
