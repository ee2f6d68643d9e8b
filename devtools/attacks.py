"""Hostile responses, measured: ``python -m devtools attacks`` (``make attacks``).

Each case serves the AWS page damaged one way from a loopback server and runs ``python -m catalog
refresh --provider aws`` against it in a process of its own, with the default budget
(fetch/budget.py), reporting that process's wall time, peak resident memory (``ru_maxrss``),
exit code and the cause it gives. The issue's figures before the budget: a 2 MB gzip bomb drove a
refresh to 23.7 GB and an OOM kill, a 200 MB mirror file to 2.68 GB, and a one-byte-every-2-s drip
held the lock indefinitely.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from devtools.mirror_server import MirrorServer, Reply

ROOT = Path(__file__).resolve().parent.parent
AWS = "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
MIB = 1024 * 1024


def gzip_bomb(unpacked_bytes: int) -> bytes:
    """``unpacked_bytes`` of zeros as one gzip member (2 GiB → about 2 MB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(16 * MIB)
    parts = [packer.compress(block) for _ in range(unpacked_bytes // len(block))]
    return b"".join([*parts, packer.flush()])


def measured_refresh(mirror: str, db: Path) -> dict:
    """The CLI refresh of AWS in a child process: wall seconds, its own peak RSS, exit code, and its
    summary line for aws."""
    command = [sys.executable, "-m", "catalog", "refresh", "--mirror", mirror, "--provider", "aws"]
    started = time.monotonic()
    child = subprocess.Popen(
        [*command, "--db", str(db), "--quiet"], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    err = child.stderr.read() if child.stderr else ""
    _, status, usage = os.wait4(child.pid, 0)  # this child's own resource usage
    child.returncode = os.waitstatus_to_exitcode(status)
    aws = next((line for line in err.splitlines() if line.startswith("aws ")), "")
    return {
        "seconds": time.monotonic() - started,
        "peak_mb": usage.ru_maxrss / 1024,  # kB on Linux
        "exit": child.returncode,
        "summary": aws,
    }


Setup = Callable[[Path, contextlib.ExitStack], str]  # scratch dir, cleanup stack → the --mirror to use


def cases(page: bytes) -> dict[str, Setup]:
    """Each case sets up its fault and returns the --mirror to refresh from."""

    def served(reply: Reply) -> Setup:
        def start(_: Path, stack: contextlib.ExitStack) -> str:
            server = stack.enter_context(MirrorServer(None))
            server.script("/" + AWS, reply)
            return server.base_url

        return start

    def huge_file(scratch: Path, _: contextlib.ExitStack) -> str:
        path = scratch / "mirror" / AWS
        path.parent.mkdir(parents=True)
        with open(path, "wb") as handle:
            handle.truncate(200_000_000)  # sparse: 200 MB of zeros
        return str(scratch / "mirror")

    zeros = itertools.repeat(bytes(64 * 1024))
    return {
        "no fault (the real page)": served(Reply(200, page)),
        "gzip bomb: 2 MB on the wire, 2 GiB unpacked": served(
            Reply(200, gzip_bomb(2048 * MIB), headers={"Content-Encoding": "gzip"})
        ),
        "endless chunked stream": served(Reply(200, stream=lambda: zeros)),
        "1 GiB declared body": served(
            Reply(200, headers={"Content-Length": str(1024 * MIB)}, stream=lambda: zeros)
        ),
        "200 MB file in a mirror directory": huge_file,
        "slow drip: 1 byte every 2 s": served(Reply(200, page, drip_s=2.0, chunk_bytes=1)),
    }


def main(argv: list[str]) -> int:
    """Run every case (or those whose names contain an argument) and print a markdown table."""
    shared = Path(os.environ.get("INTERCONNECT_SHARED", ROOT.parent / "shared"))
    page = (shared / "mirror" / AWS).read_bytes()
    print("| case | wall time | peak memory | exit | aws outcome and cause |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, setup in cases(page).items():
        if argv and not any(word in name for word in argv):
            continue
        with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
            mirror = setup(Path(scratch), stack)
            result = measured_refresh(mirror, Path(scratch) / "c.duckdb")
        outcome = " ".join(result["summary"].split()[7:])[:100]
        figures = f"{result['seconds']:.1f} s | {result['peak_mb']:.0f} MB | {result['exit']}"
        print(f"| {name} | {figures} | {outcome} |", flush=True)
    return 0
