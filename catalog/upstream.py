"""What a resold row carries from its upstream cloud's own row (run with the measurements' derivation).

A marketplace or aggregator row that names its upstream cloud and that cloud's own instance type
(Prime Intellect's ``nebius__8xH100_80GB__128__1600`` → Nebius ``gpu-h100-sxm_8gpu-128vcpu-1600gb``)
runs on that machine; where the reseller's row leaves a fabric fact unknown or missing and the
upstream row states it (basis stated or paraphrased), the reseller's row takes it with basis
``upstream``: a claim quoting the upstream row's claim, at its URL, saying where it was carried from.
A seller that names no upstream type carries nothing (its rows say so).
"""

from __future__ import annotations

from dataclasses import replace

from normalize.vocab import Basis, Evidence
from records.offers import TEXT_FIELDS, Claim

#: The fields carried, each only when the reseller's row lacks it.
CARRIED = ("inter_node_fabric", "inter_node_gbits_per_s", "nic_count")

RESOLD_SQL = """
SELECT r.provider, r.instance_type, r.upstream_provider, r.upstream_instance_type,
       r.inter_node_fabric AS r_fabric, r.inter_node_basis AS r_basis, r.nic_count AS r_nics,
       c.field, c.value, c.value_text, c.basis, c.qualifiers, c.quote, c.context, c.source_url, c.evidence,
       c.original_url, c.read_on, c.fetched_at
FROM {rows} r
JOIN current_claims c ON c.provider = r.upstream_provider AND c.instance_type = r.upstream_instance_type
WHERE r.seller_kind <> 'cloud' AND r.upstream_instance_type IS NOT NULL
  AND c.basis IN ('stated', 'paraphrased')
  AND c.field IN ('inter_node_fabric', 'inter_node_gbits_per_s', 'nic_count')
"""


def resold_sql(rows: str) -> str:
    """The resold rows of ``rows`` (a table or view) beside their upstream rows' stated fabric claims."""
    return RESOLD_SQL.format(rows=rows)


def _lacks(row: dict) -> bool:
    field = row["field"]
    if field == "inter_node_fabric":
        return row["r_fabric"] == "unknown"
    if field == "inter_node_gbits_per_s":
        return row["r_basis"] in (Basis.MISSING.value, Basis.UPSTREAM.value)
    return row["r_nics"] is None


def carried_claims(resold: list[dict]) -> list[tuple[str, str, Claim, object]]:
    """(provider, instance type, claim, fetched_at) for every upstream fact a resold row lacks: the
    first stated claim of each field, as the upstream row shows it (pure). ``resold`` is the rows of
    ``resold_sql`` as DuckDB gives them (NULL as None, a DATE as a date)."""
    out: list[tuple[str, str, Claim, object]] = []
    seen: set[tuple[str, str, str]] = set()
    order = {"stated": 0, "paraphrased": 1}
    for row in sorted(resold, key=lambda r: (order[r["basis"]], r["source_url"], r["quote"])):
        key = (row["provider"], row["instance_type"], row["field"])
        if key in seen or not _lacks(row):
            continue
        seen.add(key)
        text = row["field"] in TEXT_FIELDS
        claim = Claim(
            evidence=Evidence(row["evidence"]),
            read_on=row["read_on"],
            field=row["field"],
            value=row["value_text"] if text else float(row["value"]),
            quote=row["quote"],
            source_url=row["source_url"],
            context=row["context"],
            basis=Basis.UPSTREAM,
            qualifiers=(
                f"carried from the upstream row {row['upstream_provider']}/{row['upstream_instance_type']} "
                f"({row['basis']} there)" + (f"; {row['qualifiers']}" if row["qualifiers"] else "")
            ),
        )
        if row["original_url"]:
            claim = replace(claim, original_url=row["original_url"])
        out.append((row["provider"], row["instance_type"], claim, row["fetched_at"]))
    return out
