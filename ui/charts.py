"""The bandwidth cliff as a Vega-Lite spec: memory > GPU-to-GPU > fabric > front-end, one bar per
instance and level, on a log axis that is the same for every instance (``AXIS_RANGES``), so bars can
be compared between instances and between views.

Every link is drawn one way, so bars and readings compare like with like: a bidirectional GPU-to-GPU
claim (900 GB/s on Hopper) is drawn at half (450), beside a one-way fabric and a one-way measured
copy. HBM is a memory's bandwidth, not a link: it is drawn only in GB/s per GPU (in Gb/s per node
it would read as a network's figure).

The spec is a plain dict for ``st.vega_lite_chart`` (no Altair import: the app starts faster). Text
drawn on the chart takes its colour from the theme, so it reads on a dark background too.
"""

from __future__ import annotations

import pandas as pd

from catalog.read.queries import CLIFF_LEVELS
from catalog.read.text import fmt
from ui.units import Units

#: What one way is of a figure stated in each direction convention (``queries.CLIFF_DIRECTIONS``).
ONE_WAY_SHARE = {"two-way": 0.5, "one-way": 1.0, "each-way": 1.0, "none": 1.0}
#: The only units HBM is drawn in.
MEMORY_UNITS = Units()

#: The log axis per unit, (floor, top): a decade below the slowest front-end share of a fractional
#: GPU (0.3 GB/s per GPU) to a decade above the fastest HBM (8,000 GB/s per GPU on B200), and the
#: same widened for Gb/s (x 8) and per node (up to 16 GPUs). Bars beyond it are clipped.
AXIS_RANGES: dict[Units, tuple[float, float]] = {
    Units(bits=False, per_node=False): (0.1, 10_000.0),
    Units(bits=True, per_node=False): (1.0, 100_000.0),
    Units(bits=False, per_node=True): (0.1, 1_000_000.0),
    Units(bits=True, per_node=True): (1.0, 10_000_000.0),
}
#: Label colour per Streamlit theme type; unknown (the first run of a session) is a grey that reads
#: on both backgrounds.
TEXT_COLORS = {"dark": "#fafafa", "light": "#31333f", None: "#808495"}
BASIS_OPACITY = {"stated": 1.0, "paraphrased": 1.0, "inferred": 0.4}
#: The cliff's levels as the app names them (the unit, per GPU or per node, is on the axis).
LEVEL_NAMES = dict(zip(CLIFF_LEVELS, ("GPU memory", "GPU-to-GPU", "fabric", "front-end"), strict=True))


def one_way(values: pd.Series, directions: pd.Series) -> pd.Series:
    """Figures stated in ``directions`` as one-way figures (a two-way total halved)."""
    share = directions.map(lambda d: ONE_WAY_SHARE.get(d, 1.0) if isinstance(d, str) else 1.0)
    return values.astype("float64") * share.astype("float64")


def memory_drawn(units: Units) -> bool:
    """Whether HBM is on the chart in ``units`` (only in GB/s per GPU)."""
    return units == MEMORY_UNITS


def _label(value: float, basis: str, unit: str, single: bool, direction: object = "one-way") -> str:
    """A bar's label: its one-way figure; alone on the chart, with the unit, and a two-way claim's
    own figure ("450 GB/s per GPU one way (900 two-way, stated)")."""
    if basis == "not-applicable":
        return "not applicable" if single else "n/a"
    if pd.isna(value):
        return "missing"
    if single:
        claimed = f"{fmt(value / ONE_WAY_SHARE['two-way'])} two-way, " if direction == "two-way" else ""
        way = "" if direction == "none" else " one way"
        return f"{fmt(value)} {unit}{way} ({claimed}{basis})"
    return fmt(value) + (" (inferred)" if basis == "inferred" else "")


def cliff_data(cliffs: pd.DataFrame, units: Units) -> pd.DataFrame:
    """The rows the chart draws: one per instance and level, one way, with the value in ``units`` and a
    label (no HBM row unless ``units`` are GB/s per GPU)."""
    if not memory_drawn(units):
        cliffs = cliffs[cliffs["level"] != CLIFF_LEVELS[0]]
    floor = AXIS_RANGES[units][0]
    value = units.convert(one_way(cliffs["gbytes_per_s"], cliffs["direction"]), cliffs["gpu_count"])
    instance = cliffs["instance_type"] + " (" + cliffs["provider"] + ")"
    single = instance.nunique() == 1
    labels = [
        _label(v, b, units.label, single, d)
        for v, b, d in zip(value, cliffs["basis"], cliffs["direction"], strict=True)
    ]
    return pd.DataFrame(
        {
            "instance": instance,
            "level": cliffs["level"].map(LEVEL_NAMES),
            "value": value,
            "basis": cliffs["basis"],
            "link": cliffs["link"],
            "label": labels,
            "label_y": value.where(value.notna(), floor * 1.6),
        }
    )


_TOOLTIP = [
    {"field": "instance", "type": "nominal"},
    {"field": "level", "type": "nominal"},
    {"field": "basis", "type": "nominal"},
    {"field": "link", "type": "nominal", "title": "carried by"},
]
_DASHES = {"domain": list(BASIS_OPACITY), "range": [[1, 0], [1, 0], [6, 4]]}


def _bars(x: dict, offset: dict, scale: dict, floor: float, units: Units, legend_offset: int = 0) -> dict:
    opacity = {"domain": list(BASIS_OPACITY), "range": list(BASIS_OPACITY.values())}
    return {
        "mark": {"type": "bar", "clip": True, "strokeWidth": 2},
        "transform": [{"filter": "isValid(datum.value)"}],
        "encoding": {
            "x": {**x, "axis": {"labelAngle": 0, "labelLimit": 200}},
            "xOffset": offset,
            "y": {
                "field": "value",
                "type": "quantitative",
                "scale": scale,
                "title": f"{units.label}, one way (log)",
            },
            "y2": {"datum": floor},
            # One instance a line: in a row, four long names ran past a phone's screen.
            "color": {
                **offset,
                "title": None,
                "legend": {
                    "orient": "top",
                    "direction": "vertical",
                    "labelLimit": 250,  # a longer name ends in "…" (its bars tell it in full on hover)
                    "offset": legend_offset,
                },
            },
            "stroke": {**offset, "legend": None},
            "fillOpacity": {"field": "basis", "type": "nominal", "scale": opacity, "title": "basis"},
            "strokeDash": {"field": "basis", "type": "nominal", "scale": _DASHES, "legend": None},
            "tooltip": [
                *_TOOLTIP[:2],
                {"field": "label", "type": "nominal", "title": f"{units.label}, one way"},
                *_TOOLTIP[2:],
            ],
        },
    }


#: The mark of each kind of reading on the cliff (bars are the claims).
MARK_SHAPES = {"expected": "triangle-down", "measured": "diamond"}


def marks_data(marks: pd.DataFrame, cliffs: pd.DataFrame, units: Units) -> list[dict]:
    """Expected and measured readings (``catalog.read.measurements.cliff_marks_for``) as chart rows in
    ``units``: instance and level as the bars name them, the value, the kind, and for the tooltip the
    reading in words, the tool, the run date and the source."""
    if marks.empty:
        return []
    counts = cliffs.drop_duplicates(["provider", "instance_type"]).set_index(["provider", "instance_type"])
    gpus = [
        counts["gpu_count"].get((p, i))
        for p, i in zip(marks["provider"], marks["instance_type"], strict=True)
    ]
    per_gpu = one_way(marks["gbytes_per_s"], marks["direction"])
    values = units.convert(per_gpu, pd.Series(gpus, index=marks.index, dtype="float64"))
    rows = []
    for (_, mark), value in zip(marks.iterrows(), values, strict=True):
        if pd.isna(value):
            continue
        rows.append(
            {
                "instance": f"{mark['instance_type']} ({mark['provider']})",
                "level": LEVEL_NAMES.get(mark["level"], mark["level"]),
                "value": float(value),
                "kind": mark["kind"],
                "reading": str(mark["label"]),
                "tool": str(mark["tool"]) if isinstance(mark["tool"], str) else "",
                "date": f"{pd.Timestamp(mark['run_at']):%Y-%m-%d}"
                if pd.notna(mark["run_at"])
                else "not stated",
                "source": str(mark["source_url"]),
            }
        )
    return rows


def _marks_layer(rows: list[dict], x: dict, offset: dict, scale: dict, color: str) -> dict:
    return {
        "data": {"values": rows},
        "mark": {"type": "point", "filled": True, "size": 110, "clip": True, "color": color, "opacity": 0.95},
        "encoding": {
            "x": x,
            "xOffset": offset,
            "y": {"field": "value", "type": "quantitative", "scale": scale},
            "shape": {
                "field": "kind",
                "type": "nominal",
                "scale": {"domain": list(MARK_SHAPES), "range": list(MARK_SHAPES.values())},
                "legend": {"orient": "bottom", "title": "readings"},  # beside the names it ran off a phone
            },
            "tooltip": [
                {"field": "instance", "type": "nominal"},
                {"field": "level", "type": "nominal"},
                {"field": "reading", "type": "nominal"},
                {"field": "tool", "type": "nominal"},
                {"field": "date", "type": "nominal", "title": "run on"},
                {"field": "source", "type": "nominal"},
            ],
        },
    }


def cliff_spec(
    data: pd.DataFrame, units: Units, theme: str | None = None, marks: list[dict] | None = None
) -> dict:
    """A grouped bar chart of ``cliff_data`` (the claims) on the fixed log axis of ``units``, with
    ``marks_data`` drawn over the bars (a shape per kind: expected, measured); label text in the
    colour of the theme (``TEXT_COLORS``)."""
    floor, top = AXIS_RANGES[units]
    scale = {"type": "log", "domain": [floor, top]}
    x = {"field": "level", "type": "nominal", "sort": list(LEVEL_NAMES.values()), "title": None}
    offset = {"field": "instance", "type": "nominal", "sort": list(dict.fromkeys(data["instance"]))}
    color = TEXT_COLORS.get(theme, TEXT_COLORS[None])
    # One instance: a label above each bar. Several: side by side, labels would run into each other,
    # so each stands upright on its own bar.
    several = data["instance"].nunique() > 1
    text = {"type": "text", "dy": -9, "fontSize": 12, "color": color}
    if several:
        text = {"type": "text", "angle": -90, "align": "left", "baseline": "middle", "dx": 6,
                "fontSize": 11, "color": color}  # fmt: skip
    labels = {
        "mark": text,
        "encoding": {
            "x": x,
            "xOffset": offset,
            "y": {"field": "label_y", "type": "quantitative", "scale": scale},
            "text": {"field": "label", "type": "nominal"},
        },
    }
    legend_offset = _label_overflow(data, floor, top) if several else 0
    layers = [_bars(x, offset, scale, floor, units, legend_offset), labels]
    if marks:
        layers.append(_marks_layer(marks, x, offset, scale, color))
    # The chart is drawn at this height in all: the plot keeps PLOT_HEIGHT whatever the legends take
    # (a line per instance, above; the readings' below).
    names = data["instance"].nunique()
    height = (
        PLOT_HEIGHT + AXIS_PX + LEGEND_LINE_PX * (names + 1) + legend_offset + (READINGS_PX if marks else 0)
    )
    return {"height": height, "layer": layers}


#: The plot's height, the x axis' labels, a legend line, the readings' legend (px), and the width of
#: an upright label's character at 11 px (px, about).
PLOT_HEIGHT, AXIS_PX, LEGEND_LINE_PX, READINGS_PX, CHARACTER_PX = 300, 30, 24, 56, 6.3


def _label_overflow(data: pd.DataFrame, floor: float, top: float) -> int:
    """How far (px) the upright labels of the tallest bars rise above the plot: the names' legend
    stands that far above it, so no label runs into a name."""
    import math

    per_decade = PLOT_HEIGHT / (math.log10(top) - math.log10(floor))
    rise = [
        6
        + CHARACTER_PX * len(str(label))
        - (math.log10(top) - math.log10(min(max(y, floor), top))) * per_decade
        for label, y in zip(data["label"], data["label_y"], strict=True)
        if pd.notna(y)
    ]
    return max(0, math.ceil(max(rise, default=0))) + 8
