"""The planner's side of the app: the model and workload in the sidebar (``plan_question``), and the
Ranking tab when it plans a model (``show``): every instance ranked by the best layout's tokens/s or
cost, with the layout, the bottleneck link, the verdict sentence, and the rows that cannot be planned
last with their reason (never as zeros). The arithmetic is ``planner``'s, the ranking
``catalog.read.plan.rank``'s; this module lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import pandas as pd
import streamlit as st

from planner.models import ServeWorkload, TrainWorkload, preset_names
from ui import tables
from ui.text import show as show_text
from ui.units import round_significant

BIND: Final = "query-params"
#: The model the planner view opens with.
DEFAULT_MODEL = "llama-3.1-70b"
TASKS = {"Serve": "serve", "Train": "train"}
BY = {"time": "time", "cost": "cost"}
#: Rows of the "verdicts in full" expander (the downloads hold every row).
VERDICT_ROWS = 50
SECONDS_PER_MS = 1e-3
PERCENT = 100


@dataclass(frozen=True)
class PlanQuestion:
    """A model preset, its workload, the instances per cluster (None: the fewest that fit) and
    whether to rank by time (tokens/s) or cost (USD per million or billion tokens)."""

    model: str
    workload: ServeWorkload | TrainWorkload
    nodes: int | None = None
    by: str = "time"


def _whole(box, label: str, default: int, key: str, help_text: str, low: int = 1) -> int:
    return int(
        box.number_input(label, min_value=low, value=default, step=1, key=key, bind=BIND, help=help_text)
    )


def _serve(box) -> ServeWorkload:
    target = box.number_input(
        "Target output tokens/s (0: none)", min_value=0.0, value=0.0, step=100.0, key="target", bind=BIND,
        help="Output tokens per second the whole cluster must reach; the verdict says whether it does.",
    )  # fmt: skip
    return ServeWorkload(
        batch_sequences=_whole(box, "Batch (sequences per replica)", 32, "batch", "Conversations at once."),
        prompt_tokens=_whole(box, "Context (prompt tokens)", 2048, "context", "Tokens of each prompt."),
        output_tokens=_whole(box, "Output tokens", 512, "output", "Tokens written per sequence."),
        target_tokens_per_s=target or None,
    )


def _train(box) -> TrainWorkload:
    sequence = _whole(box, "Sequence length (tokens)", 8192, "seq_len", "Tokens per training sequence.")
    batch = _whole(box, "Global batch (sequences)", 512, "seqs", "Sequences per optimizer step.")
    precision = box.segmented_control(
        "Matmul format", ["bf16", "fp8"], default="bf16", required=True, key="precision", bind=BIND
    )
    return TrainWorkload(
        global_batch_tokens=batch * sequence, sequence_tokens=sequence, precision=precision or "bf16"
    )


def plan_question(priced: bool) -> PlanQuestion:
    """The model, the workload and its few knobs that matter, in the sidebar and the URL."""
    sb = st.sidebar
    names = preset_names()
    model = sb.selectbox(
        "Model",
        names,
        index=names.index(DEFAULT_MODEL),
        key="model",
        bind=BIND,
        help="Published configurations (planner/presets); `python -m catalog plan` takes your own.",
    )
    task = sb.segmented_control(
        "Workload", list(TASKS), default="Serve", required=True, key="task", bind=BIND
    )
    by = "time"
    if priced:
        by = sb.segmented_control(
            "Rank by", list(BY), default="time", required=True, key="by", bind=BIND,
            help="time: tokens/s of the planned cluster; cost: USD per million output tokens (serve) or "
            "per billion trained tokens (train). Unpriced rows follow the priced ones.",
        )  # fmt: skip
    with sb.expander("Workload details"):
        workload = _serve(st) if TASKS[task or "Serve"] == "serve" else _train(st)
        nodes = _whole(st, "Instances per cluster (0: the fewest that fit)", 0, "nodes", "Up to 64.", low=0)
    return PlanQuestion(
        model=model or DEFAULT_MODEL, workload=workload, nodes=nodes or None, by=BY[by or "time"]
    )


def cost_columns(kind: str) -> dict[str, str]:
    """The plan's cost columns for a workload kind → their headers."""
    if kind == "serve":
        return {"usd_per_million_tokens": "USD/M output tokens"}
    return {"usd_per_step": "USD/step", "usd_per_billion_tokens": "USD/B tokens"}


def _rounded(values: pd.Series, digits: int = 4) -> pd.Series:
    return pd.Series(round_significant(values.astype("float64").to_numpy(), digits), index=values.index)


def plan_frame(planned: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The planner's ranking as shown: readable headers with units, figures rounded, unknown cells
    empty (rows that cannot be planned keep their reason in "verdict")."""
    tokens = "output tokens/s" if kind == "serve" else "trained tokens/s"
    step = "decode step (ms)" if kind == "serve" else "step (s)"
    step_values = planned["step_s"] / SECONDS_PER_MS if kind == "serve" else planned["step_s"]
    columns = {
        "instance": planned["instance_type"],
        "rank": planned["rank"],
        "provider": planned["provider"],
        "nodes": planned["nodes"],
        "layout (TP×PP×EP×DP)": planned["layout"],
        tokens: _rounded(planned["tokens_per_s"]),
        **{header: planned[column].round(2) for column, header in cost_columns(kind).items()},
        step: _rounded(step_values, 3),
        "comm share (%)": (planned["comm_share"] * PERCENT).round(1),
        "bottleneck link": planned["bottleneck_link"],
        "GPUs per node": planned["gpus_per_node"],
        "GPU": planned["gpu_model"],
        "model fits": planned["fits"],
        "bound by": planned["bound"],
        "cluster USD/hour": planned["usd_per_hour"].round(2),
        "bandwidths used (one way per GPU)": planned["bandwidth_basis"],
        "verdict": planned["verdict"],
        "flags": planned["flags"],
    }
    return pd.DataFrame(columns).reset_index(drop=True)


def column_config(kind: str) -> dict:
    """Widths that keep instance, rank, nodes, layout, tokens/s and cost beside the sidebar."""
    number = st.column_config.NumberColumn
    text = st.column_config.TextColumn
    tokens = "output tokens/s" if kind == "serve" else "trained tokens/s"
    return {
        "instance": text(width=190, pinned=True),
        "rank": number(width=44, format="%d"),
        "provider": text(width=80),
        "nodes": number(width=50, format="%d"),
        "layout (TP×PP×EP×DP)": text(width=150),
        tokens: number(width=110, format="localized"),
        **{h: number(width=100, format="dollar") for h in cost_columns(kind).values()},
        "cluster USD/hour": number(format="dollar"),
        "verdict": text(width="large"),
        "bandwidths used (one way per GPU)": text(width="large"),
    }


def _title(question: PlanQuestion) -> str:
    kind = question.workload.kind
    what = "Serving" if kind == "serve" else "Training"
    order = {
        ("serve", "time"): "output tokens/s, most first",
        ("train", "time"): "trained tokens/s, most first",
        ("serve", "cost"): "USD per million output tokens, cheapest first",
        ("train", "cost"): "USD per billion trained tokens, cheapest first",
    }[(kind, question.by)]
    return f"{what} {question.model}: every instance ranked by {order}"


def show(planned: pd.DataFrame, question: PlanQuestion) -> None:
    """The Ranking tab when it plans a model."""
    kind = question.workload.kind
    st.subheader(_title(question))
    st.caption(
        "Each instance gets its best layout (TP within the NVLink domain) on the fewest instances that "
        "hold the model, its step time, the share of it spent communicating, the link that share "
        "crosses, and the cost where the catalog has a price (the cheapest on-demand region). Rows that "
        "cannot be planned come last with the reason. Formulas: docs/planning.md."
    )
    if planned.empty:
        st.info("No instance matches the filters. Widen them in the sidebar.")
        return
    planned_rows = int(planned["tokens_per_s"].notna().sum())
    priced = int(planned[next(iter(cost_columns(kind)))].notna().sum())
    st.caption(f"planned: **{planned_rows}** of {len(planned)} · with a cost: **{priced}**")
    frame = plan_frame(planned, kind)
    st.dataframe(
        frame,
        hide_index=True,
        column_config=column_config(kind),
        height=460,
        placeholder=tables.MISSING,
        lazy=len(frame) > tables.LAZY_ROWS,
    )
    tables.downloads(frame, f"plan-{question.model}-{kind}", "plan")
    head = frame.head(VERDICT_ROWS)
    with st.expander(f"Verdicts in full (the first {len(head)} rows; the downloads hold all)"):
        show_text("\n".join(f"{i} — {v}" for i, v in zip(head["instance"], head["verdict"], strict=True)))
