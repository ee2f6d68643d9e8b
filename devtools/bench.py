"""Benchmarks, measured on this machine: ``make bench`` (``python -m devtools bench``).

1. Offline rebuild of the whole mirror: wall time and documents per second.
2. Live refresh against the mirror served over loopback (by ``serve-mirror`` in its own process)
   with 200 ms added to every response: concurrent against sequential, and against the slowest
   provider refreshed alone.
3. Bytes on the wire: a cold refresh against an unchanged one (conditional GET, 304s).
4. Parse time per provider, from the stored documents (no network).

The figures are printed and written into README.md between the bench markers. Goals: offline
rebuild <= 1 s; concurrent <= 1.2x the slowest single source; unchanged <= 1 % of cold bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
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
from devtools.mirror_server import MirrorServer
from records.clock import utcnow
from scrapers import REGISTRY
from scrapers.http import make_client

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
LATENCY_S = 0.2


def _refresh(
    db: Path, mirror: str, providers: list[str] | None = None, **fetcher_options
) -> pipeline.RefreshReport:
    async def go():
        async with make_client(mirror=mirror) as client:
            return await pipeline.refresh(
                db, client, providers=providers, mode="mirror", fetcher_options=fetcher_options or None
            )

    return asyncio.run(go())


def _timed(run: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def offline_rebuild(mirror: Path, scratch: Path, repeat: int) -> dict:
    """The whole mirror into a new catalog, in-process, and the CLI end to end."""
    documents = []

    def once() -> None:
        db = scratch / f"offline-{time.perf_counter_ns()}.duckdb"
        report = _refresh(db, str(mirror))
        documents.append(sum(o.documents for o in report.outcomes))

    times = _timed(once, repeat)
    cli_db = scratch / "cli.duckdb"
    command = [
        sys.executable,
        "-m",
        "catalog",
        "refresh",
        "--mirror",
        str(mirror),
        "--db",
        str(cli_db),
        "--quiet",
    ]
    cli = _timed(lambda: subprocess.run(command, check=False, capture_output=True, cwd=ROOT), 3)
    median = statistics.median(times)
    return {
        "seconds": median,
        "documents": documents[0],
        "docs_per_s": documents[0] / median,
        "cli_seconds": statistics.median(cli),
    }


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


def live_refresh(mirror: Path, scratch: Path) -> dict:
    """Concurrent vs sequential vs each provider alone, over loopback HTTP with added latency."""
    with _mirror_process(mirror, LATENCY_S) as base_url:
        concurrent = _timed(lambda: _refresh(scratch / f"c-{time.perf_counter_ns()}.duckdb", base_url), 3)
        sequential = _timed(
            lambda: _refresh(
                scratch / f"s-{time.perf_counter_ns()}.duckdb", base_url, concurrency=1, per_host=1
            ),
            1,
        )
        alone = {
            name: statistics.median(
                _timed(
                    lambda name=name: _refresh(
                        scratch / f"a-{name}-{time.perf_counter_ns()}.duckdb", base_url, providers=[name]
                    ),
                    3,
                )
            )
            for name in REGISTRY
        }
    slowest = max(alone, key=alone.get)
    return {
        "concurrent": statistics.median(concurrent),
        "sequential": sequential[0],
        "alone": alone,
        "slowest": slowest,
    }


def transfer(mirror: Path, scratch: Path) -> dict:
    """Body bytes of a cold refresh and of an unchanged one right after it (conditional GET)."""
    db = scratch / "transfer.duckdb"
    with MirrorServer(mirror) as server:
        _refresh(db, server.base_url)
        cold = server.bytes_sent
        _refresh(db, server.base_url)
        unchanged = server.bytes_sent - cold
    return {"cold_bytes": cold, "unchanged_bytes": unchanged}


def parse_times(mirror: Path, scratch: Path, repeat: int) -> dict:
    """Median parse (and row-building) time per provider from stored documents."""
    db = scratch / "parse.duckdb"
    _refresh(db, str(mirror))
    with duckdb.connect(str(db), read_only=True) as con:
        stored = latest_documents(con, con.execute("SELECT current_database()").fetchone()[0])
    result = {}
    for name, cls in REGISTRY.items():
        documents = [d for d in stored.values() if d.provider == name]

        scrape = any(d.required for d in documents)

        def parse(cls=cls, documents=documents, scrape=scrape) -> None:
            # Providers with none of their pages stored (not mirrored, or curated only; GCP offline has
            # only its optional price file) build curated rows, and prices from what is stored.
            pipeline.parse_documents(cls(), documents, utcnow(), scrape=scrape)

        result[name] = (statistics.median(_timed(parse, repeat)), len(documents))
    return result


def report(offline: dict, live: dict, wire: dict, parsing: dict) -> str:
    """The figures as the markdown table the README shows."""
    ratio = live["concurrent"] / live["alone"][live["slowest"]]
    share = wire["unchanged_bytes"] / wire["cold_bytes"]
    lines = [
        "| measure | figure | goal |",
        "| --- | --- | --- |",
        f"| offline rebuild of the mirror (in-process, median of runs) | {offline['seconds']:.2f} s, "
        f"{offline['documents']} documents, {offline['docs_per_s']:.0f} documents/s | <= 1 s |",
        f"| offline rebuild via the CLI (incl. Python start-up) | {offline['cli_seconds']:.2f} s | |",
        f"| live refresh, {LATENCY_S * 1000:.0f} ms per document, concurrent "
        f"| {live['concurrent']:.2f} s | |",
        f"| the same, sequential | {live['sequential']:.2f} s "
        f"({live['sequential'] / live['concurrent']:.1f}x the concurrent time) | |",
        f"| slowest single provider alone ({live['slowest']}) | {live['alone'][live['slowest']]:.2f} s | |",
        f"| concurrent / slowest single source | {ratio:.2f}x | <= 1.2x |",
        f"| bytes: cold refresh / unchanged refresh | {wire['cold_bytes']:,} / {wire['unchanged_bytes']:,} "
        f"({share:.2%}) | <= 1 % |",
    ]
    lines += [
        f"| parse + build, {name} ({docs} document{'' if docs == 1 else 's'}) | {seconds * 1000:.1f} ms | |"
        for name, (seconds, docs) in parsing.items()
    ]
    return "\n".join(lines)


def write_readme(table: str, machine: str) -> None:
    """Replace the README between the bench markers with ``table``."""
    text = README.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"README.md lacks the {START} ... {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{START}\n{machine}\n\n{table}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    """Run every measurement once and print (and by default write) the table."""
    parser = argparse.ArgumentParser(prog="python -m devtools bench", description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "mirror")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-readme", action="store_true", help="print only")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the mirror lacks GCP/OCI pages: expected, not news
    if not args.mirror.is_dir():
        print(f"error: no mirror at {args.mirror}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        table = report(
            offline_rebuild(args.mirror, scratch, args.repeat),
            live_refresh(args.mirror, scratch),
            transfer(args.mirror, scratch),
            parse_times(args.mirror, scratch, args.repeat),
        )
    machine = (
        f"Measured {time.strftime('%Y-%m-%d')} with `make bench` on this project's CI-class machine "
        "(2 cores, 24 GiB), Python " + sys.version.split()[0] + "."
    )
    print(table)
    if not args.no_readme:
        write_readme(table, machine)
        print(f"\nwritten to {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
