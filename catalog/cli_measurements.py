"""The measurement commands of ``python -m catalog``: ``measurements import`` and ``probe``.

Like every command, each imports what it runs when it runs (the parser in ``catalog.cli`` loads
nothing heavy). Exit codes as in ``catalog.cli``: 0 done, 1 a file could not be read (nothing was
imported) or the record could not be written, 2 bad usage, 3 another writer holds the lock.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import datetime
from pathlib import Path

from normalize.errors import LockHeld

EXIT_USAGE = 2
EXIT_LOCKED = 3


def cmd_import(args: argparse.Namespace) -> int:
    """measurements import: a user's tool outputs or probe records into the catalog's measurements."""
    from catalog import importer
    from records.clock import utcnow

    if not Path(args.db).exists():
        print(
            f"error: no catalog at {args.db}; run `make refresh` or `python -m catalog seed` first",
            file=sys.stderr,
        )
        return 1
    if args.provider and not args.instance:
        print("error: --provider needs --instance", file=sys.stderr)
        return EXIT_USAGE
    flags = {"provider": args.provider, "instance_type": args.instance, "collective": args.collective}
    results, errors = importer.read_files(
        [Path(f) for f in args.files], importer.known_instances(args.db), **flags
    )
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if errors:
        print("nothing imported: fix or leave out the files above", file=sys.stderr)
        return 1
    for result in results:
        about = result.found.instance_type or "no catalog instance"
        print(
            f"{result.path}: {len(result.readings)} readings, {about} ({result.found.how})", file=sys.stderr
        )
        for skipped in result.skipped:
            print(f"  skipped {skipped}", file=sys.stderr)
    try:
        added, there = importer.write(Path(args.db), [m for r in results for m in r.readings], utcnow())
    except LockHeld as exc:
        print(f"error: {exc}; not importing underneath it", file=sys.stderr)
        return EXIT_LOCKED
    print(f"imported {added} readings into {args.db} ({there} already there)", file=sys.stderr)
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    """probe: detect the instance, run the measuring tools on PATH, write one JSON record."""
    import json

    import httpx

    from catalog import probe
    from fetch.http import make_client

    if args.provider and not args.instance:
        print("error: --provider needs --instance", file=sys.stderr)
        return EXIT_USAGE
    provider, instance, how = args.provider, args.instance, "given on the command line"
    if not instance:

        async def ask() -> tuple[str | None, str | None, str]:
            async with make_client(timeout=httpx.Timeout(args.metadata_timeout_s)) as client:
                return await probe.detect_instance(client)

        provider, instance, how = asyncio.run(ask())
    print(f"instance: {instance or 'unknown'} ({how})", file=sys.stderr)
    runs = probe.run_tools(timeout_s=args.tool_timeout_s)
    for run in runs:
        print(f"  {run['tool']:<22} {run['status']} ({run['seconds']:.1f}s)", file=sys.stderr)
    out = Path(args.out or f"probe-{instance or 'unknown'}-{datetime.now():%Y%m%dT%H%M%S}.json")
    try:
        out.write_text(json.dumps(probe.record(provider, instance, how, runs), indent=2) + "\n")
    except OSError as exc:
        print(f"error: cannot write {out}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out}; read it with `python -m catalog measurements import {out}`", file=sys.stderr)
    return 0
