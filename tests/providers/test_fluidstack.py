"""Fluidstack: SkyPilot's v6 Fluidstack catalog, real file from ../shared/mirror."""

from __future__ import annotations

from normalize.vocab import Basis, Link
from scrapers.offer_lists.fluidstack import NVLINK_NOTE, VMS_URL, Fluidstack
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Fluidstack())


def test_real_rows_and_prices(real):
    bodies, rows, prices = real
    assert bodies[VMS_URL].count("\r\n") == 24 and len(rows) == 12 and len(prices) == 23
    assert sorted(p.region for p in prices if p.instance_type == "A100_PCIE_80GB::8") == [
        "ARIZONA_USA",
        "CANADA",
        "NORTH_DAKOTA_USA",
    ]
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_nvlink_from_the_name_without_a_form_factor(real):
    row = real[1]["H100_NVLINK_80GB::8"]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link) == ("H100-80GB", 8, Link.NVLINK)
    assert row.missing_intra_bw and row.scale_up_domain_gpus is None and NVLINK_NOTE in row.notes_text
    (link,) = [c for c in row.claims if c.field == "intra_node_link"]
    assert link.basis == Basis.INFERRED and link.quote.startswith(
        "H100_NVLINK_80GB::8,H100,8,252,1440.0,23.92,FINLAND,"
    )


def test_real_pcie_from_the_name(real):
    row = real[1]["H100_PCIE_80GB::4"]
    assert row.gpu_model == "H100-PCIE-80GB" and row.intra_node_link == Link.UNKNOWN  # bridged or not
    assert "pairs may use an NVLink bridge (600 GB/s) or PCIe Gen5 (128 GB/s)" in row.notes_text
    assert real[1]["L40_48GB::8"].intra_node_link == Link.PCIE  # L40 has no NVLink at all
