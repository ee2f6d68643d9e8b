"""Azure: discovery, includes, prose and table traps, on a fixture and on the real docs in ../shared."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.vocab import Basis, Fabric, Link
from records.documents import Document, DocumentSet
from scrapers.documents.azure import (
    FAMILY_PAGES,
    INFINIBAND_PAGE,
    KNOWN_SERIES,
    SIZES,
    Azure,
    include_urls,
    rdma_capable,
    series_urls,
)
from scrapers.prices import azure as azure_prices
from tests.conftest import shared_fixture
from tests.helpers import FIXTURES, fetch_from_mirror, url_to_mirror_path

NOW = datetime(2026, 12, 1)


def doc(url: str, body: str | None, status: int = 200) -> Document:
    return Document(url=url, provider="azure", status=status, fetched_at=NOW, body=body)


def fixture_documents(*, with_summary: bool = True) -> DocumentSet:
    page = SIZES + "nd-test-v9-series.md"
    summary = SIZES + "includes/nd-test-v9-series-summary.md"
    specs = SIZES + "includes/nd-test-v9-series-specs.md"
    docs = [
        doc(page, (FIXTURES / "azure/nd-test-v9-series.md").read_text()),
        doc(specs, (FIXTURES / "azure/includes/nd-test-v9-series-specs.md").read_text()),
    ]
    if with_summary:
        docs.append(doc(summary, (FIXTURES / "azure/includes/nd-test-v9-series-summary.md").read_text()))
    else:
        docs.append(doc(summary, None, status=404))
    return DocumentSet(docs)


def build(documents: DocumentSet) -> dict:
    return {o.instance_type: build_offer(o, scraped_at=NOW) for o in Azure().parse(documents)}


def test_discovery_from_family_pages_and_known_series():
    family = "### NDv2\n[View the full page](./ndv2-series.md)\n[old](../../nvv3-series.md)"
    urls = series_urls([(FAMILY_PAGES[1], family)])
    assert urls[0] == SIZES + "ndv2-series.md"
    assert urls[1].endswith("articles/virtual-machines/nvv3-series.md")
    assert set(KNOWN_SERIES) <= set(urls)


def test_only_summary_and_specs_includes_are_followed():
    page = "[!INCLUDE [a](./includes/x-series-summary.md)]\n[!INCLUDE [f](../includes/sizes-footer.md)]"
    assert include_urls(SIZES + "x-series.md", page) == [SIZES + "includes/x-series-summary.md"]


@pytest.mark.parametrize(
    ("size", "rdma"),
    [
        ("Standard_ND96isr_H100_v5", True),
        ("Standard_NC24rs_v3", True),
        ("Standard_ND24rs", True),
        ("Standard_NC24ads_A100_v4", False),
        ("Standard_NC80adis_H100_v5", False),
        ("Standard_NC128lds_xl_RTXPRO6000BSE_v6", False),
    ],
)
def test_r_capability_letter(size, rdma):
    assert rdma_capable(size) is rdma


def test_fixture_fabric_printed_in_bytes_is_reread_as_bits():
    offers = build(fixture_documents())
    rdma = offers["Standard_ND96isr_T9_v9"]
    assert rdma.inter_node_fabric == Fabric.INFINIBAND
    assert rdma.inter_node_gbits_per_s == 1600  # "1.6 TB/s" per VM and 8 x "200 GB/s": both Tb/Gb
    assert rdma.unit_suspect and not rdma.conflict
    assert rdma.nic_count == 8
    assert rdma.frontend_gbits_per_s == 80
    assert (rdma.intra_node_link, rdma.intra_node_gbytes_per_s) == (Link.NVSWITCH, 900)
    assert rdma.gpu_memory_gb == 80  # 640 GB total / 8


def test_fixture_size_without_r_uses_front_end_ethernet():
    plain = build(fixture_documents())["Standard_ND48is_T9_v9"]
    assert plain.inter_node_fabric == Fabric.ETHERNET
    assert plain.inter_node_gbits_per_s == 40 == plain.frontend_gbits_per_s
    assert plain.nic_count is None and plain.frontend_nic_count == 4


def test_fixture_missing_include_is_recorded_not_fatal():
    offers = build(fixture_documents(with_summary=False))
    rdma = offers["Standard_ND96isr_T9_v9"]
    assert "missing includes: nd-test-v9-series-summary.md" in rdma.notes_text
    assert rdma.missing_inter_bw  # no summary, no InfiniBand page: the fabric figure is unknown


def test_fixture_scale_out_column_without_nic_column_keeps_the_figure_as_printed():
    page_url = SIZES + "nd-test-v9-series.md"
    page = (FIXTURES / "azure/nd-test-v9-series.md").read_text()
    page = page.replace(
        "| Size Name | Max NICs (Qty.) | Max Bandwidth (Mbps) |\n| --- | --- | --- |",
        "| Size Name | Max NICs (Qty.) | Max Bandwidth (Mbps) | Scale-Out Bandwidth (Gbps) |\n"
        "| --- | --- | --- | --- |",
    ).replace("| Standard_ND96isr_T9_v9 | 8 | 80000 |", "| Standard_ND96isr_T9_v9 | 8 | 80000 | 3200 |")
    documents = DocumentSet(
        [
            doc(page_url, page),
            *(d for d in fixture_documents(with_summary=False).values() if d.url != page_url),
        ]
    )
    raw = {o.instance_type: o for o in Azure().parse(documents)}["Standard_ND96isr_T9_v9"]
    row = build_offer(raw, scraped_at=NOW)
    assert row.inter_node_gbits_per_s == 3200 and not row.unit_suspect
    assert row.nic_count is None  # no "Scale-out NICS" column: no count is made up
    scale_out = next(c for c in raw.claims if c.field == "inter_node_gbits_per_s")
    assert scale_out.quote == "3200" and "NIC count not stated" in scale_out.qualifiers


@shared_fixture(scope="module")
def real():

    documents = fetch_from_mirror(Azure())
    return documents, build(DocumentSet(documents))


def test_real_discovery_records_missing_pages(real):
    documents, offers = real
    missing = {d.url.rsplit("/", 1)[-1] for d in documents if d.status == 404}
    assert {"ncast4v3-series.md", "nva10v5-series.md", "nc-rtxpro6000-bse-v6-series-specs.md"} <= missing
    assert INFINIBAND_PAGE in {d.url for d in documents if d.ok}
    # 29 sizes on series pages, 56 more the price table or a health check names (test_azure_named.py)
    assert len(offers) == 85
    assert not [name for name in offers if name.endswith("-series")]  # every series has named sizes


def test_real_specs_table_without_its_series_page_still_yields_a_row(real):
    """NCasT4_v3's page is not mirrored, its specs include is (shown on the NC family page): without a
    document naming its sizes (here: the price table left out), the series becomes one row, from that
    table, with the missing page and the size ranges noted."""
    documents, _ = real
    unpriced = DocumentSet([d for d in documents if d.url != azure_prices.PRICES_URL])
    offers = build(unpriced)
    t4 = offers["NCasT4_v3-series"]
    assert (t4.gpu_model, t4.gpu_count, t4.intra_node_link) == ("T4-16GB", None, Link.PCIE)
    assert t4.source_url == SIZES + "includes/ncast4v3-series-specs.md"
    assert "series page ncast4v3-series.md unavailable (HTTP 404: not in mirror)" in t4.notes_text
    assert "1 - 4 GPUs; network 8,000 - 32,000 Mbps across its sizes" in t4.notes_text
    model = next(c for c in t4.claims if c.field == "gpu_model")
    assert (model.quote, model.source_url) == ("Nvidia Tesla T4 GPU (16GB)", t4.source_url)
    assert offers["NVads-A10 v5-series"].gpu_model == "A10-24GB"  # the same rule, another family page
    # AMD's cards are in the GPU table (VRAM from AMD's ROCm table): these series are rows too
    assert offers["NVv4-series"].gpu_model == "MI25-16GB"
    assert offers["NGads V620-series"].gpu_model == "RADEON-PRO-V620-32GB"
    assert offers["NVads-v710 v5-series"].gpu_model == "RADEON-PRO-V710-28GB"
    assert "Standard_ND96isrf_H200_v5" in offers  # a health check names it: no price table needed


@pytest.mark.parametrize(
    ("size", "model", "count", "link", "intra", "intra_basis", "fabric", "gbits", "frontend"),
    [
        (
            "Standard_ND96isr_H100_v5",
            "H100-SXM-80GB",
            8,
            Link.NVSWITCH,
            900,
            Basis.INFERRED,
            Fabric.INFINIBAND,
            3200,
            80,
        ),
        (
            "Standard_ND96isr_H200_v5",
            "H200-SXM-141GB",
            8,
            Link.NVSWITCH,
            900,
            Basis.STATED,
            Fabric.INFINIBAND,
            3200,
            80,
        ),
        (
            "Standard_ND96isr_MI300X_v5",
            "MI300X-192GB",
            8,
            Link.INFINITY_FABRIC,
            896,
            Basis.STATED,
            Fabric.INFINIBAND,
            3200,
            80,
        ),
        (
            "Standard_ND96asr_v4",
            "A100-SXM-40GB",
            8,
            Link.NVSWITCH,
            600,
            Basis.INFERRED,
            Fabric.INFINIBAND,
            1600,
            24,
        ),
        (
            "Standard_ND96amsr_A100_v4",
            "A100-SXM-80GB",
            8,
            Link.NVSWITCH,
            600,
            Basis.INFERRED,
            Fabric.INFINIBAND,
            1600,
            24,
        ),
        (
            "Standard_ND40rs_v2",
            "V100-SXM2-32GB",
            8,
            Link.NVLINK,
            300,
            Basis.INFERRED,
            Fabric.INFINIBAND,
            100,
            24,
        ),
        (
            "Standard_ND128isr_NDR_GB200_v6",
            "GB200-186GB",
            4,
            Link.NVSWITCH,
            1800,
            Basis.STATED,
            Fabric.INFINIBAND,
            1600,
            160,
        ),
        (
            "Standard_ND128isr_GB300_v6",
            "GB300-288GB",
            4,
            Link.NVSWITCH,
            1800,
            Basis.STATED,
            Fabric.INFINIBAND,
            3200,
            160,
        ),
        (
            "Standard_NC80adis_H100_v5",
            "H100-NVL-94GB",
            2,
            Link.UNKNOWN,
            None,
            Basis.MISSING,
            Fabric.ETHERNET,
            80,
            80,
        ),
        (
            "Standard_NC96ads_A100_v4",
            "A100-PCIE-80GB",
            4,
            Link.UNKNOWN,
            None,
            Basis.MISSING,
            Fabric.ETHERNET,
            80,
            80,
        ),
        (
            "Standard_NC320ds_xl_RTXPRO6000BSE_v6",
            "RTX-PRO-6000-SERVER-96GB",
            2,
            Link.PCIE,
            128,
            Basis.INFERRED,
            Fabric.ETHERNET,
            200,
            200,
        ),
    ],
)
def test_real_facts(real, size, model, count, link, intra, intra_basis, fabric, gbits, frontend):
    _, offers = real
    offer = offers[size]
    assert (offer.gpu_model, offer.gpu_count) == (model, count)
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s, offer.intra_node_basis) == (
        link,
        intra,
        intra_basis,
    )
    assert (offer.inter_node_fabric, offer.inter_node_gbits_per_s) == (fabric, gbits)
    assert offer.frontend_gbits_per_s == frontend
    assert not offer.conflict


def test_real_front_end_is_not_the_fabric(real):
    _, offers = real
    h100 = offers["Standard_ND96isr_H100_v5"]
    assert h100.frontend_gbits_per_s == 80  # "Max Bandwidth (Mbps) 80000" is Ethernet
    assert h100.inter_node_gbits_per_s == 3200 and h100.nic_count == 8
    assert h100.inter_node_basis == Basis.STATED


def test_real_wrong_byte_units_in_nd_a100_prose(real):
    _, offers = real
    for size in ("Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"):
        offer = offers[size]
        assert offer.unit_suspect  # "1.6 TB/s" and "200 GB/s" mean Tb/s and Gb/s
        assert offer.inter_node_gbytes_per_s == 200


def test_real_gb200_swapped_columns_are_not_inherited(real):
    _, offers = real
    gb200 = offers["Standard_ND128isr_NDR_GB200_v6"]
    assert gb200.unit_suspect
    assert gb200.intra_node_gbytes_per_s == 1800  # printed under "Scale-Out (TBps)"
    assert gb200.inter_node_gbits_per_s == 1600  # printed under "Scale-Up (Gbps)": 4 x 400
    assert gb200.frontend_gbits_per_s == 160  # printed as "160 (Mbps)"; the specs table says 160 Gbps
    assert gb200.scale_up_domain_gpus == 72
    gb300 = offers["Standard_ND128isrG5_GB300_v6"]
    assert (gb300.intra_node_gbytes_per_s, gb300.inter_node_gbits_per_s, gb300.nic_count) == (1800, 3200, 4)


def test_real_gb300_front_end_is_missing_not_misread_without_its_specs_include(real):
    """GB300's network table prints "160" under "(Mbps)"; only its specs include says Gbps. When that
    include does not arrive (a slow host under a refresh's deadlines), the front end is left missing
    with the include named, not read as 0.16 Gbit/s (which fails the bounds and loses every Azure row)."""
    documents, _ = real
    specs = [d.url for d in documents if "gb300" in d.url.lower() and d.url.endswith("-specs.md")]
    assert specs, "the GB300 specs include is in the mirror"
    offers = build(DocumentSet([d for d in documents if d.url not in specs]))
    for size in ("Standard_ND128isr_GB300_v6", "Standard_ND128isrG5_GB300_v6"):
        gb300 = offers[size]
        assert gb300.frontend_gbits_per_s is None, size
        assert "missing includes: " in gb300.notes_text
        assert gb300.inter_node_gbits_per_s == 3200  # the rest of the row still read


def test_real_per_gpu_memory_column_trap(real):
    _, offers = real
    assert offers["Standard_ND96amsr_A100_v4"].gpu_memory_gb == 80  # the column prints 80 for 8 GPUs
    assert offers["Standard_ND96asr_v4"].gpu_memory_gb == 40  # the column prints the 320 total
    assert offers["Standard_ND96isr_H200_v5"].gpu_memory_gb == 141
    assert offers["Standard_ND40rs_v2"].gpu_count == 8  # empty size cell; the specs table says 8


def test_real_old_rdma_sizes_get_the_fdr_rate_as_inferred(real):
    """One rule for every 'r' size setup-infiniband.md's catch-all covers ("FDR rates for ... other
    RDMA-capable N-series"): NC24rs_v3 (summary read, silent) and ND24rs (summary include missing)."""
    _, offers = real
    for size in ("Standard_NC24rs_v3", "Standard_ND24rs"):
        row = offers[size]
        assert (row.inter_node_fabric, row.inter_node_gbits_per_s, row.inter_node_basis) == (
            Fabric.INFINIBAND,
            56,
            Basis.INFERRED,
        ), size
        fabric = next(c for c in row.claims if c.field == "inter_node_fabric")
        assert fabric.basis == Basis.INFERRED and "RDMA-capable by Azure's naming" in fabric.qualifiers
    assert "the series summary, which may state its own, was not read" in offers["Standard_ND24rs"].notes_text
    assert "was not read" not in offers["Standard_NC24rs_v3"].notes_text
    assert offers["Standard_NC24s_v3"].missing_inter_bw  # no bandwidth column on the NCv3 page
    ethernet = next(c for c in offers["Standard_NC24s_v3"].claims if c.field == "inter_node_fabric")
    assert (ethernet.value, ethernet.basis) == ("ethernet", Basis.INFERRED)  # read from a name, not stated


def test_real_every_stated_quote_is_verbatim(real):
    documents, offers = real
    bodies = {d.url: " ".join(d.body.split()) for d in documents if d.ok}
    for offer in offers.values():
        for claim in offer.claims:
            if claim.basis == Basis.STATED:
                assert " ".join(claim.quote.split()) in bodies[claim.source_url], (offer.instance_type, claim)


def test_real_mirror_paths_exist_for_every_ok_document(real):
    documents, _ = real
    for d in documents:
        assert url_to_mirror_path(d.url).is_file() == d.ok
