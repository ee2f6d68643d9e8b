"""nebiustopo: Nebius's NCCL topology file for H100 GPU-cluster VMs, read in place."""

from __future__ import annotations

import pytest

from normalize.errors import LayoutError
from records.documents import DocumentSet
from scrapers.measurements.nebiustopo import H100_CLUSTER_VM, H100_TOPOLOGY, NebiusTopology
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror
from tests.properties.property_inputs import doc


@shared_fixture(scope="module")
def readings():
    documents = fetch_from_mirror(NebiusTopology())
    assert [d.url for d in documents] == [H100_TOPOLOGY]
    return NebiusTopology().parse_measurements(DocumentSet(documents))


def test_real_eight_400_gbit_infiniband_ports_one_per_gpu(readings, real_document):
    ports, count = sorted(readings, key=lambda m: m.metric)
    assert (ports.metric, ports.value, ports.port_count, ports.gpus) == ("ib_port_gbits_per_s", 400.0, 8, 8)
    assert (ports.provider, ports.instance_type, ports.kind) == ("nebius", H100_CLUSTER_VM, "expected")
    assert "mlx5_4, mlx5_5" in ports.notes and "1 per GPU" in ports.notes
    assert ports.quote.strip().startswith('<net name="mlx5_4" dev="4" speed="400000" port="1" latency=')
    assert ports.quote in real_document(H100_TOPOLOGY) and ports.locator.startswith("line 6 ")
    assert (count.metric, count.value) == ("nic_count", 8.0)


def test_fixture_a_file_without_nics_is_a_layout_error():
    documents = DocumentSet([doc(H100_TOPOLOGY, "nebiustopo", "<system version='1'><cpu/></system>")])
    with pytest.raises(LayoutError, match="lists no NIC"):
        NebiusTopology().parse_measurements(documents)
