"""``python -m ui.serve [streamlit options]``: serve the app (what ``make app`` runs).

It is ``streamlit run app.py`` with one difference: the modules every page needs (pandas, pyarrow,
DuckDB, the read side, the views) are imported before the server starts, in the server's process,
so the first visitor does not wait for them (about 1.5 s on the 2-core machine; Streamlit would
import them only when the first session runs the script); and the first page's questions are asked
once (``warm``), so the first visitor finds their answers cached.
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def preload() -> None:
    """Import what the app's first run would import, and build the unit registry the planner's first
    plan would build (about 0.5 s)."""
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
    catalog.plan(default_question(), NO_FILTERS)


def main(argv: list[str] | None = None) -> int:
    """Preload and warm, then hand over to Streamlit's own command line (``streamlit run app.py ARGS``)."""
    preload()
    warm()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
