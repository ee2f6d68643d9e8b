"""Scaleway: SkyPilot's v6 Scaleway catalog and Scaleway's GPU docs, real files from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Basis, Link
from scrapers.documents.scaleway import BANDWIDTH_URL, DOCS_ONLY_NOTE, NVLINK_URL, VMS_URL, Scaleway
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Scaleway())


def test_real_every_type_of_the_catalog_and_the_overview(real):
    bodies, rows, prices = real
    assert set(bodies) == {VMS_URL, BANDWIDTH_URL, NVLINK_URL}
    assert {"RENDER-S", "GPU-3070-S", "H100-1-80G", "H100-2-80G"} <= set(rows)  # the catalog
    assert {"H100-SXM-2-80G", "H100-SXM-4-80G", "H100-SXM-8-80G", "L4-8-24G", "L40S-8-48G"} <= set(rows)
    assert len(rows) == 15
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_catalog_rows_priced_per_zone(real):
    prices = real[2]
    assert sorted(
        (p.instance_type, p.region, p.currency, p.published_per_hour)
        for p in prices
        if p.instance_type.startswith("H100")
    ) == [
        ("H100-1-80G", "fr-par", "EUR", 2.52),  # euro as published; USD at the catalog's stated rate
        ("H100-2-80G", "fr-par", "EUR", 5.04),
    ]
    assert all(p.usd_per_hour == pytest.approx(p.published_per_hour * p.usd_per_unit) for p in prices)
    render = [p.context for p in prices if p.instance_type == "RENDER-S"]
    assert [c.rsplit("› ", 1)[1] for c in render] == [
        "AvailabilityZone fr-par-1",
        "AvailabilityZone fr-par-2",
    ]


def test_real_h100_sxm_8_nvlink_and_frontend_from_scaleways_docs(real):
    row = real[1]["H100-SXM-8-80G"]
    assert (row.gpu_model, row.gpu_count) == ("H100-SXM-80GB", 8)
    assert (row.intra_node_link, row.intra_node_gbytes_per_s, row.intra_node_basis) == (
        Link.NVSWITCH,
        900,
        Basis.STATED,
    )
    assert row.frontend_gbits_per_s == 20 and DOCS_ONLY_NOTE in row.notes
    claims = {c.field: c for c in row.claims}
    assert claims["gpu_model"].basis == Basis.INFERRED and claims["gpu_count"].quote == "H100-SXM-8-80G"
    assert (
        claims["frontend_gbits_per_s"].quote
        == "| H100-SXM-8-80G    | 20 Gbit/s              | 5 GiB/s            |"
    )
    assert (
        "(up to 900 GB/s total GPU-to-GPU bandwidth in an 8-GPU configuration)"
        in claims["intra_node_gbytes_per_s"].quote
    )
    assert claims["intra_node_link"].quote.endswith(
        "available on Scaleway's [H100-SXM Instances](/gpu/reference-content/choosing-gpu-instance-type/"
        "#gpu-instances-and-ai-supercomputer-comparison-table)."
    )


@pytest.mark.parametrize(
    ("name", "model", "link", "basis", "intra", "frontend"),
    [
        (
            "H100-SXM-2-80G",
            "H100-SXM-80GB",
            Link.NVSWITCH,
            Basis.INFERRED,
            900,
            20,
        ),  # NVLink stated, GB/s from the datasheet
        ("H100-2-80G", "H100-PCIE-80GB", Link.PCIE, Basis.INFERRED, 128, 20),  # NVLink only on H100-SXM
        ("H100-1-80G", "H100-PCIE-80GB", Link.SINGLE_GPU, Basis.NOT_APPLICABLE, None, 10),
        ("L40S-4-48G", "L40S-48GB", Link.PCIE, Basis.INFERRED, 64, 10),
        ("RENDER-S", "P100-PCIE-16GB", Link.SINGLE_GPU, Basis.NOT_APPLICABLE, None, 2),
        (
            "GPU-3070-S",
            "RTX-3070-8GB",
            Link.SINGLE_GPU,
            Basis.NOT_APPLICABLE,
            None,
            None,
        ),  # not in the overview
    ],
)
def test_real_rows(real, name, model, link, basis, intra, frontend):
    row = real[1][name]
    assert (row.gpu_model, row.intra_node_link, row.intra_node_basis) == (model, link, basis)
    assert (row.intra_node_gbytes_per_s, row.frontend_gbits_per_s) == (intra, frontend)


def test_real_pcie_on_non_sxm_types_is_inferred_from_the_nvlink_page(real):
    (link,) = [c for c in real[1]["H100-2-80G"].claims if c.field == "intra_node_link"]
    assert (link.value, link.basis, link.source_url) == ("pcie", Basis.INFERRED, NVLINK_URL)
    assert "NVLink only on H100-SXM types" in link.context
