"""How long ``python -m catalog plan`` takes to rank every instance of the shipped catalog, against the
floor of a bare ``python -c "import duckdb"`` start measured in the same run (issue 19's target: at
most 3x), for serving and for training. ``make bench`` reports it; ``python -m devtools bench --only
plan`` runs it alone.

Each round runs the floor, the serving ranking and the training ranking one after another from cold
interpreters, so a busy machine slows all three alike; the ratio is taken per round and the median
over the rounds reported. Whether the read path loads pint or pandas is checked once.

The interpreters run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed from their
environment) after one unmeasured warm-up run, as a user's second ``plan`` runs: the floor's duckdb
is compiled in site-packages already, so a shell that disables caching would time the project's
compilation against a floor that pays none.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The rankings timed: the seed's questions, at the planner's defaults.
RANKINGS = {
    "serve": ["--model", "llama-3.1-70b", "--workload", "serve"],
    "train": ["--model", "llama-3.1-405b", "--workload", "train"],
}
FLOOR = [sys.executable, "-c", "import duckdb"]
GOAL = 3.0
_LOADED = (
    "import sys; from catalog.cli import main; main(['plan', '--db', sys.argv[1], *sys.argv[2:]]);"
    "print([m for m in ('pint', 'pandas', 'numpy') if m in sys.modules], file=sys.stderr)"
)


#: The timed interpreters' environment: this one's, with bytecode caching on.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env=_ENV)
    return time.perf_counter() - start


def plan_speed(db: Path, repeat: int) -> dict:
    """Times (s) of the floor and each ranking, their per-round ratios, and the modules loaded."""
    times: dict[str, list[float]] = {"floor": [], **{name: [] for name in RANKINGS}}
    ratios: dict[str, list[float]] = {name: [] for name in RANKINGS}
    for args in RANKINGS.values():  # warm-up: the project's bytecode written, the files cached
        _seconds([sys.executable, "-m", "catalog", "plan", *args, "--db", str(db)])
    for _ in range(repeat):
        floor = _seconds(FLOOR)
        times["floor"].append(floor)
        for name, args in RANKINGS.items():
            took = _seconds([sys.executable, "-m", "catalog", "plan", *args, "--db", str(db)])
            times[name].append(took)
            ratios[name].append(took / floor)
    check = subprocess.run(
        [sys.executable, "-c", _LOADED, str(db), *RANKINGS["serve"]],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return {"times": times, "ratios": ratios, "loaded": check.stderr.strip().splitlines()[-1]}


def _spread(times: list[float]) -> str:
    """'1.63 s (1.38–1.75, 3 runs)', as ``devtools.bench.spread`` writes a figure."""
    return f"{statistics.median(times):.2f} s ({min(times):.2f}–{max(times):.2f}, {len(times)} runs)"


def plan_lines(result: dict, spread: Callable[[list[float]], str] = _spread) -> list[str]:
    """The benchmark table's rows for the rankings (``spread`` writes a list of times)."""
    lines = [
        f'| floor: `python -c "import duckdb"`, cold interpreter | {spread(result["times"]["floor"])} | |'
    ]
    for name, args in RANKINGS.items():
        ratio = statistics.median(result["ratios"][name])
        lines.append(
            f"| `catalog plan {' '.join(args)}` over the shipped catalog, cold | "
            f"{spread(result['times'][name])}; {ratio:.1f}x the floor (median of the rounds' ratios) "
            f"| <= {GOAL:g}x |"
        )
    lines.append(f"| modules of pint, pandas, numpy the ranking loads | {result['loaded']} | none |")
    return lines


def shipped_catalog(scratch: Path) -> Path:
    """The catalog the shipped snapshot builds (``catalog seed``), in ``scratch``."""
    from catalog import snapshot

    db = scratch / "shipped.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    return db


def main(repeat: int = 5) -> int:
    """Print the rankings' rows alone."""
    with tempfile.TemporaryDirectory() as scratch:
        result = plan_speed(shipped_catalog(Path(scratch)), repeat)
    print("| measure | figure | goal |\n| --- | --- | --- |\n" + "\n".join(plan_lines(result)))
    return 0
