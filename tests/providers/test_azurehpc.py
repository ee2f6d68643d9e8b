"""azurehpc: Microsoft's health-check confs and HPC-image NCCL topology files, read in place."""

from __future__ import annotations

import pytest

from measure.common import Origin
from normalize.errors import ParseError
from records.documents import DocumentSet
from scrapers.measurements import azurehpc
from scrapers.measurements.azurehpc import CONF, CONFS, GB200_CONF, TOPOLOGY, AzureHpc, conf_readings
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror
from tests.properties.property_inputs import doc

ORIGIN = Origin("azurehpc", "https://example.test/x.conf", "expected", "azure", "Standard_X")


@shared_fixture(scope="module")
def readings():
    documents = fetch_from_mirror(AzureHpc())
    assert len(documents) == len(CONFS) + len(azurehpc.TOPOLOGIES) and all(d.ok for d in documents)
    return AzureHpc().parse_measurements(DocumentSet(documents))


def of(readings, size, metric):
    return [m for m in readings if m.instance_type == size and m.metric == metric]


def test_real_nd96isr_h100_v5_expects_8_ports_of_400_and_its_nccl_and_p2p_floors(readings, real_document):
    url = CONF + "nd96isr_h100_v5.conf"
    (ports,) = of(readings, "Standard_ND96isr_H100_v5", "ib_port_gbits_per_s")
    assert (ports.value, ports.port_count, ports.kind, ports.provider) == (400.0, 8, "expected", "azure")
    assert ports.locator == "lines 19-26 (8 check_hw_ib)" and ports.source_url == url
    assert ports.quote.startswith(" * || check_hw_ib 400 mlx5_ib0:1\n") and ports.quote in real_document(url)
    (nccl,) = of(readings, "Standard_ND96isr_H100_v5", "nccl_allreduce_busbw_gbytes_per_s")
    assert (nccl.value, nccl.nodes, nccl.gpus, nccl.message_bytes) == (460.0, 1, 8, 16 * 2**30)
    assert nccl.quote == " * || check_nccl_allreduce 460.0 1 16G $AZ_NHC_ROOT/topofiles/ndv5-topo.xml"
    (p2p,) = of(readings, "Standard_ND96isr_H100_v5", "gpu_to_gpu_gbytes_per_s")
    assert (p2p.value, p2p.direction) == (335.0, "one-way")
    (gdr,) = of(readings, "Standard_ND96isr_H100_v5", "ib_write_gbits_per_s")
    assert gdr.value == 380.0 and "README's 'GB/s' label for it is wrong" in gdr.notes


def test_real_gb200_conf_at_its_commit_and_the_ib_loopback_check(readings):
    size = "Standard_ND128isr_NDR_GB200_v6"
    (ports,) = of(readings, size, "ib_port_gbits_per_s")
    assert (ports.value, ports.port_count, ports.source_url) == (400.0, 4, GB200_CONF)
    (loop,) = of(readings, size, "nccl_allreduce_ib_loopback_busbw_gbytes_per_s")
    assert (loop.value, loop.gpus, loop.message_bytes) == (48.0, 4, 16 * 2**30)
    assert "NCCL_SHM_DISABLE" in loop.notes


def test_real_sizes_without_ib_and_amd_sizes(readings):
    assert of(readings, "Standard_ND96is_H100_v5", "ib_port_gbits_per_s") == []  # no IB port check
    mi300x = of(readings, "Standard_ND96isr_MI300X_v5", "ib_port_gbits_per_s")
    assert [(m.value, m.port_count) for m in mi300x] == [(400.0, 8)]
    assert (
        of(readings, "Standard_ND96isr_MI300X_v5", "host_to_gpu_gbytes_per_s") == []
    )  # rocm: not nvbandwidth
    (hb,) = of(readings, "Standard_HB176rs_v4", "ib_write_gbits_per_s")
    assert hb.value == 390.0 and "host memory" in hb.notes  # check_ib_bw_non_gdr on a CPU HPC VM


def test_real_topology_files_give_nic_counts_and_only_ncv4_a_speed(readings):
    for size in ("Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5"):
        (count,) = [m for m in of(readings, size, "nic_count") if m.source_url.startswith(TOPOLOGY)]
        assert (count.value, count.gpus) == (8.0, 8) and "1 per GPU" in count.notes
    (nd40,) = [m for m in of(readings, "Standard_ND40rs_v2", "nic_count")]
    assert nd40.value == 1.0 and "8 GPUs per NIC" in nd40.notes
    (eth,) = of(readings, "Standard_NC96ads_A100_v4", "nic_gbits_per_s")
    assert (eth.value, eth.port_count) == (100.0, 1) and "gdr=0" in eth.notes  # Ethernet, not the fabric


def test_real_every_reading_quotes_its_document(readings, real_document):
    # 129 before issue 20: + 12 expected NVLink states (check_nvlink_status on 2+ GPUs), - 2 GPU-to-GPU
    # thresholds no longer attached to one-GPU sizes (NC24ads A100 v4, NC40ads H100 v5), + 1 RCCL
    # all_reduce (MI300X's "  * || check_rccl_allreduce"); front-end mlx5_an0 ports are nic_gbits_per_s
    assert len(readings) == 140
    for m in readings:
        assert m.quote in real_document(m.source_url)


def test_fixture_malformed_checks_are_refused_with_the_line():
    with pytest.raises(ParseError, match="line 2: check_hw_ib rate 'fast' is not a number"):
        conf_readings("# conf\n * || check_hw_ib fast mlx5_ib0:1\n", ORIGIN)
    with pytest.raises(ParseError, match="line 1: check_nccl_allreduce without a figure"):
        conf_readings(" * || check_nccl_allreduce\n", ORIGIN)
    assert conf_readings(" #* || check_hw_ib 400 mlx5_ib0:1\n", ORIGIN) == []  # commented out


def test_fixture_missing_documents_leave_no_reading_and_an_empty_set_is_a_layout_error():
    documents = DocumentSet([doc(GB200_CONF, "azurehpc", " * || check_hw_ib 200 mlx5_ib0:1\n")])
    (only,) = AzureHpc().parse_measurements(documents)
    assert (only.instance_type, only.value, only.port_count) == ("Standard_ND128isr_NDR_GB200_v6", 200.0, 1)
    with pytest.raises(ParseError, match="no Azure health-check conf"):
        AzureHpc().parse_measurements(DocumentSet([]))


def test_fixture_crlf_lines_are_quoted_as_they_stand():
    text = "# conf\r\n * || check_hw_ib 200 mlx5_ib0:1\r\n * || check_hw_ib 200 mlx5_ib1:1\r\n"
    (ports,) = conf_readings(text, ORIGIN)
    assert ports.quote == " * || check_hw_ib 200 mlx5_ib0:1\r\n * || check_hw_ib 200 mlx5_ib1:1"
    assert ports.quote in text and (ports.port_count, ports.locator) == (2, "lines 2-3 (2 check_hw_ib)")
