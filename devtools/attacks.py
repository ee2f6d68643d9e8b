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
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from devtools.mirror_server import MirrorServer, Reply
from scrapers.documents.aws import NEWER

ROOT = Path(__file__).resolve().parent.parent
AWS = "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
MIB = 1024 * 1024


def gzip_bomb(unpacked_bytes: int) -> bytes:
    """``unpacked_bytes`` of zeros as one gzip member (2 GiB → about 2 MB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(16 * MIB)
    parts = [packer.compress(block) for _ in range(unpacked_bytes // len(block))]
    return b"".join([*parts, packer.flush()])


# Runs the command in a grandchild and reports its peak RSS on the last line of stderr. On Linux a
# process's peak starts at the peak of the memory it was forked (or vfork-ed) from: started straight
# from this runner, whose own peak grows with the cases' setups, a 38 MB command showed as 84-351 MB.
# Forked from this small launcher instead, its peak is its own (at least the launcher's 10 MB).
LAUNCH = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"\\npeak-kb {usage.ru_maxrss}\\n")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)  # killed by a signal: 128 + its number, as a shell says
"""


def measured(args: list[str], env: dict[str, str] | None = None) -> dict:
    """``python -m catalog ARGS`` (``python -c CODE`` for ``-c CODE``) in a child process: wall seconds,
    its own peak RSS, exit code, and its summary line for the provider it refreshes (aws unless it names
    another) or its first error line (else its last line) on stderr."""
    started = time.monotonic()
    command = [sys.executable, *args] if args[0] == "-c" else [sys.executable, "-m", "catalog", *args]
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, *command],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        env={**os.environ, **(env or {})},
        check=False,
    )
    *lines, peak = [line for line in done.stderr.splitlines() if line.strip()] or ["peak-kb 0"]
    provider = args[args.index("--provider") + 1] if "refresh" in args and "--provider" in args else "aws"
    summary = next((line for line in lines if line.startswith(f"{provider} ")), "")
    said = next((line for line in lines if line.startswith("error: ")), lines[-1] if lines else "")
    outcome = " ".join(summary.split()[7:]) if summary else said
    return {
        "seconds": time.monotonic() - started,
        "peak_mb": int(peak.removeprefix("peak-kb ")) / 1024,  # kB on Linux
        "exit": done.returncode,
        "outcome": outcome,
    }


def refresh(mirror: str, db: Path, *more: str) -> list[str]:
    return ["refresh", "--mirror", mirror, "--provider", "aws", "--db", str(db), "--quiet", *more]


# scratch dir, cleanup stack → (the command's arguments, extra environment)
Setup = Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]


def cases(page: bytes, shared: Path) -> dict[str, Setup]:
    """Each case sets up its fault and returns the command to measure."""

    def served(reply: Reply, path: str = AWS) -> Setup:
        def start(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            server = stack.enter_context(MirrorServer(None))
            server.script("/" + path, reply)
            return refresh(server.base_url, scratch / "c.duckdb"), {}

        return start

    def sparse(path: Path, size: int) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:
            handle.truncate(size)  # sparse: zeros that take no disk
        return path

    def huge_file(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        sparse(scratch / "mirror" / AWS, 200_000_000)
        return refresh(str(scratch / "mirror"), scratch / "c.duckdb"), {}

    def huge_copy(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        copies = scratch / "copies"
        sparse(copies / NEWER, 200_000_000)
        return refresh(str(shared / "mirror"), scratch / "c.duckdb", "--copies", str(copies)), {}

    def catalog(scratch: Path) -> Path:
        db = scratch / "c.duckdb"
        subprocess.run(refresh_command(shared, db), cwd=ROOT, check=True, capture_output=True)
        return db

    def imported(make: Callable[[Path], object], *flags: str) -> Setup:
        def start(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            db, path = catalog(scratch), scratch / "output.txt"
            make(path)
            return ["measurements", "import", str(path), "--db", str(db), *flags], {}

        return start

    def queried(sql: str, *flags: str) -> Setup:
        def start(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            return ["query", sql, "--db", str(catalog(scratch)), "--format", "csv", *flags], {}

        return start

    def flooding_probe(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        tools = scratch / "bin"
        tools.mkdir()
        (tools / "ibv_devinfo").write_text(f"#!/bin/sh\nexec {shutil.which('yes')} flood\n")
        (tools / "ibv_devinfo").chmod(0o755)
        out = str(scratch / "probe.json")
        return ["probe", "--provider", "aws", "--instance", "p5.48xlarge", "--out", out], {"PATH": str(tools)}

    def text(content: str) -> Callable[[Path], object]:
        return lambda path: path.write_text(content)

    zeros = itertools.repeat(bytes(64 * 1024))
    on_p5 = ("--provider", "aws", "--instance", "p5.48xlarge")
    p2p = "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1\n"
    escaped = AWS.replace("instancetypes/ac.md", "instancetypes/../../../../evil/ac.md")
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
        "redirect out of the prefix by dot segments": served(
            Reply(302, headers={"Location": "https://" + escaped})
        ),
        "200 MB local copy (--copies)": huge_copy,
        "import: a symlink to /dev/zero": imported(lambda p: p.symlink_to("/dev/zero"), *on_p5),
        "import: a FIFO": imported(os.mkfifo, *on_p5),
        "import: a 500 MB file": imported(lambda p: sparse(p, 500_000_000), *on_p5),
        "import: 'NCCL INFO ' x 20,000 on one line": imported(text("NCCL INFO " * 20_000 + "\n"), *on_p5),
        "import: a p2p row of 30,000 spaces": imported(text(p2p + "0" + " " * 30_000 + "x\n"), *on_p5),
        "import: 99,000 GB/s GPU-to-GPU": imported(
            text(p2p.replace("Unidirectional", "Bidirectional") + "     0 770.00 99000\n     1 99000 770\n"),
            *on_p5,
        ),
        "query --timeout nan": queried("SELECT 1", "--timeout=nan"),
        "query: 5,000,000 rows": queried("SELECT range AS n FROM range(5000000)"),
        "query: 1,000 values of 1 MB": queried("SELECT repeat('x', 1000000) FROM range(1000)"),
        "probe: a tool flooding its stdout": flooding_probe,
    }


def refresh_command(shared: Path, db: Path) -> list[str]:
    return [sys.executable, "-m", "catalog", *refresh(str(shared / "mirror"), db)]


def main(argv: list[str]) -> int:
    """Run every case (or those whose names contain an argument) and print a markdown table."""
    shared = Path(os.environ.get("INTERCONNECT_SHARED", ROOT.parent / "shared"))
    page = (shared / "mirror" / AWS).read_bytes()
    print("| case | wall time | peak memory | exit | outcome and cause |")
    print("| --- | ---: | ---: | ---: | --- |")
    from devtools import attacks_gates, attacks_inputs

    every = {**cases(page, shared), **attacks_gates.cases(shared), **attacks_inputs.cases(shared)}
    for name, setup in every.items():
        if argv and not any(word in name for word in argv):
            continue
        with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
            args, env = setup(Path(scratch), stack)
            result = measured(args, env)
        outcome = result["outcome"].replace("|", "/")[:120]
        figures = f"{result['seconds']:.1f} s | {result['peak_mb']:.0f} MB | {result['exit']}"
        print(f"| {name} | {figures} | {outcome} |", flush=True)
    return 0
