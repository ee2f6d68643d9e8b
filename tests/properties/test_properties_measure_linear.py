"""Property test: every tool-output parser in measure/ is linear on long adversarial lines (issue 23).

'NCCL INFO ' * 20,000 on one line once took 86 s (nccl_transport) and a p2pBandwidthLatencyTest row of
30,000 spaces 14 s (p2p). Each parser here gets its own real header (so it is the one reading the
text) followed by one line of a few pieces repeated up to the line cap, and each call a time budget
far above linear and far below quadratic. A line past the cap is refused at once, naming the cap.
"""

from __future__ import annotations

import contextlib
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from measure import FORMATS, detect, parse_output
from measure.common import MAX_LINE_CHARS, Origin
from normalize.errors import ParseError
from tests.properties.property_checks import MARKS, expect, run_parser

pytestmark = MARKS
ORIGIN = Origin("user", "file:///tmp/x.txt")
BUDGET_S = 1.0  # a 16,000-character line in linear time takes a few milliseconds

# A header line that makes each format's recogniser claim the text.
HEADS = {
    "nccl-tests": "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
    "  8388608  2097152  float  sum  -1  123.4  67.98  118.97  0  122.1  68.70  120.23  0",
    "torch-benchmark": "#       size        count    time_ms   algbw_GBps   busbw_GBps",
    "ncclscout": "Testing a <-> b... 1.0 GB/s",
    "nvbandwidth": "Running device_to_device_memcpy_read_ce.\n"
    "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
    "p2pBandwidthLatencyTest": "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
    "   D\\D     0      1",
    "nvidia-smi topo": "        GPU0    GPU1    CPU Affinity    NUMA Affinity",
    "nvidia-smi nvlink": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s",
    "perftest": "                    RDMA_Write BW Test\n"
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    "fi_info": "provider: efa",
    "ibv_devinfo": "hca_id:\tmlx5_0",
    "sysfs net speed": "eth0 speed=100000 mtu=9001 driver=ena",
}
PIECES = [
    " ", "\t", "0", "0 ", "1.5 ", "9" * 12, ".", "x", "NCCL INFO ", "via NET/IB", "via NET/a ", " a",
    "via P2P/a", "Using network a", "GPU0 ", "NV12 ", "D\\D ", "#", "# ", "size ", "count ", "float ",
    " (UUID: ", "Link 0: ", "Rank 1 Pid 1 on ", "Testing ", "a <-> b", "... ", "domain: ", "port: 1 ",
    "state: ", " speed=", "[1,0]<stdout>:", "\x1b[1;", "1;", "N/A ", "Gb/sec ", "sum ", "/",
]  # fmt: skip
TAILS = ["", "x", "!", " x", "0", "/0/GDRDMA", " GB/s", ")"]


def test_every_format_has_a_head():
    assert set(HEADS) == {name for name, _, _ in FORMATS}
    for name, head in HEADS.items():
        assert name in detect(head + "\n"), name


@st.composite
def long_line(draw: st.DrawFn) -> str:
    lead = draw(st.sampled_from(["", "0", " ", "GPU0", "NCCL INFO ", "1 "]))
    unit = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3)))
    tail = draw(st.sampled_from(TAILS))
    size = draw(st.integers(MAX_LINE_CHARS // 2, MAX_LINE_CHARS - 40))
    return lead + unit * (size // len(unit)) + tail


def within_budget(text: str) -> None:
    started = time.perf_counter()
    run_parser(lambda: parse_output(text, ORIGIN), text)
    elapsed = time.perf_counter() - started
    expect(elapsed < BUDGET_S, f"{elapsed:.2f} s on {len(text):,} characters starting {text[:60]!r}")


@pytest.mark.parametrize("fmt", sorted(HEADS))
@settings(max_examples=12)
@given(line=long_line(), after=st.sampled_from(["", "\n", "\n0 1 2"]))
def test_each_parser_is_linear_on_a_long_adversarial_line(fmt, line, after):
    within_budget(HEADS[fmt] + "\n" + line + after)


@pytest.mark.parametrize(
    "line",
    [
        "NCCL INFO " * 1600 + "via NET/IB/0/GDRDMA",  # the issue's transport line, at the cap
        "0" + " " * (MAX_LINE_CHARS - 2) + "x",  # the issue's p2p row of spaces, at the cap
    ],
)
def test_the_issues_lines_at_the_cap_are_read_in_linear_time(line):
    for text in ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n" + line, line):
        started = time.perf_counter()
        with contextlib.suppress(ParseError):
            parse_output(text, ORIGIN)
        assert time.perf_counter() - started < BUDGET_S


@pytest.mark.parametrize("line", ["NCCL INFO " * 20_000, "0" + " " * 30_000 + "1"])
def test_a_line_past_the_cap_is_refused_at_once_naming_the_cap(line):
    started = time.perf_counter()
    with pytest.raises(
        ParseError, match=f"line 2: [0-9,]+ characters, over the {MAX_LINE_CHARS:,}-character cap"
    ):
        parse_output("NCCL INFO Using network IB\n" + line, ORIGIN)
    assert time.perf_counter() - started < BUDGET_S


def test_a_transport_line_after_many_info_prefixes_is_still_read():
    readings = parse_output(
        "x NCCL INFO " * 100 + "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA", ORIGIN
    )
    assert [r.value_text for r in readings] == ["NET/IB"]
