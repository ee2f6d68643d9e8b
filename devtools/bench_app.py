"""The app's speed as a user meets it, in Chromium: ``python -m devtools bench-app [--db PATH]``.

On the given catalog (the shipped one, ``make seed``) and on one ``--factor`` times larger built
from it (every row and claim replicated under a suffixed instance type, in SQL), it measures:

1. Server start: ``streamlit run app.py`` to its health endpoint answering.
2. Cold start: a fresh browser profile opening the app on the fresh server (its first session: no
   query cached; served as ``make app`` serves it, modules preloaded) until the first table has
   rows; then a returning visit (same profile, cached assets, new session) and a second fresh
   profile on the now warm server. For scale, at 1x: the same cold start on ``streamlit run app.py``
   (no preloading), and the floor: a Streamlit page holding one tiny table and one radio, on the
   same machine at the same time (its cold start, and a click on the radio).
3. Each interaction, from the click or key press to the end of the run it starts (median of
   ``--repeat``, and the first sample, which computes what later ones find cached): the planner's
   workload (train, serve) and order (cost, time), the link view and back, search, change units,
   open Compare, Instance, Measurements, What's missing, Conflicts, back to Ranking.
4. Bytes received over the websocket: during the cold load and per interaction.

Goals (issue 14): cold start <= 2 s; any interaction <= 0.3 s at 1x and <= 0.5 s at 100x. The
figures are printed and returned as a dict; nothing is written into the README.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import duckdb

from devtools.browser import AppServer, chromium, missing_requirement, table_rows, timed_run, wait_idle

T = TypeVar("T")
TABLES_WITH_INSTANCES = ("instances", "claims", "prices", "measurements")


def build_synthetic(source: Path, target: Path, factor: int) -> int:
    """``target``: ``source`` with each row of the per-instance tables there ``factor`` times (copies
    named ``<instance_type>-xNN``); returns the number of instance rows."""
    shutil.copyfile(source, target)
    with duckdb.connect(str(target)) as con:
        tables = {
            name for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        width = len(str(factor - 1))
        for table in (t for t in TABLES_WITH_INSTANCES if t in tables):
            con.execute(
                f"INSERT INTO {table} SELECT {table}.* REPLACE ("
                f"instance_type || '-x' || lpad(CAST(copy AS VARCHAR), {width}, '0') AS instance_type) "
                f"FROM {table}, range(1, ?) AS copies(copy) WHERE instance_type IS NOT NULL",
                [factor],
            )
        con.execute("CHECKPOINT")
        [(rows,)] = con.execute("SELECT count(*) FROM instances").fetchall()
        return int(rows)


class Wire:
    """Bytes the page receives over Streamlit's websocket."""

    def __init__(self, page) -> None:
        self.received = 0
        page.on("websocket", lambda socket: socket.on("framereceived", self._count))

    def _count(self, payload) -> None:
        self.received += len(payload)

    def measure(self, action: Callable[[], T]) -> tuple[T, int]:
        """(what ``action`` returns, bytes received while it ran)."""
        before = self.received
        result = action()
        return result, self.received - before


def _load(page, url: str) -> float:
    started = time.perf_counter()
    page.goto(url)
    table_rows(page, timeout_ms=120_000)
    elapsed = time.perf_counter() - started
    wait_idle(page)
    page.wait_for_timeout(1_000)  # the page settles (and may rerun once) before a person acts
    return elapsed


def _interactions(page) -> dict[str, Callable[[], object]]:
    def pick(key: str, option: str) -> Callable[[], object]:
        return lambda: page.locator(f".st-key-{key}").get_by_text(option, exact=True).click()

    search = page.locator(".st-key-q input")

    def typed(text: str) -> Callable[[], object]:
        def go():
            search.fill(text)
            search.press("Enter")

        return go

    def tab(name: str) -> Callable[[], object]:
        return lambda: page.get_by_role("tab", name=name, exact=True).click()

    return {
        "planner: train": pick("task", "Train"),
        "planner: serve": pick("task", "Serve"),
        "planner: rank by cost": pick("by", "cost"),
        "planner: rank by time": pick("by", "time"),
        "view: Links only": pick("mode", "Links only"),
        "view: Plan a model": pick("mode", "Plan a model"),
        "search: 8-GPU NVSwitch": typed("8-GPU NVSwitch"),
        "search: cleared": typed(""),
        "units: Gb/s": lambda: page.locator(".st-key-unit").get_by_text("Gb/s", exact=True).click(),
        "units: GB/s": lambda: page.locator(".st-key-unit").get_by_text("GB/s", exact=True).click(),
        "tab: Compare": tab("Compare"),
        "tab: Instance": tab("Instance"),
        "tab: Measurements": tab("Measurements"),
        "tab: What's missing": tab("What's missing"),
        "tab: Conflicts": tab("Conflicts"),
        "tab: Ranking": tab("Ranking"),
    }


def _sample(page, action: Callable[[], object], label: str) -> float | None:
    """Seconds of one interaction; None (and a note) if no run followed within 20 s."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return timed_run(page, action, timeout_ms=20_000)
    except PlaywrightTimeout:
        print(f"  {label}: no run seen within 20 s, sample dropped", file=sys.stderr)
        return None


def _timings(page, repeat: int, label: str) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for _ in range(repeat):
        for name, action in _interactions(page).items():
            print(f"  {label}: {name}", file=sys.stderr, flush=True)
            seconds = _sample(page, action, f"{label}: {name}")
            if seconds is not None:
                times.setdefault(name, []).append(seconds)
    return times


def _bytes(context, url: str) -> tuple[int, dict[str, int]]:
    """Bytes received by a new page's cold load and by each interaction, counted apart from the
    timings: Playwright ships every websocket frame to Python, which would slow the page down."""
    page = context.new_page()
    wire = Wire(page)
    _, load = wire.measure(lambda: _load(page, url))
    sent = {}
    for name, action in _interactions(page).items():
        seconds, received = wire.measure(partial(_sample, page, action, f"bytes: {name}"))
        if seconds is not None:
            sent[name] = received
    page.close()
    return load, sent


FLOOR_APP = """import streamlit as st

choice = st.sidebar.radio("Workload", ["Tensor", "Pipeline"], key="workload")
st.title("floor")
st.dataframe({"instance": ["a", "b", "c"], "GB/s": [1.0, 2.0, 3.0], "choice": [choice] * 3})
"""


def floor(repeat: int) -> tuple[float, float]:
    """(cold start, median interaction) of a Streamlit page holding one tiny table and one radio,
    served on the same machine at the same time: what Streamlit and Chromium cost before any app."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as scratch:
        (Path(scratch) / "app.py").write_text(FLOOR_APP)
        server = AppServer(Path(scratch) / "none.duckdb", root=Path(scratch))
        with server, sync_playwright() as playwright, chromium(playwright) as context:
            page = context.new_page()
            cold = _load(page, server.url)
            radio = page.locator(".st-key-workload")
            clicks = [
                _sample(page, radio.get_by_text(option, exact=True).click, "floor")
                for _ in range(repeat)
                for option in ("Pipeline", "Tensor")
            ]
            return round(cold, 3), round(statistics.median(c for c in clicks if c is not None), 3)


def cold_start_without_preload(db: Path) -> float:
    """Seconds to the first table for a fresh profile on ``streamlit run app.py`` (no preloading)."""
    from playwright.sync_api import sync_playwright

    with AppServer(db) as server, sync_playwright() as playwright, chromium(playwright) as context:
        return round(_load(context.new_page(), server.url), 3)


def measure(db: Path, repeat: int) -> dict:
    """The figures for one catalog file, served as ``make app`` serves it (``python -m ui.serve``)."""
    from playwright.sync_api import sync_playwright

    figures: dict = {"load_average_1min": round(os.getloadavg()[0], 2)}
    with AppServer(db, preload=True) as server, sync_playwright() as playwright:
        figures["server_ready_s"] = round(server.ready_s, 3)
        with chromium(playwright) as context:
            page = context.new_page()
            figures["cold_first_table_s"] = round(_load(page, server.url), 3)
            returning = context.new_page()
            figures["returning_visit_first_table_s"] = round(_load(returning, server.url), 3)
            returning.close()  # a page in the background is throttled: time the one in front
            page.bring_to_front()
            times = _timings(page, repeat, db.name)
            figures["load_bytes"], figures["interaction_bytes"] = _bytes(context, server.url)
        with chromium(playwright) as context:
            figures["fresh_profile_warm_server_first_table_s"] = round(
                _load(context.new_page(), server.url), 3
            )
    figures["interactions_s"] = {name: round(statistics.median(t), 3) for name, t in times.items()}
    figures["interactions_first_s"] = {name: round(t[0], 3) for name, t in times.items()}
    figures["slowest_interaction_s"] = max(figures["interactions_s"].values())
    return figures


def run(db: Path, factor: int, repeat: int) -> dict:
    """Figures at 1x (``db``) and at ``factor``x (built from it in a temporary directory)."""
    results = {"1x": {"rows": _rows(db), **measure(db, repeat)}}
    results["1x"]["cold_first_table_streamlit_run_s"] = cold_start_without_preload(db)
    results["1x"]["cold_first_table_floor_s"], results["1x"]["interaction_floor_s"] = floor(repeat)
    with tempfile.TemporaryDirectory(prefix="bench-app-") as scratch:
        big = Path(scratch) / f"catalog-x{factor}.duckdb"
        rows = build_synthetic(db, big, factor)
        results[f"{factor}x"] = {"rows": rows, **measure(big, repeat)}
    return results


def _rows(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        [(rows,)] = con.execute("SELECT count(*) FROM instances").fetchall()
        return int(rows)


def table(results: dict) -> str:
    """The figures as a markdown table, one column per catalog size."""
    sizes = list(results)
    lines = ["| measure | " + " | ".join(sizes) + " |", "| --- |" + " --- |" * len(sizes)]

    def row(label: str, values: list) -> None:
        lines.append(f"| {label} | " + " | ".join(str(v) for v in values) + " |")

    for key in (
        "rows",
        "load_average_1min",
        "server_ready_s",
        "cold_first_table_s",
        "cold_first_table_streamlit_run_s",
        "cold_first_table_floor_s",
        "interaction_floor_s",
        "fresh_profile_warm_server_first_table_s",
        "returning_visit_first_table_s",
        "load_bytes",
        "slowest_interaction_s",
    ):
        row(key.replace("_", " "), [results[s].get(key, "") for s in sizes])
    for name in results[sizes[0]]["interactions_s"]:
        cells = []
        for size in sizes:
            seconds = results[size]["interactions_s"].get(name, "–")
            first = results[size]["interactions_first_s"].get(name, "–")
            sent = results[size]["interaction_bytes"].get(name)
            cells.append(f"{seconds} ({first}) / " + (f"{sent:,}" if sent is not None else "–"))
        row(f"{name} (median s (first, uncached) / bytes)", cells)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m devtools bench-app``: print the figures (and the JSON with --json)."""
    parser = argparse.ArgumentParser(prog="python -m devtools bench-app")
    parser.add_argument("--db", type=Path, default=Path("data/catalog.duckdb"), help="the 1x catalog")
    parser.add_argument("--factor", type=int, default=100, help="size of the synthetic catalog")
    parser.add_argument("--repeat", type=int, default=3, help="times each interaction is measured")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    reason = missing_requirement()
    if reason:
        print(f"bench-app needs a browser: {reason}")
        return 2
    if not args.db.exists():
        print(f"no catalog at {args.db}: run `make seed` first")
        return 2
    results = run(args.db, args.factor, args.repeat)
    print(table(results))
    if args.json:
        print(json.dumps(results, indent=2))
    return 0
