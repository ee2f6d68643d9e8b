"""``python -m catalog collective``: what the planner predicts for one NCCL collective on an instance,
with the terms (latency, bytes per GPU, the rate and the algorithm), to set beside an nccl-tests run.

Sizes are read as nccl-tests reads ``-b``/``-e`` (K, M, G are powers of 1,024; KiB, MiB, GiB too;
kB, MB, GB are powers of 1,000); the size is nccl-tests' ``size`` column: the buffer each GPU
all-reduces, the whole gathered (all-gather) or scattered (reduce-scatter) buffer, each GPU's send
buffer (all-to-all).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from normalize.errors import ParseError
from normalize.safe_text import escaped

if TYPE_CHECKING:
    import duckdb

    from catalog.read.filters import Filters
    from planner.layouts import Layout
    from planner.models import ModelSpec
    from planner.result import Workload
    from planner.step import Options

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
    with connect_readonly(args.db) as con:  # no catalog, or an unreadable one: `main` says so, exit 4
        found = instance_nodes(con, args.instance[:200])
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


#: Bounds on what a user may ask ``plan`` for: a model name, the tokens of one conversation, the
#: concurrency, the cluster, the latency targets (a number outside them is a one-line error).
MAX_MODEL_ARG_CHARS = 4096
MAX_MODEL_FILE_BYTES = 1_000_000
MAX_TOKENS = 10_000_000
MAX_CONCURRENCY = 10_000_000
MAX_PLAN_NODES = 1024
MAX_TARGET = 1e9
MAX_TOKEN_BUDGET = 1e16
MAX_DAYS = 10_000.0
MAX_CLUSTER_GPUS = 65_536
# A kernel reaching under 1% of the dense peak is no plan (1e-300 once priced a million tokens at a
# 300-digit number of dollars); published runs reach 20-60%.
MIN_EFFICIENCY = 0.01


def _bounded_int(name: str, text: str | None, low: int, high: int) -> int | None:
    if text is None:
        return None
    if not re.fullmatch(r"\s*\d{1,12}\s*", text) or not low <= int(text) <= high:
        raise ParseError(f"{name} must be a whole number from {low:,} to {high:,}, got {text[:40]!r}")
    return int(text)


def _bounded_float(name: str, text: str | None, high: float = MAX_TARGET) -> float | None:
    if text is None:
        return None
    try:
        value = float(text[:40])
    except ValueError:
        raise ParseError(f"{name} must be a number, got {text[:40]!r}") from None
    if not (math.isfinite(value) and 0 < value <= high):
        raise ParseError(f"{name} must be a positive number up to {high:g}, got {text[:40]!r}")
    return value


_LAYOUT = re.compile(
    r"^\s*TP(\d{1,5})\s*x\s*(?:CP(\d{1,5})\s*x\s*)?PP(\d{1,5})\s*x\s*EP(\d{1,5})\s*x\s*"
    r"(FSDP|DP)(\d{1,6})\s*$",
    re.IGNORECASE,
)


def parse_layout(text: str | None) -> Layout | None:
    """'TP4xPP2xEP1xDP1' → that layout (training may add a context-parallel degree, TP8xCP2xPP8xEP1xDP8,
    and shard over the data-parallel ranks, ...xFSDP64); ParseError naming --layout for anything else."""
    from planner.layouts import Layout

    if text is None:
        return None
    found = _LAYOUT.match(text[:100])
    if found is None:
        raise ParseError(
            f"--layout must look like TP4xPP2xEP1xDP1 (or TP8xCP2xPP8xEP1xFSDP8), got {text[:100]!r}"
        )
    tp, cp, pp, ep, dp = (int(g or 1) for g in found.group(1, 2, 3, 4, 6))
    if min(tp, cp, pp, ep, dp) < 1 or tp * cp * pp * ep * dp > MAX_PLAN_NODES * 72:
        raise ParseError(
            f"--layout degrees must be at least 1 and use at most {MAX_PLAN_NODES * 72:,} GPUs, "
            f"got {text[:100]!r}"
        )
    return Layout(tp, pp, ep, dp, cp=cp, fsdp=found.group(5).upper() == "FSDP")


def read_model(arg: str) -> ModelSpec:
    """A preset name, a planner TOML/JSON file, or a Hugging Face config.json; ParseError naming
    --model for anything else."""
    from pathlib import Path

    from planner.models import model_from_hf_config, model_from_text, preset, preset_names

    if len(arg) > MAX_MODEL_ARG_CHARS:
        raise ParseError(f"--model is {len(arg):,} characters long; at most {MAX_MODEL_ARG_CHARS:,}")
    if arg in preset_names():
        return preset(arg)
    path = Path(arg)
    if not path.is_file():
        raise ParseError(f"--model: no preset or file {arg[:200]!r}; presets: {', '.join(preset_names())}")
    if path.stat().st_size > MAX_MODEL_FILE_BYTES:
        raise ParseError(f"--model: {arg[:200]} is larger than {MAX_MODEL_FILE_BYTES:,} bytes")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParseError(f"--model: cannot read {arg[:200]}: {exc}") from None
    name = path.stem[:200]
    if '"architectures"' in text or '"num_hidden_layers"' in text:
        return model_from_hf_config(text, name)
    return model_from_text(text, arg[:200])


def plan_inputs(args: argparse.Namespace) -> tuple[ModelSpec, Workload, Options]:
    """The model, workload and options a ``plan`` command asks for; ParseError names a bad one."""
    from planner.models import ServeWorkload, TrainWorkload
    from planner.step import Options

    model = read_model(args.model)
    workload: Workload
    context = _bounded_int("--context", args.context, 1, MAX_TOKENS)
    batch_text = None if args.batch in (None, "max") else args.batch
    batch = _bounded_int("--batch", batch_text, 1, MAX_CONCURRENCY)
    gpus = _bounded_int("--gpus", getattr(args, "gpus", None), 1, MAX_CLUSTER_GPUS)
    if args.workload == "serve":
        if gpus is not None:
            raise ParseError(
                "--gpus is for training (serving plans the fewest instances that fit, or --nodes)"
            )
        if args.precision not in (None, "bf16", "fp8", "fp4"):
            raise ParseError(f"--precision for serving is bf16, fp8 or fp4, got {args.precision!r}")
        kv_cache = getattr(args, "kv_cache", None)
        if kv_cache not in (None, "bf16", "fp8"):
            raise ParseError(f"--kv-cache is bf16 or fp8, got {str(kv_cache)[:40]!r}")
        workload = ServeWorkload(
            batch_sequences=batch,
            prompt_tokens=context or 2048,
            output_tokens=_bounded_int("--output", args.output, 1, MAX_TOKENS) or 512,
            target_tokens_per_s=_bounded_float("--tokens-per-s", args.tokens_per_s),
            tpot_ms=_bounded_float("--tpot-ms", args.tpot_ms),
            ttft_ms=_bounded_float("--ttft-ms", args.ttft_ms),
            precision=args.precision or "",
            kv_cache_dtype=kv_cache or "",
        )
    else:
        if getattr(args, "kv_cache", None) is not None:
            raise ParseError("--kv-cache is a serving option (training keeps no KV cache)")
        if args.precision not in (None, "bf16", "fp8"):
            raise ParseError(f"--precision for training is bf16 or fp8, got {args.precision!r}")
        sequence = context or 8192
        budget = _bounded_float("--tokens", args.tokens, MAX_TOKEN_BUDGET)
        deadline = _bounded_float("--days", args.days, MAX_DAYS)
        workload = TrainWorkload(
            token_budget=budget,
            deadline_days=deadline,
            global_batch_tokens=(batch or 512) * sequence,
            sequence_tokens=sequence,
            precision=args.precision or "bf16",
            cluster_gpus=gpus or TrainWorkload.cluster_gpus,
        )
    efficiency = _bounded_float("--efficiency", args.efficiency)
    if efficiency is not None and not MIN_EFFICIENCY <= efficiency <= 1:
        raise ParseError(f"--efficiency must be from {MIN_EFFICIENCY:g} to 1, got {args.efficiency}")
    return (
        model,
        workload,
        Options(compute_efficiency=efficiency, tp_across_domain=args.tp_across_domain),
    )


def _names_problem(
    con: duckdb.DuckDBPyConnection, args: argparse.Namespace, instance: str | None
) -> str | None:
    """A provider, instance type or region the catalog does not have, with a "did you mean" (the
    check ``cheapest`` makes); None when all are known."""
    from catalog.cli_names import names_problem

    return names_problem(con, _providers(args), instance, [args.region[:100]] if args.region else [])


def _providers(args: argparse.Namespace) -> list[str]:
    return [p[:100] for p in args.provider or ()]


def plan_filters(args: argparse.Namespace) -> Filters:
    """The rows ``plan`` asks about and the price it costs them at: ``--provider``, ``--region`` (only
    rows priced there, priced there) and ``--spot``, read as ``cheapest`` reads them."""
    from catalog.read.filters import Filters

    return Filters(providers=tuple(_providers(args)), region=(args.region or "")[:100], spot=args.spot)


def plan_ranking(args: argparse.Namespace) -> tuple[list[dict[str, Any]], Workload, Layout | None]:
    """The ranking ``plan`` prints for the model, workload and options ``args`` name, with the workload
    and forced layout it used. ParseError names a bad input (a name the catalog lacks included);
    FileNotFoundError if there is no catalog. ``catalog.api.Catalog.plan`` calls it too, so an option
    added to ``plan`` reaches both."""
    from catalog.read.connect import connect_readonly
    from catalog.read.plan import rank_rows

    model, workload, options = plan_inputs(args)
    nodes = _bounded_int("--nodes", args.nodes, 1, MAX_PLAN_NODES)
    layout = parse_layout(args.layout)
    with connect_readonly(args.db) as con:
        problem = _names_problem(con, args, None)
        if problem:
            raise ParseError(problem)
        rows = rank_rows(
            con,
            model,
            workload,
            nodes=nodes,
            filters=plan_filters(args),
            options=options,
            by=args.by,
            layout=layout,
        )
    return rows, workload, layout


def _one_instance(args: argparse.Namespace, plan_output: Any) -> int:
    """``plan --instance T``: that instance's plans in full, or why none fits."""
    from catalog.read.connect import connect_readonly
    from catalog.read.plan import instance_plans

    model, workload, options = plan_inputs(args)
    nodes = _bounded_int("--nodes", args.nodes, 1, MAX_PLAN_NODES)
    layout = parse_layout(args.layout)
    instance = args.instance[:200]
    asked = plan_filters(args)
    with connect_readonly(args.db) as con:
        problem = _names_problem(con, args, instance)
        if problem:
            raise ParseError(problem)
        plans = instance_plans(
            con, instance, model, workload, nodes=nodes, options=options, layout=layout,
            region=asked.region, spot=asked.spot,
        )  # fmt: skip
    if not plans and asked.region:
        raise ParseError(
            f"--region: {instance!r} has no {'spot' if asked.spot else 'on-demand'} price in {asked.region}"
        )
    if not plans:
        raise ParseError(f"--instance: no instance type {instance!r} in the catalog")
    reasons = [p.reason for _, p in plans if not isinstance(p, str) and p.best is None and p.reason]
    if layout is not None and len(reasons) == len(plans) and reasons[0].startswith("--layout"):
        raise ParseError(reasons[0])
    sys.stdout.write(escaped(plan_output.instance_report(plans, args.format), keep="\n"))
    return 0


@contextmanager
def _no_collections() -> Iterator[None]:
    """No cyclic garbage collection while a command plans. A plan makes some hundred thousand small
    frozen values, all freed by reference counting (a ranking leaves some 200 objects in cycles):
    the collector's passes over them, one every 700 new objects, were 5-10% of a ranking's CPU and
    found nothing to free. Collection is turned back on afterwards, as it was, with what the command
    made put in the collector's oldest generation (``gc.freeze`` then ``gc.unfreeze``: two list
    splices, done only when nothing else is frozen, which ``unfreeze`` would let go): left in the
    youngest, the first new object would start a pass over all of them (25-45 ms after a ranking,
    which then ends its process), to move them to an older generation."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def cmd_plan(args: argparse.Namespace) -> int:
    """plan: rank every instance by a model's time or cost, or show one instance's plan in full."""
    with _no_collections():
        return _plan(args)


def _plan(args: argparse.Namespace) -> int:
    from catalog.read import plan_output
    from catalog.read.text import known

    try:
        if args.instance:
            return _one_instance(args, plan_output)
        rows, workload, layout = plan_ranking(args)
    except ParseError as exc:
        print(f"error: {str(exc).splitlines()[0][:500]}", file=sys.stderr)
        return 2
    reasons = [row["reason"] or "" for row in rows]
    unplanned = bool(rows) and not any(known(row["tokens_per_s"]) for row in rows)
    if layout is not None and unplanned:
        # No instance runs the layout: the rows that could be planned say why (the others lack a
        # figure a plan needs, whatever the layout).
        forced = [r for r in reasons if r.startswith("--layout")]
        if forced:
            print(f"error: {forced[0]} (no instance can run it: {len(forced)} say why)", file=sys.stderr)
            return 2
    deadline = getattr(workload, "deadline_days", None)
    if deadline and unplanned:
        late = [r for r in reasons if r.startswith("--days")]
        if late:
            print(f"error: {late[0]} (no instance makes it)", file=sys.stderr)
            return 2
    targets = getattr(workload, "tpot_ms", None) or getattr(workload, "ttft_ms", None)
    if targets and unplanned:
        missed = [r for r in reasons if "misses the latency target" in r]
        if missed:
            print(f"error: --tpot-ms/--ttft-ms: no instance meets them; {missed[0]}", file=sys.stderr)
            return 2
    from catalog.read.plan import COLUMNS
    from catalog.read.plan_inputs import price_words
    from normalize.factors import CURRENCY

    asked = plan_filters(args)
    prices = f"{CURRENCY}, {price_words(asked.region, asked.spot)}"
    report = plan_output.ranking_report(rows, workload.kind, args.top, args.format, prices, list(COLUMNS))
    sys.stdout.write(escaped(report, keep="\n"))  # a name's escape sequence is printed, never obeyed
    return 0


def _rows_to_show(text: str) -> int:
    """``--top``: a whole number of rows, 0 for all (``-1`` once meant all too, without a word)."""
    if not re.fullmatch(r"\d{1,9}", text.strip()):
        raise argparse.ArgumentTypeError(f"expected a whole number of rows (0: all), got {text[:20]!r}")
    return int(text)


def register_plan(
    sub: argparse._SubParsersAction,
    with_db: Callable[[argparse.ArgumentParser], argparse.ArgumentParser],
) -> None:
    """Add ``plan`` to the CLI's subcommands."""
    planning = with_db(sub.add_parser("plan", help="rank instances by a model's time and cost"))
    planning.add_argument(
        "--model", required=True, help="a preset name (llama-3.1-70b, ...), a TOML/JSON file or a config.json"
    )
    planning.add_argument("--workload", choices=("serve", "train"), required=True)
    planning.add_argument(
        "--batch",
        help="serve: conversations at once per cluster, or max (default: the most tokens/s within memory "
        "and the latency targets); train: global batch in sequences (512)",
    )
    planning.add_argument("--context", help="serve: prompt tokens (2048); train: sequence length (8192)")
    planning.add_argument("--output", help="serve: output tokens per sequence (512)")
    planning.add_argument("--tokens-per-s", help="serve: output tokens/s the cluster must reach")
    planning.add_argument(
        "--tokens",
        help="train: the tokens to train, the budget every plan is ranked at (default: 20 per parameter)",
    )
    planning.add_argument(
        "--days", help="train: the deadline in days (the cluster: the fewest nodes that make it)"
    )
    planning.add_argument(
        "--gpus",
        help=f"train: GPUs per cluster, the same for every instance (1 to {MAX_CLUSTER_GPUS:,}; 1,024)",
    )
    planning.add_argument("--tpot-ms", help="serve: time per output token at most (ms)")
    planning.add_argument("--ttft-ms", help="serve: time to first token at most (ms)")
    planning.add_argument(
        "--precision", help="weights and matmuls: serve bf16|fp8|fp4 (default the model's); train bf16|fp8"
    )
    planning.add_argument(
        "--kv-cache",
        help="serve: the KV cache's format, bf16|fp8 (default: fp8 when --precision is fp8 or fp4, as "
        "quantized checkpoints keep it; else the model's)",
    )
    planning.add_argument(
        "--efficiency", help="share of the dense peak every kernel reaches (default: planner/efficiency.csv)"
    )
    planning.add_argument(
        "--tp-across-domain", action="store_true", help="let tensor parallelism leave the NVLink domain"
    )
    planning.add_argument(
        "--nodes",
        help=f"instances per cluster, 1 to {MAX_PLAN_NODES} (default: serve fewest that fit; train --gpus)",
    )
    which = planning.add_mutually_exclusive_group()
    which.add_argument("--instance", help="show this instance type's plan in full")
    which.add_argument("--top", type=_rows_to_show, default=10, help="rows to show (0: all; default 10)")
    planning.add_argument(
        "--layout",
        help="plan exactly this layout, e.g. TP4xPP2xEP1xDP1 (and say why it does or does not fit)",
    )
    planning.add_argument(
        "--by",
        choices=("time", "cost"),
        default="time",
        help="rank by time (serve: tokens/s; train: days to train) or by cost (per M tokens; to train)",
    )
    planning.add_argument("--provider", action="append", help="only this provider (repeatable)")
    planning.add_argument(
        "--region", help="cost in this region only, as the price source names it (rows priced there)"
    )
    planning.add_argument("--spot", action="store_true", help="cost at the spot price, not on-demand")
    planning.add_argument("--format", choices=("table", "csv", "json"), default="table")
    planning.set_defaults(func=cmd_plan)
