"""Command line: ``python -m catalog refresh | reparse | query | export | seed | changes | ...``.

Exit codes: 0 success; 1 a provider failed (its last good rows are kept, marked stale) or carried
rows or fields from the last good catalog; 2 bad usage, bad or refused SQL, or a query past its time
limit; 3 another refresh holds the lock; 4 the environment (disk full, a read-only or missing
directory, a missing or corrupt catalog); 5 an error the tool did not expect (a bug: one line naming
it and where; ``INTERCONNECT_DEBUG=1`` prints the traceback); 130 interrupted (Ctrl-C).

Each command imports what it runs, when it runs: ``query`` never loads a scraper, pint or httpx.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from catalog import cli_plan
from catalog.cli_measurements import cmd_import, cmd_probe
from catalog.cli_release import add_release_parser
from catalog.paths import default_db
from normalize.errors import CorruptCatalog, EnvironmentProblem, LockHeld, QueryStopped, Unpublishable
from normalize.safe_text import FORMULA_PREFIXES, LIST_SEPARATOR, csv_safe_frame, escaped

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

    from catalog.pipeline import RefreshReport
    from catalog.read.prices import PriceQuestion
    from records.documents import Document

#: Options one command line may hold (the longest real one has a dozen; a file list may be long).
MAX_OPTIONS = 1000
EXIT_USAGE = 2
EXIT_LOCKED = 3
EXIT_ENVIRONMENT = 4
EXIT_BUG = 5  # not 1: a crash must not read as "a provider kept its last good rows"
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXPORT_FORMATS = {
    "csv": "(FORMAT CSV, HEADER)",
    "parquet": "(FORMAT PARQUET)",
    "json": "(FORMAT JSON, ARRAY true)",
}


def _progress(stream: TextIO) -> Callable[[Document], None]:
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
    """One line per provider: documents, rows before and after, rows and fields carried from the last
    good catalog, figures held back, outcome and cause."""
    width = max([10, *(len(o.provider) for o in report.outcomes)])
    lines = [
        f"{'provider':<{width}} {'docs':>5} {'before':>7} {'after':>6} {'carried':>7} "
        f"{'fields':>7} {'held':>6}  {'outcome':<8} cause"
    ]
    for o in report.outcomes:
        lines.append(
            f"{o.provider:<{width}} {o.documents:>5} {o.rows_before:>7} {o.rows_after:>6} "
            f"{o.rows_carried:>7} {o.fields_carried:>7} {o.fields_held:>6}  {o.outcome:<8} {o.cause or ''}"
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
    copies = getattr(args, "copies", None)
    if copies is not None and (not args.mirror or not Path(copies).is_dir()):
        why = "needs --mirror (a live refresh reads the providers' own pages)" if not args.mirror else ""
        print(f"error: --copies {why or f'directory {copies} does not exist'}", file=sys.stderr)
        return EXIT_USAGE
    from scrapers import REGISTRY

    unknown = sorted(set(args.provider or ()) - set(REGISTRY))
    if unknown:
        print(
            f"error: unknown provider {', '.join(unknown)}; choose from {', '.join(REGISTRY)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if mode == "reparse" and not Path(args.db).exists():  # nothing to reparse: never create one
        raise EnvironmentProblem(f"no catalog at {args.db} to reparse; run `make refresh` first")
    progress = None if args.quiet else _progress(sys.stderr)
    try:
        import asyncio

        report = asyncio.run(_run_refresh(args, mode, progress))
    except LockHeld as exc:
        print(f"error: {exc}; not starting a second one", file=sys.stderr)
        return EXIT_LOCKED
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(_summary(report), file=sys.stderr)
    return report.exit_code


async def _run_refresh(
    args: argparse.Namespace, mode: str, progress: Callable[[Document], None] | None
) -> RefreshReport:
    from catalog import pipeline
    from fetch.http import make_client

    async with make_client(mirror=getattr(args, "mirror", None)) as client:
        return await pipeline.refresh(
            args.db,
            client,
            providers=args.provider,
            mode=mode,
            on_document=progress,
            replay=mode == "reparse",
            copies=Path(args.copies) if getattr(args, "copies", None) else None,
            accept_changes=args.accept_changes,
        )


def cmd_query(args: argparse.Namespace) -> int:
    """query: run SQL in a read-only sandbox (no file or network access, locked settings, a time
    limit) and print the result. Exit 2 for bad or refused SQL and for a query past its time limit."""
    import duckdb

    from catalog.read.connect import (
        QUERY_MAX_GROWTH_BYTES,
        connect_sandboxed,
        execute_limited,
        growth_capped,
        time_limit_problem,
        unreadable,
    )
    from catalog.read.output import write_rows

    if (problem := time_limit_problem(args.timeout)) is not None:
        print(f"error: --timeout {args.timeout:g}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with connect_sandboxed(args.db) as con, growth_capped():
            columns, rows, cut = execute_limited(con, args.sql, args.timeout)
    except (duckdb.OutOfMemoryException, MemoryError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(
            f"error: {first}: the query needs more than the {QUERY_MAX_GROWTH_BYTES:,} bytes one query may "
            "take; narrow it (WHERE, LIMIT, shorter values)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except duckdb.Error as exc:
        if (unread := unreadable(args.db, exc)) is not None:  # the catalog, not the SQL
            raise unread from None
        print(f"error: {escaped(str(exc), keep=chr(10))}", file=sys.stderr)  # it quotes the SQL
        return EXIT_USAGE
    except QueryStopped as exc:
        print(f"error: {exc} (--timeout SECONDS to change it, 0 for none)", file=sys.stderr)
        return EXIT_USAGE
    write_rows(columns, rows, args.format, sys.stdout)
    if cut is not None:  # like a query past its time limit: what was printed is not the whole answer
        print(f"error: result {cut}; narrow the query (WHERE, LIMIT) to see the rest", file=sys.stderr)
        return EXIT_USAGE
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """export: write one table to csv, parquet or json: to ``--out``, or else to standard output
    (never a file in the working directory; parquet, being binary, only to a pipe or a redirect)."""
    import tempfile

    if args.out is None and args.format == "parquet" and sys.stdout.isatty():
        print("error: parquet is binary: give --out FILE, or redirect standard output", file=sys.stderr)
        return EXIT_USAGE
    if args.out is not None:
        _export(args.db, args.table, args.format, args.out)
        print(f"wrote {args.table} to {args.out}", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="catalog-export-") as scratch:
        out = Path(scratch) / f"{args.table}.{args.format}"
        _export(args.db, args.table, args.format, str(out))
        if args.format == "parquet":
            sys.stdout.flush()
            sys.stdout.buffer.write(out.read_bytes())
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(out.read_text(encoding="utf-8"))
    return 0


def _export(db: Path, table: str, fmt: str, out: str) -> None:
    import duckdb

    from catalog.read.connect import connect_readonly, unreadable

    try:
        with connect_readonly(db) as con:
            quoted = out.replace("'", "''")  # a SQL string literal; table is one of the choices
            columns = _export_columns(con, table) if fmt == "csv" else "*"
            con.execute(f"COPY (SELECT {columns} FROM {table}) TO '{quoted}' {EXPORT_FORMATS[fmt]}")
    except duckdb.Error as exc:  # a damaged block is found while it is read, half-way through a COPY
        if (problem := unreadable(db, exc)) is not None:  # the catalog read, not the file written
            Path(out).unlink(missing_ok=True)  # no half-written table left behind
            raise problem from None
        if isinstance(exc, duckdb.IOException):
            raise EnvironmentProblem(f"cannot write {out}: {str(exc).splitlines()[0]}") from None
        raise


def _export_columns(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """The select list of a CSV export: every text column with a ' before a value a spreadsheet
    would run as a formula (normalize.safe_text.FORMULA_PREFIXES), a list of texts (a row's notes)
    joined by LIST_SEPARATOR first, the others as they are."""
    prefixes = "".join(FORMULA_PREFIXES)
    columns = []
    for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall():
        quoted = '"' + name.replace('"', '""') + '"'
        text = f"array_to_string({quoted}, '{LIST_SEPARATOR}')" if kind == "VARCHAR[]" else quoted
        if kind in ("VARCHAR", "VARCHAR[]"):
            columns.append(
                f"CASE WHEN {text} <> '' AND contains('{prefixes}', left({text}, 1)) "
                f"THEN '''' || {text} ELSE {text} END AS {quoted}"
            )
        else:
            columns.append(quoted)
    return ", ".join(columns)


def cmd_seed(args: argparse.Namespace) -> int:
    """seed: build the catalog from the shipped snapshot, unless one exists (or --force)."""
    from catalog import snapshot

    source = Path(args.source or snapshot.DEFAULT_DIR)
    if Path(args.db).exists() and not args.force:
        print(f"{args.db} exists; keeping it (use --force to rebuild from {source})", file=sys.stderr)
        return 0
    if not source.is_dir():
        raise EnvironmentProblem(f"snapshot directory {source} does not exist")
    try:
        snapshot.load(source, Path(args.db))
    except LockHeld as exc:
        print(f"error: {exc}; not seeding underneath it", file=sys.stderr)
        return EXIT_LOCKED
    from catalog.read.connect import connect_readonly
    from catalog.read.summary import summary

    with connect_readonly(args.db) as con:
        print(f"built {args.db} from {source}: {summary(con).line()}", file=sys.stderr)
    return 0


def cmd_changes(args: argparse.Namespace) -> int:
    """changes: the figures and prices that changed between refreshes, newest first."""
    from catalog.read.changes import changes
    from catalog.read.connect import connect_readonly

    with connect_readonly(args.db) as con:
        frame = changes(con, args.since)
    if frame.empty:
        print("(no changes)" + (f" since {args.since:%Y-%m-%d}" if args.since else ""))
        return 0
    for row in frame.to_dict("records"):
        before, after = ", ".join(row["before"]), ", ".join(row["after"]) or "(gone)"
        unit = f" {row['unit']}" if row["unit"] else ""
        region = f" in {row['region']}" if isinstance(row["region"], str) else ""
        print(
            f"{row['changed_at']:%Y-%m-%d %H:%M}  {row['provider']}/{row['instance_type']}  "
            f"{row['field']}{region}: {before} -> {after}{unit}"
        )
    return 0


def _price_question(args: argparse.Namespace) -> PriceQuestion:
    """``cheapest``'s question from its options; ValueError naming the option for a value no row has."""
    from catalog.read.prices import PriceQuestion

    return PriceQuestion(
        gpu_counts=tuple(args.gpus or ()),
        intra_links=tuple(args.link or ()),
        fabrics=tuple(args.fabric or ()),
        providers=tuple(args.provider or ()),
        min_fabric_gbits_per_s_per_node=args.min_fabric_gbits,
        include_inferred=not args.stated_only,
        priced_only=args.priced_only,
        order_by=args.by,
        region=args.region,
        spot=args.spot,
    )


def cmd_cheapest(args: argparse.Namespace) -> int:
    """cheapest: rows matching a filter, ranked by on-demand price (or price per GPU, or per fabric GB/s)."""
    from catalog.cli_names import names_problem
    from catalog.read.connect import connect_readonly
    from catalog.read.output import write_rows
    from catalog.read.prices import cautions, cheapest

    try:
        question = _price_question(args)
    except ValueError as exc:  # named as the API names it: gpus, provider, min_fabric_gbits
        name, _, why = str(exc).partition(": ")
        print(f"error: --{name.replace('_', '-')}: {why}", file=sys.stderr)
        return EXIT_USAGE
    with connect_readonly(args.db) as con:  # no catalog, or an unreadable one: `main` says so, exit 4
        problem = names_problem(con, args.provider, None, [args.region] if args.region else [])
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return EXIT_USAGE
        frame = cheapest(con, question).head(args.limit)
    if args.format == "csv":
        csv_safe_frame(frame).to_csv(sys.stdout, index=False)
    elif args.format == "json":
        sys.stdout.write(frame.to_json(orient="records") + "\n")
    else:
        shown = frame[[c for c in CHEAPEST_TABLE if c in frame.columns]].round(3)
        import pandas as pd

        # NaN and pandas' NA (a nullable rank, an unpriced row) print as NULL; NA has no truth value
        rows = [[None if pd.isna(v) else v for v in row] for row in shown.itertuples(index=False)]
        write_rows(list(shown.columns), rows, "table", sys.stdout)
        for caution in cautions(frame):  # a placeholder price does not lead an answer unsaid
            sys.stdout.write(f"caution: {caution}\n")
    return 0


#: The columns ``cheapest`` prints as a table (CSV and JSON carry every column, sources included).
CHEAPEST_TABLE = (
    "rank",
    "provider",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "intra_node_link",
    "inter_node_fabric",
    "inter_node_gbits_per_s",
    "inter_node_basis",
    "min_usd_per_hour",
    "usd_per_gpu_hour",
    "price_region",
    "min_spot_usd_per_hour",
    "usd_per_gpu_hour_per_fabric_gbytes_per_s",
    "currency",
    "price_kind",
    "stale",
)


def cmd_providers(args: argparse.Namespace) -> int:
    """providers: the registered providers and their source kinds."""
    from scrapers import REGISTRY

    width = max(len(name) for name in REGISTRY)
    for name, cls in REGISTRY.items():
        print(f"{name:<{width}} {cls.source_kind:<8} {cls.title}")
    return 0


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


#: Commands ``main`` builds alone when the command line starts with them: a ``plan`` does not pay
#: for every other command's options (argparse looks up each help text's translation).
ALONE = ("plan",)
#: Commands that run without logging configured (nothing they run logs, so they never load it).
UNLOGGED = ("plan",)


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a usage error in one line naming the argument (argparse prints the command's
    whole usage first: ten lines for ``cheapest --gpus abc``); ``--help`` still prints it all."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (--help shows the usage)\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``python -m catalog``; with ``only`` (one of ``ALONE``), just that
    command's (it parses that command's arguments as the whole parser does). Its subcommands' parsers
    are of its class (argparse's default), so each usage error is one line."""
    parser: argparse.ArgumentParser = OneLineParser(
        prog="python -m catalog", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def with_db(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--db",
            type=Path,
            default=None,
            help=f"catalog file (default {default_db()}, from $INTERCONNECT_CATALOG_DB)",
        )
        return p

    if only == "plan":
        cli_plan.register_plan(sub, with_db)
        return parser

    refresh = with_db(sub.add_parser("refresh", help="fetch, parse and swap in a new catalog"))
    refresh.add_argument(
        "--mirror",
        help="read https://<host>/<path> from DIR/<host>/<path> (offline), or from URL/<host>/<path>",
    )
    refresh.add_argument(
        "--copies",
        help="with --mirror: also read the local copies providers declare (third-party copies of pages "
        "with no fetchable URL) from DIR/<path>; a live refresh reads the providers' own pages instead",
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
    for command in (refresh, reparse):
        command.add_argument(
            "--accept-changes",
            action="store_true",
            help="publish the parse as it is: drop rows and fields it lost, accept figures that jumped "
            "8x or more (after reading the summary of a run that carried or held them)",
        )

    query = with_db(sub.add_parser("query", help="run read-only SQL against the catalog (sandboxed)"))
    query.add_argument("sql")
    query.add_argument("--format", choices=("table", "csv", "json"), default="table")
    query.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="stop the query after this long (default 30; 0 for no limit)",
    )
    query.set_defaults(func=cmd_query)

    export = with_db(sub.add_parser("export", help="write a table to csv, parquet or json"))
    export.add_argument("--format", choices=list(EXPORT_FORMATS), required=True)
    export.add_argument(
        "--table",
        choices=(
            "instances",
            "claims",
            "current_claims",
            "prices",
            "current_prices",
            "fetches",
            "measurements",
        ),
        default="instances",
    )
    export.add_argument("--out", help="output file (default: standard output)")
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

    cli_plan.register_plan(sub, with_db)

    cli_plan.register(sub, with_db)

    _cheapest_parser(with_db(sub.add_parser("cheapest", help="rank rows by price for a filter")))
    add_release_parser(sub, with_db)

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


def _cheapest_parser(cheap: argparse.ArgumentParser) -> None:
    from catalog.read.prices import ORDERS
    from normalize.vocab import Fabric, Link

    cheap.add_argument("--gpus", type=float, action="append", help="GPUs per instance (repeatable)")
    cheap.add_argument("--link", action="append", choices=[v.value for v in Link], help="intra-node link")
    cheap.add_argument("--fabric", action="append", choices=[v.value for v in Fabric], help="fabric")
    cheap.add_argument("--provider", action="append", help="only this provider (repeatable)")
    cheap.add_argument("--min-fabric-gbits", type=float, default=0, help="fabric per node at least (Gbit/s)")
    cheap.add_argument("--by", choices=list(ORDERS), default="usd_per_hour", help="order, cheapest first")
    cheap.add_argument("--stated-only", action="store_true", help="ignore datasheet-inferred fabric figures")
    cheap.add_argument("--priced-only", action="store_true", help="leave out rows with no on-demand price")
    cheap.add_argument("--limit", type=_positive_int, default=50, help="at most this many rows (default 50)")
    cheap.add_argument("--region", help="price in this region only, as the price source names it")
    cheap.add_argument("--spot", action="store_true", help="rank by the spot price, not on-demand")
    cheap.add_argument("--format", choices=("table", "csv", "json"), default="table")
    cheap.set_defaults(func=cmd_cheapest)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    given = sys.argv[1:] if argv is None else argv
    options = sum(1 for arg in given if arg.startswith("-"))
    if options > MAX_OPTIONS:  # argparse's time grows with their square: 20,000 once took 62 s
        print(f"error: {options:,} options on one command line; at most {MAX_OPTIONS:,}", file=sys.stderr)
        return EXIT_USAGE
    args = build_parser(given[0] if given and given[0] in ALONE else None).parse_args(given)
    if getattr(args, "db", "absent") is None:
        args.db = default_db()
    if args.command not in UNLOGGED:
        import logging

        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except CorruptCatalog as exc:
        print(f"error: {exc}; `make refresh` moves it aside and rebuilds it", file=sys.stderr)
        return EXIT_ENVIRONMENT
    except Unpublishable as exc:  # rows the refresh built break what every fresh row passes: a bug
        print(f"error: {exc}; the catalog was not replaced (a bug; please report it)", file=sys.stderr)
        return EXIT_BUG
    except OSError as exc:  # EnvironmentProblem, and what the file system says directly
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    except Exception as exc:  # a bug: Python's own exit (a traceback, code 1) reads as a stale provider
        if _out_of_memory(exc):  # the machine, not the tool
            print(f"error: out of memory: {_first_line(exc)}", file=sys.stderr)
            return EXIT_ENVIRONMENT
        if os.environ.get("INTERCONNECT_DEBUG"):
            traceback.print_exc()
        print(f"error: {_bug(exc)}", file=sys.stderr)
        return EXIT_BUG


def _run(args: argparse.Namespace) -> int:
    """The command, with a DuckDB error that says the catalog file itself cannot be read (garbage, an
    empty file, a directory, a damaged block found half-way through a read) raised as the
    environment's CorruptCatalog or EnvironmentProblem: one line and exit 4 from every command that
    reads ``--db``, not a bug's exit 5. Any other error goes on as it came."""
    try:
        return args.func(args)
    except Exception as exc:
        duckdb = sys.modules.get("duckdb")  # not imported for this: whatever raised its error loaded it
        db = getattr(args, "db", None)
        if duckdb is None or db is None or not isinstance(exc, duckdb.Error):
            raise
        from catalog.read.connect import unreadable

        problem = unreadable(db, exc)
        if problem is None:
            raise
        raise problem from None


def _out_of_memory(exc: Exception) -> bool:
    """Whether Python or DuckDB ran out of memory (duckdb is not imported for this: whatever raised
    its error loaded it)."""
    duckdb = sys.modules.get("duckdb")
    return isinstance(exc, MemoryError) or (
        duckdb is not None and isinstance(exc, duckdb.OutOfMemoryException)
    )


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name if it has none or cannot say it)."""
    try:
        text = str(exc)
    except Exception:  # a __str__ that raises must not turn one line into a traceback
        text = ""
    return text.splitlines()[0][:300] if text.strip() else type(exc).__name__


def _bug(exc: Exception) -> str:
    """An unexpected error as one line: its type, first line and innermost frame of the project's."""
    root = Path(__file__).resolve().parent.parent
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if Path(f.filename).resolve().is_relative_to(root) and "site-packages" not in f.filename
    ]
    where = (
        f" at {Path(frames[-1].filename).resolve().relative_to(root)}:{frames[-1].lineno}" if frames else ""
    )
    name, first = type(exc).__name__, _first_line(exc)
    said = name if first == name else f"{name}: {first}"
    return (
        f"internal error (a bug in interconnect-catalog; please report it): {said}{where}; "
        "INTERCONNECT_DEBUG=1 prints the traceback"
    )


def _one_line(exc: OSError) -> str:
    """An OSError as one line: 'No such file or directory: x' rather than '[Errno 2] ...'."""
    if exc.strerror and exc.filename:
        return f"{exc.strerror}: {exc.filename}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
