"""``python -m catalog release --out DIR``: the catalog as files to take away (``catalog.release``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

Parser = argparse.ArgumentParser


def add_release_parser(sub: argparse._SubParsersAction[Parser], with_db: Callable[[Parser], Parser]) -> None:
    """Register ``release`` on the CLI's subcommands (``with_db`` adds the ``--db`` option)."""
    release = with_db(sub.add_parser("release", help="write the catalog as a release: DuckDB, Parquet, JSON"))
    release.add_argument("--out", required=True, help="a new or empty directory for the release's files")
    release.set_defaults(func=cmd_release)


def cmd_release(args: argparse.Namespace) -> int:
    """release: write the files; one line per file with its SHA-256 on stderr. Exit 4 if the
    directory is not empty or cannot be written, or if there is no catalog or it cannot be read."""
    from pathlib import Path

    from catalog.release import build

    release = build(Path(args.db), Path(args.out))  # no catalog, or an unreadable one: exit 4 (`main`)
    for name, digest in release.sha256.items():
        print(f"  {digest[:16]}  {name}", file=sys.stderr)
    rows = ", ".join(f"{count:,} {table}" for table, count in release.rows.items() if count)
    print(f"wrote a release of {args.db} to {args.out}: {rows}", file=sys.stderr)
    return 0
