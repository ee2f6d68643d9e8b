"""Property tests of scrapers/measurements/gcphealth.py: Helm values with random env lines and mutated
real files."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.gcphealth import FILES, GcpHealth
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated, noise

pytestmark = MARKS
KEY = st.sampled_from(
    ["INSTANCE_TYPE", "BANDWIDTH_THRESHOLD", "NHOSTS", "nr", "BENCHMARK", "START_MESSAGE_SIZE"]
)
ENV = st.tuples(
    KEY, st.one_of(NUMBER, noise(2), st.sampled_from(["all_reduce_perf", "bogus_perf", "a3-highgpu-8g"]))
)
VALUES = st.lists(ENV.map(lambda kv: f'    {kv[0]}: "{kv[1]}"'), max_size=8).map(
    lambda lines: "env:\n" + "\n".join(lines)
)


@given(text=st.one_of(VALUES, TEXT))
def test_gcphealth(text):
    check_source(GcpHealth(), DocumentSet([doc(FILES[0], "gcphealth", text)]), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_gcphealth_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(FILES[1])))
    check_source(GcpHealth(), DocumentSet([doc(FILES[1], "gcphealth", text)]), text)
