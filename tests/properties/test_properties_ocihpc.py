"""Property tests of scrapers/measurements/ocihpc.py: Jinja branches with random checks and the mutated
template."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.ocihpc import TEMPLATE, OciHpc
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated, noise

pytestmark = MARKS
PIECE = st.one_of(
    st.sampled_from(
        [
            "{% if 'BM.GPU.H100.8' in nhc_node_shape %}",
            "{% elif 'BM.GPU.X' in nhc_node_shape or\n 'BM.GPU.Y' in nhc_node_shape %}",
            "{% if nhc_rdma_planes | int < 1 %}",
            "{% else %}",
            "{% endif %}",
            "{% for m in x %}",
            "{% endfor %}",
        ]
    ),
    NUMBER.map(lambda n: f"*||check_hw_ib {n} mlx5_0:1"),
    noise(3),
)
TEMPLATE_TEXT = st.lists(PIECE, max_size=12).map("\n".join)


@given(text=st.one_of(TEMPLATE_TEXT, TEXT))
def test_ocihpc(text):
    check_source(OciHpc(), DocumentSet([doc(TEMPLATE, "ocihpc", text)]), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_ocihpc_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(TEMPLATE)))
    check_source(OciHpc(), DocumentSet([doc(TEMPLATE, "ocihpc", text)]), text)
