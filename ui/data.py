"""Where the app's data comes from: the catalog file, read-only, through one kept connection and
cached query results.

Results are cached as shared objects (``st.cache_resource``: no copy per read, which at 100x the
shipped catalog cost more than the rerun's own work), so the views treat every frame they get as
read-only: they derive new frames, never change one in place.

A refresh replaces the catalog file atomically (a new inode), so the cache key is the file's path
and version (mtime, inode, size): a refreshed catalog is read again at the next interaction, with
no time-to-live, and the connection is reopened on the new file (``Reader``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import duckdb
import pandas as pd
import streamlit as st

from catalog.paths import default_db
from catalog.read import conflicts, measurements, missing, prices, queries, scoring, shape, status
from catalog.read.connect import connect_readonly
from catalog.read.filters import NO_FILTERS, Filters
from ui import tables
from ui.planning import PlanQuestion
from ui.units import Units

T = TypeVar("T")

#: The read-side questions the app asks, by name; those marked True take the catalog's shape.
QUERIES = {
    "shape": (shape.shape, False),
    "providers": (queries.providers, False),
    "facets": (queries.facets, False),
    "ranking": (scoring.ranking, True),
    "cliffs": (queries.cliffs, False),
    "claims": (queries.claims, False),
    "copy_originals": (queries.copy_originals, False),
    "missing_summary": (missing.missing_summary, True),
    "missing_items": (missing.missing_items, True),
    "conflicts": (conflicts.conflicts, True),
    "latest_refresh": (status.latest_refresh, False),
    "data_as_of": (status.data_as_of, False),
    "provider_status": (status.provider_status, False),
    "stale_providers": (status.stale_providers, False),
    "recent_changes": (status.recent_changes, False),
    "region_prices": (prices.region_prices, False),
    "regions": (prices.regions, False),
    "side_by_side": (measurements.side_by_side, False),
    "cliff_marks": (measurements.cliff_marks_for, False),
    "coverage": (measurements.coverage, False),
    "worst_ratios": (measurements.worst_ratios, False),
    "unmatched": (measurements.unmatched, False),
    "measurement_counts": (measurements.counts, False),
}


def db_path() -> Path:
    """The catalog the app shows: $INTERCONNECT_CATALOG_DB, else the default catalog.duckdb."""
    return default_db()


@dataclass(frozen=True)
class Catalog:
    """Where the catalog is, and which file is there now (a refresh replaces it with a new one)."""

    path: Path
    version: str

    @classmethod
    def at(cls, path: Path) -> Catalog:
        """The catalog file now at ``path``; its version changes whenever a refresh replaces it."""
        stat = path.stat()
        return cls(path, f"{stat.st_mtime_ns}-{stat.st_ino}-{stat.st_size}")

    def load(self, query: str, *args):
        """A named query (``QUERIES``) on this catalog file, cached per file version and arguments."""
        return _load(query, str(self.path), self.version, *args)

    def plan(self, question: PlanQuestion, filters: Filters) -> pd.DataFrame:
        """The planner's ranking (``catalog.read.plan.rank``) for ``question`` on the rows ``filters``
        select, cached per file version and question like a query."""
        return _plan(str(self.path), self.version, question, filters)

    def plan_shown(self, question: PlanQuestion, filters: Filters) -> pd.DataFrame:
        """The planner's ranking as the table shows it (``ui.planning.plan_frame``), cached like it."""
        return _plan_shown(str(self.path), self.version, question, filters)

    def ranking_shown(self, filters: Filters, units: Units, priced: bool, order: str) -> pd.DataFrame:
        """The ranking as the table shows it (``tables.ranking_frame``), cached like a query."""
        return _ranking_shown(str(self.path), self.version, filters, units, priced, order)


class Reader:
    """The one read-only connection to the catalog file now at a path, shared by every session.

    Opening the file costs about 0.1 s, so the connection is kept. DuckDB keeps one database per
    path in a process, so a new file at the same path is only read once the old connection is
    closed: on a new version the reader closes it and opens the new file. Queries run one at a time
    under a lock, so no query runs on a connection being closed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, str] | None = None
        self._con: duckdb.DuckDBPyConnection | None = None

    def run(self, path: str, version: str, function, *args):
        """``function(connection, *args)`` on the file version ``version`` at ``path``."""
        with self._lock:
            if self._key != (path, version):
                if self._con is not None:
                    self._con.close()
                    self._con = None
                self._con = connect_readonly(Path(path))
                self._key = (path, version)
            return function(self._con, *args)


@st.cache_resource(show_spinner=False)
def reader() -> Reader:
    """The process's one ``Reader``."""
    return Reader()


@st.cache_resource(max_entries=64, show_spinner=False)
def _ranking_shown(path: str, version: str, filters: Filters, units: Units, priced: bool, order: str):
    ranked = _load("ranking", path, version, filters)
    return tables.ranking_frame(ranked, units, priced, order, _load("copy_originals", path, version))


@st.cache_resource(max_entries=64, show_spinner=False)
def _plan_shown(path: str, version: str, question: PlanQuestion, filters: Filters) -> pd.DataFrame:
    from ui.planning import plan_frame

    return plan_frame(_plan(path, version, question, filters), question.workload.kind)


def _rank(con: duckdb.DuckDBPyConnection, question: PlanQuestion, filters: Filters) -> pd.DataFrame:
    from catalog.read.plan import rank  # the planner loads pint: only when a plan is asked for
    from ui.planning import model_of

    return rank(
        con, model_of(question), question.workload, nodes=question.nodes, filters=filters, by=question.by
    )


def priced_as(filters: Filters) -> Filters:
    """Of ``filters``, only what changes a planned row's figures rather than which rows are shown:
    the region and price kind its cost is read at, and whether datasheet-inferred bandwidths count.
    Every other filter only selects rows, and a row's plan does not depend on the other rows."""
    return Filters(region=filters.region, spot=filters.spot, include_inferred=filters.include_inferred)


@st.cache_resource(max_entries=32, show_spinner=False)
def _plan_every_row(path: str, version: str, question: PlanQuestion, priced: Filters) -> pd.DataFrame:
    """The planner's ranking by time of every row ``priced`` keeps: the one expensive step of a
    question, done once whatever rows the other filters then show and however they are ordered."""
    return reader().run(path, version, _rank, replace(question, by="time"), priced)


@st.cache_resource(max_entries=64, show_spinner=False)
def _plan(path: str, version: str, question: PlanQuestion, filters: Filters) -> pd.DataFrame:
    """``_plan_every_row``'s rows that ``filters`` select, ordered and numbered by ``question.by``:
    the same rows, order and ranks as planning only those rows (``catalog.read.plan.rank``)."""
    from catalog.read.plan import order_ranked

    filters = replace(filters, workload=NO_FILTERS.workload)
    priced = priced_as(filters)
    every = _plan_every_row(path, version, replace(question, by="time"), priced)
    if filters != priced:
        shown = _load("ranking", path, version, filters)[["provider", "instance_type"]]
        every = every.merge(shown, on=["provider", "instance_type"], how="inner")
    return order_ranked(every, question.workload.kind, question.by)


@st.cache_resource(max_entries=256, show_spinner=False)
def _load(query: str, path: str, version: str, *args):
    if query not in QUERIES:
        raise ValueError(f"unknown query {query!r}")
    function, takes_shape = QUERIES[query]
    extra = (_load("shape", path, version),) if takes_shape else ()
    return reader().run(path, version, function, *args, *extra)


#: Tables built from cached query results (``derived``): at most this many kept, the oldest dropped.
DERIVED_ENTRIES = 64
_derived: OrderedDict[tuple, tuple[tuple, object]] = OrderedDict()
_derived_lock = threading.Lock()


def derived(build: Callable[..., T], *sources: object) -> T:
    """``build(*sources)``, computed once per set of ``sources`` and kept: each source is a cached
    query result (``Catalog.load``, shared and never changed, the same object on every rerun while its
    file version stands), so a view's table is rebuilt only when what it is built from changes. At
    100x the shipped catalog, What's missing built its 90,000 rows' links again on every rerun
    (0.28 s of it). An entry holds its sources, so no other object can take their ids meanwhile."""
    key = (build.__module__, build.__qualname__, *map(id, sources))
    with _derived_lock:
        hit = _derived.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], sources, strict=True)):
            _derived.move_to_end(key)
            return hit[1]  # type: ignore[return-value]
    value = build(*sources)
    with _derived_lock:
        _derived[key] = (sources, value)
        while len(_derived) > DERIVED_ENTRIES:
            _derived.popitem(last=False)
    return value
