"""The sidebar: the question (workload, filters, what counts) and the units, every widget bound to the
URL (``bind="query-params"``), so a copied link reproduces the view.

A bound widget writes the option's label into the URL (``?link=NVSwitch&gpus=8``), so options are
short human labels and are mapped back to catalog values here.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from catalog.read.filters import Filters
from catalog.read.text import fmt
from normalize.vocab import FABRIC_LABELS, LINK_LABELS
from ui.units import Units

#: Workload option (shown and in the URL) → catalog workload, with the caption under it.
WORKLOADS = {"Tensor": "tensor", "Pipeline": "pipeline", "Expert": "expert"}
WORKLOAD_CAPTIONS = ("inside the NVLink domain", "across nodes", "all-to-all, fabric and NVLink")
WORKLOAD_TITLES = {
    "tensor": "Tensor parallelism (inside the NVLink domain)",
    "pipeline": "Pipeline parallelism (across nodes)",
    "expert": "Expert parallelism (all-to-all)",
}
LINK_BY_LABEL = {label: str(link) for link, label in LINK_LABELS.items()}
FABRIC_BY_LABEL = {label: str(fabric) for fabric, label in FABRIC_LABELS.items()}
BIND = "query-params"

SEARCH_HELP = (
    "Instance, provider, GPU model, link or fabric. Words must all match; commas separate "
    "alternatives: `H100 SXM, B200`. `8-GPU` or `8x` means exactly 8 GPUs."
)


@dataclass(frozen=True)
class Question:
    """What the sidebar asks for: the filters for the read side and the units to show figures in."""

    filters: Filters
    units: Units


def count_label(count: float) -> str:
    """How a GPU count reads in the filter and the URL: ``8``, ``0.125``."""
    return fmt(count)


def _lists(facets: dict[str, list]) -> dict:
    sb = st.sidebar
    providers = sb.multiselect("Providers", facets["providers"], placeholder="all", key="provider", bind=BIND)
    counts = {count_label(c): c for c in facets["gpu_counts"]}
    gpus = sb.multiselect("GPUs per instance", list(counts), placeholder="any", key="gpus", bind=BIND)
    link_labels = [str(LINK_LABELS[link]) for link in _known(LINK_LABELS, facets["intra_links"])]
    links = sb.multiselect("GPU-to-GPU link", link_labels, placeholder="any", key="link", bind=BIND)
    fabric_labels = [str(FABRIC_LABELS[f]) for f in _known(FABRIC_LABELS, facets["fabrics"])]
    fabrics = sb.multiselect("Fabric", fabric_labels, placeholder="any", key="fabric", bind=BIND)
    domains = ["any", *(str(d) for d in facets["domain_gpus"] if d > 1)]
    domain = sb.selectbox(
        "NVLink domain, at least (GPUs)",
        domains,
        key="domain",
        bind=BIND,
        help="GPUs that share one NVLink/NVSwitch/Infinity Fabric domain (72 on an NVL72 rack).",
    )
    return {
        "providers": tuple(providers),
        "gpu_counts": tuple(counts[g] for g in gpus),
        "intra_links": tuple(LINK_BY_LABEL[label] for label in links),
        "fabrics": tuple(FABRIC_BY_LABEL[label] for label in fabrics),
        "min_scale_up_domain_gpus": 0 if domain == "any" else int(domain),
    }


def _known(labels: dict, values: list) -> list:
    return [key for key in labels if str(key) in values]


def _units() -> Units:
    sb = st.sidebar
    sb.header("Units")
    cols = sb.columns(2)
    rate = cols[0].segmented_control(
        "Rate", ["GB/s", "Gb/s"], default="GB/s", required=True, key="unit", bind=BIND
    )
    per = cols[1].segmented_control(
        "Per", ["GPU", "node"], default="GPU", required=True, key="per", bind=BIND
    )
    return Units(bits=rate == "Gb/s", per_node=per == "node")


def _numbers(units: Units, priced: bool) -> dict:
    sb = st.sidebar
    minimum = sb.number_input(
        f"Fabric at least ({units.label})",
        min_value=0.0,
        value=0.0,
        step=10.0 if units.per_node else 1.0,
        key="min_fabric",
        bind=BIND,
        help="Node-to-node fabric bandwidth, in the units chosen above. 0 keeps every row.",
    )
    per_node, per_gpu = units.from_display(minimum)
    found = {"min_fabric_gbits_per_s_per_node": per_node, "min_fabric_gbytes_per_s_per_gpu": per_gpu}
    if priced:
        price = sb.number_input(
            "Price per GPU-hour at most (USD)",
            min_value=0.0,
            value=0.0,
            step=0.5,
            key="max_price",
            bind=BIND,
            help="The cheapest on-demand price the catalog holds, divided by the GPUs. 0: no limit.",
        )
        found["max_usd_per_gpu_hour"] = price if price > 0 else None
    return found


def question(facets: dict[str, list], priced: bool) -> Question:
    """Draw the sidebar and return what it asks (every widget also lives in the URL)."""
    sb = st.sidebar
    sb.header("Question")
    choice = sb.radio(
        "Rank by workload", list(WORKLOADS), captions=WORKLOAD_CAPTIONS, key="workload", bind=BIND
    )
    search = sb.text_input(
        "Search", key="q", bind=BIND, placeholder="p5.48xlarge, a3-highgpu-8g", help=SEARCH_HELP
    )
    lists = _lists(facets)
    units = _units()
    numbers = _numbers(units, priced)
    sb.header("Count")
    include = {
        "include_stale": sb.toggle("stale rows (last refresh failed)", value=True, key="stale", bind=BIND),
        "include_curated": sb.toggle("curated rows (not scraped)", value=True, key="curated", bind=BIND),
        "include_inferred": sb.toggle(
            "values inferred from GPU datasheets",
            value=True,
            key="inferred",
            bind=BIND,
            help="Off: only bandwidths the provider states count; inferred ones count as missing.",
        ),
    }
    filters = Filters(workload=WORKLOADS[choice], search=search, **lists, **numbers, **include)
    return Question(filters=filters, units=units)
