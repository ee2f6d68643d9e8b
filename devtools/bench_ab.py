"""Two checkouts' apps side by side: ``python -m devtools bench-ab OTHER [--rounds N] [--factor F]``.

``make bench-app`` measures one tree; run before and after a change, minutes apart on a shared
machine, its figures move with the load more than a few per cent of an interaction. Here the app of
``OTHER`` (another checkout: "before") and of this tree ("after") are served at once, as ``make app``
serves them, on the same catalog (``--factor`` times the shipped one), with the floor page of
``devtools.bench_app`` beside them. Each round opens a fresh page on the floor (eight clicks on its
radio) and on each app (every interaction of ``devtools.bench_app`` once), the two apps in turns, so
the load falls on both alike. It reports per interaction the median seconds over the floor's click
and the server's and the browser's CPU seconds, and per round the browser's CPU summed over the
interactions: paired rounds show a change of a few per cent that single runs cannot.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from devtools.bench_app import (
    FLOOR_APP,
    CpuMeter,
    LoadSampler,
    _load,
    _timings,
    build_synthetic,
    floor_clicks,
)
from devtools.browser import ROOT, AppServer, chromium, missing_requirement

ELEMENTS = "document.querySelectorAll('[data-testid=\"stElementContainer\"]').length"


def _floor_round(context, server: AppServer, found: dict) -> None:
    page = context.new_page()
    _load(page, server.url)
    assert server.process is not None
    for seconds, _, browser in floor_clicks(page, 8, CpuMeter(server.process.pid)):
        found["seconds"].append(seconds)
        found["browser"].append(browser)
    page.close()


def _app_round(context, server: AppServer, label: str, found: dict) -> None:
    page = context.new_page()
    _load(page, server.url)
    found["elements"] = page.evaluate(ELEMENTS)
    assert server.process is not None
    times, cpu = _timings(page, 1, label, CpuMeter(server.process.pid))
    page.close()
    for name, seconds in times.items():
        found["times"].setdefault(name, []).extend(seconds)
        found["cpu"].setdefault(name, []).extend(cpu[name])
    found["sums"].append(round(sum(b for samples in cpu.values() for _, b in samples), 2))


def run(other: Path, db: Path, rounds: int) -> tuple[dict, dict]:
    """(the floor's samples, each side's samples), ``rounds`` rounds."""
    from playwright.sync_api import sync_playwright

    floor: dict = {"seconds": [], "browser": []}
    sides: dict = {side: {"times": {}, "cpu": {}, "sums": []} for side in ("before", "after")}
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as scratch:
        (Path(scratch) / "app.py").write_text(FLOOR_APP)
        servers = {
            "floor": AppServer(Path(scratch) / "none.duckdb", root=Path(scratch)),
            "before": AppServer(db, root=other, preload=True),
            "after": AppServer(db, root=ROOT, preload=True),
        }
        try:
            for server in servers.values():
                server.start(timeout_s=900)
            with sync_playwright() as playwright, chromium(playwright) as context:
                for n in range(rounds):
                    _floor_round(context, servers["floor"], floor)
                    for side in ("before", "after") if n % 2 == 0 else ("after", "before"):
                        _app_round(context, servers[side], side, sides[side])
        finally:
            for server in servers.values():
                server.stop()
    return floor, sides


def table(floor: dict, sides: dict) -> str:
    """Per interaction: median / floor click (median seconds) / server / browser CPU s, each side."""
    click = statistics.median(floor["seconds"])
    lines = [
        f"floor: click {click:.3f} s, browser CPU {statistics.median(floor['browser']):.3f} s",
        "| interaction | before: ratio (s) / CPU server / browser s | after |",
        "| --- | --- | --- |",
    ]
    for name in sides["before"]["times"]:
        cells = []
        for found in sides.values():
            seconds = statistics.median(found["times"].get(name) or [float("nan")])
            server = statistics.median(s for s, _ in found["cpu"].get(name) or [(float("nan"), 0)])
            browser = statistics.median(b for _, b in found["cpu"].get(name) or [(0, float("nan"))])
            cells.append(f"{seconds / click:.2f}x ({seconds:.3f}) / {server:.2f} / {browser:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for side, found in sides.items():
        ratios = [statistics.median(t) / click for t in found["times"].values()]
        lines.append(
            f"{side}: {found.get('elements')} elements; browser CPU per round {found['sums']} "
            f"(median {statistics.median(found['sums']):.2f} s); slowest {max(ratios):.2f}x, "
            f"median {statistics.median(ratios):.2f}x"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the comparison and the load average through it."""
    parser = argparse.ArgumentParser(prog="python -m devtools bench-ab")
    parser.add_argument("other", type=Path, help="the other checkout (before)")
    parser.add_argument("--db", type=Path, default=Path("data/catalog.duckdb"), help="the 1x catalog")
    parser.add_argument("--factor", type=int, default=1, help="serve a catalog this many times larger")
    parser.add_argument("--rounds", type=int, default=6, help="rounds (each side once per round)")
    args = parser.parse_args(argv)
    if reason := missing_requirement():
        print(f"bench-ab needs a browser: {reason}")
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-ab-db-") as scratch, LoadSampler() as load:
        db = args.db.resolve()
        if args.factor > 1:
            db = Path(scratch) / f"catalog-x{args.factor}.duckdb"
            build_synthetic(args.db, db, args.factor)
        floor, sides = run(args.other.resolve(), db, args.rounds)
    print(f"factor {args.factor}, {args.rounds} rounds, load average (1 min): {load.summary()}")
    print(table(floor, sides))
    return 0
