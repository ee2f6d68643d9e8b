"""How a click's cost grows with the elements on a Streamlit page: ``python -m devtools bench-elements``.

The floor page of ``devtools.bench_app`` (one radio in the sidebar, a title, a tiny table) and the
same page with N more elements in the sidebar, of the kinds the app draws (markdown, headers,
captions, select boxes, multiselects, number inputs, toggles, segmented controls), each served by its
own Streamlit server. In rounds (every page once per round, so the load moves them alike) a fresh page
opens each and clicks its radio; per page it reports the median seconds of a click and the browser's
and the server's CPU seconds (``devtools.bench_app.CpuMeter``), and their ratios to the floor's.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
from pathlib import Path

from devtools.bench_app import FLOOR_APP, CpuMeter, LoadSampler, _load, floor_clicks
from devtools.browser import AppServer, chromium, missing_requirement

#: One line of Streamlit per kind of element, ``{i}`` its number.
KINDS = (
    'st.sidebar.markdown("Line {i}: some **bold** text and `code`.")',
    'st.sidebar.selectbox("Pick {i}", ["any", "2", "4", "8"], key="s{i}")',
    'st.sidebar.number_input("Number {i}", min_value=0.0, value=0.0, key="n{i}")',
    'st.sidebar.toggle("Toggle {i}", value=True, key="t{i}")',
    'st.sidebar.header("Header {i}")',
    'st.sidebar.multiselect("Many {i}", ["a", "b", "c"], placeholder="any", key="m{i}")',
    'st.sidebar.caption("A caption, number {i}.")',
    'st.sidebar.segmented_control("Seg {i}", ["x", "y"], default="x", key="g{i}")',
)


def page_source(extra: int) -> str:
    """The floor page with ``extra`` more elements in the sidebar, cycling through ``KINDS``."""
    lines = [KINDS[i % len(KINDS)].format(i=i) for i in range(extra)]
    return FLOOR_APP + "\n".join(lines) + "\n"


def run(extras: list[int], rounds: int, clicks: int) -> dict[int, dict]:
    """Per number of extra elements: the medians (seconds, server CPU, browser CPU) and the elements
    the page showed."""
    from playwright.sync_api import sync_playwright

    samples: dict[int, list] = {n: [] for n in extras}
    counts: dict[int, int] = {}
    with contextlib.ExitStack() as stack:
        servers = {}
        for n in extras:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"bench-el{n}-")))
            (root / "app.py").write_text(page_source(n))
            servers[n] = stack.enter_context(AppServer(root / "none.duckdb", root=root))
        playwright = stack.enter_context(sync_playwright())
        context = stack.enter_context(chromium(playwright))
        for _ in range(rounds):
            for n, server in servers.items():
                page = context.new_page()
                _load(page, server.url)
                counts[n] = page.evaluate(
                    "document.querySelectorAll('[data-testid=\"stElementContainer\"]').length"
                )
                assert server.process is not None
                samples[n] += floor_clicks(page, clicks, CpuMeter(server.process.pid))
                page.close()
    return {
        n: {
            "elements": counts[n],
            "seconds": round(statistics.median(s for s, _, _ in found), 3),
            "server_cpu_s": round(statistics.median(c for _, c, _ in found), 3),
            "browser_cpu_s": round(statistics.median(b for _, _, b in found), 3),
            "samples": len(found),
        }
        for n, found in samples.items()
        if found  # every click of that page timed out: no figure
    }


def main(argv: list[str] | None = None) -> int:
    """Print one row per page: elements, median click and CPU seconds, and the ratios to the floor."""
    parser = argparse.ArgumentParser(prog="python -m devtools bench-elements")
    parser.add_argument("--extra", type=int, nargs="+", default=[0, 17, 37, 67], help="elements added")
    parser.add_argument("--rounds", type=int, default=3, help="times each page is opened")
    parser.add_argument("--clicks", type=int, default=6, help="clicks per page per round")
    args = parser.parse_args(argv)
    if reason := missing_requirement():
        print(f"bench-elements needs a browser: {reason}")
        return 2
    with LoadSampler() as load:
        found = run(args.extra, args.rounds, args.clicks)
    floor = found[args.extra[0]]
    print(f"load average, 1 min (min / median / max): {load.summary()}")
    print("| elements | click s | ratio | server CPU s | browser CPU s | browser ratio | samples |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for figures in found.values():
        print(
            f"| {figures['elements']} | {figures['seconds']} | "
            f"{figures['seconds'] / floor['seconds']:.2f}x | "
            f"{figures['server_cpu_s']} | {figures['browser_cpu_s']} | "
            f"{figures['browser_cpu_s'] / floor['browser_cpu_s']:.2f}x | {figures['samples']} |"
        )
    return 0
