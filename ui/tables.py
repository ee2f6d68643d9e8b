"""The tables as shown: readable column names with their units, figures in the chosen units and
rounded, "yes/no/unknown" for nullable booleans, links only for http(s) URLs. The download buttons
write exactly these frames (same rows, order, columns, units)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from normalize.safe_text import csv_safe_frame
from normalize.vocab import FABRIC_LABELS, LINK_LABELS
from ui.text import link_or_none, yes_no_unknown
from ui.units import Units, round_significant

#: What a missing figure looks like in a table cell (never "None").
MISSING = "–"
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
}
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
        "intra": f"GPU-GPU {units.short}",
        "fabric_name": "fabric",
        "fabric": f"fabric {units.short}",
    }
    if priced:
        columns["price"] = "USD/GPU-hour"
        columns["price_per_fabric"] = "USD/GPU-hour per fabric GB/s/GPU"
    return columns | {
        "flags": "flags",
        "domain": "NVLink domain (GPUs)",
        "tp": "largest TP group (GPUs)",
        "confined": "TP confined to one node",
        "memory": f"GPU memory {units.short}",
        "frontend": f"front-end {units.short}",
        "ratio": "GPU-GPU ÷ fabric (x)",
        "intra_basis": "GPU-GPU basis",
        "fabric_basis": "fabric basis",
        "source": "source",
    }


def _price_per_fabric(ranked: pd.DataFrame) -> pd.Series:
    """USD per GPU-hour / fabric GB/s per GPU: what one GB/s between nodes costs per hour."""
    fabric = ranked["fabric_gbytes_per_s_per_gpu"].astype("float64")
    per = ranked["usd_per_gpu_hour"].astype("float64") / fabric.where(fabric > 0)
    return pd.Series(round_significant(per.to_numpy(), 3), index=ranked.index)


def ranking_frame(ranked: pd.DataFrame, units: Units, priced: bool, order: str) -> pd.DataFrame:
    """The link view as shown: ``ranking_columns`` headers, figures in ``units``, in the chosen order
    (rows without the ordering figure last, never as zeros)."""
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
        "memory": units.convert(ranked["gpu_memory_gbytes_per_s"], count),
        "frontend": units.convert(ranked["frontend_gbytes_per_s_per_gpu"], count),
        "ratio": pd.Series(
            round_significant(ranked["nvlink_to_fabric_ratio"].to_numpy(), 3), index=ranked.index
        ),
        "intra_basis": ranked["intra_node_basis"],
        "fabric_basis": ranked["inter_node_basis"],
        "source": ranked["source_url"].map(link_or_none),
    }
    headers = ranking_columns(units, priced)
    frame = pd.DataFrame({headers[key]: values[key] for key in headers})
    key, descending = {**ORDERS, **(PRICE_ORDERS if priced else {})}.get(order, next(iter(ORDERS.values())))
    frame = frame.sort_values(headers[key], ascending=not descending, na_position="last", kind="stable")
    return frame.reset_index(drop=True)


PRICE_PER_FABRIC_HELP = "USD per GPU-hour / fabric GB/s per GPU: what 1 GB/s between nodes costs per hour."


def column_config(units: Units, priced: bool) -> dict:
    """Streamlit column settings for ``ranking_frame``: widths that fit the key columns, formats."""
    h = ranking_columns(units, priced)
    number = st.column_config.NumberColumn
    text = st.column_config.TextColumn
    prices = {}
    if priced:
        prices = {
            h["price"]: number(width=90, format="dollar"),
            h["price_per_fabric"]: number(format="dollar", help=PRICE_PER_FABRIC_HELP),
        }
    return {
        h["instance"]: text(width=190, pinned=True),
        h["provider"]: text(width=80),
        h["gpus"]: number(width=48, format="localized"),
        h["gpu"]: text(width=125),
        h["intra_link"]: text(width=90, help="How the GPUs inside one instance talk to each other"),
        h["intra"]: number(width=92, format="localized", help=f"GPU-to-GPU bandwidth, {units.label}"),
        h["fabric_name"]: text(width=92, help="The network between instances (not the front-end)"),
        h["fabric"]: number(width=92, format="localized", help=f"Fabric bandwidth, {units.label}"),
        **prices,
        h["domain"]: number(format="%d"),
        h["tp"]: number(format="%d"),
        h["memory"]: number(format="localized"),
        h["frontend"]: number(format="localized"),
        h["ratio"]: number(format="localized"),
        h["source"]: st.column_config.LinkColumn(display_text=r"https?://([^/]+)/.*"),
    }


def figure(value: Any, unit: object = None) -> str:
    """A claimed figure as text: 4 significant digits, thousands separated, with its unit."""
    if value is None or pd.isna(value):
        return MISSING
    text = format(float(round_significant(np.array([float(value)]))[0]), ",.10g")
    return f"{text} {unit}" if isinstance(unit, str) and unit else text


def downloads(frame: pd.DataFrame, name: str, key: str) -> None:
    """CSV and Parquet buttons for exactly ``frame`` (built when clicked)."""
    row = st.container(horizontal=True)
    row.download_button(
        "Download CSV",
        data=lambda: csv_safe_frame(frame).to_csv(index=False).encode("utf-8"),  # no formula runs
        file_name=f"{name}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
    )
    row.download_button(
        "Download Parquet",
        data=lambda: _parquet(frame),
        file_name=f"{name}.parquet",
        mime="application/vnd.apache.parquet",
        key=f"{key}_parquet",
        on_click="ignore",
    )


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()
