"""Azure sizes no series page lists, named by Microsoft's price table or health checks: placed in their
series by their name, on small names and on the real documents in ../shared."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from catalog.provenance import unverified_quotes
from normalize.vocab import Basis, Fabric, Link
from records.documents import Document, DocumentSet
from scrapers.documents.azure import Azure
from scrapers.documents.azure.named import HEALTH_CONFS, named_sizes
from scrapers.documents.azure.names import frontmatter_title, match_series, series_parts, size_parts
from scrapers.measurements.azurehpc import CONF
from scrapers.prices import azure as azure_prices
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror

NOW = datetime(2026, 12, 1)
SERIES = [
    "NC_A100_v4 size series",
    "NCasT4_v3-series",
    "NCv3 size series",
    "NC_RTXPRO6000BSE_v6 size series",
    "ND size series",
    "NDv2 size series",
    "NDasrA100_v4 size series",
    "NDm_A100_v4 size series",
    "ND-H100-v5 size series",
    "ND-H200-v5 size series",
    "ND GB200-v6 size series",
    "NGads V620-series",
    "NVv4-series",
    "NVads-A10 v5-series",
    "NVads-v710 v5-series",
]
CANDIDATES = [(name, parts) for name in SERIES if (parts := series_parts(name)) is not None]


def test_every_series_name_parses():
    assert len(CANDIDATES) == len(SERIES)
    h100 = series_parts("ND-H100-v5 size series")
    assert h100 is not None and (h100.family, h100.accelerators, h100.version) == ("ND", {"h100"}, "v5")


@pytest.mark.parametrize(
    ("size", "series"),
    [
        ("Standard_ND96is_H100_v5", "ND-H100-v5 size series"),  # no 'r': the same board, no InfiniBand
        ("Standard_ND96is_flex_H100_v5", "ND-H100-v5 size series"),  # extra tokens are free
        ("Standard_ND96isrf_H200_v5", "ND-H200-v5 size series"),
        ("Standard_ND128isrf_NDR_GB200_v6", "ND GB200-v6 size series"),
        ("Standard_ND96ams_A100_v4", "NDm_A100_v4 size series"),  # 'm': the 80 GB series
        ("Standard_ND96asr_A100_v4", "NDasrA100_v4 size series"),  # no 'm': not NDm
        ("Standard_ND40s_v2", "NDv2 size series"),  # the versioned series, not the unversioned ND
        ("Standard_NC4as_T4_v3", "NCasT4_v3-series"),  # more specific than NCv3
        ("Standard_NC16lds_xl_RTXPRO6000BSE_v6", "NC_RTXPRO6000BSE_v6 size series"),
        ("Standard_NG8ads_V620_v1", "NGads V620-series"),  # a series with no version: its accelerator
        ("Standard_NG32adms_V620", "NGads V620-series"),
        ("Standard_NV4as_v4", "NVv4-series"),
        ("Standard_NV36adms_A10_v5", "NVads-A10 v5-series"),
        ("Standard_NV4ads_V710_v5", "NVads-v710 v5-series"),  # "v710" is an accelerator, not a version
    ],
)
def test_a_size_is_placed_in_the_series_its_name_spells(size, series):
    assert match_series(size, CANDIDATES) == series


@pytest.mark.parametrize(
    ("size", "why"),
    [
        ("Standard_NC24r_Promo", "no NC series without accelerator and version"),
        ("Standard_NC8ads_A10_v4", "A10 is not A100"),
        ("Standard_ND96asr_MI200_v4", "no MI200 series; the unversioned ND series does not take it"),
        ("Standard_NV12s_v2", "no NVv2 series"),
        ("Standard_ND96amsr_A100_v4", "fits NDm and NDasr alike: the name cannot choose"),
        ("ND96is_H100_v5", "not a size name"),
    ],
)
def test_a_size_no_series_fits_or_two_fit_is_not_placed(size, why):
    assert match_series(size, CANDIDATES) is None, why


def test_size_and_frontmatter_parts():
    parts = size_parts("Standard_ND128isrG5_GB300_v6")
    assert parts is not None and parts.vcpus == "128" and {"g5", "gb300"} <= parts.accelerators
    assert size_parts("Standard_HB120rs_v3") is None  # not an N-series (GPU) size
    assert frontmatter_title("---\ntitle: 'ND-H200-v5 size series '\nauthor: x\n---\n# ND") == (
        "ND-H200-v5 size series"
    )
    assert frontmatter_title("# no front matter") is None


@shared_fixture(scope="module")
def real():
    documents = DocumentSet(fetch_from_mirror(Azure()))
    raws = Azure().parse(documents)
    return documents, raws, {o.instance_type: build_offer(o, scraped_at=NOW) for o in raws}


def test_real_health_checks_and_price_table_are_read(real):
    documents, _, _ = real
    assert all(documents.optional_text(url) is not None for url in HEALTH_CONFS)
    named = named_sizes(documents)
    assert {"Standard_ND96isrf_H200_v5", "Standard_ND96is_H200_v5", "Standard_ND96asr_MI200_v4"} <= set(named)
    assert len(named) == 93 + 3  # every priced GPU size, and the three only a health check names
    conf = named["Standard_ND96isrf_H200_v5"][0]
    assert (conf.url, conf.gpu_count) == (CONF + "nd96isrf_h200_v5.conf", 8)
    rocm = named["Standard_ND96asr_MI200_v4"][0]
    assert rocm.gpu_count is None  # "check_gpu_count 16 rocm" counts ROCm devices, not packages


def test_real_health_check_size_is_a_row_with_its_stated_count(real):
    """ND96isrf_H200_v5 (named by its health check only): 8 H200 SXM, NVLink and InfiniBand as the
    ND H200 v5 series states them for all its sizes (inferred), the count as the check states it."""
    _, _, rows = real
    row = rows["Standard_ND96isrf_H200_v5"]
    assert (row.gpu_model, row.gpu_count) == ("H200-SXM-141GB", 8)
    assert (row.intra_node_link, row.intra_node_gbytes_per_s, row.intra_node_basis) == (
        Link.NVSWITCH,
        900,
        Basis.INFERRED,
    )
    assert (row.inter_node_fabric, row.inter_node_gbits_per_s, row.inter_node_basis) == (
        Fabric.INFINIBAND,
        3200,
        Basis.INFERRED,
    )
    count = next(c for c in row.claims if c.field == "gpu_count")
    assert (count.quote, count.basis, count.source_url) == (
        "* || check_gpu_count 8",
        Basis.STATED,
        CONF + "nd96isrf_h200_v5.conf",
    )
    assert "placed in the ND-H200-v5 series by its name (nd-h200-v5-series.md)" in row.notes_text
    carried = [c for c in row.claims if c.field != "gpu_count" and c.source_url.endswith(".md")]
    assert carried and all(c.basis == Basis.INFERRED for c in carried)
    assert all("placed in it by its name" in c.qualifiers for c in carried)


def test_real_front_end_nic_of_a_health_check_is_not_infiniband(real):
    """Trap: nd96is_h200_v5.conf checks "check_hw_ib 100 mlx5_an0:1", the accelerated-networking NIC.
    The size has no 'r': no InfiniBand is carried to it, and no document spells it to quote Ethernet."""
    _, _, rows = real
    row = rows["Standard_ND96is_H200_v5"]
    assert row.inter_node_fabric == Fabric.UNKNOWN and row.inter_node_gbits_per_s is None
    assert "only a file name spells this size" in row.notes_text


def test_real_priced_sizes_without_r_are_ethernet_from_the_price_table(real):
    _, _, rows = real
    for size in ("Standard_ND96is_H100_v5", "Standard_ND96isf_H100_v5", "Standard_ND96is_noIB_H100_v5"):
        row = rows[size]
        assert (row.gpu_model, row.gpu_count, row.intra_node_link) == ("H100-SXM-80GB", 8, Link.NVSWITCH)
        assert row.inter_node_fabric == Fabric.ETHERNET and row.inter_node_gbits_per_s is None, size
        fabric = next(c for c in row.claims if c.field == "inter_node_fabric")
        assert size in fabric.quote and fabric.source_url == azure_prices.PRICES_URL
    isrf = rows["Standard_ND96isrf_H100_v5"]  # 'r': the series' InfiniBand, inferred
    assert (isrf.inter_node_fabric, isrf.inter_node_gbits_per_s) == (Fabric.INFINIBAND, 3200)
    # the series' one count for every size ("8 GPUs"), inferred for a size it is carried to
    count = next(c for c in isrf.claims if c.field == "gpu_count")
    assert (count.value, count.basis) == (8, Basis.INFERRED)
    assert (rows["Standard_ND96ams_A100_v4"].gpu_model, rows["Standard_ND96asr_A100_v4"].gpu_model) == (
        "A100-SXM-80GB",
        "A100-SXM-40GB",
    )


def test_real_fractional_series_sizes_keep_their_count_missing(real):
    """NVads A10 v5 gives "1/6 - 2 GPUs" across its sizes, NVv4 "1/8 - 1": which fraction a size has is
    on series pages the mirror lacks, so the count stays missing (never 1), and no GPU-to-GPU figure
    is inferred for a size that may hold a sixth of one GPU."""
    _, _, rows = real
    for size, model, spread in (
        ("Standard_NV6ads_A10_v5", "A10-24GB", "'1/6 - 2 GPUs'"),
        ("Standard_NV72ads_A10_v5", "A10-24GB", "'1/6 - 2 GPUs'"),
        ("Standard_NV4as_v4", "MI25-16GB", "'1/8 - 1 GPUs'"),
        ("Standard_NG8ads_V620_v1", "RADEON-PRO-V620-32GB", "'1/4 - 1 GPUs'"),
        ("Standard_NV4ads_V710_v5", "RADEON-PRO-V710-28GB", "'1/6 - 1'"),
    ):
        row = rows[size]
        assert (row.gpu_model, row.gpu_count) == (model, None), size
        assert (row.intra_node_link, row.intra_node_gbytes_per_s) == (Link.UNKNOWN, None), size
        assert f"the series gives {spread} across its sizes" in row.notes_text, size
    rtx = rows["Standard_NC16lds_xl_RTXPRO6000BSE_v6"]  # on no page; its series' specs include is missing
    assert (rtx.gpu_model, rtx.gpu_count, rtx.intra_node_link) == (
        "RTX-PRO-6000-SERVER-96GB",
        None,
        Link.UNKNOWN,
    )


def test_real_every_verbatim_quote_of_a_named_size_is_in_its_document(real):
    documents, raws, _ = real
    assert unverified_quotes(raws, documents) == []


def test_real_sizes_no_series_fits_are_not_rows(real):
    """Promotional sizes of retired series, NVv2/NVv3 (no include in the mirror), NCads A10 v4 (no page
    or include), ND96asr_MI200_v4 (no MI200 series): not rows; docs/providers.md names them."""
    _, _, rows = real
    for size in (
        "Standard_NC24r_Promo",
        "Standard_NV6s_v2",
        "Standard_NV12s_v3",
        "Standard_NC8ads_A10_v4",
        "Standard_ND96asr_MI200_v4",
    ):
        assert size not in rows


def test_real_unreadable_price_table_leaves_the_other_rows(real):
    """The price table is the prices' document first: when it cannot be read, the series pages' sizes
    and the sizes a health check names are rows still; only the sizes it alone names are not."""
    documents, _, _ = real
    broken = Document(
        url=azure_prices.PRICES_URL, provider="azure", status=200, fetched_at=NOW, body="package pricing\n"
    )
    offers = {o.instance_type for o in Azure().parse(DocumentSet([*documents.values(), broken]))}
    assert {"Standard_ND96isr_H100_v5", "Standard_ND96isrf_H200_v5", "Standard_ND96is_H100_v5"} <= offers
    assert "Standard_NV6ads_A10_v5" not in offers and "NVads-A10 v5-series" in offers
