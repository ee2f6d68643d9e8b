"""Streamlit app: which cloud GPU instances can run tensor parallelism, and which confine you to one node.

Run with `make app`. The questions live in `catalog/read/`; this file only lays them out.
The catalog file is replaced atomically by a refresh, so no connection is kept: every query opens
it read-only, and results are cached on the file's path and version (mtime, inode, size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import duckdb
import pandas as pd
import streamlit as st

from catalog.paths import default_db
from catalog.read import conflicts, missing, queries, scoring, status
from catalog.read.connect import connect_readonly
from catalog.read.filters import Filters
from catalog.read.text import fmt

WORKLOAD_LABELS = {
    "tensor": "Tensor parallelism (inside the NVLink domain)",
    "pipeline": "Pipeline parallelism (across nodes)",
    "expert": "Expert parallelism (all-to-all)",
}
_QUERIES = {
    "providers": queries.providers,
    "instance": queries.instance,
    "cliff": queries.cliff,
    "claims": queries.claims,
    "missing_summary": missing.missing_summary,
    "missing_rows": missing.missing_items,
    "conflicts": conflicts.conflicts,
    "latest_refresh": status.latest_refresh,
    "provider_status": status.provider_status,
    "stale_providers": status.stale_providers,
    "recent_changes": status.recent_changes,
    "ranking": scoring.ranking,
}


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
        """A named query on this catalog file (cached per file version)."""
        return load(query, str(self.path), self.version, *args)


def db_path() -> Path:
    """The catalog the app shows: $INTERCONNECT_CATALOG_DB, else the default catalog.duckdb."""
    return default_db()


@st.cache_data(ttl=60, show_spinner=False)
def load(query: str, db_path: str, version: str, *args):
    """Run the named read-side question (``_QUERIES``) on a fresh read-only connection.

    ``version`` (the file's mtime, inode and size) keys the cache, so a refreshed catalog is read again.
    """
    if query not in _QUERIES:
        raise ValueError(f"unknown query {query!r}")
    with connect_readonly(Path(db_path)) as con:
        return _QUERIES[query](con, *args)


# ---------------------------------------------------------------------------------------------
# Sidebar


def sidebar_filters(providers: list[str]) -> Filters:
    """The user's question: workload, providers, GPUs per instance, GPU search, what to include."""
    sb = st.sidebar
    sb.header("Question")
    workload = sb.radio(
        "Workload", queries.WORKLOADS, format_func=WORKLOAD_LABELS.__getitem__, key="workload"
    )
    chosen = sb.multiselect("Providers", providers, placeholder="all providers", key="providers")
    gpu_counts = sb.multiselect("GPUs per instance", [1, 2, 4, 8, 16], key="gpu_counts")
    search = sb.text_input(
        "GPU model or instance contains", key="gpu_search", placeholder="H100, B200, MI300X ..."
    )
    sb.header("Include")
    stale = sb.toggle("stale rows (last refresh failed)", value=True, key="include_stale")
    curated = sb.toggle("curated rows (not scraped)", value=True, key="include_curated")
    inferred = sb.toggle(
        "values inferred from GPU datasheets",
        value=True,
        key="include_inferred",
        help="Off: only bandwidths the provider states are scored; inferred ones count as missing.",
    )
    return Filters(
        workload=workload,
        providers=tuple(chosen),
        gpu_counts=tuple(gpu_counts),
        search=search,
        include_stale=stale,
        include_curated=curated,
        include_inferred=inferred,
    )


# ---------------------------------------------------------------------------------------------
# Ranking

RANKING_COLUMNS = {
    "rank": st.column_config.NumberColumn("rank", format="%d"),
    "provider": st.column_config.TextColumn("provider"),
    "instance_type": st.column_config.TextColumn("instance type"),
    "score_weighted_gbytes_per_s": st.column_config.NumberColumn(
        "score (weighted GB/s)", format="%.1f", help="See the scoring rule above the table."
    ),
    "reason": st.column_config.TextColumn("why", width="large"),
    "flags": st.column_config.TextColumn("flags", help="stale, conflict, unit corrected, curated"),
    "gpu_model": st.column_config.TextColumn("GPU"),
    "gpu_count": st.column_config.NumberColumn("GPUs per instance", format="%g"),
    "intra_node_link": st.column_config.TextColumn("intra-node link"),
    "intra_node_gbytes_per_s": st.column_config.NumberColumn("intra-node GB/s per GPU", format="%g"),
    "intra_node_basis": st.column_config.TextColumn("intra-node basis"),
    "scale_up_domain_gpus": st.column_config.NumberColumn("scale-up domain (GPUs)", format="%d"),
    "max_tp_degree_gpus": st.column_config.NumberColumn("max TP degree (GPUs)", format="%d"),
    "tp_confined_to_one_node": st.column_config.TextColumn("TP confined to one node"),
    "inter_node_fabric": st.column_config.TextColumn("fabric"),
    "inter_node_gbits_per_s": st.column_config.NumberColumn("fabric Gb/s per node", format="%g"),
    "fabric_gbytes_per_s_per_gpu": st.column_config.NumberColumn("fabric GB/s per GPU", format="%.3g"),
    "inter_node_basis": st.column_config.TextColumn("fabric basis"),
    "nvlink_to_fabric_ratio": st.column_config.NumberColumn("NVLink ÷ fabric GB/s (×)", format="%.0f"),
    "frontend_gbits_per_s": st.column_config.NumberColumn("front-end Gb/s per node", format="%g"),
    "source_url": st.column_config.LinkColumn("source"),
}


def when(timestamp) -> str:
    """A UTC timestamp to the minute, or "unknown"."""
    return "unknown" if timestamp is None or pd.isna(timestamp) else f"{timestamp:%Y-%m-%d %H:%M} UTC"


def yes_no_unknown(value) -> str:
    """A nullable boolean as "yes", "no" or "unknown"."""
    if value is None or pd.isna(value):
        return "unknown"
    return "yes" if value else "no"


def ranking_table(ranked: pd.DataFrame) -> pd.DataFrame:
    """The ranking as shown: the columns of ``RANKING_COLUMNS``; unknown booleans say "unknown"."""
    shown = ranked.assign(tp_confined_to_one_node=ranked["confined_to_one_node"].map(yes_no_unknown))
    return shown[list(RANKING_COLUMNS)]


def show_ranking(ranked: pd.DataFrame, filters: Filters) -> None:
    """The ranking tab: instances ordered for the chosen workload, with how they are scored."""
    st.subheader(WORKLOAD_LABELS[filters.workload])
    st.caption(scoring.SCORING[filters.workload])
    if ranked.empty:
        st.info("No instance matches the filters. Widen them in the sidebar.")
        return
    scored = int(ranked["rank"].notna().sum())
    confined = ranked["confined_to_one_node"].map(yes_no_unknown).value_counts()
    cols = st.columns(4)
    cols[0].metric("rows scored", f"{scored} of {len(ranked)}")
    cols[1].metric("TP spans instances (rack-scale NVLink)", int(confined.get("no", 0)))
    cols[2].metric("TP confined to one node", int(confined.get("yes", 0)))
    cols[3].metric("TP reach unknown", int(confined.get("unknown", 0)))
    if scored < len(ranked):
        st.caption(
            f"{len(ranked) - scored} rows lack a value the score needs: they have no rank and come last, "
            "never scored as zero. The 'why' column names what is missing."
        )
    st.dataframe(
        ranking_table(ranked), hide_index=True, column_config=RANKING_COLUMNS, width="stretch", height=560
    )


# ---------------------------------------------------------------------------------------------
# One instance

BASIS_COLORS = {"stated": "#1f4e79", "inferred": "#9ecae1"}


def cliff_chart(cliff: pd.DataFrame) -> alt.LayerChart:
    """Log-scale bars of GB/s per level; missing levels are labelled, inferred bars pale and dashed."""
    known = cliff["gbytes_per_s"].notna()
    values = cliff.loc[known, "gbytes_per_s"]
    floor = 10 ** math.floor(math.log10(values.min() / 3)) if len(values) else 1.0
    top = values.max() * 3 if len(values) else 10_000.0
    data = cliff.assign(
        label=[
            f"{fmt(v)} GB/s ({b})" if ok else ("not applicable" if b == "not-applicable" else "missing")
            for v, b, ok in zip(cliff["gbytes_per_s"], cliff["basis"], known, strict=True)
        ],
        label_y=cliff["gbytes_per_s"].where(known, floor * 1.6),
    )
    x = alt.X("level:N", sort=list(queries.CLIFF_LEVELS), title=None, axis=alt.Axis(labelAngle=0))
    scale = alt.Scale(type="log", domain=[floor, top])
    basis_scale = alt.Scale(domain=list(BASIS_COLORS), range=list(BASIS_COLORS.values()))
    bars = (
        alt.Chart(data)
        .transform_filter("isValid(datum.gbytes_per_s)")
        .mark_bar(stroke="#1f4e79", strokeWidth=2)
        .encode(
            x=x,
            y=alt.Y("gbytes_per_s:Q", scale=scale, title="GB/s per GPU (log scale)"),
            y2=alt.datum(floor),  # a log axis has no zero: bars start at its floor
            color=alt.Color("basis:N", scale=basis_scale, title="basis"),
            strokeDash=alt.StrokeDash(
                "basis:N", scale=alt.Scale(domain=list(BASIS_COLORS), range=[[1, 0], [6, 4]]), legend=None
            ),
            tooltip=["level", "gbytes_per_s", "basis", "link", "detail"],
        )
    )
    labels = (
        alt.Chart(data)
        .mark_text(dy=-10, fontSize=13)
        .encode(x=x, y=alt.Y("label_y:Q", scale=scale), text="label:N")
    )
    return alt.layer(bars, labels).properties(height=380)


def instance_label(provider: str, instance_type: str) -> str:
    """How the instance picker names an instance."""
    return f"{instance_type} ({provider})"


def instance_picker(ranked: pd.DataFrame) -> tuple[str, str] | None:
    """The instance the cliff and provenance tabs show: the top-ranked one until the user picks one.

    Options are sorted by name so a pick survives a change of workload.
    """
    if ranked.empty:
        return None
    pairs = {
        instance_label(p, i): (p, i) for p, i in zip(ranked["provider"], ranked["instance_type"], strict=True)
    }
    labels = sorted(pairs, key=str.lower)
    top = instance_label(ranked["provider"].iloc[0], ranked["instance_type"].iloc[0])
    label = st.selectbox(
        "Instance for the bandwidth cliff and provenance tabs",
        labels,
        index=labels.index(top),
        key="instance",
    )
    return pairs.get(label)


def show_cliff(catalog: Catalog, selected: tuple[str, str] | None) -> None:
    """The bandwidth-cliff tab: HBM, intra-node, fabric and front-end GB/s per GPU of one instance."""
    if selected is None:
        st.info("No instance matches the filters, so there is no cliff to draw.")
        return
    provider, instance_type = selected
    row = catalog.load("instance", provider, instance_type)
    cliff = catalog.load("cliff", provider, instance_type)
    if row.empty:
        st.info(f"{instance_type} ({provider}) is no longer in the catalog.")
        return
    r = row.iloc[0]
    st.subheader(f"{instance_type} ({provider})")
    count = fmt(r["gpu_count"]) if pd.notna(r["gpu_count"]) else "? (not stated)"
    domain = f"{int(r['scale_up_domain_gpus'])}-GPU domain" if pd.notna(r["scale_up_domain_gpus"]) else ""
    st.caption(
        f"{count} × {r['gpu_model']} · intra-node {r['intra_node_link']} {domain} · "
        f"fabric {r['inter_node_fabric']} · TP confined to one node: "
        f"{yes_no_unknown(r['confined_to_one_node'])}"
    )
    if r["stale"]:
        st.warning(f"Stale since {when(r['stale_since'])}: {r['stale_cause']}")
    marks = r["flags"]
    if marks:
        st.caption(f"Flags: {marks}. See the Provenance and Conflicts tabs.")
    st.altair_chart(cliff_chart(cliff), width="stretch")
    st.caption(
        "Memory > intra-node > fabric > front-end. Pale dashed bars are inferred from the GPU datasheet; "
        "'missing' means the provider states no figure and none could be inferred."
    )
    st.dataframe(
        cliff,
        hide_index=True,
        width="stretch",
        column_config={
            "gbytes_per_s": st.column_config.NumberColumn("GB/s per GPU", format="%g"),
            "detail": st.column_config.TextColumn("how", width="large"),
        },
    )
    if r["notes"]:
        st.caption(f"Notes: {r['notes']}")


CLAIM_COLUMNS = {  # in display order
    "field": st.column_config.TextColumn("field (instances column)"),
    "value": st.column_config.NumberColumn("value (in the unit column)", format="%g"),
    "value_text": st.column_config.TextColumn("text value"),
    "unit": st.column_config.TextColumn("unit"),
    "basis": st.column_config.TextColumn("basis"),
    "quote": st.column_config.TextColumn("quote", width="large"),
    "source_url": st.column_config.LinkColumn("source"),
    "context": st.column_config.TextColumn("where on the page"),
    "qualifiers": st.column_config.TextColumn("qualifiers"),
    "unit_suspect": st.column_config.CheckboxColumn("unit corrected"),
    "fetched_at": st.column_config.DatetimeColumn("fetched at (UTC)"),
    "valid_from": st.column_config.DatetimeColumn("valid from (UTC)"),
    "valid_to": st.column_config.DatetimeColumn("valid to (UTC)"),
}


def show_provenance(catalog: Catalog, selected: tuple[str, str] | None) -> None:
    """The provenance tab: every claim behind the selected instance, with quote and source."""
    if selected is None:
        st.info("No instance matches the filters, so there are no claims to show.")
        return
    provider, instance_type = selected
    st.subheader(f"Claims behind {instance_type} ({provider})")
    history = st.toggle("include closed claims (history)", key="claim_history")
    claims = catalog.load("claims", provider, instance_type, history)
    if claims.empty:
        st.info("No claims recorded for this row.")
        return
    st.caption(
        "Every figure with the exact text it came from. Inferred claims quote the GPU datasheet line; "
        "a unit-corrected claim says why in its qualifiers."
    )
    order = [c for c in CLAIM_COLUMNS if history or c not in ("valid_from", "valid_to")]
    st.dataframe(claims, hide_index=True, width="stretch", column_config=CLAIM_COLUMNS, column_order=order)


# ---------------------------------------------------------------------------------------------
# Catalog health


def show_missing(catalog: Catalog) -> None:
    """The what's-missing tab: per provider, the rows whose bandwidths the sources never state."""
    summary = catalog.load("missing_summary")
    st.subheader("What's missing, per provider")
    if summary.empty:
        st.info("The catalog has no rows.")
        return
    st.caption(
        "Counts of rows. Missing is a finding: nothing here is filled in. Inferred rows take the GPU-to-GPU "
        "figure from the GPU datasheet, not from the provider."
    )
    labels = {c: c.removesuffix("_rows").replace("_", " ") + " (rows)" for c in summary.columns[1:]}
    labels["missing_intra_bw_rows"] = "missing intra-node GB/s (rows)"
    labels["missing_inter_bw_rows"] = "missing fabric Gb/s (rows)"
    st.dataframe(
        summary,
        hide_index=True,
        width="stretch",
        column_config={c: st.column_config.NumberColumn(label) for c, label in labels.items()},
    )
    rows = catalog.load("missing_rows")
    with st.expander(f"{len(rows)} rows with something missing"):
        st.dataframe(
            rows,
            hide_index=True,
            width="stretch",
            column_config={"source_url": st.column_config.LinkColumn("source")},
        )


def show_conflicts(catalog: Catalog) -> None:
    """The conflicts tab: fields for which two sources state different values."""
    found = catalog.load("conflicts")
    st.subheader("Conflicting claims")
    if found.empty:
        st.success("No field has current claims that disagree.")
        return
    st.caption(
        "Two current claims for one field disagree; the row keeps one value and is flagged 'conflict'."
    )
    st.dataframe(
        found,
        hide_index=True,
        width="stretch",
        column_config={
            "claimed_values": st.column_config.TextColumn("claimed values (in the field's unit)"),
            "quotes": st.column_config.TextColumn("quotes", width="large"),
            "source_urls": st.column_config.TextColumn("source URLs"),
        },
    )


def show_status(catalog: Catalog) -> None:
    """The status tab: last refresh, stale providers and each provider's last outcome."""
    st.subheader("Catalog status")
    st.caption(f"Catalog file: {catalog.path}")
    latest = catalog.load("latest_refresh")
    if latest.empty:
        st.info("No refresh recorded in this catalog.")
    else:
        r = latest.iloc[0]
        cols = st.columns(3)
        cols[0].metric("last refresh finished", when(r["finished_at"]))
        cols[1].metric("mode", r["mode"])
        cols[2].metric("exit code", int(r["exit_code"]))
    stale = catalog.load("stale_providers")
    if stale.empty:
        st.success("No stale rows: no provider's last refresh failed.")
    for s in stale.itertuples():
        st.warning(
            f"{s.provider}: {s.stale_rows} rows stale since {when(s.stale_since)} "
            f"(last success {when(s.last_success_at)}). Cause: {s.stale_cause}"
        )
    status = catalog.load("provider_status")
    if status["outcome"].isna().all():
        st.info("No per-provider refresh outcome recorded (a catalog seeded from the shipped snapshot).")
    for s in status[status["outcome"] == "curated"].itertuples():
        st.info(
            f"{s.provider}: its pages could not be scraped, so its rows come from curated facts ({s.cause})"
        )
    st.dataframe(
        status,
        hide_index=True,
        width="stretch",
        column_order=[
            "provider",
            "outcome",
            "rows",
            "stale_rows",
            "last_success_at",
            "cause",
            "refreshed_at",
            "mode",
            "documents",
            "rows_before",
            "rows_after",
        ],
        column_config={
            "rows": st.column_config.NumberColumn("rows now"),
            "stale_rows": st.column_config.NumberColumn("stale rows"),
            "last_success_at": st.column_config.DatetimeColumn("last success (UTC)"),
            "refreshed_at": st.column_config.DatetimeColumn("refreshed at (UTC)"),
            "cause": st.column_config.TextColumn("cause", width="large"),
        },
    )


def show_changes(catalog: Catalog) -> None:
    """The figures that changed between the refreshes recorded in the catalog."""
    st.subheader("Changes between refreshes")
    changed = catalog.load("recent_changes")
    if changed.empty:
        st.info("No figure has changed between the refreshes recorded in this catalog.")
        return
    st.dataframe(
        changed,
        hide_index=True,
        width="stretch",
        column_order=["changed_at", "provider", "instance_type", "field", "before", "after", "unit", "quote"],
        column_config={
            "changed_at": st.column_config.DatetimeColumn("changed at (UTC)"),
            "quote": st.column_config.TextColumn("now quoted as", width="large"),
        },
    )


# ---------------------------------------------------------------------------------------------


def main() -> None:
    """The Streamlit page."""
    st.set_page_config(page_title="GPU interconnect catalog", layout="wide")
    st.title("GPU interconnect catalog")
    path = db_path()
    if not path.exists():
        st.error(f"No catalog at {path}. Run `make app` (builds it) or `make refresh`.")
        return
    catalog = Catalog.at(path)
    try:
        providers = catalog.load("providers")
        if not providers:
            st.info("The catalog is empty.")
            return
        filters = sidebar_filters(providers)
        ranked = catalog.load("ranking", filters)
    except duckdb.Error as err:
        st.error(f"Cannot read the catalog at {path}: {err}")
        return
    st.caption(
        "Which cloud GPU instances can run tensor parallelism, and which confine you to one node? "
        f"{len(ranked)} instance types match from {len(providers)} providers in the catalog."
    )
    selected = instance_picker(ranked)
    tabs = st.tabs(
        ["Ranking", "Bandwidth cliff", "Provenance", "What's missing", "Conflicts", "Catalog status"]
    )
    with tabs[0]:
        show_ranking(ranked, filters)
    with tabs[1]:
        show_cliff(catalog, selected)
    with tabs[2]:
        show_provenance(catalog, selected)
    with tabs[3]:
        show_missing(catalog)
    with tabs[4]:
        show_conflicts(catalog)
    with tabs[5]:
        show_status(catalog)
        show_changes(catalog)


if __name__ == "__main__":
    main()
