"""mlperf: MLPerf Training v5.1 system descriptions of clouds, read in place, with their traps."""

from __future__ import annotations

import pytest

from normalize.errors import LayoutError, ParseError
from records.documents import DocumentSet
from scrapers.measurements.mlperf import REPO, SYSTEMS, MlPerf, System, system_readings
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror

NEBIUS_B200 = REPO + "Nebius/systems/nebius_b200_n2.json"
NEBIUS_H200 = REPO + "Nebius/systems/nebius_h200_n64.json"
ORACLE = REPO + "Oracle/systems/2xBM.GPU.B200.8.json"
LAMBDA = REPO + "Lambda/systems/gb300_n18_ngc25.04_nemo.json"
DATACRUNCH = REPO + "Datacrunch/systems/b200_8x8_ngc25.09.json"


@shared_fixture(scope="module")
def readings():
    documents = fetch_from_mirror(MlPerf())
    assert [d.url for d in documents] == list(SYSTEMS) and all(d.ok for d in documents)
    return MlPerf().parse_measurements(DocumentSet(documents))


def of(readings, url):
    return {(m.metric, m.value, m.value_text, m.port_count) for m in readings if m.source_url == url}


def test_real_nebius_states_8_ib_ports_of_400_and_a_200_gbit_ethernet_front_end(readings, real_document):
    for url, preset in (
        (NEBIUS_B200, "gpu-b200-sxm_8gpu-160vcpu-1792gb"),
        (NEBIUS_H200, "gpu-h200-sxm_8gpu-128vcpu-1600gb"),
    ):
        found = [m for m in readings if m.source_url == url]
        assert {(m.provider, m.instance_type, m.kind) for m in found} == {("nebius", preset, "expected")}
        assert {("ib_port_gbits_per_s", 400.0, None, 8), ("nic_gbits_per_s", 200.0, None, 1)} <= of(
            readings, url
        )
        assert ("node_fabric", None, "infiniband", None) in of(readings, url)
        (net,) = [m for m in found if m.metric == "nic_gbits_per_s"]
        assert (
            net.quote.strip() == '"host_networking": "8x ConnectX-7 IB NDR 400Gb/s + 200Gb/s Ethernet NIC",'
        )
        assert "front-end NIC" in net.notes and "names no preset; matched on" in net.notes
        for m in found:
            assert m.quote in real_document(url) and m.tool == "MLPerf Training v5.1 system description"
    # "14.4 TB/s aggregated" over the B200 node's 8 GPUs is the B200's 1,800 GB/s each; H200 states 900
    assert ("gpu_nvlink_gbytes_per_s", 1800.0, None, None) in of(readings, NEBIUS_B200)
    assert ("gpu_interconnect", None, "nvlink", None) in of(readings, NEBIUS_B200)  # no switch named
    assert {
        ("gpu_nvlink_gbytes_per_s", 900.0, None, None),
        ("gpu_interconnect", None, "nvswitch", None),
    } <= of(readings, NEBIUS_H200)


def test_real_oracle_names_its_shape_roce_and_nvswitch_and_pcie_sums_are_not_read(readings, real_document):
    assert of(readings, ORACLE) == {
        ("node_fabric", None, "roce", None),
        ("gpu_interconnect", None, "nvswitch", None),
        ("gpu_nvlink_gbytes_per_s", 1800.0, None, None),
    }
    assert {m.instance_type for m in readings if m.source_url == ORACLE} == {"BM.GPU.B200.8"}
    assert "PCIe-NIC: 500 GB/s" in real_document(ORACLE)  # a per-node PCIe sum, direction unsaid: not read


def test_real_lambda_gb300_aggregate_is_an_8_gpu_figure_on_a_4_gpu_node(readings, real_document):
    assert '"accelerators_per_node": "4"' in real_document(LAMBDA)
    assert "14.4 TB/s aggregated" in real_document(LAMBDA)
    found = [m for m in readings if m.source_url == LAMBDA]
    assert not [m for m in found if m.metric == "gpu_nvlink_gbytes_per_s"]  # never 3.6 TB/s per GPU
    (link,) = [m for m in found if m.metric == "gpu_interconnect"]
    assert "is 8 x the GB300-288GB's 1800 GB/s, not 4 x" in link.notes
    assert {(m.provider, m.instance_type) for m in found} == {("lambda", None)}  # no Lambda GB300 row


def test_real_datacrunch_100gbe_infiniband_is_unreliable_never_a_fabric_or_figure(readings, real_document):
    assert '"host_networking": "100GbE InfiniBand"' in real_document(DATACRUNCH)
    found = [m for m in readings if m.source_url == DATACRUNCH]
    assert of(readings, DATACRUNCH) == {
        ("node_fabric", None, "unreliable", None),
        ("gpu_interconnect", None, "nvlink", None),
    }
    (fabric,) = [m for m in found if m.metric == "node_fabric"]
    assert "self-contradictory" in fabric.notes
    assert {(m.provider, m.instance_type) for m in found} == {("verda", None)}
    assert len(readings) == 17


def test_fixture_not_a_system_description_is_refused():
    system = System("oci", "BM.GPU.B200.8", "test")
    with pytest.raises(ParseError, match="not a system description"):
        system_readings("{", ORACLE, system, "mlperf")
    with pytest.raises(ParseError, match="no system_name"):
        system_readings('{"host_networking": "ROCE2"}', ORACLE, system, "mlperf")
    with pytest.raises(LayoutError, match="no MLPerf system description"):
        MlPerf().parse_measurements(DocumentSet([]))
