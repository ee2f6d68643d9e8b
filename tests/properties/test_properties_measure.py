"""Property tests of measure/: any text, random tool-shaped text and mutated real tool outputs give
well-formed readings (finite, positive, in their metric's unit, quoting the text) or a ParseError."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from measure import parse_output
from measure.common import Origin
from measure.probe_record import probe_readings, read_probe_record
from records.measurements import METRICS, TEXT_METRICS, Measurement
from tests.conftest import shared_fixture
from tests.helpers import SHARED
from tests.properties.property_checks import MARKS, expect, run_parser
from tests.properties.property_inputs import NUMBER, TEXT, mutated, noise

pytestmark = MARKS
ORIGIN = Origin("user", "file:///tmp/x.txt")
ROW = st.tuples(
    NUMBER,
    NUMBER,
    st.sampled_from(["float", "double", "int8"]),
    st.sampled_from(["sum", "none", ""]),
    st.lists(NUMBER, min_size=0, max_size=9),
).map(lambda t: "  ".join([t[0], t[1], t[2], t[3], *t[4]]))
HEADER = st.sampled_from(
    [
        "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong",
        "#  size  count  type  redop  time  algbw  busbw  error  time  algbw  busbw  error",
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
        "        GPU0    GPU1    CPU Affinity    NUMA Affinity",
        "Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
        "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1",
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)",
        "#       size        count    time_ms   algbw_GBps   busbw_GBps",
    ]
)
TOOL_TEXT = st.lists(st.one_of(HEADER, ROW, noise(6), st.just("...")), max_size=12).map("\n".join)


def check_readings(readings: list[Measurement], text: str) -> None:
    expect(isinstance(readings, list) and bool(readings), "no readings and no ParseError")
    for m in readings:
        expect(isinstance(m, Measurement) and m.metric in METRICS, f"reading {m!r}")
        expect(m.quote in text, f"quote {m.quote!r} is not the source's text")
        if m.metric in TEXT_METRICS:
            expect(bool(m.value_text) and m.value is None, f"text metric {m!r}")
        else:
            expect(
                isinstance(m.value, float) and math.isfinite(m.value) and m.value > 0, f"value {m.value!r}"
            )


def parse(text: str, collective: str | None = None) -> None:
    readings = run_parser(lambda: parse_output(text, ORIGIN, collective=collective), text)
    if readings is not None:
        check_readings(readings, text)


@given(text=st.one_of(TEXT, TOOL_TEXT), collective=st.sampled_from([None, "all_reduce", "alltoall", "bogus"]))
def test_any_text(text, collective):
    parse(text, collective)


@shared_fixture(scope="module")
def real_outputs():
    root = SHARED / "reference" / "measurements"
    return [p.read_bytes().decode("utf-8") for p in sorted(root.rglob("*.txt"))]


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_real_outputs_mutated(real_outputs, data):
    text = data.draw(mutated(data.draw(st.sampled_from(real_outputs))))
    parse(text, data.draw(st.sampled_from([None, "all_gather"])))


@given(
    stdout=st.one_of(TEXT, TOOL_TEXT),
    extra=st.dictionaries(
        st.sampled_from(["provider", "collected_at", "runs"]), st.one_of(TEXT, st.none()), max_size=2
    ),
)
def test_probe_records(stdout, extra):
    import json

    record = {"format": "interconnect-catalog-probe", "version": 1, "runs": [{"tool": "x", "stdout": stdout}]}
    text = json.dumps({**record, **extra})
    parsed = run_parser(lambda: read_probe_record(text), text)
    if parsed is not None:
        readings, skipped = probe_readings(parsed, "file:///p.json", ORIGIN)
        expect(len(readings) > 0 or len(skipped) == len(parsed.runs), "a run neither read nor skipped")
        for m in readings:
            expect(m.source_url.startswith("file:///p.json#/runs/"), m.source_url)
