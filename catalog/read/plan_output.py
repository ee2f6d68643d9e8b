"""How ``python -m catalog plan`` prints: a ranking table with its verdicts, or one instance's plan
in full (memory per GPU, every fitting layout, the best layout's collectives). csv and json carry
every column, unrounded; the table rounds for reading and leaves unknown cells empty."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from catalog.read.plan import layouts_frame, transfers_frame
from catalog.read.text import known
from normalize.safe_text import csv_cell, formula_safe
from planner.conversions import bytes_to_gb, gb_to_bytes
from planner.result import Plan
from planner.verdict import basis_text, duration, number, verdict

_COST = {
    "serve": [
        ("usd_per_million_input_tokens", "$/M in", "usd"),
        ("usd_per_million_output_tokens", "$/M out", "usd"),
        ("usd_per_million_tokens", "$/M out all-in", "usd"),
    ],
    "train": [
        ("days_to_train", "days", "count"),
        ("usd_to_train", "$ to train", "usd"),
        ("usd_per_step", "$/step", "usd"),
        ("usd_per_billion_tokens", "$/B tokens", "usd"),
    ],
}


#: Serving's concurrency and latencies in the ranking table.
_SERVE_COLUMNS = (
    ("concurrency", "conc", "count"),
    ("tokens_per_s_per_user", "tok/s/user", "count"),
    ("ttft_s", "TTFT", "seconds"),
    ("tpot_s", "TPOT", "seconds"),
)


def _cell(value: Any, kind: str) -> str:
    if not known(value):
        return ""
    if kind == "seconds":
        return duration(float(value))
    if kind == "share":
        return f"{float(value):.1%}"
    if kind == "usd":
        return f"{float(value):,.2f}"
    if kind == "count":
        return number(float(value))
    return str(value)


def _plain(value: Any) -> Any:
    """A cell for JSON: a missing number (NaN) is null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def emit_rows(rows: list[dict[str, Any]], columns: list[str], fmt: str) -> str:
    """Rows as CSV (every text cell ``formula_safe``, lists joined) or as a JSON list of records."""
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([formula_safe(c) for c in columns])
        for row in rows:
            writer.writerow(["" if not known(row[c]) else csv_cell(row[c]) for c in columns])
        return out.getvalue()
    return json.dumps([{c: _plain(row[c]) for c in columns} for row in rows]) + "\n"


def text_table(cells: dict[str, list[str]]) -> str:
    """Columns of text, each right-aligned under its header and one space apart (as a DataFrame's
    ``to_string(index=False)`` lays them out)."""
    widths = {h: max([len(h), *(len(c) for c in column)]) for h, column in cells.items()}
    rows = [[h.rjust(widths[h]) for h in cells]]
    rows += [[cells[h][i].rjust(widths[h]) for h in cells] for i in range(len(next(iter(cells.values()))))]
    return "\n".join(" ".join(row) for row in rows)


def ranking_report(
    rows: list[dict[str, Any]],
    workload: str,
    top: int,
    fmt: str,
    prices: str = "",
    columns: list[str] | None = None,
) -> str:
    """The ranking's first ``top`` rows (all for 0): every column in csv/json; in a table the key
    columns, then one verdict per row, and ``prices`` (which price the costs are at) under them."""
    shown = rows[:top] if top > 0 else rows
    if fmt != "table":
        return emit_rows(shown, columns or (list(shown[0]) if shown else []), fmt)
    if not shown:
        return f"(no instances{f' priced in {prices}' if prices else ''})\n"
    layout = [
        ("rank", "#", "text"),
        ("provider", "provider", "text"),
        ("instance_type", "instance", "text"),
        ("nodes", "nodes", "text"),
        ("layout", "layout", "text"),
        ("fits", "fits", "text"),
        ("step_s", "step", "seconds"),
        ("comm_share", "comm", "share"),
        ("bottleneck_link", "bottleneck", "text"),
        ("tokens_per_s", "tokens/s", "count"),
        *(_SERVE_COLUMNS if workload == "serve" else ()),
        *_COST[workload],
    ]
    table = text_table({label: [_cell(row[name], kind) for row in shown] for name, label, kind in layout})
    lines = [table, ""]
    for position, row in enumerate(shown, start=1):
        lines.append(f"{position}. {row['provider']} {row['instance_type']}: {row['verdict']}")
    if workload in _COST and not any(known(row[_COST[workload][-1][0]]) for row in shown):
        lines.append("\nNo prices in this catalog: the cost columns fill in once `prices` has rows.")
    elif prices:
        lines.append(f"\nCosts in {prices} (csv/json: price_region, price_flag).")
    return "\n".join(lines) + "\n"


def _memory_lines(result: Plan) -> list[str]:
    best = result.best or (result.results[0] if result.results else None)
    if best is None:
        return []
    m = best.memory
    usable = gb_to_bytes(result.cluster.node.memory_gb_per_gpu) * result.options.usable_memory_fraction
    parts = [
        ("weights", m.weights_bytes),
        ("KV cache", m.kv_cache_bytes),
        ("activations", m.activation_bytes),
        ("gradients", m.gradient_bytes),
        ("optimizer", m.optimizer_bytes),
    ]
    held = ", ".join(f"{name} {bytes_to_gb(b):.1f}" for name, b in parts if b)
    return [
        f"memory per GPU ({best.layout.label}): {held} = {bytes_to_gb(m.total_bytes):.1f} GB "
        f"of {bytes_to_gb(usable):.1f} GB usable"
    ]


def _instance_text(provider: str, result: Plan | str) -> str:
    if isinstance(result, str):
        return f"{provider}: not planned: {result}.\n"
    node = result.cluster.node
    lines = [
        f"{provider} {node.instance_type}: {result.cluster.nodes} x {node.gpus} {node.gpu_model}",
        verdict(result),
        f"links used: {basis_text(result)}",
        *_memory_lines(result),
        "",
        layouts_frame(result).head(10).to_string(index=False, float_format=lambda x: f"{x:.4g}"),
    ]
    transfers = transfers_frame(result)
    if not transfers.empty:
        lines += [
            "",
            "best layout's collectives per step:",
            transfers.to_string(index=False, float_format=lambda x: f"{x:.4g}"),
        ]
    return "\n".join(lines) + "\n"


def instance_report(plans: list[tuple[str, Plan | str]], fmt: str) -> str:
    """One instance type's plan per provider: in full as text, or its layouts as csv/json rows."""
    if fmt == "table":
        return "\n".join(_instance_text(provider, result) for provider, result in plans)
    frames = []
    for provider, result in plans:
        if isinstance(result, Plan):
            frame = layouts_frame(result)
            frame.insert(0, "instance_type", result.cluster.node.instance_type)
            frame.insert(0, "provider", provider)
            frame.insert(2, "nodes", result.cluster.nodes)
            frames.append(frame)
    import pandas as pd

    from normalize.safe_text import csv_safe_frame

    frame = pd.concat(frames) if frames else pd.DataFrame()
    if fmt == "csv":
        return csv_safe_frame(frame).to_csv(index=False)
    return frame.to_json(orient="records") + "\n"
