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
   ``--repeat``, and the first sample, which computes what later ones find cached unless the server's
   warm-up asked it already): the planner's workload (train, serve) and order (cost, time), the link
   view and back, search, change units, open Compare, Instance, Measurements, What's missing,
   Conflicts, back to Ranking.
4. Questions asked for the first time: models nobody (the warm-up included) has planned yet, one
   sample each (the planner runs in every one).
5. Bytes received over the websocket: during the cold load and per interaction.
6. The elements on the opening page (Streamlit's element containers, those in the sidebar, and the
   blocks: containers, columns, expanders): the browser redraws every one on each rerun.
7. The machine's 1-minute load average, sampled every 5 s through the run (min, median, max).

Each size gets its own floor, measured just before it: a Streamlit page holding one tiny table and
one radio (its cold start, and the median of clicks on the radio). The ratios are the figures over
that floor. Goals (issue 21): cold start <= 1.15x the floor's; every interaction's median <= 1.5x
the floor's click at 1x and <= 2.5x at 100x; a question asked for the first time <= 1 s at 1x. The
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
import threading
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


#: Counts the page's Streamlit elements (all, in the sidebar) and its blocks.
ELEMENTS = """() => ({
  elements: document.querySelectorAll('[data-testid="stElementContainer"]').length,
  sidebar: document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stElementContainer"]').length,
  blocks: document.querySelectorAll(
    '[data-testid="stVerticalBlock"],[data-testid="stHorizontalBlock"],[data-testid="stColumn"],'
    + '[data-testid="stExpander"]').length,
})"""


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


class CpuMeter:
    """CPU seconds (user + system) spent by the server's process and by the Chromium processes this
    benchmark started, read from /proc: what an interaction costs each side, whatever the load."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid

    @staticmethod
    def _cpu_s(pid: int) -> float:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _browser_pids(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(parent, []).append(int(entry.name))
        found, todo = [], [os.getpid()]
        while todo:
            pid = todo.pop()
            todo += children.get(pid, [])
            try:
                if pid != self.server_pid and b"chrom" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue
        return found

    def read(self) -> tuple[float, float]:
        """(server, browser) CPU seconds so far."""
        return self._cpu_s(self.server_pid), sum(self._cpu_s(pid) for pid in self._browser_pids())


def _timings(page, repeat: int, label: str, meter: CpuMeter) -> tuple[dict, dict]:
    """Each interaction's seconds, and its (server, browser) CPU seconds, ``repeat`` times."""
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[tuple[float, float]]] = {}
    for _ in range(repeat):
        for name, action in _interactions(page).items():
            print(f"  {label}: {name}", file=sys.stderr, flush=True)
            before = meter.read()
            seconds = _sample(page, action, f"{label}: {name}")
            if seconds is not None:
                after = meter.read()
                times.setdefault(name, []).append(seconds)
                cpu.setdefault(name, []).append((after[0] - before[0], after[1] - before[1]))
    return times, cpu


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


def floor(repeat: int) -> dict:
    """The cold start and the median click (seconds, and the server's and the browser's CPU seconds)
    of a Streamlit page holding one tiny table and one radio, served on the same machine at the same
    time: what Streamlit and Chromium cost before any app."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as scratch:
        (Path(scratch) / "app.py").write_text(FLOOR_APP)
        server = AppServer(Path(scratch) / "none.duckdb", root=Path(scratch))
        with server, sync_playwright() as playwright, chromium(playwright) as context:
            page = context.new_page()
            cold = _load(page, server.url)
            assert server.process is not None
            found = floor_clicks(page, 2 * repeat, CpuMeter(server.process.pid))
            return {
                "cold_first_table_floor_s": round(cold, 3),
                "interaction_floor_s": round(statistics.median(s for s, _, _ in found), 3),
                "interaction_floor_cpu_s": _cpu_medians([(c, b) for _, c, b in found]),
            }


def floor_clicks(page, clicks: int, meter: CpuMeter) -> list[tuple[float, float, float]]:
    """``clicks`` clicks on the floor page's radio, its two options in turns: (seconds, the server's
    CPU seconds, the browser's) of each that finished in time."""
    radio = page.locator(".st-key-workload")
    found = []
    for n in range(clicks):
        before = meter.read()
        seconds = _sample(page, radio.get_by_text(("Pipeline", "Tensor")[n % 2], exact=True).click, "floor")
        if seconds is not None:
            after = meter.read()
            found.append((seconds, after[0] - before[0], after[1] - before[1]))
    return found


def _cpu_medians(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "server": round(statistics.median(s for s, _ in samples), 3),
        "browser": round(statistics.median(b for _, b in samples), 3),
    }


#: Presets the server's warm-up does not plan (``ui.serve.warm_more`` plans the default model and the
#: ready questions' models): choosing one asks the planner a question for the first time.
FIRST_TIME_MODELS = ("qwen2.5-72b", "mixtral-8x7b", "llama-3.1-8b", "gpt-oss-120b", "deepseek-v3")


def _first_time_questions(page) -> dict[str, float]:
    """Seconds from choosing each ``FIRST_TIME_MODELS`` preset (the option's click) to the end of the
    run it starts: a question asked for the first time, planned in the run."""
    found = {}
    for model in FIRST_TIME_MODELS:
        box = page.locator(".st-key-model [role=combobox]")
        box.click()
        box.fill(model)
        option = page.locator("[role=listbox] [role=option]").filter(has_text=model).first
        option.wait_for()
        seconds = _sample(page, option.click, f"first time: {model}")
        if seconds is not None:
            found[model] = round(seconds, 3)
        page.keyboard.press("Escape")
    return found


class LoadSampler:
    """The 1-minute load average every ``every_s`` seconds while it runs (a background thread)."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s, self.samples = every_s, [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        """min, median and max of the samples."""
        return {
            "min": round(min(self.samples), 2),
            "median": round(statistics.median(self.samples), 2),
            "max": round(max(self.samples), 2),
        }


def cold_start_without_preload(db: Path) -> float:
    """Seconds to the first table for a fresh profile on ``streamlit run app.py`` (no preloading)."""
    from playwright.sync_api import sync_playwright

    with AppServer(db) as server, sync_playwright() as playwright, chromium(playwright) as context:
        return round(_load(context.new_page(), server.url), 3)


#: How long the server may take to start: ``ui.serve`` asks the first page's and the ready questions'
#: answers before it serves (about 30 s at 100x on the 2-core machine).
SERVER_START_S = 900


def measure(db: Path, repeat: int) -> dict:
    """The figures for one catalog file, served as ``make app`` serves it (``python -m ui.serve``),
    with the floor measured just before it and each figure's ratio to the floor."""
    figures: dict = {}
    with LoadSampler() as load:
        figures |= floor(repeat)
        server = AppServer(db, preload=True).start(timeout_s=SERVER_START_S)
        try:
            figures |= _served(server, repeat)
        finally:
            server.stop()
    figures["load_average_1min"] = load.summary()
    figures["ratios"] = ratios(figures)
    return figures


def _served(server: AppServer, repeat: int) -> dict:
    """What a visitor meets on ``server``: cold start, returning visit, each interaction, questions
    asked for the first time, bytes, and a fresh profile on the warm server."""
    from playwright.sync_api import sync_playwright

    figures: dict = {"server_ready_s": round(server.ready_s, 3)}
    with sync_playwright() as playwright:
        with chromium(playwright) as context:
            page = context.new_page()
            figures["cold_first_table_s"] = round(_load(page, server.url), 3)
            figures["elements_on_opening_page"] = page.evaluate(ELEMENTS)
            returning = context.new_page()
            figures["returning_visit_first_table_s"] = round(_load(returning, server.url), 3)
            returning.close()  # a page in the background is throttled: time the one in front
            page.bring_to_front()
            assert server.process is not None
            times, cpu = _timings(page, repeat, server.db.name, CpuMeter(server.process.pid))
            figures["first_time_questions_s"] = _first_time_questions(page)
            figures["load_bytes"], figures["interaction_bytes"] = _bytes(context, server.url)
        with chromium(playwright) as context:
            figures["fresh_profile_warm_server_first_table_s"] = round(
                _load(context.new_page(), server.url), 3
            )
    figures["interactions_s"] = {name: round(statistics.median(t), 3) for name, t in times.items()}
    figures["interactions_first_s"] = {name: round(t[0], 3) for name, t in times.items()}
    figures["interactions_cpu_s"] = {name: _cpu_medians(c) for name, c in cpu.items()}
    figures["slowest_interaction_s"] = max(figures["interactions_s"].values())
    return figures


def ratios(figures: dict) -> dict:
    """Each figure over the floor measured beside it: the cold start over the floor's, each
    interaction's median and first sample over the floor's click."""
    click = figures["interaction_floor_s"]
    return {
        "cold_start": round(figures["cold_first_table_s"] / figures["cold_first_table_floor_s"], 2),
        "interactions": {k: round(v / click, 2) for k, v in figures["interactions_s"].items()},
        "interactions_first": {k: round(v / click, 2) for k, v in figures["interactions_first_s"].items()},
        "slowest_interaction": round(figures["slowest_interaction_s"] / click, 2),
    }


def run(db: Path, factor: int, repeat: int) -> dict:
    """Figures at 1x (``db``) and at ``factor``x (built from it in a temporary directory)."""
    results = {"1x": {"rows": _rows(db), **measure(db, repeat)}}
    results["1x"]["cold_first_table_streamlit_run_s"] = cold_start_without_preload(db)
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

    row("load average, 1 min (min / median / max)", [_load_text(results[s]) for s in sizes])
    row(
        "elements on the opening page (all / in the sidebar / blocks)",
        [_elements_text(results[s].get("elements_on_opening_page")) for s in sizes],
    )
    row(
        "ratios: cold start / slowest interaction (to the floor beside it)",
        [
            f"{results[s]['ratios']['cold_start']} / {results[s]['ratios']['slowest_interaction']}"
            for s in sizes
        ],
    )
    for key in (
        "rows",
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
            ratio = results[size]["ratios"]["interactions"].get(name, "–")
            cells.append(f"{seconds} ({first}) = {ratio}x / " + (f"{sent:,}" if sent is not None else "–"))
        row(f"{name} (median s (first sample) = median / floor click / bytes)", cells)
    row(
        "floor click CPU s (server / browser)",
        [_cpu_text(results[s]["interaction_floor_cpu_s"]) for s in sizes],
    )
    for name in results[sizes[0]]["interactions_cpu_s"]:
        row(
            f"{name}: CPU s (server / browser, medians)",
            [_cpu_text(results[s]["interactions_cpu_s"].get(name)) for s in sizes],
        )
    for model in FIRST_TIME_MODELS:
        row(
            f"first time: model {model} (s)",
            [results[s].get("first_time_questions_s", {}).get(model, "–") for s in sizes],
        )
    return "\n".join(lines)


def _elements_text(counts: dict | None) -> str:
    return "–" if not counts else f"{counts['elements']} / {counts['sidebar']} / {counts['blocks']}"


def _cpu_text(cpu: dict | None) -> str:
    return "–" if not cpu else f"{cpu['server']} / {cpu['browser']}"


def _load_text(figures: dict) -> str:
    load = figures["load_average_1min"]
    return f"{load['min']} / {load['median']} / {load['max']}"


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
