"""The sidebar: the question (plan a model or links only, filters, what counts) and the units, every
widget bound to the URL (``bind="query-params"``), so a copied link reproduces the view.

A bound widget writes the option's label into the URL (``?link=NVSwitch&gpus=8``), so options are
short human labels and are mapped back to catalog values here.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Final

import streamlit as st
from streamlit.errors import StreamlitAPIException

from catalog.read.filters import Filters, search_problem
from catalog.read.text import fmt
from normalize.vocab import FABRIC_LABELS, LINK_LABELS
from ui.text import CURATED_HELP
from ui.units import Units

#: How the Ranking tab ranks (shown and in the URL) → mode, with the caption under each.
PLAN, LINKS = "Plan a model", "Links only"
MODES = {PLAN: "plan", LINKS: "links"}
MODE_CAPTIONS = ("time and cost of a model's workload", "bandwidths, in the units below")
LINK_BY_LABEL = {label: str(link) for link, label in LINK_LABELS.items()}
FABRIC_BY_LABEL = {label: str(fabric) for fabric, label in FABRIC_LABELS.items()}
BIND: Final = "query-params"
#: The main area's fragment key: a filter that changes nothing in the sidebar reruns only it.
MAIN: Final = "main"
#: Set by the full run that last drew the main area; whether the search box shows a problem.
MAIN_DRAWN_KEY, SEARCH_PROBLEM_KEY = "_main_drawn", "_search_problem"


def main_only() -> None:
    """A widget's callback: rerun only the main area (``MAIN``), not the sidebar, once a full run
    drew it (before, the interaction's full rerun stands)."""
    if st.session_state.get(MAIN_DRAWN_KEY):
        st.rerun(MAIN)


def whole_page() -> None:
    """A widget's callback: this change reruns the whole page (it changes the sidebar), also when a
    filter's change comes in the same interaction (a callback that returns wins over a keyed rerun);
    the main area counts as not drawn until a full run draws it, so a filter clicked before that run
    has run reruns the page too."""
    st.session_state[MAIN_DRAWN_KEY] = False


def _searched() -> None:
    """The search box's callback: the main area only, unless the sidebar's problem line comes or goes."""
    if not search_problem(st.session_state.get("q") or "") and not st.session_state.get(SEARCH_PROBLEM_KEY):
        main_only()


#: Keywords of a sidebar widget whose value only changes the main area.
MAIN_ONLY: Final[dict[str, Any]] = {"bind": BIND, "on_change": main_only}
#: Keywords of a widget whose value changes the sidebar too.
WHOLE_PAGE: Final[dict[str, Any]] = {"bind": BIND, "on_change": whole_page}

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


def _lists(facets: dict[str, list]) -> None:
    sb = st.sidebar
    sb.multiselect("Providers", facets["providers"], placeholder="all", key="provider", **MAIN_ONLY)
    counts = [count_label(c) for c in facets["gpu_counts"]]
    sb.multiselect("GPUs per instance", counts, placeholder="any", key="gpus", **MAIN_ONLY)
    link_labels = [str(LINK_LABELS[link]) for link in _known(LINK_LABELS, facets["intra_links"])]
    sb.multiselect("GPU-to-GPU link", link_labels, placeholder="any", key="link", **MAIN_ONLY)
    fabric_labels = [str(FABRIC_LABELS[f]) for f in _known(FABRIC_LABELS, facets["fabrics"])]
    sb.multiselect("Fabric", fabric_labels, placeholder="any", key="fabric", **MAIN_ONLY)
    sb.selectbox(
        "NVLink domain, at least (GPUs)",
        ["any", *(str(d) for d in facets["domain_gpus"] if d > 1)],
        key="domain",
        help="GPUs that share one NVLink/NVSwitch/Infinity Fabric domain (72 on an NVL72 rack).",
        **MAIN_ONLY,
    )
    sb.multiselect(
        "GPU peer access",
        [a for a in PEER_ACCESS if a in facets.get("peer_access", PEER_ACCESS)],
        placeholder="any",
        key="peer",
        help=PEER_HELP,
        **MAIN_ONLY,
    )


def _lists_asked(facets: dict[str, list]) -> dict[str, Any]:
    state = st.session_state
    counts = {count_label(c): c for c in facets["gpu_counts"]}
    domain = state.get("domain") or "any"
    return {
        "providers": tuple(state.get("provider") or ()),
        "peer_access": tuple(state.get("peer") or ()),
        "gpu_counts": tuple(counts[g] for g in state.get("gpus") or () if g in counts),
        "intra_links": tuple(LINK_BY_LABEL[label] for label in state.get("link") or ()),
        "fabrics": tuple(FABRIC_BY_LABEL[label] for label in state.get("fabric") or ()),
        "min_scale_up_domain_gpus": 0 if domain == "any" else int(domain),
    }


#: What the peer-access filter offers (``gpu_peer_access``; a one-GPU row is ``not-applicable``).
PEER_ACCESS = ("yes", "no", "unknown", "not-applicable")
PEER_HELP = (
    "Whether the instance's GPUs read and write each other's memory directly (CUDA peer access over "
    "NVLink or PCIe): yes, no (traffic is staged through host memory), unknown; not-applicable is one GPU."
)


def _known(labels: dict, values: list) -> list:
    return [key for key in labels if str(key) in values]


def _units() -> None:
    sb = st.sidebar
    sb.header("Units")
    # One above the other: side by side, the second button of each ("Gb/s", "node") was cut off
    # by the sidebar's edge. A full rerun: the fabric box's label says the units.
    sb.segmented_control("Rate", ["GB/s", "Gb/s"], default="GB/s", required=True, key="unit", **WHOLE_PAGE)
    sb.segmented_control("Per", ["GPU", "node"], default="GPU", required=True, key="per", **WHOLE_PAGE)


def units_asked() -> Units:
    """The units the sidebar asks for (GB/s per GPU until changed)."""
    state = st.session_state
    return Units(bits=state.get("unit") == "Gb/s", per_node=state.get("per") == "node")


#: How prices are read: label (in the URL) → spot or not.
PRICE_KINDS = {"on-demand": False, "spot": True}
ANY_REGION = "cheapest anywhere"


def price_words(filters: Filters) -> str:
    """Which price a table shows, in words: "USD, on-demand, the cheapest region"."""
    kind = "spot" if filters.spot else "on-demand"
    where = f"in {filters.region}" if filters.region else "the cheapest region of each row"
    return f"USD as published, {kind}, {where}"


def _prices(regions: list[str]) -> None:
    sb = st.sidebar
    sb.selectbox(
        "Region",
        [ANY_REGION, *regions],
        key="region",
        help="Price every row in this region, as its price source names it (us-east-1, eastus, "
        "europe-west4...): rows with no price there are left out. Prices are in USD, as published.",
        **MAIN_ONLY,
    )
    sb.segmented_control(
        "Price", list(PRICE_KINDS), default="on-demand", required=True, key="price_kind",
        help="on-demand, or spot (interruptible; rows with no spot price have no price)", **MAIN_ONLY,
    )  # fmt: skip


def _prices_asked() -> dict[str, Any]:
    region = st.session_state.get("region")
    return {
        "region": "" if region in (None, ANY_REGION) else region,
        "spot": PRICE_KINDS.get(st.session_state.get("price_kind") or "", False),
    }


def _memory() -> None:
    cols = st.sidebar.columns(2)
    cols[0].number_input(
        "GPU memory ≥ (GB/GPU)", min_value=0.0, value=0.0, step=8.0, key="min_mem",
        help="Memory of each GPU, at least. 0 keeps every row.", **MAIN_ONLY,
    )  # fmt: skip
    cols[1].number_input(
        "in all ≥ (GB)", min_value=0.0, value=0.0, step=80.0, key="min_total_mem",
        help="GPU memory of the whole instance (per GPU x GPUs), at least. 0 keeps every row.", **MAIN_ONLY,
    )  # fmt: skip


def _numbers(units: Units, priced: bool) -> None:
    sb = st.sidebar
    sb.number_input(
        f"Fabric at least ({units.label}, one way)",
        min_value=0.0,
        value=0.0,
        step=10.0 if units.per_node else 1.0,
        key="min_fabric",
        help="Node-to-node fabric bandwidth, in the units chosen above. 0 keeps every row.",
        **MAIN_ONLY,
    )
    if priced:
        sb.number_input(
            "Price per GPU-hour at most (USD)",
            min_value=0.0,
            value=0.0,
            step=0.5,
            key="max_price",
            help="The price chosen below (on-demand or spot, a region or the cheapest), divided by the "
            "GPUs. 0: no limit.",
            **MAIN_ONLY,
        )


def _numbers_asked(units: Units, priced: bool) -> dict[str, Any]:
    state = st.session_state
    per_node, per_gpu = units.from_display(state.get("min_fabric") or 0.0)
    found: dict[str, Any] = {
        "min_gpu_memory_gb": state.get("min_mem") or 0.0,
        "min_total_gpu_memory_gb": state.get("min_total_mem") or 0.0,
        "min_fabric_gbits_per_s_per_node": per_node,
        "min_fabric_gbytes_per_s_per_gpu": per_gpu,
    }
    if priced:
        price = state.get("max_price") or 0.0
        found["max_usd_per_gpu_hour"] = price if price > 0 else None
    return found


#: Llama 3.1 405B's pre-training budget, billions of tokens ("over 15 trillion tokens", Meta's Llama 3
#: paper, arXiv 2407.21783, section 3.1: 15.6T): the train question plans it on a token budget.
LLAMA_405B_TOKENS_B = 15_600.0

#: Questions asked often, each one pick away: label → the sidebar values that ask it.
READY: dict[str, dict[str, object]] = {
    "Serve Llama 3.1 70B: what to rent, what it costs": {
        "mode": PLAN, "model": "llama-3.1-70b", "task": "Serve", "by": "cost",
    },
    "Train Llama 3.1 405B: what to rent, what it costs": {
        "mode": PLAN, "model": "llama-3.1-405b", "task": "Train", "by": "cost",
        "train_tokens": LLAMA_405B_TOKENS_B,
    },
    "8-GPU NVSwitch boxes, fastest fabric first": {
        "mode": LINKS, "q": "8-GPU NVSwitch", "sort": "fabric, fastest first",
    },
    "8 GPUs, NVSwitch, fabric ≥ 3,200 Gb/s, cheapest first": {
        "mode": LINKS, "q": "8-GPU NVSwitch", "unit": "Gb/s", "per": "node", "min_fabric": 3200.0,
        "sort": "price per GPU-hour, cheapest first",
    },
    "Cheapest fabric: USD per GPU-hour per fabric GB/s": {
        "mode": LINKS, "sort": "price per fabric GB/s, cheapest first",
    },
}  # fmt: skip


#: What a ready question starts from: no filter, GB/s per GPU.
UNFILTERED: dict[str, object] = {
    "q": "", "provider": [], "gpus": [], "link": [], "fabric": [], "peer": [], "domain": "any",
    "min_fabric": 0.0, "max_price": 0.0, "unit": "GB/s", "per": "GPU", "min_mem": 0.0, "min_total_mem": 0.0,
    "region": ANY_REGION, "price_kind": "on-demand", "train_tokens": 0.0, "days": 0.0, "tpot": 0.0,
    "ttft": 0.0, "train_gpus": 1024,
}  # fmt: skip


def _ask(label: str | None) -> None:
    """Set the sidebar to a ready question (``READY``) on no filter; the widgets then put it in the URL
    (and ``_link_unbound`` what no widget on the page holds yet)."""
    whole_page()
    if label in READY:
        for key, value in {**UNFILTERED, **READY[label]}.items():
            st.session_state[key] = value
        _link_unbound(READY[label])
    st.session_state["ready"] = None  # a menu: the widgets below now hold the question


def _link_unbound(asked: dict[str, object]) -> None:
    """Write into the URL the values of a ready question whose widgets the page did not draw the run
    before, and drop from it the filters the question resets there.

    A bound widget writes a value set from code into the URL only if it was drawn on the run before,
    and a widget the question brings on is not: the token budget of "Train Llama 3.1 405B" (from the
    serving view), the link view's order (from the plan view), the model, task and order of a plan
    (from the link view). The URL lacked them, and a copied link opened another view (the 405B
    trained on 20 tokens per parameter: 8.1e12 tokens, 192 days, $23.0M instead of 1.56e13 tokens,
    370 days, $44.1M). A key a widget holds now is bound, and Streamlit refuses to set it: that
    widget puts the question's value in the URL itself."""
    for key, value in {**UNFILTERED, **asked}.items():
        with contextlib.suppress(StreamlitAPIException):  # bound: its widget writes it
            if key in asked and asked[key] != UNFILTERED.get(key):
                st.query_params[key] = [str(v) for v in value] if isinstance(value, list) else str(value)
            elif key in st.query_params:
                del st.query_params[key]


def mode() -> str:
    """A ready question to start from, and how the Ranking tab ranks (``MODES``): plan a model, or
    show the links only; in the URL."""
    st.sidebar.header("Question")
    st.sidebar.selectbox(
        "Start from a question",
        list(READY),
        index=None,
        placeholder="or set the question below",
        key="ready",
        on_change=lambda: _ask(st.session_state.get("ready")),
    )
    choice = st.sidebar.radio(
        "Rank instances by", list(MODES), captions=MODE_CAPTIONS, key="mode", **WHOLE_PAGE
    )
    return MODES[choice or PLAN]


def question(facets: dict[str, list], priced: bool, regions: list[str] | None = None) -> Question:
    """Draw the filters and units (every widget also lives in the URL) and return what they ask."""
    sb = st.sidebar
    sb.header("Filters")
    sb.text_input(
        "Search", key="q", bind=BIND, placeholder="p5.48xlarge, a3-highgpu-8g", help=SEARCH_HELP,
        on_change=_searched,
    )  # fmt: skip
    problem = search_problem(st.session_state.get("q") or "")
    st.session_state[SEARCH_PROBLEM_KEY] = bool(problem)
    if problem:  # our words and counts only, never the text
        sb.error(problem)
    _lists(facets)
    _memory()
    _units()
    _numbers(units_asked(), priced)
    if priced:
        _prices(regions or [])
    sb.header("Count")
    sb.toggle("stale rows (last refresh failed)", value=True, key="stale", **MAIN_ONLY)
    sb.toggle("curated rows (not scraped)", value=True, key="curated", help=CURATED_HELP, **MAIN_ONLY)
    sb.toggle(
        "values inferred from GPU datasheets",
        value=True,
        key="inferred",
        help="Off: only bandwidths the provider states count; inferred ones count as missing.",
        **MAIN_ONLY,
    )
    return asked(facets, priced)


def asked(facets: dict[str, list], priced: bool) -> Question:
    """What the sidebar's widgets ask now, read from the session state: the same in a full run (after
    ``question`` drew them) and in the main area's own reruns (``MAIN``), which do not draw them."""
    state = st.session_state
    search = state.get("q") or ""
    units = units_asked()
    numbers = _numbers_asked(units, priced)
    if priced:
        numbers |= _prices_asked()
    filters = Filters(
        search="" if search_problem(search) else search,
        **_lists_asked(facets),
        **numbers,
        include_stale=state.get("stale", True),
        include_curated=state.get("curated", True),
        include_inferred=state.get("inferred", True),
    )
    return Question(filters=filters, units=units)
