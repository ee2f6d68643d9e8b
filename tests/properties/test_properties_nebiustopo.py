"""Property tests of scrapers/measurements/nebiustopo.py: the topology file with random nets and mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.nebiustopo import H100_TOPOLOGY, NebiusTopology
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated

pytestmark = MARKS
NETS = st.lists(NUMBER.map(lambda n: f'<nic><net name="mlx5_{n}" speed="{n}" gdr="1"/></nic>'), max_size=4)
XML = NETS.map(lambda nets: "<system>" + "".join(nets) + "</system>")


@given(text=st.one_of(XML, TEXT))
def test_nebiustopo(text):
    check_source(NebiusTopology(), DocumentSet([doc(H100_TOPOLOGY, "nebiustopo", text)]), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_nebiustopo_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(H100_TOPOLOGY)))
    check_source(NebiusTopology(), DocumentSet([doc(H100_TOPOLOGY, "nebiustopo", text)]), text)
