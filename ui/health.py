"""The catalog's health tabs, each following the sidebar's filters: what is missing and why, which
claims conflict (one line per claim, with the value the row kept), and the catalog's status (when
the file was built, how old its data is, each provider's last outcome, what changed)."""

from __future__ import annotations

import numbers
import re
from pathlib import Path

import pandas as pd
import streamlit as st

from catalog.read.filters import Filters
from ui import tables
from ui.data import derived
from ui.text import day, field_label, link_or_none, plural, show, when

SUMMARY_HEADERS = {
    "provider": "provider",
    "rows": "rows shown",
    "priced_rows": "rows with an on-demand price",
    "missing_intra_bw_rows": "GPU-to-GPU bandwidth missing",
    "missing_inter_bw_rows": "fabric bandwidth missing",
    "unknown_intra_link_rows": "GPU-to-GPU link unknown",
    "unknown_fabric_rows": "fabric type unknown",
    "missing_gpu_count_rows": "GPU count missing",
    "inferred_intra_bw_rows": "GPU-to-GPU inferred",
    "unit_suspect_rows": "unit corrected",
    "conflict_rows": "conflicting claims",
    "stale_rows": "stale",
    "curated_rows": "curated",
}
SOURCE_LINK = st.column_config.LinkColumn("source", display_text=r"https?://([^/]+)/.*")


def show_missing(load, filters: Filters) -> None:
    """The What's missing tab: one line per missing item with its reason, then counts per provider."""
    st.subheader("What's missing, and why")
    summary = load("missing_summary", filters)
    if summary.empty:
        st.info("No instance matches the filters.")
        return
    st.caption(
        "Missing is a finding: nothing here is filled in or guessed. One line per missing figure of the "
        "rows the filters show, with why the catalog does not have it and the page it was looked for in."
    )
    items = load("missing_items", filters)
    if items.empty:
        st.success("Every row shown states its GPU count, links, fabric and bandwidths.")
    else:
        _missing_items(items)
    st.markdown(
        "**Per provider** (counts of rows shown; inferred rows take the GPU-to-GPU figure from the "
        "GPU datasheet, not from the provider)"
    )
    unpriced = summary[summary["priced_rows"] < summary["rows"]]
    if not unpriced.empty:
        show(  # provider names are the catalog's text: never markdown
            "Prices: "
            + "; ".join(
                f"{p} {n} of {r} rows priced"
                for p, n, r in unpriced[["provider", "priced_rows", "rows"]].itertuples(index=False)
            )
            + ". A row without a price is never ranked by cost."
        )
    st.dataframe(summary.rename(columns=SUMMARY_HEADERS), hide_index=True)


def missing_frame(items: pd.DataFrame) -> pd.DataFrame:
    """The missing items as shown: readable headers, empty notes as none, links checked."""
    return pd.DataFrame(
        {
            "instance": items["instance_type"],
            "provider": items["provider"],
            "missing": items["missing"],
            "why": items["why"],
            "in detail": items["detail"],
            "GPU": items["gpu_model"],
            "row notes": items["notes"].replace("", None),
            "source": items["source_url"].map(link_or_none),
        }
    )


def _missing_items(items: pd.DataFrame) -> None:
    shown = derived(missing_frame, items)
    st.caption(f"{plural(len(shown), 'missing item')} in {plural(items['instance_type'].nunique(), 'row')}.")
    st.dataframe(
        shown,
        hide_index=True,
        placeholder=tables.MISSING,
        lazy=len(shown) > tables.LAZY_ROWS,
        column_config={
            "instance": st.column_config.TextColumn(width=180, pinned=True),
            "why": st.column_config.TextColumn(width=190),
            "in detail": st.column_config.TextColumn(width="large"),
            "row notes": st.column_config.TextColumn(width="large"),
            "source": SOURCE_LINK,
        },
    )
    tables.downloads(shown, "missing", "missing")


def conflicts_frame(found: pd.DataFrame) -> pd.DataFrame:
    """The conflicting claims as shown: figure names in words, values with their unit, links checked."""
    values = tables.claim_values(found)
    return pd.DataFrame(
        {
            "instance": found["instance_type"],
            "provider": found["provider"],
            "figure": found["field"].map(field_label),
            "value": values,
            "kept by the row": found["kept"].map({True: "yes", False: "no"}),
            "why": found["why"],
            "quote (the source's own words)": found["quote"],
            "source": found["source_url"].map(link_or_none),
        }
    )


def show_conflicts(load, filters: Filters) -> None:
    """The Conflicts tab: every claim of a field whose claims disagree, and which value the row kept."""
    st.subheader("Conflicting claims")
    found = load("conflicts", filters)
    if found.empty:
        st.success("No field of the rows shown has current claims that disagree.")
        return
    st.caption(
        "One line per claim. The row keeps one value per field (a stated figure before an inferred one, "
        "then the first read) and is flagged 'conflict'; the other claims stay on record."
    )
    shown = derived(conflicts_frame, found)
    st.dataframe(
        shown,
        hide_index=True,
        placeholder=tables.MISSING,
        lazy=len(shown) > tables.LAZY_ROWS,
        column_config={
            "why": st.column_config.TextColumn(width="large"),
            "quote (the source's own words)": st.column_config.TextColumn(width="large"),
            "source": SOURCE_LINK,
        },
    )
    tables.downloads(shown, "conflicts", "conflicts")


def data_as_of_text(as_of: pd.DataFrame) -> str:
    """'2026-12-02' or '2026-11-30 to 2026-12-02': the days the providers' figures were read."""
    stamps = [*as_of["first_fetched_at"], *as_of["last_fetched_at"], *as_of["read_on"]]
    days = sorted({day(t) for t in stamps} - {"unknown"})
    if not days:
        return "unknown"
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


#: How a file was built, from ``refreshes.mode``: our words only (the text goes through markdown).
BUILT_BY = {
    "snapshot": "from the shipped snapshot",
    "live": "by a live refresh",
    "mirror": "by a mirror refresh",
    "reparse": "by a reparse",
}


def built_text(latest: pd.DataFrame) -> str:
    """When and how the catalog file itself was built."""
    if latest.empty:
        return "no refresh recorded"
    r = latest.iloc[0]
    return f"{when(r['finished_at'])} {BUILT_BY.get(r['mode'], 'by a refresh of an unknown kind')}"


def exit_code_text(value: object) -> str:
    """A refresh's exit code as our own digits; anything else a catalog holds there (text, in a
    tampered file) is "unreadable", never passed on: the status line is markdown."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    text = value.strip() if isinstance(value, str) else ""
    return text if re.fullmatch(r"-?\d{1,3}", text) else "unreadable"


#: What a refresh's exit code says, in words (``catalog.cli``).
EXIT_WORDS = {0: "every provider succeeded", 1: "a provider failed: its last good rows were kept, stale"}


def exit_text(latest: pd.DataFrame) -> str:
    """How the build that made the file ended, in words."""
    if latest.empty or pd.isna(latest.iloc[0]["exit_code"]):
        return "no outcome recorded"
    code = exit_code_text(latest.iloc[0]["exit_code"])
    if code == "unreadable":
        return "exit code unreadable"
    return EXIT_WORDS.get(int(code), f"it failed (exit status {code})")


def _only(frame: pd.DataFrame, providers: tuple[str, ...]) -> pd.DataFrame:
    return frame[frame["provider"].isin(providers)] if providers else frame


def show_status(load, path, providers: tuple[str, ...] = ()) -> None:
    """The status tab: when the file was built and how old its data is, stale providers, outcomes;
    per provider for the ``providers`` the sidebar selects (all when empty)."""
    st.subheader("Catalog status")
    latest, as_of = load("latest_refresh"), _only(load("data_as_of"), providers)
    show(f"The catalog file {Path(path).resolve()} was built {built_text(latest)}: {exit_text(latest)}.")
    st.markdown(f"**Data as of** {data_as_of_text(as_of)} (when the providers' pages were read)")
    if providers:
        show(f"Only the providers the sidebar selects: {', '.join(providers)}.")  # the catalog's names
    st.caption("Each provider's figures were read as below.")
    st.dataframe(
        as_of.assign(
            first_fetched_at=as_of["first_fetched_at"].map(when),
            last_fetched_at=as_of["last_fetched_at"].map(when),
            read_on=as_of["read_on"].map(lambda t: day(t) if pd.notna(t) else tables.MISSING),
        ).rename(
            columns={
                "first_fetched_at": "first page read",
                "last_fetched_at": "last page read",
                "read_on": "curated facts read on",
                "claims": "claims",
            }
        ),
        hide_index=True,
    )
    _stale_and_outcomes(load, providers, latest)
    show_changes(load, providers)


OUTCOME_HEADERS = {
    "provider": "provider",
    "outcome": "outcome",
    "rows": "rows now",
    "stale_rows": "stale rows",
    "last_success_at": "last success",
    "cause": "cause",
    "refreshed_at": "refreshed at",
    "mode": "mode",
    "documents": "documents",
}


#: A provider's outcome on a catalog no refresh has run on: seeded from the shipped snapshot.
SEEDED = "seeded from the shipped snapshot (no refresh run here)"


def outcome_words(outcomes: pd.DataFrame, latest: pd.DataFrame) -> pd.Series:
    """Each provider's last outcome; on a seeded catalog (no outcome recorded), what it is instead."""
    seeded = not latest.empty and latest.iloc[0]["mode"] == "snapshot"
    fallback = SEEDED if seeded else "no refresh recorded"
    return outcomes["outcome"].where(outcomes["outcome"].notna(), fallback)


def _when_or_none(stamp) -> str | None:
    text = when(stamp)
    return None if text == "unknown" else text


def _stale_and_outcomes(load, providers: tuple[str, ...], latest: pd.DataFrame) -> None:
    stale = _only(load("stale_providers"), providers)
    if stale.empty:
        st.success("No stale rows: no provider's last refresh failed.")
    for r in stale.to_dict("records"):
        show(
            f"{r['provider']}: {plural(int(r['stale_rows']), 'row')} stale since {when(r['stale_since'])} "
            f"(last success {when(r['last_success_at'])}). Cause: {r['stale_cause']}",
            "warning",
        )
    outcomes = _only(load("provider_status"), providers)
    if outcomes["outcome"].isna().all():
        st.info(
            "No per-provider refresh outcome recorded: this catalog was seeded from the shipped snapshot."
        )
    outcomes = outcomes.assign(outcome=outcome_words(outcomes, latest))
    for s in outcomes[outcomes["outcome"] == "curated"].itertuples():
        show(
            f"{s.provider}: its pages could not be read, so its rows come from curated facts ({s.cause})",
            "info",
        )
    shown = outcomes.assign(  # a time not recorded (a seeded catalog) is a gap, not "unknown"
        last_success_at=outcomes["last_success_at"].map(_when_or_none),
        refreshed_at=outcomes["refreshed_at"].map(_when_or_none),
    )
    st.dataframe(
        shown[list(OUTCOME_HEADERS)].rename(columns=OUTCOME_HEADERS),
        hide_index=True,
        placeholder=tables.MISSING,
        column_config={"cause": st.column_config.TextColumn(width="large")},
    )


def show_changes(load, providers: tuple[str, ...] = ()) -> None:
    """The figures that changed between the refreshes recorded in the catalog."""
    st.markdown("**Changes between refreshes**")
    changed = _only(load("recent_changes"), providers)
    if changed.empty:
        st.info("No figure has changed between the refreshes recorded in this catalog.")
        return
    st.dataframe(
        changed.assign(changed_at=changed["changed_at"].map(when), field=changed["field"].map(field_label))[
            ["changed_at", "provider", "instance_type", "field", "before", "after", "unit", "quote"]
        ].rename(
            columns={
                "changed_at": "changed at",
                "instance_type": "instance",
                "field": "figure",
                "quote": "now quoted as",
            }
        ),
        hide_index=True,
        placeholder=tables.MISSING,
        column_config={"now quoted as": st.column_config.TextColumn(width="large")},
    )
