"""Imports follow the floors: normalize → records → fetch → measure → scrapers → planner → catalog →
devtools → ui → app, with no cycle.

Each package may import only from the layers below it (and from itself). The read side of the
catalog (``catalog.read``) imports nothing of the refresh, and no module is part of an import cycle,
so every layer can be understood, tested and imported without the ones above it.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict

from tests.helpers import ROOT

# Lower index = lower floor. A module may import from its own floor or any floor below.
FLOORS = (
    "normalize",
    "records",
    "fetch",
    "measure",
    "scrapers",
    "planner",
    "catalog",
    "devtools",
    "ui",
    "app",
)
PACKAGES = set(FLOORS) - {"app"}
#: What stays at the top of scrapers/: the registry and the parsing helpers every kind shares.
SHARED_HELPERS = (
    "__init__",
    "base",
    "claims",
    "curated_facts",
    "markdown",
    "naming",
    "resale",
    "revisions",
    "shared_parse",
    "tables",
)


def _module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_imports() -> dict[str, set[str]]:
    """Every project module and the project modules it imports (at any depth of its code).

    ``from scrapers import azure_prose`` imports the module ``scrapers.documents.azure.prose``;
    ``from scrapers.base import Scraper`` imports ``scrapers.base``.
    """
    files = [
        ROOT / "app.py",
        *(p for pkg in PACKAGES if (ROOT / pkg).is_dir() for p in (ROOT / pkg).rglob("*.py")),
    ]
    modules = {_module_name(path): path for path in files}
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        graph[module]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names
                ]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            graph[module].update(name for name in names if name in modules)
    return dict(graph)


def floor(module: str) -> int:
    return FLOORS.index(module.split(".")[0])


def test_every_import_goes_down_or_sideways():
    upward = [
        f"{module} imports {imported}"
        for module, imports in project_imports().items()
        for imported in imports
        if floor(imported) > floor(module)
    ]
    assert not upward, "imports reaching up a floor:\n" + "\n".join(sorted(upward))


def test_no_import_cycle():
    graph = project_imports()
    state: dict[str, int] = {}
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for imported in sorted(graph.get(module, ())):
            if imported == module:
                continue
            if state.get(imported) == 1:
                cycles.append(" → ".join([*path[path.index(imported) :], imported]))
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


#: The planner's side of the read side: it computes with units, so it loads pint. The rest of the
#: read side (what the app and `catalog query` need to start) stays light and never imports it.
PLANNING = ("catalog.read.plan", "catalog.read.plan_inputs", "catalog.read.plan_output")


def _reachable(graph: dict[str, set[str]], roots) -> set[str]:
    reachable, todo = set(), list(roots)
    while todo:
        module = todo.pop()
        if module not in reachable:
            reachable.add(module)
            todo.extend(graph.get(module, ()))
    return reachable


def test_the_read_side_never_loads_the_refresh():
    """What the app and `catalog query` import stays out of scrapers, pint, the planner and the pipeline."""
    graph = project_imports()
    light = _reachable(graph, [m for m in graph if m.startswith("catalog.read") and m not in PLANNING])
    heavy = {m for m in light if m.startswith(("scrapers", "catalog.pipeline", "normalize.units", "planner"))}
    assert not heavy, f"the read side reaches {sorted(heavy)}"
    assert not set(PLANNING) & light, "a light read module imports the planner's adapter"


def test_planning_never_loads_the_refresh():
    graph = project_imports()
    assert set(PLANNING) <= set(graph)
    heavy = {m for m in _reachable(graph, PLANNING) if m.startswith(("scrapers", "catalog.pipeline"))}
    assert not heavy, f"planning reaches {sorted(heavy)}"


def test_the_fetch_floor_imports_only_the_bottom_layers():
    """fetch/ (the one HTTP client, transports, budgets) knows nothing of parsers, scrapers or the catalog."""
    graph = project_imports()
    fetch = [m for m in graph if m.startswith("fetch")]
    assert {"fetch.http", "fetch.transports", "fetch.budget"} <= set(fetch)
    above = {i for m in fetch for i in graph[m] if not i.startswith(("normalize", "records", "fetch"))}
    assert not above, f"fetch/ imports {sorted(above)}"


def test_scrapers_are_split_by_kind():
    """Document scrapers, offer lists, measurement sources and price readers each have their folder."""
    for kind in ("documents", "offer_lists", "measurements", "prices"):
        assert (ROOT / "scrapers" / kind / "__init__.py").is_file(), kind
    flat = sorted(p.stem for p in (ROOT / "scrapers").glob("*.py"))
    assert flat == sorted(SHARED_HELPERS), f"modules at the top of scrapers/: {flat}"


def test_the_planner_is_pure():
    """planner/ imports only normalize, records and the standard library: no DuckDB, no I/O client."""
    allowed = {"normalize", "records", "planner", "__future__"}
    for path in (ROOT / "planner").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in allowed or top in sys.stdlib_module_names, f"{path.name} imports {name}"


def test_this_test_sees_the_project():
    graph = project_imports()
    expected = {"app", "catalog.pipeline", "scrapers.documents.aws", "fetch.http", "normalize.units"}
    assert expected <= set(graph)
    assert "records.offers" in graph["catalog.offers"]
