"""The catalog's own state: its last refresh, each provider's outcome, stale rows, how old the data
is (when the providers' pages were read, apart from when the file was built), and what changed."""

from __future__ import annotations

import duckdb
import pandas as pd

from catalog.read.changes import changes


def latest_refresh(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The last refresh run (one row, or none): id, start, end, mode, exit code."""
    return con.execute(
        "SELECT refresh_id, started_at, finished_at, mode, exit_code FROM refreshes "
        "ORDER BY finished_at DESC LIMIT 1"
    ).df()


def data_as_of(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per provider, when its figures were read: the first and last time one of its current claims was
    fetched (``first_fetched_at``, ``last_fetched_at``; a catalog seeded from the shipped snapshot
    gives the snapshot's build time) and the last day a person read a curated fact (``read_on``).

    This is the age of the data, which a catalog file rebuilt today from an old snapshot does not
    change; ``latest_refresh`` says when the file itself was built.
    """
    return con.execute(
        """SELECT provider,
                  min(fetched_at) AS first_fetched_at,
                  max(fetched_at) AS last_fetched_at,
                  max(read_on) AS read_on,
                  count(*) AS claims
           FROM current_claims
           GROUP BY provider ORDER BY provider"""
    ).df()


def provider_status(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Each provider's outcome in its latest refresh, with the cause, last success and stale rows."""
    return con.execute(
        """WITH latest AS (
               SELECT p.*, r.finished_at AS refreshed_at, r.mode
               FROM provider_refreshes p JOIN refreshes r USING (refresh_id)
               QUALIFY row_number() OVER (PARTITION BY p.provider ORDER BY r.finished_at DESC) = 1
           ), rows AS (
               SELECT provider, count(*) AS rows, count(*) FILTER (stale) AS stale_rows
               FROM instances GROUP BY provider
           )
           SELECT provider, l.outcome, l.cause, l.last_success_at, l.refreshed_at, l.mode,
                  l.documents, l.rows_before, l.rows_after,
                  coalesce(r.rows, 0) AS rows, coalesce(r.stale_rows, 0) AS stale_rows
           FROM latest l FULL JOIN rows r USING (provider)
           ORDER BY provider"""
    ).df()


def stale_providers(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Providers whose rows are stale: since when, why, and their last successful refresh."""
    return con.execute(
        """WITH last_ok AS (
               SELECT provider, max(last_success_at) AS last_success_at
               FROM provider_refreshes GROUP BY provider
           )
           SELECT provider, count(*) AS stale_rows, min(stale_since) AS stale_since,
                  any_value(stale_cause) AS stale_cause, any_value(l.last_success_at) AS last_success_at
           FROM instances LEFT JOIN last_ok l USING (provider)
           WHERE stale GROUP BY provider ORDER BY provider"""
    ).df()


def recent_changes(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """What changed between refreshes (``catalog.changes``), newest first, before/after as text."""
    frame = changes(con)
    for column in ("before", "after"):
        frame[column] = [", ".join(values) if len(values) else "(gone)" for values in frame[column]]
    return frame
