"""awsofinccl: AWS's NCCL topology files for EC2 instance types, read in place."""

from __future__ import annotations

import pytest

from measure.common import Origin
from normalize.errors import LayoutError, ParseError
from records.documents import DocumentSet
from scrapers.measurements.awsofinccl import FILES, REPO, AwsOfiNccl
from scrapers.measurements.nccl_topology import topology_readings
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror

P5 = REPO + "79565c0e5a384bc35bf8a0e6378e60f88c2b2565/topology/p5.48xl-topo.xml"


@shared_fixture(scope="module")
def readings():
    documents = fetch_from_mirror(AwsOfiNccl())
    assert [d.url for d in documents] == list(FILES) and all(d.ok for d in documents)
    return AwsOfiNccl().parse_measurements(DocumentSet(documents))


def test_real_p5_expects_32_efa_ports_of_100_gbits_4_per_gpu(readings, real_document):
    p5 = sorted((m.metric, m.value, m.port_count) for m in readings if m.instance_type == "p5.48xlarge")
    assert p5 == [("ib_port_gbits_per_s", 100.0, 32), ("nic_count", 32.0, None)]
    (ports,) = [m for m in readings if m.metric == "ib_port_gbits_per_s"]
    assert ports.source_url == P5 and ports.gpus == 8 and "4 per GPU" in ports.notes
    assert ports.quote.strip().startswith('<net name="rdmap79s0" dev="0" speed="100000"')
    assert ports.quote in real_document(P5)


def test_real_p4d_lists_4_efa_nics_without_a_speed_and_bare_files_give_nothing(readings):
    for instance in ("p4d.24xlarge", "p4de.24xlarge"):
        (count,) = [m for m in readings if m.instance_type == instance]
        assert (count.metric, count.value, count.gpus) == ("nic_count", 4.0, 8)
        assert "2 GPUs per NIC" in count.notes and 'device="0xefa0"' in count.quote
    assert not [m for m in readings if m.instance_type == "g5.48xlarge"]
    assert len(readings) == 4  # the 2023 p5 file names no device class: nothing to read


def test_fixture_not_xml_is_refused_with_the_line_and_no_file_is_a_layout_error():
    origin = Origin("awsofinccl", P5, "expected", "aws", "p5.48xlarge")
    with pytest.raises(ParseError, match="line 2: not an NCCL topology file"):
        topology_readings("<system>\n<net speed=</system>", origin)
    with pytest.raises(ParseError, match="speed 'fast' is not a number"):
        topology_readings('<system><net name="e0" speed="fast" gdr="1"/></system>', origin)
    with pytest.raises(LayoutError, match="no aws-ofi-nccl topology file"):
        AwsOfiNccl().parse_measurements(DocumentSet([]))
