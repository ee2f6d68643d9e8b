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
from ui.sidebar import BIND
from ui.units import Units


def order_picker(priced: bool) -> str:
    """How the link view is ordered (fabric, fastest first, by default), in the sidebar and the URL."""
    options = [*tables.ORDERS, *(tables.PRICE_ORDERS if priced else {})]
    return st.sidebar.selectbox("Order the table by", options, key="sort", bind=BIND) or options[0]


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


def show(ranked: pd.DataFrame, shown: pd.DataFrame, units: Units, priced: bool, order: str) -> None:
    """Draw the link view: ``shown`` is ``ranked`` as ``tables.ranking_frame`` lays it out."""
    st.subheader("Links only: bandwidths per instance")
    st.caption(
        f"Ordered by {order}; rows without that figure come last. Figures in {units.label}; "
        f"'{tables.MISSING}' means the catalog has none (see What's missing). To rank by what the links "
        "cost a model in time and money, choose 'Plan a model'."
    )
    if ranked.empty:
        st.info("No instance matches the filters. Widen them in the sidebar.")
        return
    st.caption(" · ".join(f"{label}: **{value}**" for label, value in tiles(ranked)))
    st.dataframe(
        shown,
        hide_index=True,
        column_config=tables.column_config(units, priced),
        height=460,
        placeholder=tables.MISSING,
        lazy=len(shown) > tables.LAZY_ROWS,
    )
    tables.downloads(shown, "links", "ranking")
