"""Property tests of normalize/ (bandwidth, memory, counts, GPU names, vocabulary) and the markdown reader."""

from __future__ import annotations

import math
import time
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from normalize import gpus, units, vocab
from normalize.vocab import Fabric, Link
from scrapers import markdown, tables
from tests.properties.property_checks import (
    FAMILIES,
    MARKS,
    Malformed,
    check_bandwidth,
    check_gpu_id,
    expect,
    finite_non_negative,
    run_parser,
)
from tests.properties.property_inputs import (
    COUNT,
    FORM_FACTORS,
    GPU_NAME,
    NUMBER,
    TEXT,
    UNIT_SPELLINGS,
    bandwidth_text,
    fixtures,
    mutated,
    noise,
)

pytestmark = MARKS


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


MARKDOWN = st.one_of(TEXT, fixtures("**/*.md*").flatmap(mutated))  # .md and .mdx


@given(text=MARKDOWN)
def test_markdown_never_raises(text):
    for table in markdown.markdown_tables(text):
        assert isinstance(table, tables.Table) and isinstance(table.heading, str)
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


# Long adversarial text: a few pieces repeated thousands of times. A backtracking pattern turns such
# text quadratic (40,000 digits once took 39 s in parse_bandwidth); every parser of a cell or a
# sentence must stay linear, so each call gets a time budget far above linear and far below quadratic.
LONG_PIECES = [
    "1", "9" * 15, " ", "\t", "1 ", "1,", ",000", "1.", ".1", "1 x ", " x ", "x", "-", "1 -", " - ",
    "1/", "/", "up to ", "up ", "Gbps", "1 Gbps ", "GB", "(", "per ", "each ", "1e", "nan",
]  # fmt: skip
LONG_BUDGET_S = 1.0  # a 60,000-character text in linear time takes a few milliseconds


@st.composite
def long_adversarial(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["", "1", "up to ", "4 x 1", "100 Gbps ", " "]))
    unit = "".join(draw(st.lists(st.sampled_from(LONG_PIECES), min_size=1, max_size=3)))
    tail = draw(st.sampled_from(["", "x", "1", " Gbps", "-", "/", " GB"]))
    return head + unit * (draw(st.integers(20_000, 60_000)) // len(unit)) + tail


def within_budget(call, text: str) -> None:
    started = time.perf_counter()
    run_parser(call, text)
    elapsed = time.perf_counter() - started
    expect(elapsed < LONG_BUDGET_S, f"{elapsed:.2f} s on {len(text):,} characters starting {text[:40]!r}")


@given(text=long_adversarial(), default_unit=st.sampled_from([None, "Gbps"]))
def test_parse_bandwidth_is_linear_on_long_adversarial_text(text, default_unit):
    within_budget(lambda: units.parse_bandwidth(text, default_unit=default_unit), text)
    within_budget(lambda: units.parse_bandwidth(text[:1500], default_unit=default_unit), text)


@given(text=long_adversarial())
def test_find_figures_is_linear_on_long_adversarial_text(text):
    within_budget(lambda: units.find_bandwidths(text), text)
    within_budget(lambda: units.find_memory_gb(text), text)
    within_budget(lambda: units.to_number(text), text)
