"""The Ranking tab: the rows the question selects, ordered for the workload (or by a column), with the
index rule, tiles that follow the workload, the table that fits at 1280x800, the full 'why', and
downloads of exactly what is shown.

Where the planner lands (issue 13), its ranking (time and cost for a model) takes the index's place
in this tab; prices (issue 11) already show as a column and a filter when the catalog has them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from catalog.read.scoring import SCORING, SCORING_SHORT
from normalize.vocab import GPU_FABRICS
from ui import tables
from ui.sidebar import WORKLOAD_TITLES, Question
from ui.text import show as show_text

#: Rows of the "why, in full" expander (the downloads hold every row).
WHY_ROWS = 50


def tiles(ranked: pd.DataFrame, workload: str) -> list[tuple[str, str]]:
    """Counts that say what the workload's ranking rests on (they change with it and with the
    'inferred' toggle, which blanks inferred figures)."""
    ranked_rows = ("rows ranked", f"{int(ranked['rank'].notna().sum())} of {len(ranked)}")
    multi = ranked["intra_node_link"] != "single-gpu"
    intra_unknown = int((multi & ranked["intra_node_gbytes_per_s"].isna()).sum())
    fabric_unknown = int(ranked["fabric_gbytes_per_s_per_gpu"].isna().sum())
    if workload == "tensor":
        confined = ranked["confined_to_one_node"].astype("boolean")
        return [
            ranked_rows,
            ("TP spans instances (rack-scale NVLink)", str(int((confined == False).sum()))),  # noqa: E712
            ("TP confined to one node", str(int((confined == True).sum()))),  # noqa: E712
            ("GPU-to-GPU bandwidth not known", str(intra_unknown)),
        ]
    on_gpu_fabric = ranked["inter_node_fabric"].isin([str(f) for f in GPU_FABRICS])
    if workload == "pipeline":
        return [
            ranked_rows,
            ("on a GPU fabric (InfiniBand, EFA, RoCE, TCPX)", str(int(on_gpu_fabric.sum()))),
            ("Ethernet only", str(int((ranked["inter_node_fabric"] == "ethernet").sum()))),
            ("fabric bandwidth not known", str(fabric_unknown)),
        ]
    both = ranked["fabric_gbytes_per_s_per_gpu"].notna() & (
        ~multi | ranked["intra_node_gbytes_per_s"].notna()
    )
    return [
        ranked_rows,
        ("fabric and GPU-to-GPU both known", str(int(both.sum()))),
        ("fabric bandwidth not known", str(fabric_unknown)),
        ("GPU-to-GPU bandwidth not known", str(intra_unknown)),
    ]


def show(ranked: pd.DataFrame, shown: pd.DataFrame, question: Question, priced: bool) -> None:
    """Draw the tab: ``shown`` is ``ranked`` as ``tables.ranking_frame`` lays it out."""
    workload, units = question.filters.workload, question.units
    st.subheader(WORKLOAD_TITLES[workload])
    st.caption(
        f"{SCORING_SHORT[workload]} The index compares links; it is not a time or a cost. "
        f"Figures in {units.label}; '{tables.MISSING}' means the catalog has none (see What's missing)."
    )
    with st.expander("The rule in full"):
        st.markdown(SCORING[workload])
    if ranked.empty:
        st.info("No instance matches the filters. Widen them in the sidebar.")
        return
    st.caption(" · ".join(f"{label}: **{value}**" for label, value in tiles(ranked, workload)))
    st.dataframe(
        shown,
        hide_index=True,
        column_config=tables.column_config(units, workload, priced),
        height=460,
        placeholder=tables.MISSING,
        lazy=len(shown) > tables.LAZY_ROWS,
    )
    tables.downloads(shown, f"ranking-{workload}", "ranking")
    with st.expander(f"Why, in full (the first {min(WHY_ROWS, len(shown))} rows; the downloads hold all)"):
        head = shown.head(WHY_ROWS)
        show_text("\n".join(f"{i} — {why}" for i, why in zip(head["instance"], head["why"], strict=True)))
