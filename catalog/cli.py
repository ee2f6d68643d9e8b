"""Command line: ``python -m catalog refresh | reparse | query | export | seed | changes | ...``.

Exit codes: 0 success; 1 a provider failed (its last good rows are kept, marked stale) or the
catalog could not be read; 2 bad usage or SQL; 3 another refresh holds the lock.

Each command imports what it runs, when it runs: ``query`` never loads a scraper, pint or httpx.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from catalog.cli_measurements import cmd_import, cmd_probe
from catalog.paths import default_db
from normalize.errors import LockHeld

if TYPE_CHECKING:
    from catalog.pipeline import RefreshReport
    from records.documents import Document

EXIT_USAGE = 2
EXIT_LOCKED = 3
EXPORT_FORMATS = {
    "csv": "(FORMAT CSV, HEADER)",
    "parquet": "(FORMAT PARQUET)",
    "json": "(FORMAT JSON, ARRAY true)",
}


def _progress(stream):
    def show(doc: Document) -> None:
        size = (
            f"{doc.bytes_received / 1000:7.1f} kB"
            if doc.bytes_received
            else "   cached"
            if doc.from_cache
            else "         "
        )
        status = f"{doc.status:3d}" if doc.status else "ERR"
        note = f"  ({doc.error})" if doc.error else ""
        print(f"  {doc.provider:<8} {status} {size}  {doc.url}{note}", file=stream, flush=True)

    return show


def _summary(report: RefreshReport) -> str:
    lines = [f"{'provider':<10} {'docs':>5} {'before':>7} {'after':>6}  {'outcome':<8} cause"]
    for o in report.outcomes:
        lines.append(
            f"{o.provider:<10} {o.documents:>5} {o.rows_before:>7} {o.rows_after:>6}  "
            f"{o.outcome:<8} {o.cause or ''}"
        )
    seconds = (report.finished_at - report.started_at).total_seconds()
    lines.append(f"refresh {report.refresh_id} ({report.mode}) took {seconds:.2f}s; exit {report.exit_code}")
    return "\n".join(lines)


def cmd_refresh(args: argparse.Namespace) -> int:
    """refresh / reparse: rebuild the catalog; exit 0 ok, 1 a provider failed, 2 usage, 3 locked."""
    mode = "reparse" if args.command == "reparse" else ("mirror" if args.mirror else "live")
    if args.mirror is not None and not args.mirror.strip():
        print("error: --mirror needs a directory or URL; leave it out for a live refresh", file=sys.stderr)
        return EXIT_USAGE
    if args.mirror and not args.mirror.startswith(("http://", "https://")) and not Path(args.mirror).is_dir():
        print(f"error: mirror directory {args.mirror} does not exist", file=sys.stderr)
        return EXIT_USAGE
    from scrapers import REGISTRY

    unknown = sorted(set(args.provider or ()) - set(REGISTRY))
    if unknown:
        print(
            f"error: unknown provider {', '.join(unknown)}; choose from {', '.join(REGISTRY)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    progress = None if args.quiet else _progress(sys.stderr)
    try:
        report = asyncio.run(_run_refresh(args, mode, progress))
    except LockHeld as exc:
        print(f"error: {exc}; not starting a second one", file=sys.stderr)
        return EXIT_LOCKED
    print(_summary(report), file=sys.stderr)
    return report.exit_code


async def _run_refresh(args, mode, progress) -> RefreshReport:
    from catalog import pipeline
    from scrapers.http import make_client

    async with make_client(mirror=getattr(args, "mirror", None)) as client:
        return await pipeline.refresh(
            args.db,
            client,
            providers=args.provider,
            mode=mode,
            on_document=progress,
            replay=mode == "reparse",
        )


def cmd_query(args: argparse.Namespace) -> int:
    """query: run read-only SQL against the catalog and print the result."""
    import duckdb

    from catalog.read.connect import connect_readonly

    try:
        with connect_readonly(args.db) as con:
            frame = con.execute(args.sql).df()
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except duckdb.Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "csv":
        frame.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        sys.stdout.write(frame.to_json(orient="records", date_format="iso") + "\n")
    else:
        print(frame.to_string(index=False) if len(frame) else "(no rows)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """export: write one table to csv, parquet or json."""
    from catalog.read.connect import connect_readonly

    out = args.out or f"{args.table}.{args.format}"
    try:
        with connect_readonly(args.db) as con:
            quoted = out.replace("'", "''")  # a SQL string literal; args.table is one of the choices
            con.execute(f"COPY (SELECT * FROM {args.table}) TO '{quoted}' {EXPORT_FORMATS[args.format]}")
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.table} to {out}", file=sys.stderr)
    return 0


def cmd_seed(args: argparse.Namespace) -> int:
    """seed: build the catalog from the shipped snapshot, unless one exists (or --force)."""
    from catalog import snapshot

    if Path(args.db).exists() and not args.force:
        print(f"{args.db} exists; keeping it (use --force to rebuild from {args.source})", file=sys.stderr)
        return 0
    try:
        rows = snapshot.load(Path(args.source or snapshot.DEFAULT_DIR), Path(args.db))
    except LockHeld as exc:
        print(f"error: {exc}; not seeding underneath it", file=sys.stderr)
        return EXIT_LOCKED
    print(f"built {args.db} from {args.source}: {rows} instances", file=sys.stderr)
    return 0


def cmd_changes(args: argparse.Namespace) -> int:
    """changes: the figures that changed between refreshes, newest first."""
    from catalog.read.changes import changes
    from catalog.read.connect import connect_readonly

    try:
        with connect_readonly(args.db) as con:
            frame = changes(con, args.since)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if frame.empty:
        print("(no changes)" + (f" since {args.since:%Y-%m-%d}" if args.since else ""))
        return 0
    for row in frame.itertuples(index=False):
        before, after = ", ".join(row.before), ", ".join(row.after) or "(gone)"
        unit = f" {row.unit}" if row.unit else ""
        print(
            f"{row.changed_at:%Y-%m-%d %H:%M}  {row.provider}/{row.instance_type}  {row.field}: "
            f"{before} -> {after}{unit}"
        )
    return 0


def cmd_providers(args: argparse.Namespace) -> int:
    """providers: the registered providers and their source kinds."""
    from scrapers import REGISTRY

    for name, cls in REGISTRY.items():
        print(f"{name:<10} {cls.source_kind:<8} {cls.title}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m catalog``."""
    parser = argparse.ArgumentParser(prog="python -m catalog", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def with_db(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--db",
            type=Path,
            default=None,
            help=f"catalog file (default {default_db()}, from $INTERCONNECT_CATALOG_DB)",
        )
        return p

    refresh = with_db(sub.add_parser("refresh", help="fetch, parse and swap in a new catalog"))
    refresh.add_argument(
        "--mirror",
        help="read https://<host>/<path> from DIR/<host>/<path> (offline), or from URL/<host>/<path>",
    )
    refresh.add_argument(
        "--provider", action="append", help="refresh only this provider (repeatable; `providers` lists them)"
    )
    refresh.add_argument("--quiet", action="store_true", help="no per-document progress")
    refresh.set_defaults(func=cmd_refresh)

    reparse = with_db(sub.add_parser("reparse", help="parse the stored documents again (no network)"))
    reparse.add_argument("--provider", action="append", help="reparse only this provider (repeatable)")
    reparse.add_argument("--quiet", action="store_true")
    reparse.set_defaults(func=cmd_refresh, mirror=None)

    query = with_db(sub.add_parser("query", help="run read-only SQL against the catalog"))
    query.add_argument("sql")
    query.add_argument("--format", choices=("table", "csv", "json"), default="table")
    query.set_defaults(func=cmd_query)

    export = with_db(sub.add_parser("export", help="write a table to csv, parquet or json"))
    export.add_argument("--format", choices=list(EXPORT_FORMATS), required=True)
    export.add_argument(
        "--table",
        choices=("instances", "claims", "current_claims", "fetches", "measurements"),
        default="instances",
    )
    export.add_argument("--out", help="output file (default <table>.<format>)")
    export.set_defaults(func=cmd_export)

    seed = with_db(sub.add_parser("seed", help="build the catalog from the snapshot shipped in the repo"))
    seed.add_argument(
        "--from", dest="source", default=None, help="snapshot directory (default data/snapshot)"
    )
    seed.add_argument("--force", action="store_true", help="rebuild even if the catalog exists")
    seed.set_defaults(func=cmd_seed)

    changed = with_db(sub.add_parser("changes", help="what changed between refreshes"))
    changed.add_argument("--since", type=datetime.fromisoformat, help="only changes since DATE (YYYY-MM-DD)")
    changed.set_defaults(func=cmd_changes)

    measurements = sub.add_parser("measurements", help="add your own measurements to the catalog")
    actions = measurements.add_subparsers(dest="action", required=True)
    imported = with_db(
        actions.add_parser("import", help="read tool outputs or probe records into measurements")
    )
    imported.add_argument(
        "files", nargs="+", help="nccl-tests logs, nvbandwidth JSON/text, topo, ib_write_bw ..."
    )
    imported.add_argument("--provider", help="the provider of the instance the outputs come from")
    imported.add_argument("--instance", help="the instance type (default: the one the file names, if any)")
    imported.add_argument(
        "--collective",
        help="the NCCL collective that ran, when the log does not say (all_gather, alltoall ...)",
    )
    imported.set_defaults(func=cmd_import)

    probing = sub.add_parser("probe", help="on a GPU instance: run the measuring tools, write a JSON record")
    probing.add_argument("--provider", help="skip the metadata services: the provider id")
    probing.add_argument("--instance", help="skip the metadata services: the instance type")
    probing.add_argument("--out", help="the record's file (default probe-<instance>-<time>.json)")
    probing.add_argument("--metadata-timeout-s", type=float, default=1.0, help="per metadata request")
    probing.add_argument("--tool-timeout-s", type=float, default=None, help="per tool (default: per tool)")
    probing.set_defaults(func=cmd_probe)

    providers = sub.add_parser("providers", help="list registered providers")
    providers.set_defaults(func=cmd_providers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    args = build_parser().parse_args(argv)
    if getattr(args, "db", "absent") is None:
        args.db = default_db()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return args.func(args)
