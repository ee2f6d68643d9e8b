"""Benchmarks, measured on the machine they run on: ``make bench`` (``python -m devtools bench``).

1. Offline rebuild of the whole mirror in-process, against the floor of only reading and hashing the
   same documents; the same through the CLI from a cold interpreter.
2. The same rebuild at 10x and 100x (``devtools.synthetic``: every source copied under its own name).
3. ``catalog query "select 1"`` from a cold interpreter.
4. Live refresh against the mirror served over loopback (by ``serve-mirror`` in its own process) with
   200 ms added to every response: concurrent, sequential, and the slowest source alone.
5. Bytes on the wire: a cold refresh against an unchanged one (conditional GET, 304s).
6. Parse time per source, from the stored documents (no network).
7. ``catalog plan`` ranking the shipped catalog (serving and training) against a bare
   ``python -c "import duckdb"`` start in the same run (``devtools.bench_plan``).

Every figure is min / median / max over its runs. The table is printed and written into docs/benchmarks.md
between the bench markers, under a line naming the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import inspect
import logging
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb

from catalog import pipeline
from catalog.store import latest_documents
from devtools import synthetic
from devtools.mirror_server import MirrorServer
from fetch.http import Fetcher, make_client
from normalize.errors import ProviderError
from records.clock import utcnow
from scrapers import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "docs" / "benchmarks.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
LATENCY_S = 0.2
PER_HOST = inspect.signature(Fetcher).parameters["per_host"].default  # requests in flight per host


#: The local copies directory (``--copies``), beside the mirror: OCI's shapes page and AWS's newer
#: revision are third-party copies read from there.
COPIES: Path | None = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else None


def _refresh(
    db: Path,
    mirror: str,
    providers: list[str] | None = None,
    *,
    transport=None,
    copies: Path | None = COPIES,
    **fetcher_options,
):
    async def go():
        async with make_client(mirror=None if transport else mirror, transport=transport) as client:
            return await pipeline.refresh(
                db,
                client,
                providers=providers,
                mode="mirror",
                copies=copies,
                fetcher_options=fetcher_options or None,
            )

    return asyncio.run(go())


def _timed(run: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def spread(times: list[float], unit: str = "s", scale: float = 1.0) -> str:
    """'0.44 s (0.41–0.52, 5 runs)': median with min–max over the runs."""
    med, low, high = (scale * f(times) for f in (statistics.median, min, max))
    digits = 0 if scale > 1 else 2
    return f"{med:.{digits}f} {unit} ({low:.{digits}f}–{high:.{digits}f}, {len(times)} runs)"


def _fetched(db: Path, mirror: Path) -> list[Path]:
    """The files a refresh into ``db`` read: mirror documents and local copies (``copy:<path>``)."""
    with duckdb.connect(str(db), read_only=True) as con:
        urls = [u for (u,) in con.execute("SELECT DISTINCT url FROM fetches WHERE status = 200").fetchall()]
    return [
        mirror / u.split("://", 1)[1] if "://" in u else Path(str(COPIES)) / u.split(":", 1)[1] for u in urls
    ]


def _rows(db: Path) -> tuple[int, int, int]:
    with duckdb.connect(str(db), read_only=True) as con:
        return tuple(
            con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
            for t in ("instances", "current_claims", "current_prices")
        )


def offline_rebuild(mirror: Path, scratch: Path, repeat: int) -> dict:
    """The whole mirror into a new catalog in-process, after one untimed rebuild; the floor of
    reading and hashing the same documents, taken right before each timed rebuild (this machine's
    speed moves from one minute to the next, and a floor taken apart from its rebuild moved the
    ratio by a third); and the CLI end to end from a cold interpreter."""
    dbs: list[Path] = []

    def once() -> None:
        dbs.append(scratch / f"offline-{len(dbs)}.duckdb")
        _refresh(dbs[-1], str(mirror))

    once()
    files = _fetched(dbs[-1], mirror)

    def floor() -> None:
        for path in files:
            hashlib.sha256(path.read_bytes()).hexdigest()

    floors: list[float] = []
    times: list[float] = []
    for _ in range(repeat):
        floors += _timed(floor, 1)
        times += _timed(once, 1)

    copies = ["--copies", str(COPIES)] if COPIES else []
    command = [
        sys.executable,
        "-m",
        "catalog",
        "refresh",
        "--mirror",
        str(mirror),
        *copies,
        "--quiet",
        "--db",
    ]
    cli = _timed(
        lambda: subprocess.run(
            [*command, str(scratch / f"cli-{time.perf_counter_ns()}.duckdb")],
            check=False,
            capture_output=True,
            cwd=ROOT,
        ),
        3,
    )
    return {
        "times": times,
        "floor": floors,
        "documents": len(files),
        "megabytes": sum(p.stat().st_size for p in files) / 1e6,
        "rows": _rows(dbs[-1]),
        "cli": cli,
    }


def scaled_rebuild(mirror: Path, scratch: Path, factor: int, repeat: int) -> dict:
    """The rebuild with every source copied ``factor`` times (``devtools.synthetic``)."""
    transport = synthetic.CopyTransport(mirror)
    dbs: list[Path] = []
    with synthetic.scaled(mirror, factor) as names:

        def once() -> None:
            dbs.append(scratch / f"x{factor}-{len(dbs)}.duckdb")
            _refresh(dbs[-1], str(mirror), names, transport=transport)

        times = _timed(once, repeat)
    return {
        "factor": factor,
        "times": times,
        "rows": _rows(dbs[-1]),
        "documents": len(_fetched(dbs[-1], mirror)),
        "peak_gib": scaled_peak_gib(mirror, scratch / f"x{factor}-peak.duckdb", factor),
    }


_SCALED_CHILD = """
import sys
from pathlib import Path
from devtools import bench, synthetic
mirror = Path(sys.argv[1])
with synthetic.scaled(mirror, int(sys.argv[3])) as names:
    bench._refresh(Path(sys.argv[2]), str(mirror), names, transport=synthetic.CopyTransport(mirror))
"""


def scaled_peak_gib(mirror: Path, db: Path, factor: int) -> float:
    """Peak resident memory (GiB) of one scaled rebuild in a process of its own (ru_maxrss, wait4)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _SCALED_CHILD, str(mirror), str(db), str(factor)], cwd=ROOT
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise RuntimeError(f"the {factor}x rebuild exited {child.returncode}")
    return usage.ru_maxrss / 2**20  # KiB on Linux


def cold_query(db: Path, repeat: int) -> list[float]:
    """``python -m catalog query "select 1"`` from a cold interpreter."""
    command = [sys.executable, "-m", "catalog", "query", "select 1", "--db", str(db)]
    return _timed(lambda: subprocess.run(command, check=True, capture_output=True, cwd=ROOT), repeat)


@contextlib.contextmanager
def _mirror_process(mirror: Path, latency_s: float) -> Iterator[str]:
    """``serve-mirror`` in a process of its own, as a remote site would be: the server's work does
    not compete with the refresh for this process's GIL. Yields its base URL."""
    command = [sys.executable, "-m", "devtools", "serve-mirror", str(mirror), "--port", "0"]
    command += ["--latency-ms", str(latency_s * 1000)]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        banner = server.stderr.readline() if server.stderr else ""
        match = re.search(r"http://127\.0\.0\.1:\d+", banner)
        if match is None:
            raise SystemExit(f"serve-mirror did not start: {banner!r}")
        yield match.group(0)
    finally:
        server.terminate()
        server.wait(timeout=10)


def live_refresh(mirror: Path, scratch: Path, repeat: int) -> dict:
    """Concurrent vs sequential vs each source alone, over loopback HTTP with added latency."""
    with _mirror_process(mirror, LATENCY_S) as base_url:

        def fresh(tag: str) -> Path:
            return scratch / f"{tag}-{time.perf_counter_ns()}.duckdb"

        last: list[Path] = []

        def concurrent_run() -> None:
            last.append(fresh("c"))
            _refresh(last[-1], base_url)

        concurrent = _timed(concurrent_run, repeat)
        sequential = _timed(lambda: _refresh(fresh("s"), base_url, concurrency=1, per_host=1), 1)

        def alone_run(name: str) -> Callable[[], object]:
            return lambda: _refresh(fresh(f"a-{name}"), base_url, [name])

        alone = {name: _timed(alone_run(name), repeat) for name in REGISTRY}
    slowest = max(alone, key=lambda n: statistics.median(alone[n]))
    host, documents = _busiest_host(last[-1])
    return {
        "concurrent": concurrent,
        "sequential": sequential,
        "alone": alone,
        "slowest": slowest,
        "host": host,
        "host_floor_s": documents * LATENCY_S / PER_HOST,
        "host_documents": documents,
    }


def _busiest_host(db: Path) -> tuple[str, int]:
    """The host most documents of a refresh came from, and how many: sources that share a host
    (GitHub's raw host serves Azure's docs, every health check and Spare Cores) share its slots."""
    with duckdb.connect(str(db), read_only=True) as con:
        [(host, documents)] = con.execute(
            "SELECT split_part(url, '/', 3) AS host, count(*) FROM fetches GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
        ).fetchall()
    return str(host), int(documents)


def transfer(mirror: Path, scratch: Path) -> dict:
    """Body bytes of a cold refresh and of an unchanged one right after it (conditional GET)."""
    db = scratch / "transfer.duckdb"
    with MirrorServer(mirror) as server:
        _refresh(db, server.base_url)
        cold = server.bytes_sent
        _refresh(db, server.base_url)
        unchanged = server.bytes_sent - cold
    return {"cold_bytes": cold, "unchanged_bytes": unchanged}


def _scrapes(scraper, documents: list) -> bool:
    """Whether the refresh parsed these documents, as the pipeline decides: a source whose pages
    are not all stored (GCP's network page is not mirrored) builds its curated rows alone."""
    try:
        pipeline.parse_documents(scraper, documents, utcnow())
    except ProviderError:
        return False
    return True


def parse_times(db: Path, repeat: int) -> dict:
    """Parse (and row-building) time per source from the documents stored in ``db``."""
    with duckdb.connect(str(db), read_only=True) as con:
        [(database,)] = con.execute("SELECT current_database()").fetchall()
        stored = latest_documents(con, database)
    result = {}
    for name, cls in REGISTRY.items():
        documents = [d for d in stored.values() if d.provider == name]
        scrape = _scrapes(cls(), documents)

        def parse(cls=cls, documents=documents, scrape=scrape) -> None:
            pipeline.parse_documents(cls(), documents, utcnow(), scrape=scrape)

        result[name] = (_timed(parse, repeat), len(documents))
    return result


def machine() -> str:
    """One line naming the machine the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kib = int(Path("/proc/meminfo").read_text().split("\n", 1)[0].split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    return (
        f"Measured {time.strftime('%Y-%m-%d')} with `make bench` on {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} cores ({cpu}){memory}, Python {platform.python_version()}."
    )


def rebuild_ratio(times: list[float], floors: list[float]) -> float:
    """The rebuild against its floor: the median of each rebuild over the floor taken right before it."""
    return statistics.median(t / f for t, f in zip(times, floors, strict=True))


def report(
    offline: dict,
    scaled: list[dict],
    query: list[float],
    live: dict,
    wire: dict,
    parsing: dict,
    planning: dict | None = None,
) -> str:
    """The figures as the markdown table the README shows."""
    ratio = rebuild_ratio(offline["times"], offline["floor"])
    instances, claims, prices = offline["rows"]
    concurrent = statistics.median(live["concurrent"])
    slowest = live["slowest"]
    lines = [
        "| measure | figure | goal |",
        "| --- | --- | --- |",
        f"| offline rebuild of the mirror, in-process ({offline['documents']} documents, "
        f"{offline['megabytes']:.1f} MB; {instances} rows, {claims} claims, {prices} prices) "
        f"| {spread(offline['times'])} | <= 2 s |",
        f"| floor: read and hash the same documents | {spread(offline['floor'], 'ms', 1000)} | |",
        f"| offline rebuild / floor (median of each rebuild over the floor taken before it) | {ratio:.0f}x "
        "| <= 40x |",
        f"| offline rebuild via the CLI, cold interpreter | {spread(offline['cli'])} | |",
    ]
    base = statistics.median(offline["times"])
    for run in scaled:
        growth = statistics.median(run["times"]) / base / run["factor"]
        goal = "linear"
        lines.append(
            f"| offline rebuild at {run['factor']}x ({run['documents']} documents, {run['rows'][0]} rows, "
            f"{run['rows'][1]} claims) | {spread(run['times'])}; {growth:.2f}x linear | {goal} |"
        )
        memory_goal = "<= 0.6 GiB" if run["factor"] == 100 else ""
        lines.append(
            f"| peak memory of the {run['factor']}x rebuild | {run['peak_gib']:.2f} GiB | {memory_goal} |"
        )
    lines += [
        f'| `catalog query "select 1"`, cold interpreter | {spread(query)} | <= 0.4 s |',
        f"| live refresh, {LATENCY_S * 1000:.0f} ms per document, concurrent "
        f"| {spread(live['concurrent'])} | |",
        f"| the same, sequential | {spread(live['sequential'])} "
        f"({statistics.median(live['sequential']) / concurrent:.1f}x the concurrent time) | |",
        f"| slowest single source alone ({slowest}) | {spread(live['alone'][slowest])} | |",
        f"| floor: {live['host_documents']} documents from the busiest host ({live['host']}) x "
        f"{LATENCY_S * 1000:.0f} ms / {PER_HOST} in flight per host | {live['host_floor_s']:.2f} s | |",
        f"| concurrent / max(slowest single source, busiest host's floor) | "
        f"{concurrent / max(statistics.median(live['alone'][slowest]), live['host_floor_s']):.2f}x "
        "| <= 1.2x |",
        f"| bytes: cold refresh / unchanged refresh | {wire['cold_bytes']:,} / {wire['unchanged_bytes']:,} "
        f"({wire['unchanged_bytes'] / wire['cold_bytes']:.2%}) | <= 1 % |",
    ]
    lines += [
        f"| parse + build, {name} ({docs} document{'' if docs == 1 else 's'}) "
        f"| {spread(times, 'ms', 1000)} | |"
        for name, (times, docs) in parsing.items()
    ]
    if planning is not None:
        from devtools.bench_plan import plan_lines

        lines += plan_lines(planning, spread)
    return "\n".join(lines)


def _planning(scratch: Path, repeat: int) -> dict:
    from devtools import bench_plan

    return bench_plan.plan_speed(bench_plan.shipped_catalog(scratch), repeat)


def write_readme(table: str, machine_line: str) -> None:
    """Replace the README between the bench markers with ``table``."""
    text = README.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"docs/benchmarks.md lacks the {START} ... {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{START}\n{machine_line}\n\n{table}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print (and by default write) the table."""
    parser = argparse.ArgumentParser(prog="python -m devtools bench", description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "mirror")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scales", default="10,100", help="synthetic scale factors (comma-separated)")
    parser.add_argument("--no-readme", action="store_true", help="print only")
    parser.add_argument("--only", choices=("plan",), help="run one measurement alone and print it")
    args = parser.parse_args(argv)
    if args.only == "plan":
        from devtools import bench_plan

        return bench_plan.main(args.repeat)
    logging.basicConfig(level=logging.ERROR)  # the mirror lacks GCP/OCI pages: expected, not news
    if not args.mirror.is_dir():
        print(f"error: no mirror at {args.mirror}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        offline = offline_rebuild(args.mirror, scratch, args.repeat)
        factors = [int(f) for f in args.scales.split(",") if f]
        scaled = [scaled_rebuild(args.mirror, scratch, f, 3 if f <= 10 else 1) for f in factors]
        db = scratch / "offline-0.duckdb"
        table = report(
            offline,
            scaled,
            cold_query(db, 10),
            live_refresh(args.mirror, scratch, 3),
            transfer(args.mirror, scratch),
            parse_times(db, args.repeat),
            _planning(scratch, args.repeat),
        )
    line = machine()
    print(line + "\n\n" + table)
    if not args.no_readme:
        write_readme(table, line)
        print(f"\nwritten to {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
