"""Claimed, expected and measured side by side: what the app's Measurements view, its instance view
and its bandwidth cliff ask of the ``measurements`` table (connection in, DataFrame out).

``comparisons`` gives one row per comparable reading with the claim it is set against (in the same
direction convention), the ratio and a verdict sentence (``catalog.read.verdicts``); ``side_by_side``
adds the claimed figures themselves for one instance; ``cliff_marks`` places expected and measured
figures on the cliff's levels; ``coverage``, ``worst_ratios``, ``unmatched`` and ``counts`` are the
catalog-wide views. nvbandwidth's SM (kernel) copies are left out of comparisons: the copy-engine
(CE) tests are the ones its users and Azure's health checks compare.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from catalog.read import verdicts
from catalog.read.text import known

LEVELS = ("GPU-to-GPU", "fabric", "NIC port", "collective", "transport", "link")
COLUMNS = [
    "provider", "instance_type", "level", "kind", "metric", "direction", "value", "value_text", "unit",
    "claimed", "ratio", "verdict", "tool", "tool_version", "source", "source_url", "locator", "quote",
    "run_at", "nodes", "gpus", "port_count", "message_bytes", "notes",
]  # fmt: skip
_READINGS = """
SELECT m.*, i.intra_node_gbytes_per_s AS intra, i.intra_node_basis AS intra_basis,
       i.intra_node_link AS link, i.inter_node_gbits_per_s AS inter, i.inter_node_basis AS inter_basis,
       i.nic_count AS claimed_nics
FROM measurements m JOIN instances i USING (provider, instance_type)
WHERE (m.tool IS DISTINCT FROM 'nvbandwidth' OR m.locator NOT LIKE '%_sm)')
"""
_LEVEL = {
    "gpu_to_gpu_gbytes_per_s": ("GPU-to-GPU", verdicts.gpu_pair),
    "gpu_to_gpu_each_way_gbytes_per_s": ("GPU-to-GPU", verdicts.gpu_pair),
    "nvlink_gbytes_per_s": ("GPU-to-GPU", verdicts.nvlink_links),
    "ib_port_gbits_per_s": ("fabric", verdicts.fabric_ports),
    "ib_write_gbits_per_s": ("NIC port", verdicts.port_bandwidth),
    "ib_read_gbits_per_s": ("NIC port", verdicts.port_bandwidth),
    "ib_send_gbits_per_s": ("NIC port", verdicts.port_bandwidth),
    "nccl_transport": ("transport", verdicts.transport),
    "nccl_intra_node_transport": ("transport", verdicts.transport),
    "nvlink_status": ("link", verdicts.link_state),
    "gpu_p2p_status": ("link", verdicts.link_state),
    "gpu_link": ("link", verdicts.link_state),
}


def _unit(metric: str) -> str | None:
    for suffix, unit in (("_gbytes_per_s", "GB/s"), ("_gbits_per_s", "Gbit/s"), ("_count", "count")):
        if metric.endswith(suffix):
            return unit
    return None


def comparisons(
    con: duckdb.DuckDBPyConnection, provider: str | None = None, instance_type: str | None = None
) -> pd.DataFrame:
    """Every expected or measured reading of catalog rows, with its claim, ratio and verdict."""
    where, params = "", {}
    if provider is not None:
        where, params = " AND m.provider = $p AND m.instance_type = $i", {"p": provider, "i": instance_type}
    rows = con.execute(_READINGS + where, params).df().to_dict("records")
    ports = _port_rates(rows)
    floors = _floors(rows)
    out = []
    for row in rows:
        level, judge = _LEVEL.get(row["metric"], ("collective", verdicts.collective))
        if row["metric"].startswith(("host_to_gpu", "gpu_to_host")) or row["metric"] in (
            "nic_count",
            "nvlink_count",
        ):
            continue  # not set against a claim: shown by side_by_side only
        row.update(_claim_for(level, row), **ports.get((row["provider"], row["instance_type"]), {}))
        row["floor"], row["floor_nodes"] = _floor(floors, row)
        ratio, verdict = judge(row)
        out.append({**row, "level": level, "ratio": ratio, "verdict": verdict, "unit": _unit(row["metric"])})
    frame = pd.DataFrame(out, columns=COLUMNS)
    return frame.sort_values(["provider", "instance_type", "level", "kind", "metric"], ignore_index=True)


def _claim_for(level: str, row: dict) -> dict:
    if level == "GPU-to-GPU":
        return {"claimed": row["intra"], "claimed_basis": row["intra_basis"]}
    if level == "fabric":
        return {"claimed": row["inter"], "claimed_basis": row["inter_basis"]}
    return {"claimed": None, "claimed_basis": None}


def _known_int(value: Any) -> int | None:
    return int(value) if known(value) else None


def _port_rates(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """Per instance, the port rate an ib_*_bw reading is set against: an expected port rate (the
    main group), else the claimed fabric per NIC."""
    rates: dict[tuple[str, str], dict] = {}
    for row in sorted(rows, key=lambda r: -(r["port_count"] if known(r["port_count"]) else 0)):
        key = (row["provider"], row["instance_type"])
        if key in rates:
            continue
        if row["metric"] == "ib_port_gbits_per_s" and row["kind"] == "expected":
            rates[key] = {"port_gbits_per_s": row["value"], "port_source": f"expected by {row['tool']}"}
        elif known(row["inter"]) and known(row["claimed_nics"]) and row["claimed_nics"] > 0:
            per_nic = row["inter"] / row["claimed_nics"]
            rates[key] = {"port_gbits_per_s": per_nic, "port_source": "the page's fabric / its NICs"}
    return rates


def _floors(rows: list[dict]) -> dict[tuple, list[tuple[int | None, float]]]:
    """Expected NCCL floors by (provider, instance type, metric): (nodes, GB/s) each."""
    floors: dict[tuple, list[tuple[int | None, float]]] = {}
    for r in rows:
        if r["kind"] == "expected" and r["metric"].startswith("nccl_") and known(r["value"]):
            floors.setdefault((r["provider"], r["instance_type"], r["metric"]), []).append(
                (_known_int(r["nodes"]), r["value"])
            )
    return floors


def _floor(floors: dict, row: dict) -> tuple[float | None, int | None]:
    """The floor for a reading's test: same node count; when the reading does not say its node
    count, the one floor there is (the verdict says so)."""
    found = floors.get((row["provider"], row["instance_type"], row["metric"]), [])
    nodes = _known_int(row["nodes"])
    same = [value for n, value in found if n == nodes]
    if same:
        return same[0], nodes
    if nodes is None and len(found) == 1:
        return found[0][1], found[0][0]
    return None, None


def side_by_side(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str) -> pd.DataFrame:
    """One instance: its claimed GPU-to-GPU and fabric figures, then every expected and measured
    reading (with ratio and verdict), then its host-copy and count readings."""
    claimed = con.execute(
        """SELECT provider, instance_type, 'GPU-to-GPU' AS level, 'claimed' AS kind,
                  'intra_node_gbytes_per_s' AS metric, 'two-way' AS direction,
                  intra_node_gbytes_per_s AS value, 'GB/s' AS unit, intra_node_basis AS verdict, source_url
           FROM instances WHERE provider = $p AND instance_type = $i
           UNION ALL
           SELECT provider, instance_type, 'fabric', 'claimed', 'inter_node_gbits_per_s', 'one-way',
                  inter_node_gbits_per_s, 'Gbit/s', inter_node_basis, source_url
           FROM instances WHERE provider = $p AND instance_type = $i""",
        {"p": provider, "i": instance_type},
    ).df()
    claimed = claimed[claimed["value"].notna() | (claimed["verdict"] != "not-applicable")]
    claimed["verdict"] = [f"the page's figure ({basis})" for basis in claimed["verdict"]]
    others = con.execute(
        """SELECT provider, instance_type, 'host' AS level, kind, metric, direction, value,
                  tool, tool_version, source, source_url, locator, quote, run_at, gpus, port_count, notes
           FROM measurements WHERE provider = $p AND instance_type = $i
             AND (metric LIKE 'host_to_gpu%' OR metric LIKE 'gpu_to_host%' OR metric LIKE '%_count')
             AND (tool IS DISTINCT FROM 'nvbandwidth' OR locator NOT LIKE '%_sm)')""",
        {"p": provider, "i": instance_type},
    ).df()
    others["unit"] = others["metric"].map(_unit)
    parts = [claimed, comparisons(con, provider, instance_type), others]
    return pd.concat([p for p in parts if not p.empty], ignore_index=True).reindex(columns=COLUMNS)


def cliff_marks(con: duckdb.DuckDBPyConnection, provider: str, instance_type: str) -> pd.DataFrame:
    """Expected and measured marks for the bandwidth cliff (``queries.CLIFF_LEVELS``), per GPU in GB/s.

    Intra-node: readings whose direction matches the level's bidirectional claim (two-way totals)
    at their value; one-way and each-way readings at their value with ``direction`` saying so (they
    sit against half the claim). Fabric per GPU: an expected port total scaled like the claim
    (claimed GB/s per GPU x expected / claimed Gbit/s). Columns: level, kind, direction,
    gbytes_per_s, label, tool, source_url, run_at."""
    compared = comparisons(con, provider, instance_type)
    fabric = con.execute(
        """SELECT inter_node_gbytes_per_s / greatest(gpu_count, 1) AS per_gpu, inter_node_gbits_per_s AS gbits
           FROM instances WHERE provider = $p AND instance_type = $i AND gpu_count > 0""",
        {"p": provider, "i": instance_type},
    ).fetchone()
    marks = []
    for row in compared.to_dict("records"):
        if row["level"] == "GPU-to-GPU" and row["metric"] != "nvlink_gbytes_per_s":
            marks.append(_mark("intra-node per GPU", row, row["value"]))
        elif row["level"] == "fabric" and fabric and known(fabric[0]) and known(fabric[1]):
            total = row["value"] * (row["port_count"] if known(row["port_count"]) else 1)
            marks.append(_mark("fabric per GPU", {**row, "direction": None}, fabric[0] * total / fabric[1]))
    columns = ["level", "kind", "direction", "gbytes_per_s", "label", "tool", "source_url", "run_at"]
    return pd.DataFrame(marks, columns=columns)


def _mark(level: str, row: dict, gbytes: float) -> dict:
    when = f", {pd.Timestamp(row['run_at']):%Y-%m-%d}" if known(row.get("run_at")) else ""
    return {
        "level": level,
        "kind": row["kind"],
        "direction": row.get("direction"),
        "gbytes_per_s": gbytes,
        "label": f"{row['kind']}: {row['verdict']}{when}",
        "tool": row["tool"],
        "source_url": row["source_url"],
        "run_at": row.get("run_at"),
    }


def coverage(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per catalog row with readings: how many expected and measured, from which sources."""
    return con.execute(
        """SELECT provider, instance_type,
                  count(*) FILTER (kind = 'expected') AS expected_readings,
                  count(*) FILTER (kind = 'measured') AS measured_readings,
                  list(DISTINCT source ORDER BY source) AS sources,
                  any_value(i.intra_node_basis) AS intra_node_basis,
                  any_value(i.inter_node_basis) AS inter_node_basis
           FROM measurements m JOIN instances i USING (provider, instance_type)
           GROUP BY provider, instance_type ORDER BY provider, instance_type"""
    ).df()


def worst_ratios(con: duckdb.DuckDBPyConnection, limit: int = 10, kind: str | None = None) -> pd.DataFrame:
    """The largest gaps: per instance, level and kind, the best reading's ratio to its claim (what
    people actually get at best), lowest first; ``kind`` measured or expected only."""
    compared = comparisons(con)
    compared = compared[compared["ratio"].notna() & ((compared["kind"] == kind) if kind else True)]
    if compared.empty:
        return compared
    keys = ["provider", "instance_type", "level", "kind"]
    best = compared.sort_values("ratio", ascending=False).drop_duplicates(keys)
    return best.sort_values(["ratio", "provider", "instance_type"]).head(limit).reset_index(drop=True)


def unmatched(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Readings about instances the catalog has no row for, per source and instance."""
    return con.execute(
        """SELECT m.source, m.provider, m.instance_type, count(*) AS readings,
                  list(DISTINCT m.metric ORDER BY m.metric) AS metrics
           FROM measurements m LEFT JOIN instances i USING (provider, instance_type)
           WHERE i.provider IS NULL
           GROUP BY ALL ORDER BY m.source, m.provider, m.instance_type"""
    ).df()


def counts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Readings per source and kind, and how many are about a catalog row (matched)."""
    return con.execute(
        """SELECT m.source, m.kind, count(*) AS readings,
                  count(i.provider) AS matched, count(*) - count(i.provider) AS unmatched,
                  count(DISTINCT (m.provider, m.instance_type)) AS instances,
                  count(DISTINCT CASE WHEN i.provider IS NOT NULL THEN (m.provider, m.instance_type) END)
                      AS matched_instances
           FROM measurements m LEFT JOIN instances i USING (provider, instance_type)
           GROUP BY ALL ORDER BY m.source, m.kind"""
    ).df()


def cliff_marks_for(con: duckdb.DuckDBPyConnection, chosen: list[tuple[str, str]]) -> pd.DataFrame:
    """``cliff_marks`` of several ``(provider, instance_type)`` pairs, in their order, with the pair's
    ``provider`` and ``instance_type`` columns; empty (with those columns) when none has a mark or the
    catalog has no measurements."""
    columns = ["provider", "instance_type", "level", "kind", "direction", "gbytes_per_s", "label", "tool"]
    found = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'measurements'"
    ).fetchone()
    if not found or not found[0]:
        return pd.DataFrame(columns=[*columns, "source_url", "run_at"])
    parts = [
        cliff_marks(con, provider, instance_type).assign(provider=provider, instance_type=instance_type)
        for provider, instance_type in chosen
    ]
    frame = pd.concat([p for p in parts if not p.empty] or [pd.DataFrame()], ignore_index=True)
    return frame.reindex(columns=[*columns, "source_url", "run_at"])
