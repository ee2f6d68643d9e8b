"""A release's ``manifest.json``: what it holds, how old each provider's data is, where every row came
from and under which licence.

No build time is written (a release of the same catalog is byte-identical); the data's age is the
time its documents were read, per provider. A source is a repository (``owner/name`` on GitHub), a
local third-party copy (``copy:reference/<dir>/<dir>``) or a host; its licence is the one recorded in
``LICENCES`` with where it is stated, and ``null`` where this project has not recorded one (the
source's own terms apply then, and the release says so rather than guessing).
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

import duckdb

from catalog.read.status import data_as_of, latest_refresh
from catalog.store import STORAGE_VERSION

#: Licences recorded for sources, with where each is stated (``../shared/MANIFEST.md`` records the
#: repositories' LICENSE files). Spare Cores' CC BY-SA 4.0 is share-alike: it binds anything derived.
LICENCES: dict[str, tuple[str, str]] = {
    "https://raw.githubusercontent.com/SpareCores/sc-inspector-data": (
        "CC-BY-SA-4.0",
        "SpareCores/sc-inspector-data LICENSE; the rows derived from it stay CC BY-SA 4.0 (attribution, "
        "share-alike)",
    ),
    "https://raw.githubusercontent.com/aws/karpenter-provider-aws": (
        "Apache-2.0",
        "aws/karpenter-provider-aws LICENSE",
    ),
    "https://raw.githubusercontent.com/Azure/karpenter-provider-azure": (
        "Apache-2.0",
        "Azure/karpenter-provider-azure LICENSE",
    ),
    "https://raw.githubusercontent.com/cloudpilot-ai/karpenter-provider-gcp": (
        "Apache-2.0",
        "cloudpilot-ai/karpenter-provider-gcp LICENSE.txt",
    ),
    "https://raw.githubusercontent.com/Azure/azurehpc-health-checks": (
        "MIT",
        "Azure/azurehpc-health-checks LICENSE",
    ),
    "https://raw.githubusercontent.com/GoogleCloudPlatform/cluster-health-scanner": (
        "Apache-2.0",
        "GoogleCloudPlatform/cluster-health-scanner LICENSE",
    ),
    "https://raw.githubusercontent.com/oracle-quickstart/oci-hpc": (
        "UPL-1.0",
        "oracle-quickstart/oci-hpc LICENSE.txt",
    ),
    "https://cloud.google.com": ("CC-BY-4.0", "the footer of Google Cloud's documentation pages"),
}
SPARE_CORES = "https://raw.githubusercontent.com/SpareCores/sc-inspector-data"
NOT_RECORDED = "not recorded by this project: the source's own terms apply"

# The source of a URL: owner/name on GitHub, copy:reference/<dir>/<dir> for a local copy, else the host.
_SOURCE_SQL = """CASE
    WHEN source_url LIKE 'https://raw.githubusercontent.com/%' OR source_url LIKE 'https://github.com/%'
        THEN array_to_string(string_split(source_url, '/')[1:5], '/')
    WHEN source_url LIKE 'copy:%' THEN array_to_string(string_split(source_url, '/')[1:3], '/')
    ELSE array_to_string(string_split(source_url, '/')[1:3], '/') END"""
_ROWS_SQL = f"""
WITH rows AS (
    SELECT 'instances' AS t, provider, source_url FROM instances
    UNION ALL SELECT 'claims', provider, source_url FROM claims
    UNION ALL SELECT 'prices', provider, source_url FROM prices
    UNION ALL SELECT 'measurements', coalesce(provider, source), source_url FROM measurements
)
SELECT {_SOURCE_SQL} AS source, t, count(*) AS n, list(DISTINCT provider ORDER BY provider) AS providers
FROM rows GROUP BY ALL ORDER BY source, t"""


def _plain(value: Any) -> Any:
    """A JSON value: timestamps as ISO 8601 in UTC, dates as ISO dates, missing as null."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value == value else None  # NaT != NaT
    if isinstance(value, date):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def _day(value: Any) -> str | None:
    """A DATE column (pandas hands it over as a timestamp) as an ISO date."""
    plain = _plain(value)
    return plain[:10] if isinstance(plain, str) else None


def sources(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every source the release's rows cite: rows per table, the providers, the licence."""
    found: dict[str, dict[str, Any]] = {}
    for source, table, count, providers in con.execute(_ROWS_SQL).fetchall():
        entry = found.setdefault(source, {"source": source, "rows": {}, "providers": set()})
        entry["rows"][table] = count
        entry["providers"].update(providers)
    out = []
    for source, entry in found.items():
        licence, basis = LICENCES.get(source, (None, NOT_RECORDED))
        out.append(
            {
                "source": source,
                "licence": licence,
                "licence_basis": basis,
                "providers": sorted(entry["providers"]),
                "rows": entry["rows"],
            }
        )
    return out


def _as_of(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, Any]]:
    """Per provider: when its current claims were read, the last day a person read a curated fact,
    its rows and stale rows."""
    ages = {row["provider"]: row for row in data_as_of(con).to_dict("records")}
    counts = con.execute(
        "SELECT provider, count(*), count(*) FILTER (stale) FROM instances "
        "GROUP BY provider ORDER BY provider"
    ).fetchall()
    out: dict[str, dict[str, Any]] = {}
    for provider, rows, stale in counts:
        age = ages.get(provider, {})
        out[provider] = {
            "first_fetched_at": _plain(age.get("first_fetched_at")),
            "last_fetched_at": _plain(age.get("last_fetched_at")),
            "curated_read_on": _day(age.get("read_on")),
            "instances": rows,
            "stale_instances": stale,
        }
    return out


def manifest(con: duckdb.DuckDBPyConnection, tables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The manifest of a release of the catalog ``con`` has in use; ``tables`` describes each
    table's Parquet file (file, rows, sort order, rows per row group)."""
    refresh = latest_refresh(con).to_dict("records")  # how, not when: refreshes.parquet has the times
    spare_cores = con.execute(
        f"SELECT count(*) FROM measurements WHERE {_SOURCE_SQL} = ?", [SPARE_CORES]
    ).fetchone()
    spare_claims = con.execute(  # claims derived from its readings (a GPU's measured product name)
        f"SELECT count(*) FROM claims WHERE {_SOURCE_SQL} = ?", [SPARE_CORES]
    ).fetchone()
    return {
        "name": "interconnect-catalog",
        "release_format": 1,
        "built_by": {k: _plain(refresh[0][k]) for k in ("mode", "exit_code")} if refresh else None,
        "data_as_of": _as_of(con),
        "files": {
            "catalog.duckdb": f"DuckDB, storage version {STORAGE_VERSION} (DuckDB 1.1 and later open it); "
            "every table below plus the views, without stored document bodies",
            "instances.json": "the instances table as one JSON array, in the Parquet file's order",
            "schema.md": "every column's type and meaning, generated from catalog/schema.sql",
            "SHA256SUMS": "sha256sum -c SHA256SUMS checks every other file",
        },
        "tables": tables,
        "licence": {
            "catalog": "The schema, derived columns and paraphrases are the project's, Apache-2.0. Each "
            "row's facts keep their source's terms (sources, below).",
            "cc_by_sa_4_0": {
                "source": SPARE_CORES,
                "measurements_rows": spare_cores[0] if spare_cores else 0,
                "claims_rows": spare_claims[0] if spare_claims else 0,
                "statement": "Rows derived from Spare Cores' sc-inspector-data are CC BY-SA 4.0: "
                "attribute Spare Cores, and share what you derive from them under the same licence.",
            },
        },
        "sources": sources(con),
    }
