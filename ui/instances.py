"""The instance picker, the Instance tab (one instance's cliff with its expected and measured marks,
its plan, prices, readings and every claim behind it) and the Compare tab (2-4 instances side by
side, one line per level, in the same units, on one axis)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from catalog.read.queries import CLIFF_LEVELS
from normalize.vocab import FABRIC_LABELS, LINK_LABELS, Fabric, Link
from records.documents import is_copy
from ui import charts, measures, prices, tables
from ui.measures import Loader
from ui.sidebar import BIND
from ui.tables import figure
from ui.text import (
    BASIS_HELP,
    field_label,
    link_or_none,
    show,
    show_all,
    source_link,
    source_text,
    when,
    yes_no_unknown,
)
from ui.units import Units

#: What the cliff chart's bars and marks mean (below every cliff chart).
CHART_KEY = (
    "Bars are what the pages claim, one way (a bidirectional GPU-to-GPU claim is drawn at half; pale "
    "dashed: inferred from the GPU datasheet; 'missing': no figure stated or inferred); triangles are "
    "what a provider's health check expects, diamonds what a tool measured on the instance, one way too "
    "(hover for the reading, the tool, the date and the source), so a bar and a mark compare like with "
    "like."
)
#: Said under a chart drawn in other units than GB/s per GPU.
NO_MEMORY_BAR = (
    "GPU memory (HBM) is a memory's bandwidth, not a link: it is drawn and shown only in GB/s per GPU."
)
#: How each level of the cliff is named, with the direction of its figure.
LEVEL_WORDS = dict(
    zip(
        CLIFF_LEVELS,
        ("GPU memory (HBM)", "GPU-to-GPU, one way", "fabric, one way", "front-end, one way"),
        strict=True,
    )
)
MAX_COMPARED = 4
#: Options of the instance pickers (the first rows of the table); more would make every page
#: update heavy on a large catalog.
MAX_OPTIONS = 1_000
VIEW_KEY = "view"


def label(provider: str, instance_type: str) -> str:
    """How the pickers (and the URL) name an instance."""
    return f"{instance_type} ({provider})"


#: The last instance picked in this session: Escape in the picker clears it (Streamlit's selectbox),
#: and the Instance tab would fall back to the table's first row, a row the user never asked for.
KEPT_KEY = "instance_kept"


def _switch_to(view: str) -> None:
    st.session_state[VIEW_KEY] = view


def _picked_instance() -> None:
    """The instance picker changed: keep a pick, and restore the last one when the box was cleared."""
    picked = st.session_state.get("instance")
    if picked is None and st.session_state.get(KEPT_KEY):
        st.session_state["instance"] = st.session_state[KEPT_KEY]
    elif picked is not None:
        st.session_state[KEPT_KEY] = picked
    _switch_to("Instance")


def _options(shown: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Picker options: the first ``MAX_OPTIONS`` rows of the table, plus any instance the URL or
    the session already holds (so a shared link keeps its picks however long the table is)."""
    head = shown.head(MAX_OPTIONS)
    pairs = {label(p, i): (p, i) for p, i in zip(head["provider"], head["instance"], strict=True)}
    held = st.session_state.get("compare") or []
    wanted = {*st.query_params.get_all("instance"), *st.query_params.get_all("compare"), *held}
    wanted |= {st.session_state.get("instance")} - {None}
    if wanted - pairs.keys():
        labels = shown["instance"] + " (" + shown["provider"] + ")"
        extra = shown[labels.isin(wanted - pairs.keys())]
        pairs |= {label(p, i): (p, i) for p, i in zip(extra["provider"], extra["instance"], strict=True)}
    return pairs


def pickers(shown: pd.DataFrame) -> tuple[tuple[str, str] | None, list[tuple[str, str]]]:
    """The selected instance and the compared ones, chosen among the rows shown (in the URL too).

    Until the user picks, the instance is the first row of the table and the comparison its first
    rows (up to ``MAX_COMPARED``). Picking switches to the tab that shows the pick. The options are
    the table's first ``MAX_OPTIONS`` rows: the search box reaches any other.
    """
    pairs = _options(shown)
    names = sorted(pairs, key=str.lower)
    help_text = f"Among the first {MAX_OPTIONS:,} rows of the table; search to reach others."
    cols = st.columns([2, 3])
    picked = cols[0].selectbox(
        "Instance",
        names,
        index=None,
        placeholder="the first row of the table",
        key="instance",
        bind=BIND,
        help=help_text if len(shown) > MAX_OPTIONS else None,
        on_change=_picked_instance,
    )
    if picked is not None:
        st.session_state[KEPT_KEY] = picked
    compared = cols[1].multiselect(
        f"Compare (2 to {MAX_COMPARED})",
        names,
        max_selections=MAX_COMPARED,
        placeholder="the first rows of the table",
        key="compare",
        bind=BIND,
        help=help_text if len(shown) > MAX_OPTIONS else None,
        on_change=_switch_to,
        args=("Compare",),
    )
    first = [
        (p, i)
        for p, i in zip(
            shown["provider"].head(MAX_COMPARED), shown["instance"].head(MAX_COMPARED), strict=True
        )
    ]
    selected = pairs.get(picked) if picked else (first[0] if first else None)
    chosen = [pairs[name] for name in compared if name in pairs] or first
    return selected, chosen


def _level_units(level: str, units: Units) -> Units:
    return charts.MEMORY_UNITS if level == CLIFF_LEVELS[0] else units


def as_claimed(cliffs: pd.DataFrame, units: Units) -> list[str]:
    """Each level's figure as the claim states it, with its unit and direction ("900 GB/s per GPU
    two-way"); HBM always in GB/s per GPU."""
    texts = []
    for level, value, direction, count in zip(
        cliffs["level"], cliffs["gbytes_per_s"], cliffs["direction"], cliffs["gpu_count"], strict=True
    ):
        shown = _level_units(level, units)
        number = shown.convert(pd.Series([value], dtype="float64"), pd.Series([count], dtype="float64"))[0]
        way = "" if direction == "none" else f" {direction}"
        texts.append(tables.MISSING if pd.isna(number) else f"{figure(number)} {shown.label}{way}")
    return texts


def one_way_figures(cliffs: pd.DataFrame, units: Units) -> pd.Series:
    """Each level one way in ``units`` (HBM in GB/s per GPU, and only when ``units`` are those)."""
    values = units.convert(charts.one_way(cliffs["gbytes_per_s"], cliffs["direction"]), cliffs["gpu_count"])
    return values.where((cliffs["level"] != CLIFF_LEVELS[0]) | charts.memory_drawn(units))


def levels_frame(cliffs: pd.DataFrame, units: Units) -> pd.DataFrame:
    """One instance's levels as shown: one way in ``units``, as claimed (unit and direction), basis,
    what carries it, how, source."""
    return pd.DataFrame(
        {
            "level": cliffs["level"].map(LEVEL_WORDS),
            f"{units.label}, one way": one_way_figures(cliffs, units),
            "as claimed": as_claimed(cliffs, units),
            "basis": cliffs["basis"],
            "carried by": cliffs["link"],
            "how (per GPU)": cliffs["detail"],
            "quote": cliffs["quote"],
            "source": cliffs["source_url"].map(link_or_none),
        }
    )


def compare_frame(
    cliffs: pd.DataFrame, units: Units, originals: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """One line per level; per instance a cell with its figure as claimed (unit and direction), basis
    and carrier ("400 GB/s per node one-way · stated · EFA"), its source as text (a local copy in
    words, with the page it copies from ``originals``) and the source's web page as a link. HBM stays
    in GB/s per GPU."""
    data = cliffs.assign(claimed=as_claimed(cliffs, units))
    frame = pd.DataFrame({"level": [LEVEL_WORDS[name].split(",")[0] for name in CLIFF_LEVELS]})
    for (provider, instance_type), rows in data.groupby(["provider", "instance_type"], sort=False):
        rows = rows.set_index("level").reindex(list(CLIFF_LEVELS))
        name = label(str(provider), str(instance_type))
        frame[name] = [
            f"{claimed} · {basis} · {link}"
            for claimed, basis, link in zip(
                rows["claimed"], rows["basis"], rows["link"].fillna(""), strict=True
            )
        ]
        urls = rows["source_url"]
        frame[f"{name} source"] = urls.map(lambda url: source_text(url, originals)).to_numpy()
        frame[f"{name} source link"] = urls.map(lambda url: source_link(url, originals)).to_numpy()
    return frame


def _chart(load: Loader, chosen: list[tuple[str, str]], cliffs: pd.DataFrame, units: Units) -> None:
    """The cliffs of ``chosen`` (bars: the claims) with their expected and measured readings marked."""
    data = charts.cliff_data(cliffs, units)
    marks = charts.marks_data(load("cliff_marks", chosen), cliffs, units)
    spec = charts.cliff_spec(data, units, st.context.theme.type, marks)
    st.vega_lite_chart(data, spec, width="stretch")


def _link_columns(frame: pd.DataFrame, width: int = 130) -> dict:
    return {
        c: st.column_config.LinkColumn(c, width=width, display_text=tables.LINK_TEXT)
        for c in frame.columns
        if c in ("source", "source link") or c.endswith(" source link")
    }


def _price_text(prices: pd.DataFrame, column: str, region: str, gpus: object) -> str:
    found = prices[prices[column].notna()]
    if region:
        found = found[found["region"].str.lower() == region.lower()]
    if found.empty:
        return tables.MISSING + (f" (none in {region})" if region else " (none published)")
    best = found.sort_values(column, kind="stable").iloc[0].to_dict()
    per_gpu = (
        f", {best[column] / float(gpus):,.2f} per GPU-hour" if isinstance(gpus, float | int) and gpus else ""
    )
    return f"{best[column]:,.2f} USD/hour in {best['region']}{per_gpu}"


def memory_text(row: dict) -> str:
    """A row's GPU memory compared like for like: per GPU the datasheet's size (80 GB for an H100,
    whether its page says "80 GB" or "80 GiB"; the page's own figure beside it when it differs), and
    in all; a fraction of a GPU, its slice's memory."""
    per_gpu, total, stated = (
        row.get(k) for k in ("gpu_memory_per_gpu_gb", "gpu_memory_total_gb", "gpu_memory_gb")
    )
    if per_gpu is None or pd.isna(per_gpu):
        per_gpu, total = stated, None
    if per_gpu is None or pd.isna(per_gpu):
        return tables.MISSING
    count = row.get("gpu_count")
    if count is not None and pd.notna(count) and count < 1:
        return f"{figure(per_gpu)} GB, its share of one {row['gpu_model']} ({figure(count)} of the GPU)"
    text = f"{figure(per_gpu)} GB per GPU"
    if total is not None and pd.notna(total):
        text += f", {figure(total)} GB in all"
    if stated is not None and pd.notna(stated) and abs(stated - per_gpu) > 0.01 * per_gpu:
        text += f" (the page's figure: {figure(stated)} GB per GPU)"
    return text


def decide_frame(
    load: Loader,
    chosen: list[tuple[str, str]],
    ranked: pd.DataFrame,
    planned: pd.DataFrame | None = None,
    region: str = "",
) -> pd.DataFrame:
    """What a choice turns on, per compared instance: GPUs, GPU memory, the on-demand and the spot
    price (in ``region`` when one is chosen, else the cheapest region, with the region said), and the
    planned model's result on it when a model is planned."""
    frame: dict[str, list[str]] = {
        "": [
            "GPUs",
            "GPU memory",
            "on-demand (USD)",
            "spot (USD)",
            *(["plan"] if planned is not None else []),
        ]
    }
    for provider, instance_type in chosen:
        found = ranked[(ranked["provider"] == provider) & (ranked["instance_type"] == instance_type)]
        if found.empty:
            continue
        row = found.iloc[0].to_dict()
        count = row["gpu_count"]
        gpus = f"{figure(count)} × {row['gpu_model']}" if pd.notna(count) else tables.MISSING
        prices_found = load("region_prices", provider, instance_type)
        cells = [
            gpus,
            memory_text(row),
            _price_text(prices_found, "usd_per_hour", region, count),
            _price_text(prices_found, "spot_usd_per_hour", region, count),
        ]
        if planned is not None:
            mine = planned[(planned["provider"] == provider) & (planned["instance_type"] == instance_type)]
            cells.append(str(mine.iloc[0]["verdict"]) if not mine.empty else tables.MISSING)
        frame[label(provider, instance_type)] = cells
    return pd.DataFrame(frame)


def show_compare(
    load: Loader,
    chosen: list[tuple[str, str]],
    units: Units,
    picked: bool,
    ranked: pd.DataFrame | None = None,
    planned: pd.DataFrame | None = None,
    region: str = "",
) -> None:
    """The Compare tab: what a choice turns on (GPUs, memory, prices, the plan), then the links."""
    st.subheader("Side by side")
    if not chosen:
        st.info("No instance matches the filters, so there is nothing to compare.")
        return
    if not picked:
        st.caption(
            f"Showing the first {len(chosen)} rows of the table. Pick 2 to {MAX_COMPARED} instances above "
            "to compare others (or search for them by name, separated by commas)."
        )
    if ranked is not None:
        decide = decide_frame(load, chosen, ranked, planned, region)
        wide = {c: st.column_config.TextColumn(width=260) for c in decide.columns[1:]}
        st.dataframe(decide, hide_index=True, column_config=wide, placeholder=tables.MISSING)
        st.caption(
            "Prices as published, in USD: the cheapest region unless the sidebar names one; the plan is "
            "the model and workload of the sidebar, on this instance."
        )
    cliffs = load("cliffs", chosen)
    originals: Mapping[str, str] = load("copy_originals")  # type: ignore[assignment]  # a dict
    frame = compare_frame(cliffs, units, originals)
    # Per instance: its figures, its source in words and the source's page (``compare_frame``); two
    # instances fit beside the sidebar at 1280 pixels (a double-click reads a cell in full).
    widths = {c: st.column_config.TextColumn(width=210) for c in frame.columns[1::3]} | {
        c: st.column_config.TextColumn(width=140, help=tables.SOURCE_HELP) for c in frame.columns[2::3]
    }
    st.dataframe(
        frame, hide_index=True, column_config=widths | _link_columns(frame, 110), placeholder=tables.MISSING
    )
    tables.downloads(frame, "compare", "compare")
    _chart(load, chosen, cliffs, units)
    memory = "" if charts.memory_drawn(units) else f" {NO_MEMORY_BAR}"
    st.caption(
        f"Every link in {units.label}, one way, on the same log axis for every instance. {CHART_KEY}{memory}"
    )


def _summary(row: pd.Series) -> str:
    count = figure(row["gpu_count"]) if pd.notna(row["gpu_count"]) else "? (not stated)"
    gpu = row["gpu_model"] if isinstance(row["gpu_model"], str) else "unknown GPU"
    domain = (
        f" {int(row['scale_up_domain_gpus'])}-GPU domain" if pd.notna(row["scale_up_domain_gpus"]) else ""
    )
    link = LINK_LABELS.get(Link(row["intra_node_link"]), row["intra_node_link"])
    if row["intra_node_link"] == "unknown":
        link = "link not stated"
    fabric = FABRIC_LABELS.get(Fabric(row["inter_node_fabric"]), row["inter_node_fabric"])
    if row["inter_node_fabric"] == "unknown":
        fabric = "not stated"  # the label "unknown fabric" after "fabric" read "fabric unknown fabric"
    return (
        f"{count} × {gpu} · GPU-to-GPU {link}{domain} · fabric {fabric} · "
        f"TP confined to one node: {yes_no_unknown(row['confined_to_one_node'])}"
    )


def show_instance(
    load: Loader,
    selected: tuple[str, str] | None,
    ranked: pd.DataFrame,
    units: Units,
    planned: pd.DataFrame | None = None,
) -> None:
    """The Instance tab: the selected instance's plan verdict (when a model is planned), its cliff
    with expected and measured marks, its levels with sources, its prices per region, claimed vs
    expected vs measured, and its claims."""
    if selected is None:
        st.info("No instance matches the filters, so there is no instance to show.")
        return
    provider, instance_type = selected
    # The name, the summary, staleness, flags and the plan's verdict in one element (each element
    # more is redrawn on every rerun); the catalog's words escaped, never markdown.
    blocks = [(label(provider, instance_type), "subheader")]
    if not st.session_state.get("instance"):
        blocks.append(("The first row of the table: pick another instance above.", "caption"))
    row = ranked[(ranked["provider"] == provider) & (ranked["instance_type"] == instance_type)].iloc[0]
    blocks.append((_summary(row), "caption"))
    if row["stale"]:
        blocks.append((f"Stale since {when(row['stale_since'])}: {row['stale_cause']}", "warning"))
    if row["flags"]:
        blocks.append((f"Flags: {row['flags']}. See the claims below and the Conflicts tab.", "caption"))
    if planned is not None:
        mine = planned[(planned["provider"] == provider) & (planned["instance_type"] == instance_type)]
        if not mine.empty:
            blocks.append((f"Plan: {mine.iloc[0]['verdict']}", "info"))
    show_all(blocks)
    cliffs = load("cliffs", [selected])
    _chart(load, [selected], cliffs, units)
    st.caption(CHART_KEY + ("" if charts.memory_drawn(units) else f" {NO_MEMORY_BAR}"))
    levels = levels_frame(cliffs, units)
    config = _link_columns(levels) | {
        "basis": st.column_config.TextColumn(help=BASIS_HELP),
        levels.columns[1]: st.column_config.NumberColumn(format=tables.NUMBER),
    }
    st.dataframe(levels, hide_index=True, column_config=config, placeholder=tables.MISSING)
    notes = [str(note) for note in row["notes"]]
    if notes:
        show("Notes: " + "; ".join(notes))
    prices.show_prices(load, provider, instance_type)
    measures.show_readings(load, provider, instance_type)
    show_claims(load, provider, instance_type)


CLAIM_HEADERS = {
    "field": "figure",
    "value": "value",
    "read_from": "read from",
    "basis": "basis",
    "quote": "quote (the source's own words)",
    "context": "where on the page",
    "source_url": "source",
    "provenance": "what the quote is",  # catalogs whose claims record their evidence (issue 10)
    "qualifiers": "qualifiers",
    "unit_suspect": "unit corrected",
    "fetched_at": "read at (UTC)",
    "valid_from": "valid from (UTC)",
    "valid_to": "valid to (UTC)",
}


def read_from(claim: dict) -> str:
    """What kind of document a claim was read from, in a few words, so the same figure from the
    provider's page and from a third-party copy of it do not look like duplicates."""
    url, original = str(claim.get("source_url") or ""), claim.get("original_url")
    if claim.get("evidence") == "datasheet":
        return "the GPU's datasheet"
    if claim.get("basis") == "expected":
        return "a health check or topology file"
    if is_copy(url):
        return "a third-party copy of " + (str(original) if isinstance(original, str) else "a page")
    if claim.get("evidence") == "paraphrase":
        return "a page, paraphrased"
    return "the page itself"


def claims_frame(claims: pd.DataFrame, history: bool) -> pd.DataFrame:
    """Claims as shown: figure names in words, values rounded with their unit, links checked."""
    values = tables.claim_values(claims)
    frame = claims.assign(
        field=claims["field"].map(field_label),
        value=values,
        read_from=[read_from(row) for row in claims.to_dict("records")],
        source_url=claims["source_url"].map(link_or_none),
        unit_suspect=claims["unit_suspect"].map(yes_no_unknown),
    )
    keep = [c for c in CLAIM_HEADERS if c in frame and (history or c not in ("valid_from", "valid_to"))]
    return frame[keep].rename(columns=CLAIM_HEADERS)


def show_claims(load: Loader, provider: str, instance_type: str) -> None:
    """Every claim behind one instance, with its quote and source, and its history on request."""
    st.markdown("**Claims behind it**")
    history = st.toggle("include closed claims (history)", key="claim_history")
    claims = load("claims", provider, instance_type, history)
    if claims.empty:
        st.info("No claims recorded for this row.")
        return
    st.caption(
        "Every figure with the exact text it came from. Inferred claims quote the GPU datasheet line; "
        "a unit-corrected claim says why in its qualifiers."
    )
    frame = claims_frame(claims, history)
    st.dataframe(
        frame,
        hide_index=True,
        placeholder=tables.MISSING,
        column_config={
            CLAIM_HEADERS["basis"]: st.column_config.TextColumn(help=BASIS_HELP),
            CLAIM_HEADERS["quote"]: st.column_config.TextColumn(width="large"),
            CLAIM_HEADERS["source_url"]: st.column_config.LinkColumn(display_text=r"https?://([^/]+)/.*"),
        },
    )
    tables.downloads(frame, f"claims-{provider}-{instance_type}", "claims")
