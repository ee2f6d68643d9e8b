"""Streamlit app: which cloud GPU instances can run tensor parallelism, and which confine you to one node.

Run with `make app`. The questions live in `catalog/read/`, the layout pieces in `ui/`; this file
puts them on the page. Every sidebar widget, the selected and compared instances and the open tab
are in the URL, so a link reproduces the view. Only the open tab is computed.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pandas as pd
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
    """The Streamlit page: the sidebar, then the main area (``_main_area``)."""
    st.set_page_config(page_title="GPU interconnect catalog", layout="wide")
    st.html(f"<style>{COMPACT}{STYLE}</style>")
    st.title("GPU interconnect catalog")
    st.session_state[sidebar.MAIN_DRAWN_KEY] = False  # until this run draws the main area
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
        if not planning_asked:
            ranking.order_picker(shape.priced, box)
        regions = catalog.load("regions") if "current_prices" in shape.tables else []
        sidebar.question(facets, shape.priced, regions)
    except (duckdb.Error, ValueError) as err:  # ValueError: a value no catalog of ours holds (tampered)
        show(f"Cannot read the catalog at {path}: {str(err)[:500]}", "error")
        return
    _main_area(catalog, opened, (facets, shape, regions), plan_question)


@dataclass(frozen=True)
class Asked:
    """What the sidebar asks now, and the catalog's answer: the ranked rows, and the plan when a model
    is planned."""

    question: sidebar.Question
    plan: planning.PlanQuestion | None
    order: str
    ranked: pd.DataFrame
    planned: pd.DataFrame | None


def _asked(catalog: Catalog, priced: bool, facets: dict, plan_question) -> Asked:
    """Read the sidebar's widgets from the session state (``sidebar.asked``) and ask the catalog."""
    question = sidebar.asked(facets, priced)
    plan = plan_question and planning.ranked_as_asked(plan_question, priced)
    ranked = catalog.load("ranking", question.filters)
    planned = catalog.plan(plan, question.filters) if plan else None
    return Asked(question, plan, "" if plan else ranking.order_asked(priced), ranked, planned)


@st.fragment(key=sidebar.MAIN)
def _main_area(catalog: Catalog, opened: dict, read: tuple, plan_question) -> None:
    """Everything below the title, from what the sidebar asks now. A fragment: a filter that changes
    nothing in the sidebar reruns only this (``sidebar.main_only``), and the browser does not redraw
    the sidebar. Its arguments are the last full run's: the catalog's facets, and the plan's model and
    workload, which only a full run changes; everything else is read here."""
    st.session_state[sidebar.MAIN_DRAWN_KEY] = True
    if _replaced(catalog):  # the sidebar's facets and regions came from the file it replaced
        st.rerun()
    facets, shape, regions = read
    try:
        asked = _asked(catalog, shape.priced, facets, plan_question)
    except (duckdb.Error, ValueError) as err:  # ValueError: a value no catalog of ours holds (tampered)
        show(f"Cannot read the catalog at {catalog.path}: {str(err)[:500]}", "error")
        return
    filters, units = asked.question.filters, asked.question.units
    header(catalog, len(asked.ranked), asked.ranked["provider"].nunique(), facets)
    tables.about(
        [
            f"interconnect-catalog, data as of {health.data_as_of_text(catalog.load('data_as_of'))}",
            f"filter: {describe(filters)}",
            f"units: {units.label}" + (f"; order: {asked.order}" if asked.order else ""),
        ]
    )
    shown = (
        catalog.plan_shown(asked.plan, filters)
        if asked.planned is not None and asked.plan
        else catalog.ranking_shown(filters, units, shape.priced, asked.order)
    )
    links.warn_once(opened, lambda: allowed_values(facets, shown, shape.priced, regions))
    _tabs_fragment(_views(catalog, asked, shown, shape.priced), catalog)


def _replaced(catalog: Catalog) -> bool:
    """Whether the file at the catalog's path is no longer the one the last full run read (a refresh
    swapped it in, or it is gone)."""
    try:
        return Catalog.at(catalog.path).version != catalog.version
    except OSError:
        return True


def _views(catalog: Catalog, asked: Asked, shown: pd.DataFrame, priced: bool) -> tuple:
    """The pickers; then each tab's view, to draw when it is open."""
    selected, chosen = instances.pickers(shown)
    filters, units, plan, planned, ranked = (
        asked.question.filters, asked.question.units, asked.plan, asked.planned, asked.ranked
    )  # fmt: skip
    return (
        lambda: (
            planning.show(planned, plan, filters if priced else None, shown)
            if planned is not None and plan
            else ranking.show(ranked, shown, units, priced, asked.order, sidebar.price_words(filters))
        ),
        lambda: instances.show_compare(
            catalog.load,
            chosen,
            units,
            bool(st.session_state.get("compare")),
            ranked,
            planned,
            filters.region,
        ),
        lambda: instances.show_instance(catalog.load, selected, ranked, units, planned),
        lambda: measures.show(catalog.load, ranked),
        lambda: health.show_missing(catalog.load, filters),
        lambda: health.show_conflicts(catalog.load, filters),
        lambda: health.show_status(catalog.load, catalog.path, filters.providers),
    )


@st.fragment
def _tabs_fragment(views, catalog: Catalog) -> None:
    """The tabs and the open one's view. A fragment: opening another tab, or a widget inside a view
    (hidden columns, a column's order in the plan, the claims' history), reruns only this part of the
    page; the sidebar, the header and the pickers are neither recomputed nor redrawn (a tab click
    cost the browser a third more when the whole page was redrawn). What changes the question reruns
    the main area (``_main_area``, this fragment's parent) or the whole page; so does a tab opened
    after a refresh swapped in a new catalog file."""
    if _replaced(catalog):
        st.rerun()
    tabs = st.tabs(TABS, key=instances.VIEW_KEY, bind=sidebar.BIND)
    for label, tab, view in zip(TABS, tabs, views, strict=True):
        if tab.open:
            with tab:
                try:
                    view()
                except (duckdb.Error, ValueError) as err:  # a tampered catalog: one line, no traceback
                    show(f"Cannot show {label} from the catalog at {catalog.path}: {str(err)[:500]}", "error")


if __name__ == "__main__":
    main()
