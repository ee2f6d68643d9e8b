"""Fluidstack: SkyPilot's v6 Fluidstack catalog, real file from ../shared/mirror."""

from __future__ import annotations

from normalize.vocab import Basis, Link
from scrapers.offer_lists.fluidstack import NVLINK_NOTE, V9_FLUIDSTACK, VMS_URL, Fluidstack, v9_offers
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


def test_real_frozen_v6_list_is_said_and_each_row_says_whether_v9_still_lists_it(real):
    bodies, rows, _ = real
    assert V9_FLUIDSTACK in bodies and bodies[V9_FLUIDSTACK].count("\r\n") == 2  # header + one offer
    for name, row in rows.items():
        assert "offer list: SkyPilot's v6 list, a tree SkyPilot no longer reads: frozen" in row.notes_text
        if name == "H100_NVLINK_80GB::8":
            assert "still listed in SkyPilot's newer v9 Fluidstack list (23.92 in FINLAND)" in row.notes_text
        else:
            assert "not in SkyPilot's newer v9 Fluidstack list" in row.notes_text, name
    assert len(rows) == 12  # the v6 list stays the one read: no row vanishes on v9's word


def test_fixture_v9_list_unreadable_adds_no_note():
    assert v9_offers("not,a,catalog\n") == {}
