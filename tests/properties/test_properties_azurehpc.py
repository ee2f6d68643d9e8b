"""Property tests of scrapers/measurements/azurehpc.py: NHC confs and topology XML with random and
mutated text."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.measurements.azurehpc import CONF, GB200_CONF, TOPOLOGY, AzureHpc
from tests.measurement_checks import check_source
from tests.properties.property_checks import MARKS
from tests.properties.property_inputs import NUMBER, TEXT, doc, mutated, noise

pytestmark = MARKS
CHECK = st.tuples(
    st.sampled_from(
        ["check_hw_ib", "check_nccl_allreduce", "check_ib_bw_gdr", "check_gpu_bw", "check_gpu_count"]
    ),
    st.lists(
        st.one_of(NUMBER, st.sampled_from(["16G", "8G", "rocm", "mlx5_ib0:1", "$AZ_NHC_ROOT/x.xml"])),
        max_size=4,
    ),
).map(lambda t: f" * || {t[0]} {' '.join(t[1])}")
CONF_TEXT = st.lists(st.one_of(CHECK, noise(4), st.just("#")), max_size=10).map("\n".join)
NET = st.tuples(NUMBER, st.sampled_from(["0", "1", ""])).map(
    lambda t: f'<net name="n" speed="{t[0]}" gdr="{t[1]}"/>'
)
TOPO_TEXT = st.lists(st.one_of(NET, st.just('<pci busid="1" class="0x020700"/>')), max_size=5).map(
    lambda items: "<system>" + "".join(items) + "</system>"
)
URL = CONF + "nd96isr_h100_v5.conf"


@given(conf=st.one_of(CONF_TEXT, TEXT), topology=st.one_of(TOPO_TEXT, TEXT))
def test_azurehpc(conf, topology):
    documents = DocumentSet(
        [doc(URL, "azurehpc", conf), doc(TOPOLOGY + "ndv4-topo.xml", "azurehpc", topology)]
    )
    check_source(AzureHpc(), documents, conf + topology)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_azurehpc_real_mutated(real_document, data):
    conf = data.draw(mutated(real_document(GB200_CONF)))
    topology = data.draw(mutated(real_document(TOPOLOGY + "ndv5-topo.xml")))
    documents = DocumentSet(
        [doc(GB200_CONF, "azurehpc", conf), doc(TOPOLOGY + "ndv5-topo.xml", "azurehpc", topology)]
    )
    check_source(AzureHpc(), documents, conf + topology)
