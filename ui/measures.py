"""Claimed, expected and measured (``catalog.read.measurements``): the Measurements tab (counts per
source, which rows shown have which kind of reading, the largest gaps, the readings no row matches)
and one instance's readings beside its claims in the Instance tab. Verdicts, tools, quotes and
locators come from the documents and are shown as table cells (text), never as markdown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from ui import tables
from ui.data import derived
from ui.tables import figure
from ui.text import link_or_none, plural

#: A cached read-side question by name (``ui.data.Catalog.load``).
Loader = Callable[..., pd.DataFrame]
#: The licence note shown wherever Spare Cores' readings are (its data is CC BY-SA 4.0).
SPARE_CORES = (
    "Measured GPU-to-GPU copies: Spare Cores sc-inspector-data, CC BY-SA 4.0 "
    "(https://github.com/SpareCores/sc-inspector-data); figures derived from them are shared alike."
)
#: Rows of the largest-gaps table.
WORST_ROWS = 15
#: ``worst_ratios``' limit when asking for every gap (filtered here to the rows shown).
EVERY_GAP = 10**9
SOURCE = st.column_config.LinkColumn("source", display_text=r"https?://([^/]+)/.*")
TEXT_WIDE = st.column_config.TextColumn(width="large")


def _when(value: Any) -> str | None:
    return f"{pd.Timestamp(value):%Y-%m-%d}" if value is not None and pd.notna(value) else None


def _tool(tools: pd.Series, versions: pd.Series) -> list[str | None]:
    return [
        None if not isinstance(t, str) else (f"{t} {v}" if isinstance(v, str) and v else t)
        for t, v in zip(tools, versions, strict=True)
    ]


#: The unit of a count reading (``measurements.metric``), said with the number.
COUNT_UNITS = {"nic_count": "NICs", "nvlink_count": "NVLinks"}
#: What a reading's figure is per, by its metric: a claim per GPU or per node, a copy per GPU, a
#: line rate per port.
SCOPES = {
    "intra_node_gbytes_per_s": "per GPU",
    "inter_node_gbits_per_s": "per node",
    "host_to_gpu_gbytes_per_s": "per GPU",
    "gpu_to_host_gbytes_per_s": "per GPU",
    "gpu_to_gpu_gbytes_per_s": "per GPU pair",
    "gpu_to_gpu_each_way_gbytes_per_s": "per GPU pair",
    "ib_port_gbits_per_s": "per port",
    "ib_write_gbits_per_s": "per port",
    "ib_read_gbits_per_s": "per port",
    "ib_send_gbits_per_s": "per port",
    "nic_gbits_per_s": "per NIC",
}


def reading_figure(row: dict) -> str | None:
    """A reading as a figure with its unit and what it is per: a per-port rate times its ports with
    the total ("32 × 100 Gbit/s = 3,200 Gbit/s per node"), a count with what it counts ("32 NICs"),
    a claim per GPU or per node ("900 GB/s per GPU")."""
    metric = str(row.get("metric") or "")
    if not known_number(row.get("value")):
        text = row.get("value_text")
        return text if isinstance(text, str) else None
    value = float(row["value"])
    if metric in COUNT_UNITS:
        return figure(value, COUNT_UNITS[metric])
    ports = float(row["port_count"]) if known_number(row.get("port_count")) else 1.0
    if metric == "ib_port_gbits_per_s" and ports > 1:
        return f"{int(ports)} × {figure(value, 'Gbit/s')} = {figure(value * ports, 'Gbit/s')} per node"
    scope = SCOPES.get(metric, "")
    return figure(value, row.get("unit")) + (f" {scope}" if scope else "")


def reading_direction(row: dict) -> str | None:
    """The direction of a reading's figure: as recorded, else one-way for a line rate or a NIC test
    (each direction has it) and for NCCL's bus bandwidth (what each GPU sends, and receives, per
    second); None for a count or a state."""
    direction = row.get("direction")
    if isinstance(direction, str) and direction:
        return direction
    metric = str(row.get("metric") or "")
    if metric.endswith("_gbits_per_s") or "busbw" in metric:
        return "one-way"
    return None


def known_number(value: Any) -> bool:
    return value is not None and not pd.isna(value)


def _attribute(sources: pd.Series) -> None:
    if (sources == "sparecores").any():
        st.caption(SPARE_CORES)


def readings_frame(found: pd.DataFrame) -> pd.DataFrame:
    """``side_by_side`` as shown: the claim first, then each reading with its ratio and verdict."""
    ratio = (found["ratio"].astype("float64") * 100).round(0)
    return pd.DataFrame(
        {
            "level": found["level"],
            "kind": found["kind"],
            "figure": [reading_figure(row) for row in found.to_dict("records")],
            "direction": [reading_direction(row) for row in found.to_dict("records")],
            "of the claim (%)": ratio,
            "verdict": found["verdict"],
            "tool": _tool(found["tool"], found["tool_version"]),
            "run on": found["run_at"].map(_when),
            "source": found["source_url"].map(link_or_none),
            "where in the source": found["locator"],
            "quote": found["quote"],
        }
    )


def show_readings(load: Loader, provider: str, instance_type: str) -> None:
    """One instance: claimed, expected and measured side by side, with each reading's verdict."""
    st.markdown("**Claimed, expected, measured**")
    found = load("side_by_side", provider, instance_type)
    if not (found["kind"] != "claimed").any():
        st.caption("No provider health check or measurement names this instance: only the claims stand.")
        return
    st.caption(
        "The page's figures, then what the provider's health checks expect and what tools measured on "
        "the instance, each against the claim in the same direction (a one-way copy against half of a "
        "bidirectional claim)."
    )
    frame = readings_frame(found)
    st.dataframe(
        frame,
        hide_index=True,
        placeholder=tables.MISSING,
        column_config={"verdict": TEXT_WIDE, "source": SOURCE, "where in the source": TEXT_WIDE},
    )
    _attribute(found["source"])
    tables.downloads(frame, f"readings-{provider}-{instance_type}", "readings")


def _shown(frame: pd.DataFrame, ranked: pd.DataFrame) -> pd.DataFrame:
    keys = ranked[["provider", "instance_type"]].drop_duplicates()
    return frame.merge(keys, on=["provider", "instance_type"], how="inner")


def worst_shown(worst: pd.DataFrame, ranked: pd.DataFrame) -> pd.DataFrame:
    """The largest gaps among the rows ``ranked`` shows, lowest ratio first."""
    return _shown(worst, ranked).sort_values(["ratio", "provider", "instance_type"]).head(WORST_ROWS)


def shown_coverage(coverage: pd.DataFrame, ranked: pd.DataFrame) -> pd.DataFrame:
    """``coverage_frame`` of the rows ``ranked`` shows."""
    return coverage_frame(_shown(coverage, ranked))


def coverage_frame(coverage: pd.DataFrame) -> pd.DataFrame:
    """Which rows have which kind of reading, from which sources."""
    return pd.DataFrame(
        {
            "instance": coverage["instance_type"],
            "provider": coverage["provider"],
            "expected readings": coverage["expected_readings"],
            "measured readings": coverage["measured_readings"],
            "sources": coverage["sources"].map(lambda s: ", ".join(s) if s is not None else ""),
            "GPU-to-GPU claim basis": coverage["intra_node_basis"],
            "fabric claim basis": coverage["inter_node_basis"],
        }
    )


def gaps_frame(worst: pd.DataFrame) -> pd.DataFrame:
    """The largest gaps: per instance, level and kind, the best reading against its claim."""
    return pd.DataFrame(
        {
            "instance": worst["instance_type"],
            "provider": worst["provider"],
            "level": worst["level"],
            "kind": worst["kind"],
            "of the claim (%)": (worst["ratio"].astype("float64") * 100).round(0),
            "verdict": worst["verdict"],
            "tool": _tool(worst["tool"], worst["tool_version"]),
            "run on": worst["run_at"].map(_when),
            "source": worst["source_url"].map(link_or_none),
        }
    )


#: Headers of the per-source counts and of the unmatched readings (never a raw column name).
COUNT_HEADERS = {"matched_instances": "matched instances", "instances": "instance types"}
UNMATCHED_HEADERS = {"instance_type": "instance type", "metrics": "what they read"}


def show(load: Loader, ranked: pd.DataFrame) -> None:
    """The Measurements tab: the largest gaps first, then coverage, counts per source, unmatched."""
    st.subheader("Claimed, expected, measured")
    counts = load("measurement_counts")
    if counts.empty:
        st.info("This catalog holds no expected or measured readings.")
        return
    st.caption(
        "Expected: what a provider's own health checks and topology files expect an instance to deliver. "
        "Measured: what a tool reported on a real instance. Neither overwrites a claim; each is set "
        "against the claim in the same direction. Coverage and gaps follow the sidebar's filters."
    )
    worst = derived(worst_shown, load("worst_ratios", EVERY_GAP), ranked)
    gaps = derived(gaps_frame, worst)
    st.markdown("**Largest gaps** (the best reading of each instance, level and kind, lowest first)")
    st.dataframe(
        gaps,
        hide_index=True,
        placeholder=tables.MISSING,
        column_config={"verdict": TEXT_WIDE, "source": SOURCE},
    )
    _attribute(worst["source"])
    coverage = derived(shown_coverage, load("coverage"), ranked)
    st.markdown(f"**Coverage**: {plural(len(coverage), 'row')} shown with readings")
    st.dataframe(coverage, hide_index=True, placeholder=tables.MISSING, lazy=len(coverage) > tables.LAZY_ROWS)
    tables.downloads(coverage, "coverage", "coverage")
    st.markdown("**Readings per source** (the whole catalog; matched: about a catalog row)")
    st.dataframe(counts.rename(columns=COUNT_HEADERS), hide_index=True)
    unmatched = load("unmatched")
    st.markdown(f"**Readings no catalog row matches** ({plural(len(unmatched), 'instance type')}, kept)")
    shown = unmatched.assign(
        metrics=unmatched["metrics"].map(lambda m: ", ".join(m) if m is not None else "")
    ).rename(columns=UNMATCHED_HEADERS)
    st.dataframe(shown, hide_index=True, placeholder=tables.MISSING, lazy=len(shown) > tables.LAZY_ROWS)
    if (counts["source"] == "sparecores").any() and not (worst["source"] == "sparecores").any():
        st.caption(SPARE_CORES)
