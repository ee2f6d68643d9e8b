"""The planner's side of the app: the model and workload in the sidebar (``plan_question``), and the
Ranking tab when it plans a model (``show``): every instance ranked by the best layout's tokens/s or
cost, with the layout, the bottleneck link, the verdict sentence, and the rows that cannot be planned
last with their reason (never as zeros). The arithmetic is ``planner``'s, the ranking
``catalog.read.plan.rank``'s; this module lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import streamlit as st

from catalog.cli_plan import MAX_CLUSTER_GPUS, MAX_DAYS, MAX_TARGET, MAX_TOKEN_BUDGET
from catalog.read.prices import placeholder_caution
from normalize.vocab import FABRIC_LABELS
from planner.models import MAX_CONFIG_CHARS, ServeWorkload, TrainWorkload, preset_names
from ui import tables
from ui.links import NUMBERS
from ui.sidebar import MAIN_ONLY, WHOLE_PAGE, whole_page
from ui.text import BOUND_HELP, LAYOUT_HELP, show_all
from ui.text import show as show_text
from ui.units import round_significant

#: The model the planner view opens with.
DEFAULT_MODEL = "llama-3.1-70b"
TASKS = {"Serve": "serve", "Train": "train"}
BY = {"time": "time", "cost": "cost"}
#: Rows of the "verdicts in full" expander (the downloads hold every row), and its key.
VERDICT_ROWS, VERDICTS_KEY = 50, "verdicts"
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
    config_text: str = ""  # a pasted or uploaded Hugging Face config.json: planned instead of ``model``


#: What a pasted config.json is called in titles and downloads.
OWN_MODEL = "your model (config.json)"
#: Said when the planner cannot read a Hugging Face config.json yet.
NO_HF_READER = (
    "Planning a pasted config.json needs planner.models.model_from_hf_config, which this version of "
    "the planner does not have yet: the preset above is planned instead."
)


def hf_reader():
    """``planner.models.model_from_hf_config(text, name)``, or None when the planner has none yet."""
    from planner import models

    return getattr(models, "model_from_hf_config", None)


def model_of(question: PlanQuestion):
    """The ``ModelSpec`` a question plans: its pasted config.json when it has one, else its preset
    (ParseError for a config.json the planner cannot read)."""
    from planner.models import preset

    reader = hf_reader()
    if question.config_text and reader is not None:
        return reader(question.config_text, OWN_MODEL)
    return preset(question.model)


def _own_model(sb) -> str:
    """The box for a Hugging Face config.json (pasted or uploaded); its text once it reads as a model,
    with the sizes shown back; "" otherwise (the preset stands, and the reason is said, in the box and
    below it: a closed popover hides what it holds)."""
    with sb.popover("Your own model: a Hugging Face config.json", width="stretch"):
        pasted = st.text_area(
            "Paste config.json",
            key="hf_config",
            height=120,
            placeholder='{"hidden_size": 8192, ...}',
            max_chars=MAX_CONFIG_CHARS,
            on_change=whole_page,
        )
        uploaded = st.file_uploader("or upload it", type=["json"], key="hf_config_file", on_change=whole_page)
        text = uploaded.getvalue().decode("utf-8", errors="replace") if uploaded is not None else pasted
        kept, note, kind = _read_config(text)
        if note:
            show_text(note, kind)
    if note and not kept:
        with sb:
            show_text(NOT_PLANNED_BELOW, kind)
    return kept


#: Below the closed box when its config.json is not planned (the reason is in the box).
NOT_PLANNED_BELOW = "Your config.json is not planned (open the box above for why): the preset is planned."


def _read_config(text: str) -> tuple[str, str, str]:
    """(the config.json's text when the planner reads it as a model, else ""; what to say; its kind)."""
    from normalize.errors import ParseError

    if not text.strip():
        return "", "", ""
    reader = hf_reader()
    if reader is None:
        return "", NO_HF_READER, "warning"
    try:
        spec = reader(text, OWN_MODEL)
    except ParseError as exc:
        return "", f"config.json not planned: {exc}", "error"
    return text, sizes_text(spec), "info"


def sizes_text(spec) -> str:
    """A model's sizes as the planner read them, for the user to check against their config."""
    experts = f", {spec.experts} experts ({spec.experts_per_token} per token)" if spec.is_moe else ""
    return (
        f"Read as: {spec.params_total / 1e9:,.1f}B parameters ({spec.params_active / 1e9:,.1f}B active), "
        f"{spec.layers} layers, hidden size {spec.hidden_size}, {spec.attention_heads} attention heads, "
        f"{spec.kv_heads} KV heads{experts}, weights in {spec.weight_dtype}."
    )


#: The workload boxes' defaults: serving's concurrency (conversations per cluster), training's
#: sequence length and global batch (sequences).
SERVE_BATCH, TRAIN_SEQUENCE, TRAIN_SEQUENCES = 32, 8192, 512


def default_question() -> PlanQuestion:
    """The question the sidebar asks before anyone touches it (what ``ui.serve.warm`` asks ahead)."""
    return PlanQuestion(
        model=DEFAULT_MODEL, workload=ServeWorkload(batch_sequences=SERVE_BATCH), nodes=None, by="time"
    )


def default_train(token_budget: float | None = None) -> TrainWorkload:
    """The training workload the boxes ask before anyone changes them (with ``token_budget``
    tokens to train, when given)."""
    return TrainWorkload(
        global_batch_tokens=TRAIN_SEQUENCES * TRAIN_SEQUENCE,
        sequence_tokens=TRAIN_SEQUENCE,
        precision="bf16",
        token_budget=token_budget,
    )


def ready_question(label: str) -> PlanQuestion | None:
    """The plan a ready question (``ui.sidebar.READY``) asks, as the sidebar then asks it; None for
    one that asks for the links only."""
    from ui.sidebar import PLAN, READY

    asked = READY.get(label, {})
    if asked.get("mode") != PLAN:
        return None
    billions = float(asked.get("train_tokens") or 0.0)  # type: ignore[arg-type]
    workload: ServeWorkload | TrainWorkload = default_question().workload
    if TASKS.get(str(asked.get("task"))) == "train":
        workload = default_train(billions * 1e9 if billions else None)
    return PlanQuestion(
        model=str(asked.get("model", DEFAULT_MODEL)), workload=workload, by=BY[str(asked.get("by", "time"))]
    )


def _whole(box, label: str, default: int, key: str, help_text: str, low: int = 1) -> int:
    """A whole-number box, capped as the ``plan`` option it stands for (ui.links.NUMBERS)."""
    high = int(NUMBERS[key])
    return int(
        box.number_input(
            label, min_value=low, max_value=high, value=default, step=1, key=key, help=help_text, **WHOLE_PAGE
        )
    )


def _optional(box, label: str, key: str, help_text: str, high: float, step: float) -> float | None:
    """A number box where 0 means "none" (bounded as the ``plan`` option it stands for)."""
    value = box.number_input(
        label,
        min_value=0.0,
        max_value=float(high),
        value=0.0,
        step=step,
        key=key,
        help=help_text,
        **WHOLE_PAGE,
    )
    return float(value) if value else None


def _serve(box) -> ServeWorkload:
    target = _optional(
        box, "Target output tokens/s (0: none)", "target",
        "Output tokens per second the whole cluster must reach (plan --tokens-per-s); the verdict says "
        "whether it does.", MAX_TARGET, 100.0,
    )  # fmt: skip
    tpot = _optional(
        box, "Time per output token at most (ms, 0: none)", "tpot",
        "The latency target (plan --tpot-ms): each conversation's next token within this; the batch "
        "is the largest that meets it.", MAX_TARGET, 10.0,
    )  # fmt: skip
    ttft = _optional(
        box, "Time to first token at most (ms, 0: none)", "ttft",
        "The latency target (plan --ttft-ms): the prompt read and the first token within this.",
        MAX_TARGET, 100.0,
    )  # fmt: skip
    return ServeWorkload(
        batch_sequences=_whole(
            box,
            "Conversations at once (per cluster, 0: the most tokens/s)",
            SERVE_BATCH,
            "batch",
            "Concurrency of the whole cluster, split over its replicas (plan --batch N); 0 searches the "
            "batch for the most tokens/s within memory and the latency targets (plan --batch max).",
            low=0,
        )
        or None,
        prompt_tokens=_whole(box, "Context (prompt tokens)", 2048, "context", "Tokens of each prompt."),
        output_tokens=_whole(box, "Output tokens", 512, "output", "Tokens written per sequence."),
        target_tokens_per_s=target,
        tpot_ms=tpot,
        ttft_ms=ttft,
    )


def _train(box) -> TrainWorkload:
    sequence = _whole(
        box, "Sequence length (tokens)", TRAIN_SEQUENCE, "seq_len", "Tokens per training sequence."
    )
    batch = _whole(box, "Global batch (sequences)", TRAIN_SEQUENCES, "seqs", "Sequences per optimizer step.")
    precision = box.segmented_control(
        "Matmul format", ["bf16", "fp8"], default="bf16", required=True, key="precision", **WHOLE_PAGE
    )
    billions = _optional(
        box, "Tokens to train (billions, 0: 20 per parameter)", "train_tokens",
        "The token budget (plan --tokens) every instance is ranked at: the days and dollars it takes. "
        "0 takes Chinchilla's 20 tokens per parameter.", MAX_TOKEN_BUDGET / 1e9, 100.0,
    )  # fmt: skip
    days = _optional(
        box, "Deadline (days, 0: none)", "days",
        "Train the budget within this many days (plan --days): each instance gets the fewest nodes that "
        "make it, instead of the GPUs below.", MAX_DAYS, 1.0,
    )  # fmt: skip
    gpus = _whole(
        box, "GPUs per cluster", TrainWorkload.cluster_gpus, "train_gpus",
        f"Every instance trains on this many GPUs (plan --gpus, up to {MAX_CLUSTER_GPUS:,}), so days and "
        "dollars compare like for like; a deadline or 'Instances per cluster' replaces it.",
    )  # fmt: skip
    return TrainWorkload(
        global_batch_tokens=batch * sequence,
        sequence_tokens=sequence,
        precision=precision or "bf16",
        token_budget=billions * 1e9 if billions else None,
        deadline_days=days,
        cluster_gpus=min(gpus, MAX_CLUSTER_GPUS),
    )


def plan_question(priced: bool, box=None) -> PlanQuestion:
    """The model, the workload and its few knobs that matter, in the sidebar (or ``box`` there) and
    the URL."""
    sb = box or st.sidebar
    names = preset_names()
    model = sb.selectbox(
        "Model",
        names,
        index=names.index(DEFAULT_MODEL),
        key="model",
        **WHOLE_PAGE,
        help="A model's published configuration (layers, hidden size, heads, experts), from its model "
        "card. Type to search; for another model, paste its config.json below.",
    )
    task = sb.segmented_control(
        "Workload", list(TASKS), default="Serve", required=True, key="task", **WHOLE_PAGE
    )
    by = "time"
    if priced:
        by = sb.segmented_control(
            "Rank by", list(BY), default="time", required=True, key="by", **MAIN_ONLY,
            help="time: output tokens/s of the planned cluster (serve), days to train the token budget "
            "(train); cost: USD per million output tokens (serve) or USD to train the budget (train). "
            "Unpriced rows follow the priced ones.",
        )  # fmt: skip
    config_text = _own_model(sb)
    with sb.popover("Workload details", width="stretch"):
        workload = _serve(st) if TASKS[task or "Serve"] == "serve" else _train(st)
        nodes = _whole(
            st, "Instances per cluster (0: serve the fewest that fit, train the GPUs above)", 0, "nodes",
            "The fewest that fit: up to 64. At most 1,024.", low=0,
        )  # fmt: skip
    return PlanQuestion(
        model=OWN_MODEL if config_text else (model or DEFAULT_MODEL),
        workload=workload,
        nodes=nodes or None,
        by=BY[by or "time"],
        config_text=config_text,
    )


def ranked_as_asked(question: PlanQuestion, priced: bool) -> PlanQuestion:
    """The last full run's ``question``, ranked as "Rank by" asks now: of the plan's controls only it
    reruns the main area alone (the others change the sidebar, or are rare enough to redraw it)."""
    by = st.session_state.get("by") if priced else None
    return replace(question, by=BY.get(str(by), "time"))


def cost_columns(kind: str) -> dict[str, str]:
    """The plan's cost columns for a workload kind → their headers (the one it ranks by first)."""
    if kind == "serve":
        return {"usd_per_million_tokens": "USD/M output tokens"}
    return {
        "usd_to_train": "USD to train",
        "usd_per_step": "USD/step",
        "usd_per_billion_tokens": "USD/B tokens",
    }


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
        **_beside_tokens(planned, kind),
        step: _rounded(step_values, 3),
        "comm share (%)": (planned["comm_share"] * PERCENT).round(1),
        "bottleneck link": planned["bottleneck_link"],
        "GPUs per node": planned["gpus_per_node"],
        "GPU": planned["gpu_model"],
        "model fits": planned["fits"],
        "bound by": planned["bound"],
        "cluster USD/hour": planned["usd_per_hour"].round(2),
        "price region": planned["price_region"],
        "bandwidths used (one way per GPU)": planned["bandwidth_basis"],
        "verdict": planned["verdict"],
        "flags": _flags(planned),
    }
    return pd.DataFrame(columns).reset_index(drop=True)


def _flags(planned: pd.DataFrame) -> pd.Series:
    """The row's flags, and "placeholder price" where the price it is costed at looks like one."""
    flags = planned["flags"].fillna("").astype("string")
    placeholder = planned["price_flag"].notna() & planned["usd_per_hour"].notna()
    joined = flags.where(~placeholder, flags + ", placeholder price").str.removeprefix(", ")
    return pd.Series(joined.to_numpy(dtype=object), index=planned.index)


#: Serving's figures beside tokens/s: the concurrency, each conversation's speed and its latencies.
SERVE_BESIDE = {
    "conversations at once": "concurrency",
    "tokens/s per user": "tokens_per_s_per_user",
    "TTFT (ms)": "ttft_s",
    "TPOT (ms)": "tpot_s",
}
#: Training's figures beside tokens/s: the days to train the budget, and the budget.
TRAIN_BESIDE = {"days to train": "days_to_train", "tokens to train": "token_budget"}


def _beside_tokens(planned: pd.DataFrame, kind: str) -> dict[str, pd.Series]:
    """What reads beside tokens/s: serving's concurrency, per-user speed, TTFT and TPOT; training's
    days to train and the token budget."""
    if kind == "serve":
        return {
            header: _rounded(
                planned[column] / SECONDS_PER_MS if column.endswith("_s") else planned[column], 3
            )
            for header, column in SERVE_BESIDE.items()
        }
    return {header: _rounded(planned[column], 4) for header, column in TRAIN_BESIDE.items()}


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
        "layout (TP×PP×EP×DP)": text(width=150, help=LAYOUT_HELP),
        "bound by": text(help=BOUND_HELP),
        "model fits": text(
            help="Where the model's weights and state fit: one GPU, one NVLink domain, or more"
        ),
        tokens: number(width=110, format=tables.NUMBER),
        "conversations at once": number(
            width=90, format=tables.NUMBER, help="Concurrency: sequences decoded together on the cluster"
        ),
        "tokens/s per user": number(
            width=90, help="Output tokens per second each conversation sees (1 / TPOT)"
        ),
        "TTFT (ms)": number(width=80, help="Time to first token: the prompt read and the first token"),
        "TPOT (ms)": number(width=80, help="Time per output token: one decode step"),
        "days to train": number(width=90, format=tables.NUMBER),
        "tokens to train": number(width=110, format=tables.NUMBER, help="The token budget every row trains"),
        "USD to train": number(width=110, format=tables.DOLLARS),
        **{h: number(width=100, format=tables.DOLLARS) for h in cost_columns(kind).values()},
        "cluster USD/hour": number(format=tables.DOLLARS),
        "verdict": text(width="large"),
        "bandwidths used (one way per GPU)": text(width="large"),
    }


#: The URL parameter that holds the plan table's hidden columns.
HIDE_KEY = "plan_hide"
#: Where a header click on the plan's table keeps the column it orders by.
SORT_KEY = "plan_sort"
#: Plan columns where more is better (ordered most first); every other column is ordered least first.
MORE_IS_BETTER = frozenset(
    {"output tokens/s", "trained tokens/s", "conversations at once", "tokens/s per user"}
)


def sort_by_column(frame: pd.DataFrame, header: str) -> pd.DataFrame:
    """The plan's table ordered by one column (``MORE_IS_BETTER`` most first, others least first),
    unknown cells last, ties in the planner's order."""
    ordered = frame.sort_values(
        header, ascending=header not in MORE_IS_BETTER, na_position="last", kind="stable"
    )
    return ordered.reset_index(drop=True)


def _sort_by_header(key: str) -> None:
    state = st.session_state.get(key)
    columns = list(state.selection.columns) if state is not None else []
    if columns:
        st.session_state[SORT_KEY] = columns[0] if columns[0] != "rank" else None


def _money(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.995 else f"${value:,.3g}"


def _because(row: dict, cheap: bool) -> str:
    """Why a planned row is the fastest (what bounds its step, its links) or the cheapest (what it
    rents at, and the same), in words."""
    nodes, gpus = int(row["nodes"]), row["gpus_per_node"]
    share = row["comm_share"]
    bound = str(row["bound"] or "").replace("-bound", "")
    parts = [f"its step is bound by {bound}" if bound else ""]
    if nodes == 1:
        parts.append("its fabric is not used at this size (one instance holds the model)")
    elif row["bottleneck_link"] and pd.notna(share):
        link = str(row["bottleneck_link"])
        # "NVSwitch" alone is a collective inside each instance (a TP all-reduce); "NVSwitch + RoCE" or
        # "RoCE" crosses the fabric between them
        crosses = any(level in FABRIC_LABELS.values() for level in link.split(" + "))
        where = f"between its {nodes} instances" if crosses else f"inside each of its {nodes} instances"
        parts.append(f"{share:.0%} of the step crosses {link} {where}")
    if cheap and pd.notna(row.get("usd_per_hour")) and pd.notna(gpus) and gpus:
        rent = f"it rents at {_money(row['usd_per_hour'] / nodes / gpus)} per GPU-hour"
        parts.insert(0, rent + placeholder_caution(row.get("price_flag")))
    return "; ".join(p for p in parts if p)


def _row_at(frame: pd.DataFrame, position: int) -> dict:
    return frame.iloc[[position]].to_dict("records")[0]


def why_these(planned: pd.DataFrame, kind: str) -> list[str]:
    """'Why this one' for the fastest row and the cheapest row of a plan, each in its own words (the
    first such row in the plan's order on a tie; training: the fewest days and the fewest dollars to
    train the one token budget). Only numeric columns are scanned: on a large catalog, filtering or
    sorting the whole frame's text columns took most of a rerun."""
    speed = planned["tokens_per_s"].to_numpy(dtype="float64", na_value=np.nan)
    if np.isnan(speed).all():
        return []
    tokens = "output tokens/s" if kind == "serve" else "trained tokens/s"
    if kind == "serve":
        fastest = _row_at(planned, int(np.nanargmax(speed)))
        pace = f"{fastest['tokens_per_s']:,.0f} {tokens}"
    else:
        days = planned["days_to_train"].to_numpy(dtype="float64", na_value=np.nan)
        days = np.where(np.isnan(speed), np.nan, days)
        fastest = _row_at(planned, int(np.nanargmax(speed) if np.isnan(days).all() else np.nanargmin(days)))
        pace = (
            f"{fastest['days_to_train']:,.3g} days to train {fastest['token_budget']:.3g} tokens "
            f"({fastest['tokens_per_s']:,.0f} {tokens})"
        )
    name = f"{fastest['instance_type']} ({fastest['provider']})"
    found = [
        f"Fastest: {name}, {pace} on {int(fastest['nodes'])} × "
        f"{fastest['gpus_per_node']:g} {fastest['gpu_model']}, because {_because(fastest, cheap=False)}."
    ]
    cost = next(iter(cost_columns(kind)))
    costs = np.where(np.isnan(speed), np.nan, planned[cost].to_numpy(dtype="float64", na_value=np.nan))
    if not np.isnan(costs).all():
        cheap = _row_at(planned, int(np.nanargmin(costs)))
        unit = "per million output tokens" if kind == "serve" else "to train the budget"
        name = f"{cheap['instance_type']} ({cheap['provider']})"
        found.append(
            f"Cheapest: {name}, {_money(cheap[cost])} {unit}, because {_because(cheap, cheap=True)}."
        )
    return found


def _title(question: PlanQuestion) -> str:
    kind = question.workload.kind
    what = "Serving" if kind == "serve" else "Training"
    order = {
        ("serve", "time"): "output tokens/s, most first",
        ("train", "time"): "days to train one token budget, fewest first",
        ("serve", "cost"): "USD per million output tokens, cheapest first",
        ("train", "cost"): "USD to train one token budget, cheapest first",
    }[(kind, question.by)]
    return f"{what} {question.model}: every instance ranked by {order}"


def price_note(filters=None) -> str:
    """Which price the plan's costs are at, in words, with the currency: the sidebar's region and
    price kind, as ``plan --region R --spot`` costs them."""
    from catalog.read.plan_inputs import price_words
    from catalog.read.prices import CURRENCY

    region, spot = (filters.region, filters.spot) if filters is not None else ("", False)
    kept = f"; only rows priced in {region} are shown" if region else ""
    return f"Costs in {CURRENCY}, each row's price: {price_words(region, spot)}{kept}."


def show(
    planned: pd.DataFrame, question: PlanQuestion, filters=None, frame: pd.DataFrame | None = None
) -> None:
    """The Ranking tab when it plans a model (``frame``: ``plan_frame`` of ``planned``, when the caller
    has it already)."""
    kind = question.workload.kind
    st.subheader(_title(question))
    where = (
        "the fewest instances that hold the model"
        if kind == "serve"
        else "one cluster size (the GPUs per cluster, or the fewest nodes that meet the deadline), "
        "training one token budget"
    )
    about = (
        f"Each instance gets its best layout (TP within the NVLink domain) on {where}, its step time, "
        "the share of it spent communicating, the link that share crosses, and the cost where the "
        "catalog has a price. Rows that cannot be planned come last with the reason. Formulas: "
        "docs/planning.md."
    )
    # One text element from here to the table (the region is the catalog's text: escaped, never
    # markdown): each element more is redrawn on every rerun.
    blocks = [(about, "caption"), (price_note(filters), "caption")]
    if planned.empty:
        show_all(blocks)
        st.info("No instance matches the filters. Widen them in the sidebar.")
        return
    blocks += [(sentence, "info") for sentence in why_these(planned, kind)]
    planned_rows = int(planned["tokens_per_s"].notna().sum())
    priced = int(planned[next(iter(cost_columns(kind)))].notna().sum())
    blocks.append((f"planned: {planned_rows} of {len(planned)} · with a cost: {priced}", "caption"))
    if frame is None:
        frame = plan_frame(planned, kind)
    by = str(st.session_state.get(SORT_KEY) or "")
    if by in frame.columns:
        frame = sort_by_column(frame, by)
        most = "most" if by in MORE_IS_BETTER else "least"
        blocks.append((f"Ordered by {by} ({most} first); the rank is the planner's.", "caption"))
    show_all([*blocks, (tables.FULL_TEXT_HINT, "caption")])
    visible = tables.grid(
        frame,
        key=tables.RANKING_GRID,
        on_header=_sort_by_header,
        column_config=column_config(kind),
        height=460,
        hide_key=HIDE_KEY,
        hint=False,
    )
    tables.downloads(visible, f"plan-{question.model}-{kind}", "plan")
    head = frame.head(VERDICT_ROWS)
    verdicts = st.expander(
        f"Verdicts in full (the first {len(head)} rows; the downloads hold all)",
        key=VERDICTS_KEY,
        on_change="rerun",
    )
    if verdicts.open:  # written only when opened: 50 long lines were redrawn on every rerun unseen
        with verdicts:
            show_text("\n".join(f"{i} — {v}" for i, v in zip(head["instance"], head["verdict"], strict=True)))
