"""The tables as shown: readable column names with their units, figures in the chosen units and
rounded, "yes/no/unknown" for nullable booleans, links only for http(s) URLs. The download buttons
write exactly these frames (same rows, order, columns, units)."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
import streamlit as st

from normalize.safe_text import csv_safe_frame
from normalize.vocab import FABRIC_LABELS, LINK_LABELS
from ui.text import BASIS_HELP, COUNT_UNITS, FLAGS_HELP, source_link, source_text, yes_no_unknown
from ui.units import Units, round_significant

#: What a missing figure looks like in a table cell (never "None").
MISSING = "–"
#: The grid's number formats. Printf formats (sprintf-js, thousands separated): the grid formats every
#: cell it draws on every redraw, and "localized" or "dollar" build a new ``Intl.NumberFormat`` per
#: cell (the grid's largest JS cost after React's). Same text as those in English: 3,350, 15.625, $2.04.
NUMBER, DOLLARS = "%,.10g", "$%,.2f"
#: Above this many rows a table is sent to the browser in chunks as it scrolls, not all at once.
LAZY_ROWS = 1_000
#: Orders the link view can take: label → (column key of ``ranking_frame``, descending). The first
#: is the default.
ORDERS = {
    "fabric, fastest first": ("fabric", True),
    "GPU-to-GPU, fastest first": ("intra", True),
    "GPU memory bandwidth, fastest first": ("memory", True),
    "GPUs per instance, most first": ("gpus", True),
    "instance name": ("instance", False),
    "provider, A to Z": ("provider", False),
    "GPU, A to Z": ("gpu", False),
    "GPU-to-GPU link, A to Z": ("intra_link", False),
    "fabric type, A to Z": ("fabric_name", False),
    "front-end, fastest first": ("frontend", True),
    "NVLink domain, largest first": ("domain", True),
    "largest TP group, largest first": ("tp", True),
    "GPU-GPU ÷ fabric, highest first": ("ratio", True),
    "flagged rows first": ("flags", True),
    "TP confined to one node, yes first": ("confined", True),
    "GPU-GPU basis, A to Z": ("intra_basis", False),
    "fabric basis, A to Z": ("fabric_basis", False),
    "source, A to Z": ("source", False),
}
#: HBM is a memory's bandwidth, not a link: always GB/s per GPU, whatever units the links are read in.
MEMORY_UNITS = Units()
#: Orders by price, offered when the catalog has prices.
PRICE_ORDERS = {
    "price per GPU-hour, cheapest first": ("price", False),
    "price per fabric GB/s, cheapest first": ("price_per_fabric", False),
}


def _labels(values: pd.Series, labels: dict) -> pd.Series:
    names = {str(k): v for k, v in labels.items()}
    return values.map(lambda v: names.get(v, v))


def ranking_columns(units: Units, priced: bool) -> dict[str, str]:
    """Key of each shown column → its header (with the unit); the first ones fit at 1280x800."""
    columns = {
        "instance": "instance",
        "provider": "provider",
        "gpus": "GPUs",
        "gpu": "GPU",
        "intra_link": "GPU-GPU link",
        "intra": f"GPU-GPU {units.short} two-way",
        "fabric_name": "fabric",
        "fabric": f"fabric {units.short} one-way",
    }
    if priced:
        columns["price"] = "USD/GPU-hour"
        columns["price_per_fabric"] = "USD/GPU-hour per one-way fabric GB/s/GPU"
    return columns | {
        "flags": "flags",
        "domain": "NVLink domain (GPUs)",
        "tp": "largest TP group (GPUs)",
        "confined": "TP confined to one node",
        "memory": f"GPU memory (HBM) {MEMORY_UNITS.short}",
        "frontend": f"front-end {units.short} one-way",
        "ratio": "GPU-GPU ÷ fabric, one way each (x)",
        "intra_basis": "GPU-GPU basis",
        "fabric_basis": "fabric basis",
        "source": "source",
        "source_link": "source link",
    }


def order_of_header(header: str, units: Units, priced: bool) -> str | None:
    """The order (a key of ``ORDERS`` or ``PRICE_ORDERS``) that sorts by the column ``header``: a
    click on a grid header orders the table on the server, so the downloads and the URL follow."""
    keys = {h: k for k, h in ranking_columns(units, priced).items()}
    orders = {**ORDERS, **(PRICE_ORDERS if priced else {})}
    return next((label for label, (key, _) in orders.items() if key == keys.get(header)), None)


def _price_per_fabric(ranked: pd.DataFrame) -> pd.Series:
    """USD per GPU-hour / fabric GB/s per GPU: what one GB/s between nodes costs per hour."""
    fabric = ranked["fabric_gbytes_per_s_per_gpu"].astype("float64")
    per = ranked["usd_per_gpu_hour"].astype("float64") / fabric.where(fabric > 0)
    return pd.Series(round_significant(per.to_numpy(), 3), index=ranked.index)


def ranking_frame(
    ranked: pd.DataFrame, units: Units, priced: bool, order: str, originals: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """The link view as shown: ``ranking_columns`` headers, figures in ``units``, in the chosen order
    (rows without the ordering figure last, never as zeros). The source is text (a local copy in
    words, with the page it copies from ``originals``), its web page a separate link column."""
    count = ranked["gpu_count"]
    values = {
        "instance": ranked["instance_type"],
        "provider": ranked["provider"],
        "gpus": pd.Series(round_significant(count.to_numpy()), index=ranked.index),
        "gpu": ranked["gpu_model"],
        "intra_link": _labels(ranked["intra_node_link"], LINK_LABELS),
        "intra": units.convert(ranked["intra_node_gbytes_per_s"], count),
        "fabric_name": _labels(ranked["inter_node_fabric"], FABRIC_LABELS),
        "fabric": units.convert(ranked["fabric_gbytes_per_s_per_gpu"], count),
        "price": ranked["usd_per_gpu_hour"].round(2) if priced else None,
        "price_per_fabric": _price_per_fabric(ranked) if priced else None,
        "flags": ranked["flags"],
        "domain": ranked["scale_up_domain_gpus"],
        "tp": ranked["max_tp_degree_gpus"],
        "confined": ranked["confined_to_one_node"].map(yes_no_unknown),
        "memory": MEMORY_UNITS.convert(ranked["gpu_memory_gbytes_per_s"], count),
        "frontend": units.convert(ranked["frontend_gbytes_per_s_per_gpu"], count),
        "ratio": pd.Series(
            round_significant(ranked["nvlink_to_fabric_ratio"].to_numpy(), 3), index=ranked.index
        ),
        "intra_basis": ranked["intra_node_basis"],
        "fabric_basis": ranked["inter_node_basis"],
        "source": ranked["source_url"].map(lambda url: source_text(url, originals)),
        "source_link": ranked["source_url"].map(lambda url: source_link(url, originals)),
    }
    headers = ranking_columns(units, priced)
    frame = pd.DataFrame({headers[key]: values[key] for key in headers})
    key, descending = {**ORDERS, **(PRICE_ORDERS if priced else {})}.get(order, next(iter(ORDERS.values())))
    frame = frame.sort_values(headers[key], ascending=not descending, na_position="last", kind="stable")
    return frame.reset_index(drop=True)


#: What a link column shows of a URL: its host.
LINK_TEXT = r"https?://([^/]+)/.*"
SOURCE_HELP = (
    "Where the row was read: a web page, or a local copy (a third-party copy of a page, read from "
    "../shared and cited as itself) with the page it copies"
)
SOURCE_LINK_HELP = "The source's web page; for a local copy, the page it copies (when the catalog records it)"
PRICE_PER_FABRIC_HELP = (
    "USD per GPU-hour / one-way fabric GB/s per GPU: what 1 GB/s between nodes costs per hour."
)
RATIO_HELP = (
    "How much slower a step off the NVLink domain is, one way against one way: half the bidirectional "
    "GPU-to-GPU figure / the one-way fabric per GPU (p5.48xlarge: 450 / 50 = 9)."
)


def column_config(units: Units, priced: bool) -> dict:
    """Streamlit column settings for ``ranking_frame``: widths that fit the key columns, formats."""
    h = ranking_columns(units, priced)
    number = st.column_config.NumberColumn
    text = st.column_config.TextColumn
    prices = {}
    if priced:
        prices = {
            h["price"]: number(width=90, format=DOLLARS),
            h["price_per_fabric"]: number(format=DOLLARS, help=PRICE_PER_FABRIC_HELP),
        }
    return {
        h["instance"]: text(width=190, pinned=True, help="The provider's name for the instance type"),
        h["provider"]: text(width=80),
        h["gpus"]: number(width=48, format=NUMBER, help="GPUs per instance (a fraction: a share of one)"),
        h["gpu"]: text(width=125, help="GPU model and memory, with its form factor (SXM, PCIe)"),
        h["intra_link"]: text(width=90, help="How the GPUs inside one instance talk to each other"),
        h["intra"]: number(
            width=92,
            format=NUMBER,
            help=f"GPU-to-GPU bandwidth, {units.label}, two-way (both directions added, as NVIDIA states it)",
        ),
        h["fabric_name"]: text(width=92, help="The network between instances (not the front-end)"),
        h["fabric"]: number(
            width=92, format=NUMBER, help=f"Fabric bandwidth, {units.label}, one way (as stated)"
        ),
        **prices,
        h["flags"]: text(help=FLAGS_HELP),
        h["domain"]: number(format="%d", help="GPUs in one NVLink/NVSwitch domain (72 on an NVL72 rack)"),
        h["tp"]: number(
            format="%d", help="The largest tensor-parallel group that stays on the GPU-to-GPU link"
        ),
        h["confined"]: text(help="yes: tensor parallelism at link speed cannot span instances"),
        h["intra_basis"]: text(help=BASIS_HELP),
        h["fabric_basis"]: text(help=BASIS_HELP),
        h["memory"]: number(format=NUMBER, help="GPU memory (HBM) bandwidth, GB/s per GPU"),
        h["frontend"]: number(format=NUMBER, help=f"Front-end network, {units.label}, one way"),
        h["ratio"]: number(format=NUMBER, help=RATIO_HELP),
        h["source"]: text(help=SOURCE_HELP),
        h["source_link"]: st.column_config.LinkColumn(display_text=LINK_TEXT, help=SOURCE_LINK_HELP),
    }


def figure(value: Any, unit: object = None) -> str:
    """A claimed figure as text: 4 significant digits, thousands separated, with its unit (a count
    of one in the singular: "1 GPU", "8 GPUs")."""
    if value is None or pd.isna(value):
        return MISSING
    number = float(round_significant(np.array([float(value)]))[0])
    text = format(number, ",.10g")
    if isinstance(unit, str) and number == 1:
        unit = COUNT_UNITS.get(unit, unit)
    return f"{text} {unit}" if isinstance(unit, str) and unit else text


#: The words for a claim's text value, by the field it is a claim of (``efa`` → ``EFA``).
VALUE_LABELS = {
    "intra_node_link": {str(k): str(v) for k, v in LINK_LABELS.items()},
    "inter_node_fabric": {str(k): str(v) for k, v in FABRIC_LABELS.items()},
}


def claim_values(claims: pd.DataFrame) -> list[str]:
    """Each claim's value as shown: a number with its unit (``figure``), else its text in words (a
    link or fabric by its label), else ``MISSING``."""
    return [
        figure(value, unit)
        if pd.notna(value)
        else (VALUE_LABELS.get(field, {}).get(text, text) if isinstance(text, str) else MISSING)
        for value, unit, text, field in zip(
            claims["value"], claims["unit"], claims["value_text"], claims["field"], strict=True
        )
    ]


#: The column a table keeps whatever is hidden (it names the row).
KEPT_COLUMN = "instance"


def hidden_columns(frame: pd.DataFrame, key: str) -> list[str]:
    """The columns the user hides, chosen in a box bound to the URL under ``key`` (so a shared link
    hides them too); every column but ``KEPT_COLUMN`` may be hidden."""
    options = [c for c in frame.columns if c != KEPT_COLUMN]
    with st.popover("Columns: hide some (the link and the downloads follow)"):
        hidden = st.multiselect(
            "Hide columns", options, key=key, bind="query-params", placeholder="none: every column shown"
        )
    return [c for c in hidden if c in options]


def with_full_headers(frame: pd.DataFrame, column_config: dict | None) -> dict:
    """``column_config`` with a hover text on every column's header: its own help, or else the header
    itself, so a header cut short at 1280 px reads in full on hover."""
    config = dict(column_config or {})
    for column in frame.columns:
        entry = dict(config.get(column) or {})
        if not entry.get("help"):
            entry["help"] = str(column)
        config[column] = entry
    return config


#: The key of the Ranking tab's table, whichever view draws it (the plan or the links).
RANKING_GRID = "ranking_grid"


def _clicked_key(key: str) -> str:
    """The grid's key as drawn: ``key`` and the header clicks handled so far. Neither the order nor
    the view is in it, so a change of either updates the grid instead of building it again; a click
    must leave no column selected, which only a new key does (docs/app.md, the grids' section)."""
    return f"{key}:{st.session_state.get(f'{key}:clicks', 0)}"


def _on_header(key: str, drawn: str, on_header: Callable[[str], None]) -> None:
    """A header click: the grid gets its next key (first, so that no column stays selected even if
    ``on_header`` fails), then ``on_header`` is told which table was drawn."""
    st.session_state[f"{key}:clicks"] = st.session_state.get(f"{key}:clicks", 0) + 1
    on_header(drawn)


#: Said under a table whose long names may be cut short.
FULL_TEXT_HINT = "Hover a header for its full name; double-click a cell to read it in full."


def grid(
    frame: pd.DataFrame,
    *,
    key: str,
    on_header: Callable[[str], None] | None = None,
    column_config: dict | None = None,
    height: int | Literal["auto"] = "auto",
    hide_key: str | None = None,
    hint: bool = True,
) -> pd.DataFrame:
    """A table whose order is the server's: the grid's own sorting is off (a header click selects the
    column, and ``on_header(key as drawn)`` may order the table by it), so what is downloaded is
    what is shown; with ``on_header`` the grid is built anew only after a header click
    (``_clicked_key``), not when its rows, columns or order change. With ``hide_key``, the columns
    hidden in ``hidden_columns`` are left out. Past ``LAZY_ROWS`` rows the table is sent in chunks,
    which cannot take a selection: there a header click sorts only the browser's view (the caption
    of such a table says so). Returns the frame as shown (hidden columns left out), for the
    downloads. ``hint=False``: the caller says ``FULL_TEXT_HINT`` in its own text above the table
    (one element fewer to redraw)."""
    if hide_key is not None:
        hidden = set(hidden_columns(frame, hide_key))
        frame = frame[[c for c in frame.columns if c not in hidden]]
    lazy = len(frame) > LAZY_ROWS
    column_config = with_full_headers(frame, column_config)
    selection: dict[str, Any] = {}
    if not lazy:
        drawn = _clicked_key(key) if on_header else key
        selection = {
            "on_select": (lambda: _on_header(key, drawn, on_header)) if on_header else "rerun",
            "selection_mode": "single-column",
            "key": drawn,
        }
    st.dataframe(
        frame,
        hide_index=True,
        column_config=column_config,
        height=height,
        placeholder=MISSING,
        lazy=lazy,
        **selection,
    )
    if lazy:
        st.caption(
            f"Over {LAZY_ROWS:,} rows: a click on a header sorts only your view; the downloads keep "
            "the order chosen in the sidebar."
        )
    if hint:
        st.caption(FULL_TEXT_HINT)
    return frame


#: Where the app keeps, per session and run, what every download says about itself (``about``).
ABOUT_KEY = "download_about"
#: A number in a CSV cell: 8 not 8.0, 0.125 and 3200 as they are.
CSV_FLOAT = "%.15g"


def about(lines: list[str]) -> None:
    """Set what this run's downloads say about themselves (data as of, the filter, the order)."""
    st.session_state[ABOUT_KEY] = list(lines)


def about_lines() -> list[str]:
    """What the downloads of this run say about themselves (``about``)."""
    return list(st.session_state.get(ABOUT_KEY) or [])


def csv_bytes(frame: pd.DataFrame, lines: list[str]) -> bytes:
    """``frame`` as CSV, after one ``# `` line per item of ``lines``; whole numbers without '.0'."""
    head = "".join(f"# {line}\n" for line in lines)
    return (head + frame.to_csv(index=False, float_format=CSV_FLOAT)).encode("utf-8")


def downloads(frame: pd.DataFrame, name: str, key: str) -> None:
    """CSV and Parquet buttons for exactly ``frame`` (built when clicked), each saying when its data
    was read and which filter and order it shows (``about``)."""
    lines = about_lines()
    row = st.container(horizontal=True)
    row.download_button(
        "Download CSV",
        data=lambda: csv_bytes(csv_safe_frame(frame), lines),  # no formula runs in a spreadsheet
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
    )
    row.download_button(
        "Download Parquet",
        data=lambda: parquet_bytes(frame, lines),
        file_name=f"{name}.parquet",
        mime="application/vnd.apache.parquet",
        key=f"{key}_parquet",
        on_click="ignore",
    )


def parquet_bytes(frame: pd.DataFrame, lines: list[str]) -> bytes:
    """``frame`` as Parquet, whole-number columns as integers, ``lines`` in the file's metadata
    (key ``interconnect-catalog``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(whole_numbers(frame), preserve_index=False)
    meta = {**(table.schema.metadata or {}), b"interconnect-catalog": "\n".join(lines).encode("utf-8")}
    buffer = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), buffer)
    return buffer.getvalue()


def whole_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every float column whose values are all whole as nullable integers (GPU counts
    8, not 8.0; a column with 0.125 GPUs stays float)."""
    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if values.dtype.kind == "f" and values.notna().any():
            finite = values.dropna()
            if ((finite % 1) == 0).all() and finite.abs().max() < 2**53:
                out[column] = values.astype("Int64")
    return out
