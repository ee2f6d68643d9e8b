"""``python -m ui.serve [streamlit options]``: serve the app (what ``make app`` runs).

It is ``streamlit run app.py`` with one difference: the modules every page needs (pandas, pyarrow,
DuckDB, the read side, the views) are imported before the server starts, in the server's process,
so the first visitor does not wait for them (about 1.5 s on the 2-core machine; Streamlit would
import them only when the first session runs the script); the first page's questions are asked
once (``warm``), so the first visitor finds their answers cached; and, while the server starts and
waits for visitors, a background thread asks what the first page's other tabs and the ready-made
questions ask (``warm_more``), so those too are answered from the cache the first time.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def preload() -> None:
    """Import what the app's first run would import, build the unit registry the planner's first
    plan would build (about 0.5 s), and ask once what Streamlit asks before the process's first
    element: whether it runs in a REPL (``env_util.is_repl``, an ``inspect.stack()`` that maps the
    file of every loaded module: 0.13 s of the first visitor's run with pandas, pyarrow and DuckDB
    loaded; inspect keeps the map, so the visitor's own check finds it built)."""
    import streamlit.web.bootstrap  # noqa: F401  (the server's modules, loaded before the walk below)
    from streamlit import env_util

    import catalog.read.conflicts
    import catalog.read.missing
    import catalog.read.plan
    import catalog.read.scoring  # noqa: F401
    import ui.data
    import ui.health
    import ui.instances
    import ui.measures
    import ui.planning
    import ui.ranking  # noqa: F401
    from planner.hardware import fabric_gbytes_per_s_per_gpu

    fabric_gbytes_per_s_per_gpu(3200.0, 8)
    env_util.is_repl()


def warm() -> None:
    """Ask, once, what the first visitor's page asks of the catalog (its shape and facets, the data's
    age, the ranking, the planner's ranking of the default model and workload): the answers are then
    in the process's cache (``ui.data``), and the first session finds them there instead of computing
    them (the planner was 39 % of the first render). Nothing when there is no catalog yet."""
    from catalog.read.filters import NO_FILTERS
    from ui.data import Catalog, db_path
    from ui.planning import default_question

    path = db_path()
    if not path.exists():
        return
    catalog = Catalog.at(path)
    shape = catalog.load("shape")
    for query in ("facets", "data_as_of", "latest_refresh"):
        catalog.load(query)
    if "current_prices" in shape.tables:
        catalog.load("regions")
    catalog.load("ranking", NO_FILTERS)
    catalog.plan_shown(default_question(), NO_FILTERS)
    catalog.plan(default_question(), NO_FILTERS)


def first_rows(catalog, shown) -> None:
    """Ask what Compare (the first rows of the table ``shown``) and Instance (its first row) ask."""
    from ui.instances import MAX_COMPARED

    first = list(zip(shown["provider"].head(MAX_COMPARED), shown["instance"].head(MAX_COMPARED), strict=True))
    catalog.load("copy_originals")  # Compare names a local copy's page
    for chosen in (first, first[:1]):
        catalog.load("cliffs", chosen)
        catalog.load("cliff_marks", chosen)
    for provider, instance_type in first:
        catalog.load("region_prices", provider, instance_type)
    if first:
        catalog.load("side_by_side", *first[0])
        catalog.load("claims", *first[0], False)


def warm_more() -> None:
    """Ask, once, what the first page's other tabs and the "Start from a question" menu ask: the
    link view, the first rows' Compare and Instance views, Measurements, What's missing, Conflicts,
    Catalog status, the default model trained, and the ready questions' plans."""
    from dataclasses import replace

    from catalog.read.filters import NO_FILTERS
    from ui import measures, sidebar, tables
    from ui.data import Catalog, db_path
    from ui.planning import default_question, default_train, ready_question
    from ui.units import Units

    path = db_path()
    if not path.exists():
        return
    catalog = Catalog.at(path)
    shape = catalog.load("shape")
    first_rows(catalog, catalog.plan_shown(default_question(), NO_FILTERS))
    for units in (Units(), Units(bits=True, per_node=True)):
        first_rows(catalog, catalog.ranking_shown(NO_FILTERS, units, shape.priced, next(iter(tables.ORDERS))))
    for query in ("measurement_counts", "coverage", "unmatched"):
        catalog.load(query)
    catalog.load("worst_ratios", measures.EVERY_GAP)
    for query in ("missing_summary", "missing_items", "conflicts"):
        catalog.load(query, NO_FILTERS)
    for query in ("stale_providers", "provider_status", "recent_changes"):
        catalog.load(query)
    catalog.plan_shown(replace(default_question(), workload=default_train()), NO_FILTERS)
    for label in sidebar.READY:
        question = ready_question(label)
        if question is not None:
            catalog.plan_shown(question, NO_FILTERS)


def main(argv: list[str] | None = None) -> int:
    """Preload and warm, then hand over to Streamlit's own command line (``streamlit run app.py ARGS``).
    What the warm-up built is frozen (``gc.freeze``): it lives as long as the server, so the full
    collection Streamlit runs after every script run (``runner.postScriptGC``) no longer walks it:
    with pandas, pyarrow, DuckDB and the planner's unit registry loaded, that walk was 0.1-0.2 s of
    every interaction on the 2-core machine (py-spy on the server: the largest single cost of a cached
    rerun). Turning the collection off instead made Streamlit drop a rerun now and then (a click
    whose run never came: 3 in 16 tries), so it stays on."""
    preload()
    warm()
    warm_more()
    gc.freeze()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
