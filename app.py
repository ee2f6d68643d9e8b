"""Streamlit app: which cloud GPU instances can run tensor parallelism, and which confine you to one node.

Run with `make app`. The questions live in `catalog/read/`, the layout pieces in `ui/`; this file
puts them on the page. Every sidebar widget, the selected and compared instances and the open tab
are in the URL, so a link reproduces the view. Only the open tab is computed.
"""

from __future__ import annotations

import duckdb
import streamlit as st

from catalog.read.filters import describe
from ui import health, instances, links, measures, planning, ranking, sidebar, tables
from ui.data import Catalog, db_path
from ui.text import STYLE, plural, show

TABS = ["Ranking", "Compare", "Instance", "Measurements", "What's missing", "Conflicts", "Catalog status"]
# Streamlit's wide layout pads the page by 5-6 rem; tighter, the key columns of the ranking fit
# beside the sidebar at 1280x800 and the table starts above the fold. The grid's own "Download as
# CSV" is hidden: the app's buttons below each table write the same rows with what they are; so is
# the sorting in a column's menu (items 2-4): the browser's order would not reach the downloads or the
# URL, while a header click orders the table on the server (``ui.tables.grid``); and so is hiding a
# column from the grid's menu (its last item) or toolbar: the "Hide columns" box above the table puts
# them in the URL and the downloads (``ui.tables.hidden_columns``).
COMPACT = """
[data-testid="stMainBlockContainer"] {padding: 4rem 1.5rem 2rem 1.5rem;}
[data-testid="stMainBlockContainer"] h1 {font-size: 1.9rem; padding: 0 0 0.5rem 0;}
[data-testid="stSidebarUserContent"] {padding-top: 0.5rem;}
[data-testid="stElementToolbarButton"]:has(button[aria-label="Download as CSV"]) {display: none;}
[data-testid="stElementToolbarButton"]:has(button[aria-label="Show/hide columns"]) {display: none;}
[data-testid="stDataFrameColumnMenu"] [role="menu"] > :last-child {display: none;}
[data-testid="stDataFrameColumnMenu"] [role="menu"] > :is(:nth-child(2), :nth-child(3), :nth-child(4)) {
  display: none;
}
"""


def header(catalog: Catalog, shown_rows: int, shown_providers: int, facets: dict) -> None:
    """What is shown out of what the catalog holds, and how old the data is."""
    as_of = health.data_as_of_text(catalog.load("data_as_of"))
    built = health.built_text(catalog.load("latest_refresh"))
    st.caption(
        f"{plural(shown_rows, 'instance type')} from {plural(shown_providers, 'provider')} shown, of "
        f"{facets['rows']} from {len(facets['providers'])} in the catalog. "
        f"Data as of {as_of} (when the providers' pages were read); file built {built}."
    )


def allowed_values(facets: dict, shown, priced: bool, regions: list[str]) -> dict[str, links.Allowed]:
    """What each URL parameter may hold in this catalog (``ui.links.problems``)."""
    from normalize.vocab import FABRIC_LABELS, LINK_LABELS
    from planner.models import preset_names

    names = set(shown["instance"] + " (" + shown["provider"] + ")")
    return {
        "mode": list(sidebar.MODES),
        "unit": ["GB/s", "Gb/s"],
        "per": ["GPU", "node"],
        "task": list(planning.TASKS),
        "by": list(planning.BY),
        "precision": ["bf16", "fp8"],
        "view": TABS,
        "sort": [*tables.ORDERS, *(tables.PRICE_ORDERS if priced else {})],
        "model": preset_names(),
        "provider": facets["providers"],
        "gpus": [sidebar.count_label(c) for c in facets["gpu_counts"]],
        "link": [str(label) for label in LINK_LABELS.values()],
        "fabric": [str(label) for label in FABRIC_LABELS.values()],
        "domain": ["any", *(str(d) for d in facets["domain_gpus"] if d > 1)],
        "peer": list(sidebar.PEER_ACCESS),
        "region": [sidebar.ANY_REGION, *regions],
        "price_kind": list(sidebar.PRICE_KINDS),
        "instance": names.__contains__,
        "compare": names.__contains__,
        "hide": list(shown.columns),
        "plan_hide": list(shown.columns),
    }


def main() -> None:
    """The Streamlit page."""
    st.set_page_config(page_title="GPU interconnect catalog", layout="wide")
    st.html(f"<style>{COMPACT}{STYLE}</style>")
    st.title("GPU interconnect catalog")
    path = db_path()
    if not path.exists():
        show(f"No catalog at {path}. Run `make app` (builds it) or `make refresh`.", "error")
        return
    catalog = Catalog.at(path)
    opened = links.opened_with()
    try:
        facets, shape = catalog.load("facets"), catalog.load("shape")
        if not facets["providers"]:
            st.info("The catalog is empty.")
            return
        planning_asked = sidebar.mode() == "plan"
        # The model and workload, or the link view's order, in one box: the filters below keep their
        # places in the sidebar whichever it holds, so switching redraws only the box (every filter
        # moved one place and the browser redrew the whole sidebar).
        box = st.sidebar.container()
        plan_question = planning.plan_question(shape.priced, box) if planning_asked else None
        order = "" if planning_asked else ranking.order_picker(shape.priced, box)
        regions = catalog.load("regions") if "current_prices" in shape.tables else []
        question = sidebar.question(facets, shape.priced, regions)
        ranked = catalog.load("ranking", question.filters)
        planned = catalog.plan(plan_question, question.filters) if plan_question else None
    except (duckdb.Error, ValueError) as err:  # ValueError: a value no catalog of ours holds (tampered)
        show(f"Cannot read the catalog at {path}: {str(err)[:500]}", "error")
        return
    header(catalog, len(ranked), ranked["provider"].nunique(), facets)
    units = question.units
    tables.about(
        [
            f"interconnect-catalog, data as of {health.data_as_of_text(catalog.load('data_as_of'))}",
            f"filter: {describe(question.filters)}",
            f"units: {units.label}" + (f"; order: {order}" if order else ""),
        ]
    )
    shown = (
        catalog.plan_shown(plan_question, question.filters)
        if planned is not None and plan_question
        else catalog.ranking_shown(question.filters, units, shape.priced, order)
    )
    links.warn_once(opened, lambda: allowed_values(facets, shown, shape.priced, regions))
    selected, chosen = instances.pickers(shown)
    views = (
        lambda: (
            planning.show(planned, plan_question, question.filters if shape.priced else None, shown)
            if planned is not None and plan_question
            else ranking.show(
                ranked, shown, units, shape.priced, order, sidebar.price_words(question.filters)
            )
        ),
        lambda: instances.show_compare(
            catalog.load,
            chosen,
            units,
            bool(st.session_state.get("compare")),
            ranked,
            planned,
            question.filters.region,
        ),
        lambda: instances.show_instance(catalog.load, selected, ranked, units, planned),
        lambda: measures.show(catalog.load, ranked),
        lambda: health.show_missing(catalog.load, question.filters),
        lambda: health.show_conflicts(catalog.load, question.filters),
        lambda: health.show_status(catalog.load, path, question.filters.providers),
    )
    _tabs_fragment(views, path)


@st.fragment
def _tabs_fragment(views, path) -> None:
    """The tabs and the open one's view. A fragment: opening another tab, or a widget inside a view
    (hidden columns, a column's order in the plan, the claims' history), reruns only this part of the
    page; the sidebar, the header and the pickers are neither recomputed nor redrawn (a tab click
    cost the browser a third more when the whole page was redrawn). What changes the question
    reruns the whole page."""
    tabs = st.tabs(TABS, key=instances.VIEW_KEY, bind=sidebar.BIND)
    for label, tab, view in zip(TABS, tabs, views, strict=True):
        if tab.open:
            with tab:
                try:
                    view()
                except (duckdb.Error, ValueError) as err:  # a tampered catalog: one line, no traceback
                    show(f"Cannot show {label} from the catalog at {path}: {str(err)[:500]}", "error")


if __name__ == "__main__":
    main()
