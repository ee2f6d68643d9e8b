"""The Ranking tab's link view ("Links only"): the rows the question selects with their bandwidths in
the chosen units, ordered by a column (fabric, GPU-to-GPU, memory, GPUs, price, price per fabric
GB/s), tiles that say what the figures rest on, the table that fits at 1280x800, and downloads of
exactly what is shown. No index: every number is a bandwidth, a count or a price. The planner's view
of the same tab is ``ui.planning``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from normalize.vocab import GPU_FABRICS
from ui import tables
from ui.sidebar import MAIN_ONLY, whole_page
from ui.text import show_all
from ui.units import Units


def order_picker(priced: bool, box=None) -> None:
    """How the link view is ordered (fabric, fastest first, by default), in the sidebar (or ``box``
    there) and the URL; a change reruns only the main area."""
    (box or st.sidebar).selectbox("Order the table by", _orders(priced), key=ORDER_KEY, **MAIN_ONLY)


def order_asked(priced: bool) -> str:
    """The order ``order_picker`` holds now (its first option until changed)."""
    options = _orders(priced)
    picked = st.session_state.get(ORDER_KEY)
    return picked if picked in options else options[0]


def _orders(priced: bool) -> list[str]:
    """The link view's orders: by price too when the catalog has prices."""
    return [*tables.ORDERS, *(tables.PRICE_ORDERS if priced else {})]


def tiles(ranked: pd.DataFrame) -> list[tuple[str, str]]:
    """Counts that say what the figures rest on (they follow the filters and the 'inferred' toggle,
    which blanks inferred figures)."""
    multi = ranked["intra_node_link"] != "single-gpu"
    confined = ranked["confined_to_one_node"].astype("boolean")
    on_gpu_fabric = ranked["inter_node_fabric"].isin([str(f) for f in GPU_FABRICS])
    return [
        ("rows", str(len(ranked))),
        ("TP spans instances (rack-scale NVLink)", str(int((confined == False).sum()))),  # noqa: E712
        ("on a GPU fabric (InfiniBand, EFA, RoCE, TCPX)", str(int(on_gpu_fabric.sum()))),
        (
            "GPU-to-GPU bandwidth not known",
            str(int((multi & ranked["intra_node_gbytes_per_s"].isna()).sum())),
        ),
        ("fabric bandwidth not known", str(int(ranked["fabric_gbytes_per_s_per_gpu"].isna().sum()))),
    ]


def _sort_by_header(key: str, units: Units, priced: bool) -> None:
    """A click on a grid header selects its column: order the table by it (sidebar, URL, caption and
    downloads follow)."""
    state = st.session_state.get(key)
    columns = list(state.selection.columns) if state is not None else []
    order = tables.order_of_header(columns[0], units, priced) if columns else None
    if order is not None:
        whole_page()  # the sidebar's order picker follows
        st.session_state[ORDER_KEY] = order


ORDER_KEY = "sort"
#: The URL parameter that holds the link view's hidden columns.
HIDE_KEY = "hide"


def show(
    ranked: pd.DataFrame, shown: pd.DataFrame, units: Units, priced: bool, order: str, prices: str = ""
) -> None:
    """Draw the link view: ``shown`` is ``ranked`` as ``tables.ranking_frame`` lays it out."""
    st.subheader("Links only: bandwidths per instance")
    about = (
        f"Ordered by {order}; rows without that figure come last (click a column's header to order by "
        f"it). Figures in {units.label}: GPU-to-GPU two-way (both directions added, as NVIDIA "
        "states it), fabric and front-end one way; each header says so (hover a header to read it "
        f"in full). '{tables.MISSING}' means the "
        "catalog has none (see What's missing). To rank by what the links cost a model in time and "
        "money, choose 'Plan a model'."
    )
    # One text element from here to the table (a region is the catalog's text: escaped, never
    # markdown): each element more is redrawn on every rerun.
    blocks = [(about, "caption")]
    if priced and prices:
        blocks.append((f"Prices: {prices}.", "caption"))
    if ranked.empty:
        show_all(blocks)
        st.info("No instance matches the filters. Widen them in the sidebar.")
        return
    if (st.session_state.get(ORDER_KEY) or order) != order:
        st.rerun()  # a header click chose another order: the sidebar, the URL and the caption follow
    blocks.append((" · ".join(f"{label}: {value}" for label, value in tiles(ranked)), "caption"))
    show_all([*blocks, (tables.FULL_TEXT_HINT, "caption")])
    visible = tables.grid(
        shown,
        key=tables.RANKING_GRID,
        on_header=lambda key: _sort_by_header(key, units, priced),
        column_config=tables.column_config(units, priced),
        height=460,
        hide_key=HIDE_KEY,
        hint=False,
    )
    tables.downloads(visible, "links", "ranking")
