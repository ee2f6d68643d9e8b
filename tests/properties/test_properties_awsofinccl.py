"""Property tests of scrapers/measurements/awsofinccl.py: topology XML with random elements and mutated
real files."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.awsofinccl import FILES, AwsOfiNccl
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated

pytestmark = MARKS
URLS = list(FILES)
ELEMENT = st.one_of(
    st.tuples(NUMBER, st.sampled_from(["0", "1"])).map(
        lambda t: f'<net name="r{t[0]}" speed="{t[0]}" gdr="{t[1]}"/>'
    ),
    st.just('<pci busid="0000:10:1b.0" class="0x020000" vendor="0x1d0f" device="0xefa0"/>'),
    st.just('<pci busid="0000:10:1c.0" class="0x030200"/>'),
    st.just('<gpu dev="0"/>'),
)
XML = st.lists(ELEMENT, max_size=6).map(
    lambda items: '<system version="1">\n' + "\n".join(items) + "\n</system>"
)


@given(text=st.one_of(XML, TEXT))
def test_awsofinccl(text):
    check_source(AwsOfiNccl(), DocumentSet([doc(URLS[3], "awsofinccl", text)]), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_awsofinccl_real_mutated(real_document, data):
    url = data.draw(st.sampled_from([URLS[0], URLS[3]]))
    text = data.draw(mutated(real_document(url)))
    check_source(AwsOfiNccl(), DocumentSet([doc(url, "awsofinccl", text)]), text)
