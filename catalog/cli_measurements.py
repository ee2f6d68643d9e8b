"""The measurement commands of ``python -m catalog``: ``measurements import`` and ``probe``.

Like every command, each imports what it runs when it runs (the parser in ``catalog.cli`` loads
nothing heavy). Exit codes as in ``catalog.cli``: 0 done, 1 a file could not be read (nothing was
imported) or the record could not be written, 2 bad usage, 3 another writer holds the lock.
"""

from __future__ import annotations

import argparse
import math
import sys
from datetime import datetime
from pathlib import Path

from normalize.errors import LockHeld

EXIT_USAGE = 2
EXIT_LOCKED = 3
# probe's timeouts: a metadata request (the services answer in milliseconds on a cloud), a tool run
# (nvbandwidth, the slowest, takes minutes). NaN, a negative or an infinite value once disabled the
# limit or timed every tool out at once.
MAX_METADATA_TIMEOUT_S = 60
MAX_TOOL_TIMEOUT_S = 86_400
# The metadata services are all asked within this many request timeouts (AWS asks twice in a row).
METADATA_ASKS = 4


def cmd_import(args: argparse.Namespace) -> int:
    """measurements import: a user's tool outputs or probe records into the catalog's measurements."""
    from catalog import importer
    from measure.probe_record import name_problem
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
    for flag, name in (("--provider", args.provider), ("--instance", args.instance)):
        if (problem := name_problem(name)) is not None:
            print(f"error: {flag} {problem}", file=sys.stderr)
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
    import asyncio
    import json

    import httpx

    from catalog import probe
    from fetch.http import make_client
    from fetch.transports import MetadataOnly

    if args.provider and not args.instance:
        print("error: --provider needs --instance", file=sys.stderr)
        return EXIT_USAGE
    for flag, value, most in (
        ("--metadata-timeout-s", args.metadata_timeout_s, MAX_METADATA_TIMEOUT_S),
        ("--tool-timeout-s", args.tool_timeout_s, MAX_TOOL_TIMEOUT_S),
    ):
        if value is not None and not (math.isfinite(value) and 0 < value <= most):
            print(
                f"error: {flag} {value:g}: must be a number of seconds above 0, at most {most:,}",
                file=sys.stderr,
            )
            return EXIT_USAGE
    provider, instance, how = args.provider, args.instance, "given on the command line"
    if not instance:

        async def ask() -> tuple[str | None, str | None, str]:
            # The metadata endpoints are link-local: allowed for this command, and only they.
            transport = MetadataOnly(probe.ENDPOINTS)
            async with make_client(
                transport=transport, timeout=httpx.Timeout(args.metadata_timeout_s)
            ) as client:
                return await probe.detect_instance(client, METADATA_ASKS * args.metadata_timeout_s)

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
