"""Property tests of scrapers/measurements/awshealth.py: profile tables with random cells and the
mutated real file."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.awshealth import FORMAT, PROFILES, AwsHealth
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated

pytestmark = MARKS
CELL = st.one_of(NUMBER, st.sampled_from(["p5.48xlarge", "g6.xlarge", "true", "false", "efa", "", " "]), TEXT)
LINE = st.lists(CELL, min_size=1, max_size=6).map("|".join)
TABLE = st.lists(LINE, max_size=6).map(lambda lines: f"# Format: {FORMAT}\n" + "\n".join(lines))


@given(text=st.one_of(TABLE, TEXT))
def test_awshealth(text):
    check_source(AwsHealth(), DocumentSet([doc(PROFILES, "awshealth", text)]), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_awshealth_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(PROFILES)))
    check_source(AwsHealth(), DocumentSet([doc(PROFILES, "awshealth", text)]), text)
