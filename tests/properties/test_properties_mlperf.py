"""Property tests of scrapers/measurements/mlperf.py: system descriptions with random networking and
interconnect text, and the mutated real files."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.mlperf import SYSTEMS, MlPerf
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated

pytestmark = MARKS
URLS = list(SYSTEMS)
WORDS = st.sampled_from(
    ["8x ", "IB", "NDR", "InfiniBand", "ROCE2", "Ethernet NIC", "GbE", "Gb/s", "GB/s", "TB/s", " + ", "; ",
     "NVLink", "NVSWITCH", "aggregated", "Data bandwidth for GPU-PCIe: ", "x "]
)  # fmt: skip
PHRASE = st.lists(st.one_of(WORDS, NUMBER), max_size=8).map("".join)
SYSTEM = st.fixed_dictionaries(
    {
        "system_name": st.one_of(TEXT, st.just("BM.GPU.B200.8")),
        "host_networking": st.one_of(PHRASE, TEXT, st.integers()),
        "accelerator_interconnect": st.one_of(PHRASE, TEXT, st.none()),
        "accelerators_per_node": st.one_of(NUMBER, st.just("4"), st.just("8")),
        "accelerator_model_name": st.sampled_from(
            ["NVIDIA Blackwell GPU (B200-SXM-180GB)", "GB300", "x", ""]
        ),
    }
).map(lambda d: json.dumps(d, indent=4))


@given(text=st.one_of(SYSTEM, TEXT), index=st.integers(0, len(URLS) - 1))
def test_mlperf(text, index):
    check_source(MlPerf(), DocumentSet([doc(URLS[index], "mlperf", text)]), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mlperf_real_mutated(real_document, data):
    url = data.draw(st.sampled_from(URLS))
    text = data.draw(mutated(real_document(url)))
    check_source(MlPerf(), DocumentSet([doc(url, "mlperf", text)]), text)
