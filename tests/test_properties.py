"""Property-based tests: every parser turns ANY text into well-formed records or a ParseError.

The rule (scrapers.base.Scraper.parse, normalize.errors.ParseError): on bad input a parser may raise
only ParseError or a subclass (LayoutError). Anything else escaping is a bug, and so is a result
that is not well-formed: a non-finite figure, a claim value of the wrong kind, or a RawOffer that
``catalog.offers.build_offer`` rejects (InvalidOffer is a ValueError, not a ParseError).

Inputs are random text built from the tokens provider documents are made of, table-shaped
documents with random cells, and MUTATED real inputs: the fixtures in tests/fixtures and, when
../shared is present, the real documents of ../shared/mirror (read in place, never copied).

Regression tests (``test_regression_*``, at the end) pin the eleven bugs these properties found
when they were first written, each with its minimal failing input as an ``@example``.

Profiles (tests/conftest.py): "default" runs a few dozen examples per test, derandomized;
``HYPOTHESIS_PROFILE=bench pytest tests/test_properties.py -m property`` runs 10,000 per test.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Callable
from datetime import date, datetime
from fractions import Fraction
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from catalog.models import FIELD_UNITS, TEXT_FIELDS, Claim, InstanceOffer, RawOffer
from catalog.offers import build_offer
from normalize import gpus, units, vocab
from normalize.errors import ParseError
from normalize.vocab import Basis, Fabric, Link
from scrapers import aws, azure, azure_prose, curated, gcp, markdown, nebius, oci, runpod
from scrapers.base import Document, DocumentSet
from tests.conftest import FIXTURES, MIRROR, ROOT, need_shared

T = TypeVar("T")
NOW = datetime(2026, 12, 1)

# A long run (the bench profile) outlasts the suite's 120 s per-test timeout (pyproject): scale it.
_EXAMPLES = settings.default.max_examples
pytestmark = [
    pytest.mark.property,
    pytest.mark.filterwarnings("ignore::bs4.MarkupResemblesLocatorWarning"),  # noise that looks like a URL
    pytest.mark.timeout(120 if _EXAMPLES <= 200 else max(600, _EXAMPLES // 4)),
]


@pytest.fixture(autouse=True, scope="module")
def _quiet_parsers():
    """Parsers log a warning per skipped row; thousands of examples would fill the captured log."""
    logger = logging.getLogger("scrapers")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


# ------------------------------------------------------------------------------------------------
# How a parser's outcome is judged.


class Malformed(AssertionError):
    """A parser returned a result that breaks the well-formedness rules."""


def run_parser(call: Callable[[], T], *inputs: str) -> T | None:
    """call()'s result; None when it raised a ParseError. Any other exception (and any Malformed from
    the checks inside ``call``) fails the test."""
    try:
        return call()
    except ParseError as exc:
        event(f"ParseError ({type(exc).__name__})")
        return None


def strict(call: Callable[[], T]) -> T | None:
    """call()'s result, or None for a ParseError: what the regression tests hold the parsers to."""
    try:
        return call()
    except ParseError:
        return None


# ------------------------------------------------------------------------------------------------
# Well-formedness checks. Each raises Malformed.


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Malformed(message)


def finite_non_negative(value: Any, what: str) -> None:
    expect(isinstance(value, float) and not isinstance(value, bool), f"{what} is not a float: {value!r}")
    expect(math.isfinite(value), f"{what} is non-finite: {value!r}")
    expect(value >= 0, f"{what} is negative: {value!r}")


RATE = units.Quantity(1, units.GBIT_PER_S).dimensionality
PER_WORDS = {None, "gpu", "node", "nic"}
DIRECTIONS = {None, "bidirectional", "unidirectional"}


def check_bandwidth(bw: units.Bandwidth, text: str) -> units.Bandwidth:
    expect(isinstance(bw, units.Bandwidth), f"not a Bandwidth: {bw!r}")
    expect(bw.text == text, "Bandwidth.text is not the parsed text")
    expect(bw.each.dimensionality == RATE, f"unit {bw.each.units} is not a rate")
    expect(isinstance(bw.count, int) and bw.count >= 1, f"link count {bw.count!r}")
    gbits, gbytes = bw.gbits_per_s, bw.gbytes_per_s
    finite_non_negative(gbits, "gbits_per_s")
    finite_non_negative(gbytes, "gbytes_per_s")
    expect(
        math.isclose(gbits, gbytes * 8, rel_tol=1e-9, abs_tol=1e-12), f"{gbits} Gbit/s != 8 x {gbytes} GB/s"
    )
    finite_non_negative(bw.each_gbits_per_s, "each_gbits_per_s")
    expect(
        math.isclose(bw.each_gbits_per_s * bw.count, gbits, rel_tol=1e-9, abs_tol=1e-12),
        "total is not each x count",
    )
    if bw.burst is not None:
        expect(bw.burst.dimensionality == RATE, "burst is not a rate")
        finite_non_negative(bw.burst_gbits_per_s, "burst_gbits_per_s")
    expect(bw.per in PER_WORDS and bw.direction in DIRECTIONS, f"qualifiers {bw.per!r} {bw.direction!r}")
    expect(isinstance(bw.up_to, bool), "up_to is not a bool")
    start, end = bw.span
    expect(0 <= start < end <= len(text), f"span {bw.span} outside the text")
    expect(any(ch.isdigit() for ch in text[start:end]), f"span {text[start:end]!r} holds no figure")
    expect(isinstance(bw.qualifiers, str), "qualifiers is not text")
    return bw


FAMILIES = {family for family, _ in gpus.FAMILY_PATTERNS}
LINKS = {link.value for link in Link}
FABRICS = {fabric.value for fabric in Fabric}
# Fields whose zero is no fact and breaks the row invariants: a 0-GPU instance, a 0 Gbit/s link.
POSITIVE_FIELDS = frozenset({"gpu_count", *(f for f in FIELD_UNITS if f.endswith("_per_s"))})
NUMERIC_ROW_FIELDS = (
    "gpu_count",
    "gpu_memory_gb",
    "gpu_memory_gbytes_per_s",
    "intra_node_gbytes_per_s",
    "inter_node_gbits_per_s",
    "inter_node_gbytes_per_s",
    "frontend_gbits_per_s",
)


def check_gpu_id(gpu_id: Any) -> None:
    expect(isinstance(gpu_id, str) and bool(gpu_id), f"gpu id {gpu_id!r}")
    family_level = any(gpu_id == f or gpu_id.startswith(f + "-") for f in FAMILIES)
    expect(gpu_id in gpus.BY_ID or family_level, f"gpu id {gpu_id!r} is neither a part nor a family")


def check_claim(claim: Claim) -> None:
    expect(isinstance(claim, Claim), f"not a Claim: {claim!r}")
    expect(claim.field in FIELD_UNITS, f"unknown field {claim.field!r}")
    if claim.field in TEXT_FIELDS:
        expect(isinstance(claim.value, str), f"{claim.field} value {claim.value!r} is not text")
        if claim.field == "gpu_model":
            check_gpu_id(claim.value)
        elif claim.field == "intra_node_link":
            expect(claim.value in LINKS, f"intra_node_link {claim.value!r}")
        else:
            expect(claim.value in FABRICS, f"inter_node_fabric {claim.value!r}")
    else:
        finite_non_negative(claim.value, f"{claim.field} claim value")
        if claim.field in POSITIVE_FIELDS:
            expect(claim.value > 0, f"{claim.field} claim value is zero")
    expect(isinstance(claim.quote, str) and bool(claim.quote.strip()), "empty quote")
    expect(isinstance(claim.source_url, str) and bool(claim.source_url), "no source_url")
    expect(isinstance(claim.context, str) and isinstance(claim.qualifiers, str), "context/qualifiers")
    expect(isinstance(claim.basis, Basis) and isinstance(claim.unit_suspect, bool), "basis/unit_suspect")


def check_row(row: InstanceOffer) -> None:
    expect(isinstance(row, InstanceOffer), f"not an InstanceOffer: {row!r}")
    for name in NUMERIC_ROW_FIELDS:
        value = getattr(row, name)
        if value is not None:
            expect(math.isfinite(value) and value >= 0, f"row {name} = {value!r}")
    if row.gpu_model is not None:
        check_gpu_id(row.gpu_model)


def check_offers(offers: list[RawOffer], provider: str, *, kind: str = "scraped") -> list[RawOffer]:
    """Every RawOffer well-formed and accepted by build_offer (InvalidOffer propagates)."""
    expect(isinstance(offers, list), f"parse returned {type(offers).__name__}, not a list")
    for raw in offers:
        expect(isinstance(raw, RawOffer), f"not a RawOffer: {raw!r}")
        expect(raw.provider == provider, f"provider {raw.provider!r}")
        expect(isinstance(raw.instance_type, str) and bool(raw.instance_type.strip()), "no instance type")
        expect(raw.source_kind == kind, f"source_kind {raw.source_kind!r}")
        expect(isinstance(raw.claims, tuple) and isinstance(raw.notes, tuple), "claims/notes not tuples")
        expect(all(isinstance(n, str) for n in raw.notes), "a note is not text")
        for claim in raw.claims:
            check_claim(claim)
        check_row(build_offer(raw, scraped_at=NOW, source_kind=kind))
    return offers


# ------------------------------------------------------------------------------------------------
# Strategies: tokens, numbers, noise.

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


@pytest.fixture(scope="module")
def mirror() -> Callable[[str], str]:
    """The real documents of ../shared/mirror by URL, read in place; skips when ../shared is absent."""
    need_shared()

    @functools.cache
    def read(url: str) -> str:
        return (MIRROR / url.split("://", 1)[1]).read_bytes().decode("utf-8")

    return read


# ------------------------------------------------------------------------------------------------
# normalize/units.py


@given(
    text=st.one_of(TEXT, bandwidth_text()), default_unit=st.one_of(st.none(), st.sampled_from(UNIT_SPELLINGS))
)
def test_parse_bandwidth(text, default_unit):
    run_parser(lambda: check_bandwidth(units.parse_bandwidth(text, default_unit=default_unit), text), text)


@given(text=st.one_of(TEXT, bandwidth_text(), st.lists(bandwidth_text(), max_size=4).map(" and ".join)))
def test_find_bandwidths(text):
    def check():
        found = units.find_bandwidths(text)
        expect(isinstance(found, list), "not a list")
        ends = 0
        for bw in found:
            check_bandwidth(bw, text)
            expect(bw.span[0] >= ends, "figures overlap")
            ends = bw.span[1]

    run_parser(check, text)


MEMORY_TEXT = st.one_of(
    TEXT,
    st.tuples(NUMBER, st.sampled_from(["", " ", "  "]), st.sampled_from(UNIT_SPELLINGS), noise(3)).map(
        "".join
    ),
)


@given(text=MEMORY_TEXT)
def test_memory(text):
    def check():
        for size in units.find_memory_gb(text):
            finite_non_negative(size, "memory size")
        size = units.parse_memory_gb(text)
        finite_non_negative(size, "memory size")

    run_parser(check, text)


@given(text=st.one_of(TEXT, COUNT, st.tuples(COUNT, st.sampled_from(["/", " / ", "."]), COUNT).map("".join)))
def test_gpu_count(text):
    def check():
        count = units.parse_gpu_count(text)
        expect(isinstance(count, Fraction) and count > 0, f"GPU count {count!r}")
        try:
            float(count)  # every caller stores it as a float
        except OverflowError:
            raise Malformed(f"GPU count {text!r} does not fit a float") from None

    run_parser(check, text)


@given(text=st.one_of(TEXT, NUMBER, st.tuples(st.sampled_from(["", " ", "-", "+"]), NUMBER).map("".join)))
def test_to_number(text):
    def check():
        value = units.to_number(text)
        expect(isinstance(value, float), f"to_number gave {value!r}")
        expect(math.isfinite(value), f"to_number is non-finite: {value!r}")

    run_parser(check, text)


# ------------------------------------------------------------------------------------------------
# normalize/gpus.py and normalize/vocab.py

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
MEMORY_GB = st.one_of(st.none(), st.floats(), st.floats(0, 300), st.sampled_from([0.0, 24.0, 80.0, 141.0]))


@given(name=GPU_NAME, memory_gb=MEMORY_GB, form_factor=FORM_FACTORS)
def test_identify_gpu(name, memory_gb, form_factor):
    def check():
        family = gpus.family_of(name)
        expect(family is None or family in FAMILIES, f"family {family!r}")
        match = gpus.identify_gpu(name, memory_gb=memory_gb, form_factor=form_factor)
        expect(isinstance(match, gpus.GpuMatch) and match.family == family, f"{match!r} vs family {family}")
        check_gpu_id(match.id)
        if match.spec is not None:
            expect(match.spec.family == family and match.id == match.spec.id, f"{match!r}")
        expect(not match.memory_mismatch or match.spec is not None, "mismatch flagged with no part")

    run_parser(check, name)


@given(text=TEXT)
def test_vocab_never_raises(text):
    link, fabric, generation = (
        vocab.link_from_text(text),
        vocab.fabric_from_text(text),
        vocab.infiniband_generation(text),
    )
    assert link is None or isinstance(link, Link)
    assert fabric is None or isinstance(fabric, Fabric)
    assert generation is None or generation in vocab.INFINIBAND_RATE_GBITS


# ------------------------------------------------------------------------------------------------
# scrapers/markdown.py

MARKDOWN = st.one_of(TEXT, fixtures("**/*.md*").flatmap(mutated))  # .md and .mdx


@given(text=MARKDOWN)
def test_markdown_never_raises(text):
    tables = markdown.markdown_tables(text)
    for table in tables:
        assert isinstance(table, markdown.Table) and isinstance(table.heading, str)
        assert table.headers and all(isinstance(h, str) for h in table.headers)
        assert all(row and all(isinstance(c, str) for c in row) for row in table.rows)
        for header in table.clean_headers:
            assert header == " ".join(header.split())
    stripped = markdown.body(text)
    assert text.endswith(stripped)
    assert isinstance(markdown.title(text), str)
    for sentence in markdown.sentences(text):
        assert sentence and sentence == sentence.strip() and sentence in text
    cleaned = markdown.clean(text)
    assert cleaned == " ".join(cleaned.split())


# ------------------------------------------------------------------------------------------------
# Table-shaped documents with random cells, to reach the row parsers quickly.


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


GPU_WORDS = st.sampled_from(
    [
        "NVIDIA H100 GPU",
        "NVIDIA H200 GPU",
        "NVIDIA A100 GPU",
        "NVIDIA A10G GPU",
        "NVIDIA L4 GPU",
        "NVIDIA T4 GPU",
        "NVIDIA B200 GPU",
        "AMD Radeon Pro V520 GPU",
        "AWS Inferentia2 inference accelerator",
        "GPU",
    ]
)
MEMORY_CELL = st.one_of(
    st.tuples(NUMBER, st.sampled_from([" GiB", " GB", "GB", " MiB", ""])).map("".join),
    st.tuples(NUMBER, COUNT, NUMBER).map(lambda t: f"{t[0]} GiB ({t[1]} x {t[2]} GiB)"),
)


@st.composite
def aws_page(draw: st.DrawFn) -> str:
    perf, net = [], []
    for _ in range(draw(st.integers(1, 4))):
        family = draw(st.sampled_from(["P5", "P4d", "P3dn", "G5", "G6", "", "**"]))
        if family:
            perf.append([f"**{family}**"])
            net.append([f"**{family}**"])
        name = draw(or_noise(st.sampled_from(["p5.48xlarge", "g5.xlarge", "p4d.24xlarge", "g6f.large 1"])))
        accelerators = draw(or_noise(st.tuples(COUNT, GPU_WORDS).map(" x ".join)))
        perf.append([name, "16.00", "AMD EPYC", "4", accelerators, draw(or_noise(MEMORY_CELL))])
        efa = draw(st.sampled_from(["✓ Yes", "✗ No", "Yes", ""]))
        cards = draw(or_noise(COUNT))
        net.append([name, draw(or_noise(bandwidth_text())), efa, "✓ Yes", cards])
    unit = draw(st.sampled_from(["Gbps", "Mbps", "Tbps", "Gb/s", "GB/s", "Gigabit"]))
    return (
        "## Performance specifications\n\n"
        + md_table(
            ["Instance type", "Memory (GiB)", "Processor", "vCPUs", "Accelerators", "Accelerator memory"],
            perf,
        )
        + "\n## Network specifications\n\n"
        + md_table(
            ["Instance type", f"Baseline / Burst bandwidth ({unit})", "EFA", "ENA", "Network cards"], net
        )
    )


# ------------------------------------------------------------------------------------------------
# scrapers/aws.py


def aws_parse(text: str) -> list[RawOffer]:
    return check_offers(aws.Aws().parse(DocumentSet([doc(aws.AC_URL, "aws", text)])), "aws")


@given(text=st.one_of(TEXT, aws_page(), fixtures("aws/*.md").flatmap(mutated)))
def test_aws(text):
    run_parser(lambda: aws_parse(text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_aws_real_page_mutated(mirror, data):
    text = data.draw(mutated(mirror(aws.AC_URL)))
    run_parser(lambda: aws_parse(text), text)


# ------------------------------------------------------------------------------------------------
# Documents of a provider: each one kept, mutated, replaced by noise or missing (404).


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


def parse_all(scraper, documents: DocumentSet) -> list[RawOffer]:
    return check_offers(scraper.parse(documents), scraper.name)


# ------------------------------------------------------------------------------------------------
# scrapers/azure.py (and azure_prose.py)

AZ_PAGE = azure.SIZES + "nd-test-v9-series.md"
AZ_SPECS = azure.SIZES + "includes/nd-test-v9-series-specs.md"
AZ_SUMMARY = azure.SIZES + "includes/nd-test-v9-series-summary.md"
AZURE_FIXTURE = {
    AZ_PAGE: fixture("azure/nd-test-v9-series.md"),
    AZ_SPECS: fixture("azure/includes/nd-test-v9-series-specs.md"),
    AZ_SUMMARY: fixture("azure/includes/nd-test-v9-series-summary.md"),
}
GENERATIONS = st.sampled_from(sorted(vocab.INFINIBAND_RATE_GBITS))
SERIES_NAMES = st.sampled_from(["ND-Test-v9", "NDv2", "HBv4", "N-series", "NCv3", "ND A100 v4"])
RDMA_PAGE = st.lists(
    st.tuples(GENERATIONS, st.lists(or_noise(SERIES_NAMES, 2), min_size=1, max_size=3).map(", ".join)).map(
        " rates for ".join
    ),
    max_size=3,
).map(lambda parts: "RDMA-capable instances run at " + ", and ".join(parts) + ".\n")

SUMMARY_SENTENCE = st.tuples(
    st.sampled_from(["Each GPU", "The VM", "Deployments", "The series", "A rack"]),
    st.sampled_from([" has ", " is interconnected with ", " scales with ", " features ", " provides "]),
    bandwidth_text(),
    st.sampled_from(
        [
            " NVLink",
            " NVLINK 4.0 connectivity",
            " of interconnect bandwidth per VM",
            " NVIDIA HDR InfiniBand connection",
            " dedicated InfiniBand per GPU",
            " of aggregate NVLink bandwidth",
            " memory bandwidth",
            " PCIe",
            " Infinity Fabric",
            " of cross sectional NVLink bandwidth",
            "",
        ]
    ),
    st.sampled_from([" with eight NVIDIA H100 GPUs", " (80GB)", " AMD MI300X", "", " vs 400 Gbps"]),
).map(lambda t: "".join(t) + ". ")
SUMMARY = st.lists(or_noise(SUMMARY_SENTENCE), max_size=5).map("".join)


@st.composite
def azure_page(draw: st.DrawFn) -> str:
    """A series page with random network (incl. GB200 scale-up/out columns) and accelerator rows."""
    sizes = draw(
        st.lists(
            or_noise(
                st.sampled_from(["Standard_ND96isr_T9_v9", "Standard_ND48is_T9_v9", "Standard_NC4as_T4_v3"])
            ),
            min_size=1,
            max_size=3,
        )
    )
    unit = st.sampled_from(["Mbps", "Gbps", "TBps", "GB/s", "Mbit/s", "furlongs"])
    net_headers = ["Size Name", "Max NICs (Qty.)", f"Max Bandwidth ({draw(unit)})"]
    scale = draw(st.booleans())
    if scale:
        net_headers += [
            f"Scale-Up Bandwidth ({draw(unit)})",
            "Scale-up NICS",
            f"Scale-Out Bandwidth ({draw(unit)})",
            "Scale-out NICS",
        ]
    net, acc = [], []
    for size in sizes:
        row = [size, draw(or_noise(COUNT)), draw(or_noise(NUMBER))]
        if scale:
            row += [
                draw(or_noise(NUMBER)),
                draw(or_noise(COUNT)),
                draw(or_noise(NUMBER)),
                draw(or_noise(COUNT)),
            ]
        net.append(row)
        acc.append([size, draw(or_noise(COUNT)), draw(or_noise(NUMBER))])
    memory_header = draw(
        st.sampled_from(["Accelerator-Memory (GB)", "Accelerator Memory (GiB)", "Accelerator Memory"])
    )
    return (
        f"# {draw(or_noise(SERIES_NAMES))} sizes series\n\n"
        "[!INCLUDE [summary](./includes/nd-test-v9-series-summary.md)]\n"
        "[!INCLUDE [specs](./includes/nd-test-v9-series-specs.md)]\n\n"
        + md_table(net_headers, net)
        + "\n"
        + md_table(["Size Name", "Accelerators (Qty.)", memory_header], acc)
    )


SPECS = st.tuples(
    or_noise(st.tuples(COUNT, st.just(" - "), COUNT, st.just(" NICs")).map("".join)),
    or_noise(bandwidth_text()),
    or_noise(st.tuples(COUNT, st.sampled_from([" GPUs", " GPU", ""])).map("".join)),
    or_noise(st.tuples(GPU_NAME, st.just(" ("), NUMBER, st.just("GB)")).map("".join)),
).map(
    lambda t: md_table(
        ["Part", "Quantity <br><sup>Count Units</sup>", "Specs <br><sup>SKU ID</sup>"],
        [["Network", t[0], t[1]], ["Accelerators", t[2], t[3]]],
    )
)


@st.composite
def azure_documents(draw: st.DrawFn) -> tuple[DocumentSet, str]:
    if draw(st.booleans()):
        documents, text = draw(document_set(AZURE_FIXTURE, "azure"))
        docs = list(documents.values())
    else:
        bodies = {AZ_PAGE: draw(azure_page()), AZ_SPECS: draw(SPECS), AZ_SUMMARY: draw(SUMMARY)}
        docs = [doc(url, "azure", body) for url, body in bodies.items()]
        text = "\n".join(bodies.values())
    if draw(st.booleans()):
        rdma = draw(or_noise(RDMA_PAGE))
        docs.append(doc(azure.INFINIBAND_PAGE, "azure", rdma))
        text += "\n" + rdma
    return DocumentSet(docs), text


@given(case=azure_documents())
def test_azure(case):
    documents, text = case
    run_parser(lambda: parse_all(azure.Azure(), documents), text)


@given(
    summary=st.one_of(SUMMARY, TEXT, mutated(AZURE_FIXTURE[AZ_SUMMARY])),
    count=st.one_of(st.none(), st.sampled_from([0.125, 0.5, 1.0, 2.0, 8.0]), st.floats(0.01, 64)),
)
def test_azure_prose(summary, count):
    def check():
        for claim in azure_prose.claims(summary, AZ_SUMMARY, count):
            check_claim(claim)
        rates = azure_prose.rdma_generations(summary)
        for claim in azure_prose.rdma_claims("ND-Test-v9", rates, azure.INFINIBAND_PAGE):
            check_claim(claim)

    run_parser(check, summary)


@functools.cache
def _azure_real_series() -> dict[str, list[str]]:
    """Series page URL → the URLs of the documents its parse reads (page, includes, InfiniBand page)."""
    root = MIRROR / azure.SIZES.split("://", 1)[1]
    series = {}
    for path in sorted(root.glob("*-series.md")):
        url = azure.SIZES + path.name
        text = path.read_text(encoding="utf-8")
        includes = [u for u in azure.include_urls(url, text) if (MIRROR / u.split("://", 1)[1]).is_file()]
        series[url] = [url, *includes, azure.INFINIBAND_PAGE]
    return series


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_azure_real_series_mutated(mirror, data):
    series = _azure_real_series()
    urls = series[data.draw(st.sampled_from(sorted(series)), label="series")]
    documents, text = data.draw(document_set({url: mirror(url) for url in urls}, "azure"))
    run_parser(lambda: parse_all(azure.Azure(), documents), text)


HREF = st.tuples(
    st.sampled_from(["", "./", "./includes/", "../", "https://example.test/", "http://[", "//", "mailto:"]),
    st.text(max_size=4),
    st.sampled_from(["-series.md", "-summary.md", "-specs.md", ".md"]),
).map("".join)
LINK_TEXT = st.lists(
    st.one_of(
        HREF.map(lambda href: f"[!INCLUDE [x]({href})]"),
        HREF.map(lambda href: f"[View]({href})"),
        noise(3),
    ),
    max_size=4,
).map("\n".join)


@given(text=st.one_of(TEXT, LINK_TEXT, *map(mutated, AZURE_FIXTURE.values())))
def test_azure_links(text):
    """The series links of a family page and the includes of a series page, as URLs."""

    def check():
        for urls in (azure.series_urls([(azure.FAMILY_PAGES[1], text)]), azure.include_urls(AZ_PAGE, text)):
            expect(isinstance(urls, list) and all(isinstance(u, str) for u in urls), f"{urls!r}")

    run_parser(check, text)


# ------------------------------------------------------------------------------------------------
# scrapers/gcp.py

GCP_FIXTURE = {
    gcp.NETWORK_URLS[0]: fixture("gcp/gpu-network-bandwidth.html"),
    gcp.NETWORK_URLS[1]: fixture("gcp/gpu-network-bandwidth-newer.html"),
    gcp.MACHINES_URL: fixture("gcp/accelerator-optimized-machines.html"),
}
GCP_SERIES = st.sampled_from(sorted(gcp.SERIES_PREFIXES))


def html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>\n" for row in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>\n"


@st.composite
def gcp_network_page(draw: st.DrawFn) -> str:
    if draw(st.booleans()):  # the list revision
        items = draw(st.lists(st.tuples(or_noise(GCP_SERIES, 2), or_noise(bandwidth_text())), max_size=4))
        return "<ul>" + "".join(f"<li><strong>{s}</strong>: {b}</li>\n" for s, b in items) + "</ul>"
    rows = draw(
        st.lists(
            st.tuples(
                or_noise(st.one_of(GCP_SERIES, st.just("A2 Standard and A2 Ultra")), 2),
                or_noise(GPU_NAME),
                or_noise(bandwidth_text()),
                or_noise(st.sampled_from(sorted(gcp.FABRIC_BY_TECHNOLOGY)), 2),
            ).map(list),
            max_size=4,
        )
    )
    sections = draw(
        st.lists(
            st.tuples(
                or_noise(GCP_SERIES, 2),
                st.lists(
                    or_noise(
                        st.tuples(
                            st.sampled_from(["", "eight ", "two ", "4 ", "0 ", "²"]),
                            st.sampled_from(["NICs deliver ", "NIC adds ", "gVNIC NICs add "]),
                            bandwidth_text(),
                            st.sampled_from(
                                [" for GPU-to-GPU traffic", " for general networking", " RDMA", ""]
                            ),
                            st.sampled_from([". ", ". All to all NVLink. "]),
                        ).map("".join)
                    ),
                    max_size=3,
                ).map("".join),
            ),
            max_size=3,
        )
    )
    return html_table(list(gcp.OVERVIEW_HEADERS), rows) + "".join(
        f"<h3>{heading}</h3>\n<p>{prose}</p>\n" for heading, prose in sections
    )


MACHINE_TYPE = st.sampled_from(
    ["a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a4x-highgpu-4g", "g2-standard-96", "a2-ultragpu-1g"]
)


@st.composite
def gcp_machines_page(draw: st.DrawFn) -> str:
    rows = draw(
        st.lists(
            st.tuples(or_noise(MACHINE_TYPE, 2), or_noise(COUNT, 2), st.just("26")).map(list), max_size=5
        )
    )
    return html_table(["Machine type", "GPU count", "vCPU count"], rows)


@st.composite
def gcp_documents(draw: st.DrawFn) -> tuple[DocumentSet, str]:
    if draw(st.booleans()):
        return draw(document_set(GCP_FIXTURE, "gcp"))
    bodies = {
        gcp.NETWORK_URLS[0]: draw(gcp_network_page()),
        gcp.NETWORK_URLS[1]: draw(st.one_of(st.none(), gcp_network_page())),
        gcp.MACHINES_URL: draw(gcp_machines_page()),
    }
    return DocumentSet(doc(u, "gcp", b) for u, b in bodies.items()), "\n".join(
        b or "" for b in bodies.values()
    )


@given(case=gcp_documents())
def test_gcp(case):
    documents, text = case
    run_parser(lambda: parse_all(gcp.Gcp(), documents), text)


@given(html=st.one_of(TEXT, gcp_network_page(), gcp_machines_page(), *map(mutated, GCP_FIXTURE.values())))
def test_gcp_page_parsers(html):
    def check():
        for facts in strict(lambda: gcp.parse_network_page(html, gcp.NETWORK_URLS[0])) or []:
            expect(facts.series in gcp.SERIES_PREFIXES, f"series {facts.series!r}")
            for claim in facts.claims:
                check_claim(claim)
        for machine in gcp.parse_machine_types(html, gcp.MACHINES_URL):
            expect(isinstance(machine.instance_type, str), f"{machine!r}")
            count = machine.gpu_count
            expect(isinstance(count, int) and count > 0, f"machine type with GPU count {count}: {machine!r}")

    run_parser(check, html)


# ------------------------------------------------------------------------------------------------
# scrapers/oci.py

OCI_GPU = st.sampled_from(["H100", "H200", "B200", "A100", "A10", "V100", "P100", "L40S", "MI300X", "X9000"])


@st.composite
def oci_row(draw: st.DrawFn) -> list[str]:
    gpu = draw(OCI_GPU)
    suffix = draw(st.one_of(COUNT, st.just("")))
    shape = f"BM.GPU.{gpu}.{suffix}" if suffix else f"BM.GPU.{gpu}"
    if draw(st.booleans()):
        shape += f" ({draw(COUNT)}{draw(st.sampled_from(['x', ' x ', 'X']))}{draw(or_noise(OCI_GPU, 2))})"
    parts = draw(st.lists(or_noise(bandwidth_text()), min_size=0, max_size=3))
    network = "<br>".join(p + draw(st.sampled_from(["", " RDMA"])) for p in parts)
    return [draw(or_noise(st.just(shape))), "64", draw(or_noise(NUMBER)), "2048", "NVMe", network, "64", "-"]


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
OCI_PAGE = st.one_of(
    st.lists(oci_row(), min_size=1, max_size=4).map(
        lambda rows: "<h2>GPU Shapes</h2>" + html_table(OCI_HEADERS, rows)
    ),
    fixtures("oci/*.html").flatmap(mutated),
    TEXT,
)


@given(html=OCI_PAGE)
def test_oci(html):
    run_parser(lambda: parse_all(oci.Oci(), DocumentSet([doc(oci.SHAPES_URL, "oci", html)])), html)


# ------------------------------------------------------------------------------------------------
# scrapers/runpod.py

RUNPOD_FIXTURE = {
    runpod.CLUSTERS_URL: fixture("runpod/instant-clusters.mdx"),
    runpod.GPU_TYPES_URL: fixture("runpod/gpu-types.mdx"),
    runpod.FLASH_GPU_TYPES_URL: fixture("runpod/flash-gpu-types.mdx"),
    runpod.OBSERVABILITY_URL: fixture("runpod/cluster-observability.mdx"),
}
NODES_CELL = st.one_of(
    st.tuples(
        COUNT, st.just("-"), COUNT, st.just(" nodes ("), COUNT, st.just("-"), COUNT, st.just(" GPUs)")
    ).map("".join),
    st.tuples(COUNT, st.sampled_from([" node (", " nodes ("]), COUNT, st.just(" GPUs)")).map("".join),
)


@st.composite
def runpod_documents(draw: st.DrawFn) -> tuple[DocumentSet, str]:
    if draw(st.booleans()):
        return draw(document_set(RUNPOD_FIXTURE, "runpod"))
    clusters = md_table(
        ["GPU", "Network speed", "Nodes"],
        draw(
            st.lists(
                st.tuples(or_noise(OCI_GPU), or_noise(bandwidth_text()), or_noise(NODES_CELL)).map(list),
                max_size=4,
            )
        ),
    )
    interfaces = draw(
        st.tuples(DIGITS, DIGITS).map(lambda t: f"The (`ens{t[0]}`-`ens{t[1]}`) handle inter-node traffic.")
    )
    types = md_table(
        ["GPU ID", "Display Name", f"Memory ({draw(st.sampled_from(['GB', 'GiB', 'MB', 'x']))})"],
        draw(
            st.lists(
                st.tuples(
                    or_noise(
                        st.tuples(GPU_NAME, st.sampled_from(["", " MIG 1g.24gb", " MIG 3g.40gb"])).map(
                            "".join
                        )
                    ),
                    or_noise(GPU_NAME),
                    or_noise(NUMBER),
                ).map(list),
                max_size=4,
            )
        ),
    )
    flash = md_table(
        ["GpuType", "GPU Model", "VRAM", "Architecture"],
        draw(
            st.lists(
                st.tuples(
                    or_noise(
                        st.sampled_from(
                            ["`GpuType.NVIDIA_H100_80GB_HBM3`", "`GpuType.NVIDIA_A100_80GB_PCIe`"]
                        )
                    ),
                    st.just("x"),
                    or_noise(MEMORY_CELL),
                    st.just("Hopper"),
                ).map(list),
                max_size=3,
            )
        ),
    )
    bodies = {
        runpod.CLUSTERS_URL: clusters + "\n" + interfaces,
        runpod.GPU_TYPES_URL: types,
        runpod.FLASH_GPU_TYPES_URL: flash,
        runpod.OBSERVABILITY_URL: draw(or_noise(st.just(RUNPOD_FIXTURE[runpod.OBSERVABILITY_URL]))),
    }
    return DocumentSet(doc(u, "runpod", b) for u, b in bodies.items()), "\n".join(bodies.values())


@given(case=runpod_documents())
def test_runpod(case):
    documents, text = case
    run_parser(lambda: parse_all(runpod.RunPod(), documents), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_runpod_real_mutated(mirror, data):
    documents, text = data.draw(document_set({url: mirror(url) for url in RUNPOD_FIXTURE}, "runpod"))
    run_parser(lambda: parse_all(runpod.RunPod(), documents), text)


# ------------------------------------------------------------------------------------------------
# scrapers/nebius.py

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
    st.sampled_from(["204800", "81920", "0", "-1", "1e999", "'80'", "9" * 400]),
    PY_LITERAL,
)
GPU_INFO = st.one_of(
    st.tuples(or_noise(OCI_GPU, 1), or_noise(COUNT, 1), MIB, MIB).map(
        lambda t: (
            f"{{'Gpus': [{{'Name': '{t[0]}', 'Manufacturer': 'NVIDIA', 'Count': {t[1]}, "
            f"'MemoryInfo': {{'SizeInMiB': {t[2]}}}}}], 'TotalGpuMemoryInMiB': {t[3]}}}"
        )
    ),
    PY_LITERAL,
    st.just(""),
)
# fmt: off
NEBIUS_COLUMNS = [
    "InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price", "Region", "GpuInfo",
    "SpotPrice",
]
# fmt: on


def csv_text(rows: list[list[str]]) -> str:
    import csv
    import io

    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows([NEBIUS_COLUMNS, *rows])
    return out.getvalue()


NEBIUS_ROW = st.tuples(
    or_noise(
        st.tuples(
            st.sampled_from(
                ["gpu-h100-sxm", "gpu-h200-sxm", "gpu-b200-sxm", "gpu-l40s-d", "cpu-e2", "gpu-x9000"]
            ),
            st.sampled_from(["_8gpu-128vcpu-1600gb", "_1gpu-16vcpu-200gb", "", "_"]),
        ).map("".join),
        2,
    ),
    or_noise(OCI_GPU, 2),
    or_noise(COUNT, 2),
    st.just("16"),
    or_noise(NUMBER, 2),
    st.just("1.00"),
    st.sampled_from(["eu-north1", "us-central1"]),
    GPU_INFO,
    st.just(""),
).map(list)
NEBIUS_CSV = st.one_of(
    st.lists(NEBIUS_ROW, max_size=4).map(csv_text),
    fixtures("nebius/*.csv").flatmap(mutated),
    TEXT,
)


@given(text=NEBIUS_CSV)
def test_nebius(text):
    run_parser(lambda: parse_all(nebius.Nebius(), DocumentSet([doc(nebius.VMS_URL, "nebius", text)])), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_nebius_real_mutated(mirror, data):
    text = data.draw(mutated(mirror(nebius.VMS_URL)))
    run_parser(lambda: parse_all(nebius.Nebius(), DocumentSet([doc(nebius.VMS_URL, "nebius", text)])), text)


# ------------------------------------------------------------------------------------------------
# scrapers/curated.py: TOML files built from well-typed values with random contents, and the
# repository's own curated files mutated.


def toml_value(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value).replace("inf", "inf")
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


FACT_TEXT = {
    "gpu_model": GPU_NAME,
    "gpu_count": COUNT,
    "gpu_memory_gb": MEMORY_CELL,
    "intra_node_link": st.sampled_from(["NVLink", "NVSwitch", "PCIe", "Infinity Fabric", "NVLink bridge"]),
    "inter_node_fabric": st.sampled_from(
        [*sorted(f.value for f in Fabric), "InfiniBand", "RoCE", "carrier pigeon"]
    ),
    "nic_count": NUMBER,
    "frontend_nic_count": NUMBER,
    "scale_up_domain_gpus": NUMBER,
}
FIELDS = st.sampled_from([*FIELD_UNITS, "bogus", "bogus_gbits_per_s"])


@st.composite
def curated_fact(draw: st.DrawFn) -> dict[str, Any]:
    field = draw(FIELDS)
    text_strategy = FACT_TEXT.get(field, bandwidth_text())
    optional = {
        "field": st.just(field),
        "text": or_noise(text_strategy),
        "quote": or_noise(st.just("quoted text")),
        "url": st.just("https://example.test/specs"),
        "read_on": st.one_of(st.dates(), st.dates().map(date.isoformat)),
        "basis": st.sampled_from([b.value for b in Basis]),
        "qualifiers": noise(3),
        "context": noise(3),
        "form_factor": FORM_FACTORS.filter(lambda f: f is not None),
        "note": noise(3),
    }
    required = {key: optional.pop(key) for key in ("field", "text")}
    return draw(st.fixed_dictionaries(required, optional=optional))


CURATED_FILE = st.fixed_dictionaries(
    {"provider": st.just("test")},
    optional={
        "reviewed_on": st.dates(),
        "defaults": st.fixed_dictionaries(
            {},
            optional={"url": st.just("https://example.test/d"), "read_on": st.dates(), "context": noise(2)},
        ),
        "instance": st.lists(
            st.fixed_dictionaries(
                {"instance_type": or_noise(st.just("big.8x"))},
                optional={
                    "source_url": st.just("https://example.test/specs"),
                    "fact": st.lists(curated_fact(), max_size=5),
                },
            ),
            max_size=3,
        ),
    },
).map(toml_document)
CURATED_REPO_FILES = {
    p.stem: p.read_text(encoding="utf-8") for p in sorted((ROOT / "scrapers/curated").glob("*.toml"))
}


@st.composite
def curated_case(draw: st.DrawFn) -> tuple[str, str]:
    if draw(st.booleans()):
        return draw(CURATED_FILE), "test"
    provider = draw(st.sampled_from(sorted(CURATED_REPO_FILES)))
    return draw(mutated(CURATED_REPO_FILES[provider])), provider


def curated_parse(text: str, provider: str) -> list[RawOffer]:
    """Every claim well-formed; build_offer over the rows the pipeline builds from them: a curated
    offer naming no GPU only supplements a scraped row (curated.merge drops it when alone)."""
    offers = curated.parse_curated(text, provider)
    expect(isinstance(offers, list), "not a list")
    for raw in offers:
        expect(isinstance(raw, RawOffer) and raw.provider == provider, f"{raw!r}")
        for claim in raw.claims:
            check_claim(claim)
            expect(isinstance(claim.read_on, date), f"curated claim without read_on date: {claim!r}")
    return check_offers(curated.merge([], offers), provider, kind="curated")


@given(case=curated_case())
def test_curated(case):
    text, provider = case
    run_parser(lambda: curated_parse(text, provider), text)


# ------------------------------------------------------------------------------------------------
# Regression tests: one per bug the properties found, the @example being its minimal failing input.
# Each must end in a well-formed result or a ParseError, nothing else.


def aws_doc(
    *,
    accelerators: str = "8 x NVIDIA H100 GPU",
    memory: str = "640 GiB (8 x 80 GiB)",
    bandwidth: str = "3200 Gigabit",
    efa: str = "✓ Yes",
    cards: str = "32",
) -> str:
    """The AWS page with one instance type, p5.48xlarge, whose cells are the arguments."""
    return (
        "## Performance specifications\n\n"
        + md_table(
            ["Instance type", "Memory (GiB)", "Processor", "vCPUs", "Accelerators", "Accelerator memory"],
            [["p5.48xlarge", "2048.00", "AMD EPYC 7R13", "192", accelerators, memory]],
        )
        + "\n## Network specifications\n\n"
        + md_table(
            ["Instance type", "Baseline / Burst bandwidth (Gbps)", "EFA", "ENA", "Network cards"],
            [["p5.48xlarge", bandwidth, efa, "✓ Yes", cards]],
        )
    )


def oci_doc(
    *, shape: str = "BM.GPU.H100.8 (8xH100)", network: str = "1 x 100 Gbps<br>8 x 2 x 200 Gbps RDMA"
) -> DocumentSet:
    """The OCI page with one GPU shape."""
    row = [shape, "112", "640", "2048", "NVMe", network, "256", "-"]
    return DocumentSet([doc(oci.SHAPES_URL, "oci", "<h3>GPU Shapes</h3>" + html_table(OCI_HEADERS, [row]))])


def gcp_docs(
    *, count: str = "8", total: str = "1,000 Gbps", technology: str = "GPUDirect-TCPX"
) -> DocumentSet:
    """The GCP network page with one series (A3 High) and the machine page with one machine type."""
    network = html_table(list(gcp.OVERVIEW_HEADERS), [["A3 High", "NVIDIA H100 80GB", total, technology]])
    machines = html_table(["Machine type", "GPU count"], [["a3-highgpu-8g", count]])
    return DocumentSet([doc(gcp.NETWORK_URLS[0], "gcp", network), doc(gcp.MACHINES_URL, "gcp", machines)])


def runpod_docs(
    *, speed: str = "3200 Gbps", nodes: str = "2-8 nodes (16-64 GPUs)", last_interface: str = "8"
) -> DocumentSet:
    """The RunPod Instant Clusters page with one row (B200), and the GPU types fixture."""
    clusters = md_table(["GPU", "Network speed", "Nodes"], [["B200", speed, nodes]])
    clusters += f"\nThe interfaces (`ens1`-`ens{last_interface}`) handle inter-node communication.\n"
    return DocumentSet(
        [
            doc(runpod.CLUSTERS_URL, "runpod", clusters),
            doc(runpod.GPU_TYPES_URL, "runpod", RUNPOD_FIXTURE[runpod.GPU_TYPES_URL]),
        ]
    )


def azure_docs(
    *,
    count: str = "8",
    memory: str = "640",
    specs_count: str = "4 - 8 GPUs",
    nics: str = "8",
    frontend: str = "80000",
    scale_out: tuple[str, str] | None = None,
    summary: str = AZURE_FIXTURE[AZ_SUMMARY],
) -> DocumentSet:
    """An Azure series page with one RDMA size, Standard_ND96isr_T9_v9, and its two includes."""
    headers, row = ["Size Name", "Max NICs (Qty.)", "Max Bandwidth (Mbps)"], [nics, frontend]
    if scale_out is not None:
        headers += ["Scale-Out Bandwidth (Gbps)", "Scale-out NICS"]
        row += list(scale_out)
    page = (
        "# ND-Test-v9 sizes series\n\n"
        "[!INCLUDE [summary](./includes/nd-test-v9-series-summary.md)]\n"
        "[!INCLUDE [specs](./includes/nd-test-v9-series-specs.md)]\n\n"
        + md_table(headers, [["Standard_ND96isr_T9_v9", *row]])
        + "\n"
        + md_table(
            ["Size Name", "Accelerators (Qty.)", "Accelerator-Memory (GB)"],
            [["Standard_ND96isr_T9_v9", count, memory]],
        )
    )
    specs = md_table(
        ["Part", "Quantity", "Specs"],
        [
            ["Network", "4 - 8 NICs", "40,000 - 80,000 Mbps"],
            ["Accelerators", specs_count, "Nvidia H100 GPU (80GB)"],
        ],
    )
    return DocumentSet(
        [doc(AZ_PAGE, "azure", page), doc(AZ_SPECS, "azure", specs), doc(AZ_SUMMARY, "azure", summary)]
    )


H100_GPU_INFO = (
    "{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8, "
    "'MemoryInfo': {'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360}"
)


def nebius_docs(*, count: str = "8", gpu_info: str = H100_GPU_INFO) -> DocumentSet:
    """The Nebius vms.csv with one GPU row."""
    row = [
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",
        "H100",
        count,
        "128",
        "1600",
        "20.00",
        "eu-north1",
        gpu_info,
        "",
    ]
    return DocumentSet([doc(nebius.VMS_URL, "nebius", csv_text([row]))])


NINES = "9" * 309  # 1e309: past the largest float


# Was: normalize.units: to_number reads 'nan'/'inf' and >308-digit numbers as non-finite floats, so
# parse_bandwidth and parse_memory_gb return inf and a link count past 1.8e308 raises
# OverflowError
@given(
    number=st.one_of(
        st.sampled_from(["nan", "NaN", "inf", "Infinity"]), st.integers(309, 400).map("9".__mul__)
    )
)
@example(number="nan")
@example(number=NINES)
def test_regression_units_accept_non_finite_numbers(number):
    def finite_number() -> None:
        expect(math.isfinite(units.to_number(number)), f"to_number({number!r}) is non-finite")

    for text in (f"{number} Gbps", f"{number} x 1 Gbps", "99999 x " * 62 + "1 Gbps"):
        strict(lambda text=text: check_bandwidth(units.parse_bandwidth(text), text))
    strict(lambda: finite_non_negative(units.parse_memory_gb(f"{number} GB"), "memory"))
    strict(finite_number)
    strict(lambda: parse_all(azure.Azure(), azure_docs(scale_out=("400", number))))


# Was: GPU and NIC counts are unbounded ints: past 1.8e308 float() overflows (OverflowError in
# azure/nebius/oci/runpod/aws parsers) and past 4,300 digits parse_gpu_count raises ValueError
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(
            lambda n: units.parse_gpu_count(n) and float(units.parse_gpu_count(n)), id="parse_gpu_count"
        ),
        pytest.param(lambda n: parse_all(azure.Azure(), azure_docs(count=n)), id="azure-count"),
        pytest.param(lambda n: parse_all(azure.Azure(), azure_docs(nics=n)), id="azure-nics"),
        pytest.param(lambda n: parse_all(nebius.Nebius(), nebius_docs(count=n)), id="nebius-count"),
        pytest.param(lambda n: parse_all(oci.Oci(), oci_doc(shape=f"BM.GPU.H100.{n}")), id="oci-shape"),
        pytest.param(
            lambda n: parse_all(runpod.RunPod(), runpod_docs(nodes=f"1 node ({n} GPUs)")), id="runpod"
        ),
        pytest.param(lambda n: aws_parse(aws_doc(cards=n)), id="aws-cards"),
        pytest.param(lambda n: parse_all(runpod.RunPod(), runpod_docs(last_interface=n)), id="runpod-ens"),
    ],
)
@given(digits=st.integers(309, 400))
@example(digits=309)
@example(digits=4301)
def test_regression_huge_counts_overflow(parse, digits):
    strict(lambda: parse("9" * digits))


# Was: a GPU count of 0 is accepted: ZeroDivisionError (oci) or a gpu_count 0 claim that build_offer
# rejects (aws, gcp, runpod, azure)
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(
            lambda z: aws_parse(aws_doc(accelerators=f"{z} x NVIDIA H100 GPU", memory="80 GiB")), id="aws"
        ),
        pytest.param(lambda z: parse_all(oci.Oci(), oci_doc(shape=f"BM.GPU.H100.{z}")), id="oci"),
        pytest.param(lambda z: parse_all(gcp.Gcp(), gcp_docs(count=z)), id="gcp"),
        pytest.param(
            lambda z: parse_all(runpod.RunPod(), runpod_docs(nodes=f"1 node ({z} GPUs)")), id="runpod"
        ),
        pytest.param(
            lambda z: parse_all(azure.Azure(), azure_docs(count="", specs_count=f"{z} GPUs")), id="azure"
        ),
    ],
)
@given(zero=st.sampled_from(["0", "00", "000"]))
@example(zero="0")
def test_regression_zero_gpu_count_accepted(parse, zero):
    strict(lambda: parse(zero))


# Was: parse_bandwidth accepts '0 Gbps' and parsers emit 0 Gbit/s claims; as the inter-node figure
# build_offer rejects the row (InvalidOffer: inter_node_gbits_per_s must be positive)
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(lambda bw: aws_parse(aws_doc(bandwidth=bw)), id="aws"),
        pytest.param(lambda bw: parse_all(oci.Oci(), oci_doc(network=bw)), id="oci"),
        pytest.param(lambda bw: parse_all(gcp.Gcp(), gcp_docs(total=bw)), id="gcp"),
        pytest.param(lambda bw: parse_all(runpod.RunPod(), runpod_docs(speed=bw)), id="runpod"),
        pytest.param(lambda bw: parse_all(azure.Azure(), azure_docs(frontend=bw.split()[0])), id="azure"),
    ],
)
@given(figure=st.sampled_from(["0 Gbps", "0.0 Gbps", "0 x 0 Gbps", "up to 0 Gbps"]))
@example(figure="0 Gbps")
def test_regression_zero_bandwidth_accepted(parse, figure):
    strict(lambda: parse(figure))


# Was: an empty cell becomes a claim's quote: Claim() raises InvalidOffer ('claim has no quote')
# inside the parser (aws EFA cell, gcp networking-technology cell)
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(lambda cell: aws_parse(aws_doc(efa=cell)), id="aws-efa"),
        pytest.param(lambda cell: parse_all(gcp.Gcp(), gcp_docs(technology=cell)), id="gcp-technology"),
    ],
)
@given(cell=st.sampled_from(["", " ", "<br>"]))
@example(cell="")
def test_regression_empty_cell_becomes_a_quote(parse, cell):
    strict(lambda: parse(cell))


# Was: str.isdigit() accepts '²' (and other non-decimal digits) that int() rejects: ValueError
# escapes gcp.parse_machine_types, aws._network_claims and azure._frontend_claims
@pytest.mark.parametrize(
    "parse",
    [
        pytest.param(lambda digit: parse_all(gcp.Gcp(), gcp_docs(count=digit)), id="gcp-gpu-count"),
        pytest.param(lambda digit: aws_parse(aws_doc(cards=digit)), id="aws-network-cards"),
        pytest.param(lambda digit: parse_all(azure.Azure(), azure_docs(nics=digit)), id="azure-nics"),
    ],
)
@given(digit=st.sampled_from(["²", "³", "¹", "8²", "①"]))
@example(digit="²")
def test_regression_isdigit_accepts_non_decimal_digits(parse, digit):
    strict(lambda: parse(digit))


def _gpu_info(size_mib: str, total_mib: str = "655360") -> str:
    return H100_GPU_INFO.replace("81920", size_mib).replace("655360", total_mib)


# Was: nebius.gpu_info lets TypeError out of ast.literal_eval (an unhashable dict key or set item),
# and a >308-digit SizeInMiB / TotalGpuMemoryInMiB raises OverflowError
@given(gpu_info=st.sampled_from(["{[]: 1}", "{[]}", "{{}: 0}", _gpu_info(NINES), _gpu_info("81920", NINES)]))
@example(gpu_info="{[]: 1}")
@example(gpu_info=_gpu_info(NINES))
def test_regression_nebius_gpu_info_errors_escape(gpu_info):
    strict(lambda: parse_all(nebius.Nebius(), nebius_docs(gpu_info=gpu_info)))


FRACTIONAL_SUMMARY = (
    "Each GPU within the VM is provided with its own dedicated 200 Gb/s NVIDIA HDR InfiniBand connection."
)


# Was: azure_prose._fabric_claims truncates a fractional GPU count (int(0.5) == 0): a per-GPU
# InfiniBand figure becomes 0 Gbit/s and 0 NICs per VM, and build_offer rejects the row
@given(count=st.sampled_from(["1/2", "0.5", "1/8", "0.25"]))
@example(count="1/2")
def test_regression_azure_fractional_gpu_count_zeroes_the_fabric(count):
    documents = azure_docs(count=count, memory="40", summary=FRACTIONAL_SUMMARY)  # 80 GB per GPU
    strict(lambda: parse_all(azure.Azure(), documents))


# Was: gbits_to_gbytes rounds to 12 significant digits while InstanceOffer requires gbits / 8 ==
# gbytes within an absolute 1e-6: build_offer rejects a stated figure like 8,000,000,009 Gbit/s
@given(gbits=st.integers(8 * 10**9, 10**12).filter(lambda n: n % 8))
@example(gbits=8_000_000_009)
def test_regression_huge_bandwidth_breaks_the_gbytes_invariant(gbits):
    strict(lambda: aws_parse(aws_doc(bandwidth=f"{gbits} Gigabit")))


GOOD_FACT = {
    "field": "gpu_count",
    "text": "8",
    "quote": "8x H100",
    "url": "https://example.test/specs",
    "read_on": date(2026, 12, 1),
}


def curated_toml(fact: dict[str, Any] | None = None, **top: Any) -> str:
    """A curated file of provider 'test' with one instance holding ``fact``, and ``top`` keys."""
    instance: dict[str, Any] = {"instance_type": "big.8x", "source_url": "https://example.test/specs"}
    if fact is not None:
        instance["fact"] = [fact]
    return toml_document({"provider": "test", "instance": [instance], **top})


TOML_VALUE = st.one_of(
    st.text(max_size=6), st.integers(), st.floats(allow_nan=False), st.booleans(), st.dates(), st.just([1])
)


@st.composite
def confused_curated(draw: st.DrawFn) -> str:
    """A valid file with one value replaced by a value of any type, or one fact key dropped."""
    fact = dict(GOOD_FACT)
    key = draw(st.sampled_from([*GOOD_FACT, "basis", "qualifiers", "context", "note", "form_factor"]))
    if draw(st.booleans()) and key in fact:
        del fact[key]
    else:
        fact[key] = draw(TOML_VALUE)
    if draw(st.booleans()):
        fact["field"] = draw(
            st.sampled_from(["gpu_memory_gb", "inter_node_gbits_per_s", "bogus_gbits_per_s"])
        )
    return curated_toml(fact)


# Was: parse_curated does not validate the values of a well-formed TOML file: an unknown basis, an
# unknown *_gbits_per_s field, a gpu_memory_gb fact without text, a bad read_on, an empty or
# non-text quote, or a non-table defaults/instance escape as ValueError, InvalidOffer, KeyError,
# TypeError or AttributeError
@given(text=confused_curated())
@example(text=curated_toml({**GOOD_FACT, "basis": "guessed"}))  # ValueError: not a valid Basis
@example(text=curated_toml({**GOOD_FACT, "field": "bogus_gbits_per_s", "text": "8 Gbps"}))  # InvalidOffer
@example(text=curated_toml({k: v for k, v in GOOD_FACT.items() if k != "text"} | {"field": "gpu_memory_gb"}))
@example(text=curated_toml({**GOOD_FACT, "read_on": "yesterday"}))  # ValueError: Invalid isoformat
@example(text=curated_toml({**GOOD_FACT, "quote": ""}))  # InvalidOffer: claim has no quote
@example(
    text=curated_toml({**GOOD_FACT, "quote": 5})
)  # AttributeError: 'int' object has no attribute 'strip'
@example(text=curated_toml(GOOD_FACT, defaults=1))  # TypeError: 'int' object is not a mapping
@example(text=curated_toml({**GOOD_FACT, "url": ""}))  # a claim citing no source
def test_regression_curated_values_not_validated(text):
    strict(lambda: curated_parse(text, "test"))


# Was: an include or series link that urllib cannot parse ('http://[' is an unclosed IPv6 host)
# raises ValueError from urljoin in azure.include_urls (so Azure.parse) and azure.series_urls
@given(href=st.sampled_from(["http://[", "https://[::1", "//[x", "http://[-"]))
@example(href="http://[")
def test_regression_azure_malformed_include_link(href):
    page = AZURE_FIXTURE[AZ_PAGE] + f"\n[!INCLUDE [x]({href}-summary.md)]\n"
    documents = DocumentSet([doc(AZ_PAGE, "azure", page), doc(AZ_SPECS, "azure", AZURE_FIXTURE[AZ_SPECS])])
    strict(lambda: parse_all(azure.Azure(), documents))
    strict(lambda: azure.series_urls([(azure.FAMILY_PAGES[1], f"[ND]({href}-series.md)")]))
