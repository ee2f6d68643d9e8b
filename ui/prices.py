"""One instance's prices in the Instance tab: one line per region as its source publishes it, with the
source's own words and where they stand (``catalog.read.prices.region_prices``)."""

from __future__ import annotations

import streamlit as st

from ui import tables
from ui.measures import Loader
from ui.text import link_or_none, plural, when

SOURCE = st.column_config.LinkColumn("source", display_text=r"https?://([^/]+)/.*")


def show_prices(load: Loader, provider: str, instance_type: str) -> None:
    """Prices per region (on-demand, spot), cheapest first, each with its quote and source."""
    st.markdown("**Prices per region**")
    found = load("region_prices", provider, instance_type)
    if found.empty:
        st.caption("No price source lists this instance type: its price is missing, never guessed.")
        return
    on_demand = found["usd_per_hour"].notna()
    st.caption(
        f"{plural(int(on_demand.sum()), 'region')} with an on-demand price"
        + (
            f", {int(found['spot_usd_per_hour'].notna().sum())} with a spot price"
            if found["spot_usd_per_hour"].notna().any()
            else ""
        )
        + ". As published, cheapest on-demand first; nothing averaged."
    )
    shown = found.assign(
        source_url=found["source_url"].map(link_or_none),
        fetched_at=found["fetched_at"].map(when),
    ).rename(
        columns={
            "usd_per_hour": "USD/hour on demand",
            "spot_usd_per_hour": "USD/hour spot",
            "quote": "quote (the source's own words)",
            "context": "where in the source",
            "source_url": "source",
            "fetched_at": "read at",
        }
    )
    st.dataframe(
        shown,
        hide_index=True,
        placeholder=tables.MISSING,
        column_config={
            "USD/hour on demand": st.column_config.NumberColumn(format=tables.DOLLARS),
            "USD/hour spot": st.column_config.NumberColumn(format=tables.DOLLARS),
            "source": SOURCE,
        },
    )
