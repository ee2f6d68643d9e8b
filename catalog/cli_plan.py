"""``python -m catalog collective``: what the planner predicts for one NCCL collective on an instance,
with the terms (latency, bytes per GPU, the rate and the algorithm), to set beside an nccl-tests run.

Sizes are read as nccl-tests reads ``-b``/``-e`` (K, M, G are powers of 1,024; KiB, MiB, GiB too;
kB, MB, GB are powers of 1,000); the size is nccl-tests' ``size`` column: the buffer each GPU
all-reduces, the whole gathered (all-gather) or scattered (reduce-scatter) buffer, each GPU's send
buffer (all-to-all).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable

from normalize.errors import ParseError

#: The largest message and cluster a prediction is made for (bounds on user input).
MAX_BYTES = 2**40
MAX_NODES = 4096
_UNITS = {
    "": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "kib": 2**10, "mib": 2**20, "gib": 2**30,
    "kb": 10**3, "mb": 10**6, "gb": 10**9,
}  # fmt: skip
_SIZE = re.compile(r"^\s*(\d{1,13}(?:\.\d{1,6})?)\s*([a-z]{0,3})\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'512K' → 524,288; '8G' → 8,589,934,592; ParseError naming --bytes for anything else."""
    found = _SIZE.match(text[:40])
    unit = found.group(2).lower() if found else ""
    if found is None or unit not in _UNITS:
        raise ParseError(f"--bytes {text[:40]!r} is not a size (e.g. 512K, 8G, 1048576)")
    size = float(found.group(1)) * _UNITS[unit]
    if not (math.isfinite(size) and 1 <= size <= MAX_BYTES):
        raise ParseError(f"--bytes must be from 1 byte to {MAX_BYTES:,} bytes, got {text[:40]!r}")
    return int(size)


def parse_nodes(text: str) -> int:
    """A node count from 1 to ``MAX_NODES``; ParseError naming --nodes otherwise."""
    if not re.fullmatch(r"\d{1,6}", text.strip()) or not 1 <= int(text) <= MAX_NODES:
        raise ParseError(f"--nodes must be a whole number from 1 to {MAX_NODES}, got {text[:20]!r}")
    return int(text)


def cmd_collective(args: argparse.Namespace) -> int:
    """collective: the predicted time and busbw of one collective on ``--nodes`` x ``--instance``."""
    from catalog.read.connect import connect_readonly
    from catalog.read.plan import instance_nodes
    from planner.comms import bus_bandwidth_gbytes_per_s, collective_cost
    from planner.hardware import Cluster
    from planner.layouts import Group

    try:
        size, nodes = parse_size(args.bytes), parse_nodes(args.nodes)
    except ParseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with connect_readonly(args.db) as con:
            found = instance_nodes(con, args.instance[:200])
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not found:
        print(f"error: --instance: no instance type {args.instance[:200]!r} in the catalog", file=sys.stderr)
        return 2
    rows = []
    for provider, node in found:
        if isinstance(node, str):
            rows.append({"provider": provider, "instance_type": args.instance, "reason": node})
            continue
        cluster = Cluster(node, nodes)
        cost, where = collective_cost(args.op, Group(cluster.gpus, 1), size, cluster)
        seconds = cost.seconds
        levels = [where.level] if where.island is None or where.local == 1 else [where.island, where.level]
        rows.append(
            {
                "provider": provider,
                "instance_type": node.instance_type,
                "nodes": nodes,
                "gpus": cluster.gpus,
                "op": args.op,
                "bytes": size,
                "algorithm": cost.algorithm,
                "time_s": seconds,
                "latency_s": cost.latency_s,
                "bytes_per_gpu": cost.wire_bytes,
                "rate_gbytes_per_s": None if cost.rate_bytes_per_s is None else cost.rate_bytes_per_s / 1e9,
                "busbw_gbytes_per_s": None
                if not seconds
                else bus_bandwidth_gbytes_per_s(args.op, cluster.gpus, size, seconds),
                "links": [
                    {
                        "link": lv.name,
                        "gbytes_per_s_one_way_per_gpu": lv.figure.gbytes_per_s,
                        "basis": lv.figure.basis,
                    }
                    for lv in levels
                ],
                "reason": None if seconds is not None else "a bandwidth it needs is not stated",
            }
        )
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
        return 0
    for row in rows:
        sys.stdout.write(_text(row) + "\n")
    return 0


def _text(row: dict) -> str:
    from planner.verdict import duration

    head = f"{row['provider']} {row['instance_type']}"
    if row.get("time_s") is None:
        return f"{head}: not predicted: {row['reason']}."
    links = "; ".join(
        f"{lv['link']} {lv['gbytes_per_s_one_way_per_gpu']:g} GB/s one way per GPU ({lv['basis']})"
        for lv in row["links"]
    )
    return (
        f"{head}: {row['op']} of {row['bytes']:,} B over {row['gpus']} GPUs ({row['nodes']} node(s)): "
        f"{duration(row['time_s'])}, busbw {row['busbw_gbytes_per_s']:.1f} GB/s\n"
        f"  = latency {duration(row['latency_s'])} ({row['algorithm']}) "
        f"+ {row['bytes_per_gpu']:,.0f} B per GPU / {row['rate_gbytes_per_s']:.1f} GB/s\n  links: {links}"
    )


def register(
    sub: argparse._SubParsersAction,
    with_db: Callable[[argparse.ArgumentParser], argparse.ArgumentParser],
) -> None:
    """Add ``collective`` to the CLI's subcommands."""
    from planner.comms import OPERATIONS

    parser = with_db(sub.add_parser("collective", help="predict one NCCL collective's time on an instance"))
    parser.add_argument("--instance", required=True, help="instance type, as the catalog names it")
    parser.add_argument("--nodes", default="1", help=f"instances (1 to {MAX_NODES}; default 1)")
    parser.add_argument("--op", choices=OPERATIONS, required=True)
    parser.add_argument("--bytes", required=True, help="message size as nccl-tests prints it (512K, 8G ...)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.set_defaults(func=cmd_collective)
