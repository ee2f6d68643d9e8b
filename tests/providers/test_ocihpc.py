"""ocihpc: Oracle's NHC template, its shape branches and their RDMA port checks, read in place."""

from __future__ import annotations

import pytest

from normalize.errors import LayoutError
from records.documents import DocumentSet
from scrapers.measurements.ocihpc import TEMPLATE, OciHpc, template_readings
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror


@shared_fixture(scope="module")
def readings():
    documents = fetch_from_mirror(OciHpc())
    assert [d.url for d in documents] == [TEMPLATE]
    return OciHpc().parse_measurements(DocumentSet(documents))


def ports(readings, shape):
    return sorted(
        (m.value, m.port_count, m.notes.startswith("only when")) for m in readings if m.instance_type == shape
    )


def test_real_port_counts_differ_from_the_shapes_page_but_totals_agree(readings, real_document):
    assert ports(readings, "BM.GPU.H100.8") == [(200.0, 16, False)]  # page: "8 x 2 x 200 Gbps RDMA"
    (h100,) = [m for m in readings if m.instance_type == "BM.GPU.H100.8"]
    assert h100.locator == "lines 284-299 (16 check_hw_ib)" and h100.quote in real_document(TEMPLATE)
    assert (h100.kind, h100.provider, h100.metric) == ("expected", "oci", "ib_port_gbits_per_s")
    assert ports(readings, "BM.GPU.H200.8") == [(400.0, 8, False)]
    assert ports(readings, "BM.GPU.A100-v2.8") == [(100.0, 16, False)]


def test_real_a_lone_port_at_another_rate_is_its_own_reading(readings):
    assert ports(readings, "BM.GPU4.8") == [(50.0, 1, False), (100.0, 16, False)]
    assert ports(readings, "BM.GPU.B4.8") == [(50.0, 1, False), (100.0, 16, False)]


def test_real_or_branches_and_nested_conditions(readings):
    assert ports(readings, "BM.GPU.GB200.4") == ports(readings, "BM.GPU.GB200-v2.4") == [(400.0, 4, False)]
    gb300 = [m for m in readings if m.instance_type == "BM.GPU.GB300.4"]
    assert sorted((m.value, m.port_count) for m in gb300) == [(200.0, 4), (400.0, 8)]
    assert {m.notes.split(";")[0] for m in gb300} == {
        "only when nhc_rdma_planes | int < 1",
        "only when nhc_rdma_planes | int == 4",
    }
    assert len(readings) == 18


def test_fixture_lines_outside_a_shape_branch_are_not_a_shape_and_no_branch_is_an_error():
    text = (
        "{% if 'BM.GPU.X.8' in nhc_node_shape %}\n*||check_hw_ib 400 mlx5_0:1\n"
        "{% else %}\n*||check_hw_ib 100 mlx5_0:1\n{% endif %}\n"
    )
    (only,) = template_readings(text, TEMPLATE, "ocihpc")
    assert (only.instance_type, only.value, only.locator) == ("BM.GPU.X.8", 400.0, "line 2 (1 check_hw_ib)")
    with pytest.raises(LayoutError, match="no check_hw_ib line inside a shape branch"):
        template_readings("*||check_hw_ib 400 mlx5_0:1\n", TEMPLATE, "ocihpc")


def test_fixture_unclosed_tags_and_long_lines_are_read_in_one_pass():
    text = "{% " * 20000 + "*||check_hw_ib 400 mlx5_0:1" + " " * 20000 + "x\n"
    with pytest.raises(LayoutError, match="no check_hw_ib line inside a shape branch"):
        template_readings(text, TEMPLATE, "ocihpc")
