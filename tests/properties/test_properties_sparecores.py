"""Property tests of scrapers/measurements/sparecores.py: nvbandwidth JSON and meta.json, random and
mutated."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.sparecores import SpareCores, meta_url, stdout_url
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated

pytestmark = MARKS
RUN = "gcp/a3-highgpu-8g"
CELL = st.one_of(NUMBER, st.just("N/A"), st.none(), st.integers(), st.floats())
CASE = st.fixed_dictionaries(
    {
        "name": st.sampled_from(
            [
                "host_to_device_memcpy_ce",
                "device_to_device_memcpy_read_ce",
                "device_to_device_bidirectional_memcpy_read_sm",
                "x",
            ]
        ),
        "status": st.sampled_from(["Passed", "Waived", "Failed"]),
        "bandwidth_description": st.sampled_from(
            ["memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", "Total bandwidth (GB/s)", ""]
        ),
        "bandwidth_matrix": st.lists(st.lists(CELL, max_size=3), max_size=9),
    }
)
STDOUT = st.lists(CASE, max_size=4).map(
    lambda cases: json.dumps({"nvbandwidth": {"version": "v0.8", "testcases": cases}})
)
META = st.one_of(st.just('{"outputs": ["stdout"], "version": "v0.5", "start": "2024-09-26T06:33:44"}'), TEXT)


def documents(stdout: str, meta: str) -> DocumentSet:
    return DocumentSet([doc(meta_url(RUN), "sparecores", meta), doc(stdout_url(RUN), "sparecores", stdout)])


@given(stdout=st.one_of(STDOUT, TEXT), meta=META)
def test_sparecores(stdout, meta):
    check_source(SpareCores(), documents(stdout, meta), stdout)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_sparecores_real_mutated(real_document, data):
    stdout = data.draw(mutated(real_document(stdout_url(RUN))))
    check_source(SpareCores(), documents(stdout, real_document(meta_url(RUN))), stdout)
