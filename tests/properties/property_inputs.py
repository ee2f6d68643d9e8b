"""What the property tests feed the parsers: random text made of the tokens provider documents are
made of, table-shaped documents with random cells, and MUTATED real inputs (the fixtures in
tests/fixtures and, through the ``real_document`` fixture, ../shared/mirror read in place)."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import date, datetime
from typing import Any, TypeVar

from hypothesis import strategies as st

from normalize import gpus, units
from records.documents import Document, DocumentSet
from scrapers.documents import azure, runpod
from tests.helpers import FIXTURES

T = TypeVar("T")
NOW = datetime(2026, 12, 1)  # when every generated document was "fetched"


# ------------------------------------------------------------------------------------------------
# Tokens, numbers, noise.

# fmt: off
UNIT_SPELLINGS = [
    "Gbps", "GB/s", "Gb/s", "Gbit/s", "GBps", "Mbps", "MB/s", "Mbit/s", "TBps", "TB/s", "Tbps", "Tb/s",
    "Kbps", "Gigabit", "gigabits per second", "terabytes per second", "Gbit", "gbps", "",
    "GB", "GiB", "MB", "MiB", "TB", "TiB",
]
TOKENS = [
    *UNIT_SPELLINGS,
    # table, HTML and figure punctuation
    "|", " | ", "| --- |", "---", "<br>", "<br/>", "<sup>", "</sup>", "&amp;", "&lt;", "**", "`", "#", "## ",
    "x", "×", " x ", "X", "*", ",", ".", "/", " / ", "-", "–", "(", ")", ":", ";",
    "\n", "\n\n", "\r\n", " ", "\t", "\u00a0", "\x00",
    # the words figures come with
    "up to", "Up to ", "per GPU", "per VM", "per node", "each", "for each NIC", "bidirectional",
    "each direction", "aggregate", "rack", " vs ", "InfiniBand", "HDR", "NDR", "RDMA", "RoCE", "EFA",
    "Ethernet", "GPUDirect-TCPXO", "GPUDirect-TCPX", "NVLink", "NVSwitch", "NVLink bridge", "PCIe",
    "Infinity Fabric", "NVIDIA", "AMD", "H100", "H200", "A100", "A10G", "B200", "GB200", "L40S", "MI300X",
    "V100", "T4", "SXM", "SXM4", "NVL", "HGX", "80GB", "GPU", "GPUs", "node", "nodes", "Yes", "No",
    # digits int() rejects or reads unexpectedly, and float()'s words
    "²", "½", "٣", "é", "nan", "inf",
    # links and includes (Azure follows them)
    "[!INCLUDE [s](", "](", ")]", "./includes/", "http://[", "-series.md)", "-summary.md)", "-specs.md)]",
]
# fmt: on
DIGITS = st.sampled_from(["0", "1", "2", "4", "8", "9", "00", "10", "16", "99999", "", "²", "٣", "½"])
NUMBER = st.one_of(
    st.integers(0, 10**7).map(str),
    st.integers(1000, 10**9).map("{:,}".format),
    st.tuples(st.integers(0, 10**4), st.integers(0, 999)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.integers(0, 999).map(lambda d: f".{d}"),
    st.sampled_from(["0", "00", "0.0", "1", "2", "8", "16", "1/6", "1e3", "²", "٣", "½", "nan", "inf"]),
    st.integers(300, 320).map(lambda n: "9" * n),  # past the largest float, 1.8e308
)
COUNT = st.one_of(st.sampled_from(["0", "1", "2", "4", "8", "16", "0.5", "1/2", "²", "٣", ""]), NUMBER)


def noise(max_tokens: int = 12) -> st.SearchStrategy[str]:
    """Random text made of document tokens, numbers and arbitrary unicode."""
    piece = st.one_of(st.sampled_from(TOKENS), NUMBER, st.text(max_size=6))
    return st.lists(piece, max_size=max_tokens).map("".join)


def or_noise(strategy: st.SearchStrategy[str], max_tokens: int = 6) -> st.SearchStrategy[str]:
    """A realistic value most of the time, random text sometimes."""
    return st.one_of(strategy, strategy, strategy, noise(max_tokens))


TEXT = st.one_of(noise(40), st.text(max_size=200))


@st.composite
def bandwidth_text(draw: st.DrawFn) -> str:
    """A figure as providers write one: [up to] [N x ...] V [/ B] [unit] [qualifier], maybe in noise."""
    parts = []
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(["up to ", "Up to ", "UP TO  "])))
    for _ in range(draw(st.integers(0, 2))):
        parts.append(draw(NUMBER) + draw(st.sampled_from([" x ", "x", " × ", "X ", " * "])))
    parts.append(draw(NUMBER))
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from([" / ", "/", " - ", "-"])) + draw(NUMBER))
    unit = draw(st.one_of(st.sampled_from(UNIT_SPELLINGS), st.sampled_from(sorted(units.RATE_WORDS))))
    parts.append(draw(st.sampled_from(["", " ", "-", " - "])) + unit)
    if draw(st.booleans()):
        parts.append(
            draw(st.sampled_from([" per GPU", " per VM", " bidirectional", " each direction", " RDMA"]))
        )
    text = "".join(parts)
    if draw(st.booleans()):
        text = draw(noise(4)) + text + draw(noise(4))
    return text


# ------------------------------------------------------------------------------------------------
# Mutations of real inputs.

_UNIT_IN_TEXT = re.compile(
    r"(?i)(?<![A-Za-z])(?:[KMGT]i?B(?:ps|/s)?|[KMGT]b(?:ps|/s|it/s|it)?|(?:giga|tera|mega)(?:bit|byte)s?)(?![A-Za-z])"
)
_TAG = re.compile(r"<[^>]+>")
_TAG_TEXT = re.compile(r">([^<>]+)<")


def _pick(draw: st.DrawFn, items: list[T]) -> T:
    return items[draw(st.integers(0, len(items) - 1))]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _delete_line(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    if lines:
        del lines[draw(st.integers(0, len(lines) - 1))]
    return "".join(lines)


def _duplicate_line(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    if lines:
        i = draw(st.integers(0, len(lines) - 1))
        lines.insert(i, lines[i])
    return "".join(lines)


def _swap_lines(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    if len(lines) > 1:
        i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def _truncate(draw: st.DrawFn, text: str) -> str:
    return text[: draw(st.integers(0, len(text)))]


def _replace_slice(draw: st.DrawFn, text: str) -> str:
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 80)))
    return text[:i] + draw(noise(8)) + text[j:]


def _change_digit(draw: st.DrawFn, text: str) -> str:
    positions = [m.start() for m in re.finditer(r"\d", text)]
    if not positions:
        return text
    i = _pick(draw, positions)
    return text[:i] + draw(DIGITS) + text[i + 1 :]


def _swap_unit(draw: st.DrawFn, text: str) -> str:
    found = list(_UNIT_IN_TEXT.finditer(text))
    if not found:
        return text
    m = _pick(draw, found)
    return text[: m.start()] + draw(st.sampled_from(UNIT_SPELLINGS)) + text[m.end() :]


def _drop_pipes(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    rows = [i for i, line in enumerate(lines) if "|" in line]
    if not rows:
        return text
    i = _pick(draw, rows)
    if draw(st.booleans()):
        lines[i] = lines[i].replace("|", "")
    else:
        pipes = [k for k, ch in enumerate(lines[i]) if ch == "|"]
        k = _pick(draw, pipes)
        lines[i] = lines[i][:k] + lines[i][k + 1 :]
    return "".join(lines)


def _empty_cell(draw: st.DrawFn, text: str) -> str:
    pipes = [k for k, ch in enumerate(text) if ch == "|"]
    if not pipes:
        return text
    k = _pick(draw, pipes)
    return text[:k] + draw(st.sampled_from(["| ", "|  |", "||"])) + text[k:]


def _drop_tag(draw: st.DrawFn, text: str) -> str:
    found = list(_TAG.finditer(text))
    if not found:
        return text
    m = _pick(draw, found)
    return text[: m.start()] + text[m.end() :]


def _replace_tag_text(draw: st.DrawFn, text: str) -> str:
    found = list(_TAG_TEXT.finditer(text))
    if not found:
        return text
    m = _pick(draw, found)
    return text[: m.start(1)] + draw(or_noise(bandwidth_text())) + text[m.end(1) :]


def _replace_cell(draw: st.DrawFn, text: str) -> str:
    """A markdown cell (between two pipes) replaced by a figure or noise."""
    found = list(re.finditer(r"(?<=\|)[^|\n]*(?=\|)", text))
    if not found:
        return text
    m = _pick(draw, found)
    return text[: m.start()] + " " + draw(or_noise(bandwidth_text())) + " " + text[m.end() :]


MUTATIONS = (
    _delete_line,
    _duplicate_line,
    _swap_lines,
    _truncate,
    _replace_slice,
    _change_digit,
    _change_digit,
    _swap_unit,
    _swap_unit,
    _drop_pipes,
    _empty_cell,
    _drop_tag,
    _replace_tag_text,
    _replace_cell,
)


@st.composite
def mutated(draw: st.DrawFn, text: str, max_mutations: int = 3) -> str:
    """``text`` after 1 to ``max_mutations`` random edits."""
    for _ in range(draw(st.integers(1, max_mutations))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return text


def fixture(name: str) -> str:
    """A fixture byte for byte (read_text would turn CRLF into LF)."""
    return (FIXTURES / name).read_bytes().decode("utf-8")


def fixtures(pattern: str) -> st.SearchStrategy[str]:
    """One of the fixtures matching ``pattern`` (under tests/fixtures)."""
    return st.sampled_from(sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob(pattern))).map(
        fixture
    )


def doc(url: str, provider: str, body: str | None) -> Document:
    return Document(
        url=url, provider=provider, status=200 if body is not None else 404, fetched_at=NOW, body=body
    )


# ------------------------------------------------------------------------------------------------
# Cells providers fill in.

GPU_NAME = st.one_of(
    TEXT,
    st.tuples(
        st.sampled_from(["", "NVIDIA ", "AMD ", "8 x ", "(8x"]),
        st.sampled_from(sorted({spec.family for spec in gpus.GPUS})),
        st.sampled_from(["", " SXM", " SXM4", " PCIe", " NVL", " HGX", " Server Edition", " Max-Q", " 80GB"]),
        noise(3),
    ).map("".join),
)
FORM_FACTORS = st.one_of(
    st.none(),
    st.sampled_from(sorted({s.form_factor for s in gpus.GPUS if s.form_factor})),
    st.text(max_size=5),
)
SHORT_GPU_NAME = st.sampled_from(
    ["H100", "H200", "B200", "A100", "A10", "V100", "P100", "L40S", "MI300X", "X9000"]
)
MEMORY_CELL = st.one_of(
    st.tuples(NUMBER, st.sampled_from([" GiB", " GB", "GB", " MiB", ""])).map("".join),
    st.tuples(NUMBER, COUNT, NUMBER).map(lambda t: f"{t[0]} GiB ({t[1]} x {t[2]} GiB)"),
)


# ------------------------------------------------------------------------------------------------
# Documents: table writers, a provider's document set with some documents changed, and the fixtures
# several test modules mutate.


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>\n" for row in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>\n"


def csv_text(rows: list[list[str]], header: list[str] | None = None, end: str = "\r\n") -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator=end).writerows([header or NEBIUS_COLUMNS, *rows])
    return out.getvalue()


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_value(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def toml_document(data: dict[str, Any]) -> str:
    return "".join(f"{toml_value(k)} = {toml_value(v)}\n" for k, v in data.items())


@st.composite
def document_set(draw: st.DrawFn, base: dict[str, str], provider: str) -> tuple[DocumentSet, str]:
    """The documents of ``base`` (URL → text) with one or two of them changed, and all their text."""
    urls = list(base)
    changed = draw(st.lists(st.sampled_from(urls), min_size=1, max_size=2, unique=True))
    docs = []
    for url in urls:
        body: str | None = base[url]
        if url in changed:
            body = draw(
                st.one_of(mutated(base[url]), mutated(base[url]), mutated(base[url]), st.none(), TEXT)
            )
        docs.append(doc(url, provider, body))
    return DocumentSet(docs), "\n".join(d.body or "" for d in docs)


AZ_PAGE = azure.SIZES + "nd-test-v9-series.md"
AZ_SPECS = azure.SIZES + "includes/nd-test-v9-series-specs.md"
AZ_SUMMARY = azure.SIZES + "includes/nd-test-v9-series-summary.md"
AZURE_FIXTURE = {
    AZ_PAGE: fixture("azure/nd-test-v9-series.md"),
    AZ_SPECS: fixture("azure/includes/nd-test-v9-series-specs.md"),
    AZ_SUMMARY: fixture("azure/includes/nd-test-v9-series-summary.md"),
}
RUNPOD_FIXTURE = {
    runpod.CLUSTERS_URL: fixture("runpod/instant-clusters.mdx"),
    runpod.GPU_TYPES_URL: fixture("runpod/gpu-types.mdx"),
    runpod.FLASH_GPU_TYPES_URL: fixture("runpod/flash-gpu-types.mdx"),
    runpod.OBSERVABILITY_URL: fixture("runpod/cluster-observability.mdx"),
}
OCI_HEADERS = [
    "Shape",
    "OCPU",
    "GPU Memory (GB)",
    "CPU Memory (GB)",
    "Local Disk",
    "Max Network Bandwidth",
    "Max VNICs Total: Linux",
    "Max VNICs Total: Windows",
]
# fmt: off
NEBIUS_COLUMNS = [
    "InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "Region", "GpuInfo",
    "SpotPrice",
]
# fmt: on


# ------------------------------------------------------------------------------------------------
# SkyPilot catalogs: one strategy for every file, whatever its column order.

PY_SCALAR = st.one_of(
    st.integers(-10, 10**6),
    st.integers(),
    st.floats(),
    st.text(max_size=4),
    st.booleans(),
    st.none(),
).map(repr)


def _py_containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Lists, dicts, sets and tuples of ``inner`` as Python source: keys may be unhashable."""
    return st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(inner, inner), max_size=3).map(
            lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"
        ),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: "{" + ", ".join(xs) + "}"),
        st.lists(inner, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ",)"),
    )


PY_LITERAL = st.recursive(PY_SCALAR, _py_containers, max_leaves=6)
MIB = st.one_of(
    st.integers(0, 10**6).map(str),
    st.sampled_from(["204800", "81920", "80", "655360", "0", "-1", "1e999", "'80'", "null", "9" * 400]),
    PY_SCALAR,
)
_GPU_ENTRY = st.tuples(or_noise(SHORT_GPU_NAME, 1), or_noise(COUNT, 1), MIB, MIB)


def _entry(t: tuple[str, str, str, str]) -> str:
    return f"'Name': '{t[0]}', 'Manufacturer': null, 'Count': {t[1]}, 'MemoryInfo': {{'SizeInMiB': {t[2]}}}"


# A GpuInfo cell the way some catalog writes it: Python repr, the total inside the Gpus entry,
# lower-case keys, JSON, a bare name, a random literal or nothing.
GPU_INFO_CELL = st.one_of(
    _GPU_ENTRY.map(lambda t: f"{{'Gpus': [{{{_entry(t)}}}], 'TotalGpuMemoryInMiB': {t[3]}}}"),
    _GPU_ENTRY.map(lambda t: f"{{'Gpus': [{{{_entry(t)}, 'TotalGpuMemoryInMiB': {t[3]}}}]}}"),
    _GPU_ENTRY.map(lambda t: f"{{'gpus': [{{{_entry(t).lower()}}}], 'totalgpumemoryinmib': {t[3]}}}"),
    st.tuples(SHORT_GPU_NAME, st.integers(0, 16), st.integers(0, 10**6)).map(
        lambda t: json.dumps({"Gpus": [{"Name": t[0], "Count": t[1], "MemoryInfo": {"SizeInMiB": t[2]}}]})
    ),
    or_noise(SHORT_GPU_NAME),
    PY_LITERAL,
    st.just(""),
)
PRICE_CELL = st.one_of(
    st.just(""), NUMBER, st.sampled_from(["700.0", "0.00", "1.29", "5.8854999999999995", "10001", "-3"])
)
REGION_CELL = st.one_of(
    st.sampled_from(["us-east-1", "Hafnarfjarðarkaupstaður, IS, EU", ", US, NA", "default", "FIN-03", ""]),
    noise(3),
)


@st.composite
def skypilot_csv(draw: st.DrawFn, header: list[str], names: st.SearchStrategy[str]) -> str:
    """A catalog CSV with ``header``'s columns in its order and up to five random GPU or CPU lines."""
    cells = {
        "InstanceType": or_noise(names, 2),
        "UpstreamCloudId": or_noise(names, 2),
        "AcceleratorName": st.one_of(or_noise(SHORT_GPU_NAME, 2), st.just("")),
        "AcceleratorCount": st.one_of(or_noise(COUNT, 2), st.sampled_from(["8.0", "0.0", ""])),
        "GpuInfo": GPU_INFO_CELL,
        "Price": PRICE_CELL,
        "SpotPrice": PRICE_CELL,
        "Region": REGION_CELL,
    }
    row = st.tuples(*(cells.get(column, or_noise(NUMBER, 1)) for column in header)).map(list)
    rows = draw(st.lists(row, max_size=5))
    return csv_text(rows, header, draw(st.sampled_from(["\r\n", "\n"])))
