"""Hyperstack: SkyPilot's v8 Hyperstack catalog, real file from ../shared/mirror. Its GPU names tell
PCIe from NVLink-bridged PCIe from SXM5 for the same GPU."""

from __future__ import annotations

import pytest

from normalize.vocab import Basis, Link
from scrapers.offer_lists.hyperstack import VMS_URL, Hyperstack
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Hyperstack())


@pytest.mark.parametrize(
    ("name", "model", "link", "basis", "intra", "domain"),
    [
        ("n3-H100x8", "H100-PCIE-80GB", Link.PCIE, Basis.INFERRED, 128, 1),
        ("n3-H100x8-NVLink", "H100-PCIE-80GB", Link.NVLINK_BRIDGE, Basis.INFERRED, 600, 2),
        ("n3-H100-SXM5x8", "H100-SXM-80GB", Link.NVSWITCH, Basis.INFERRED, 900, 8),
        ("n3-A100x8", "A100-PCIE-80GB", Link.PCIE, Basis.INFERRED, 64, 1),
        ("n3-A100x8-NVLink", "A100-PCIE-80GB", Link.NVLINK_BRIDGE, Basis.INFERRED, 600, 2),
        ("n3-RTX-A6000x8", "RTX-A6000-48GB", Link.UNKNOWN, Basis.MISSING, None, None),
        ("n3-RTX-A4000x10", "RTX-A4000-16GB", Link.PCIE, Basis.INFERRED, 64, 1),
    ],
)
def test_real_same_gpu_three_builds(real, name, model, link, basis, intra, domain):
    row = real[1][name]
    assert (row.gpu_model, row.intra_node_link, row.intra_node_basis) == (model, link, basis)
    assert (row.intra_node_gbytes_per_s, row.scale_up_domain_gpus) == (intra, domain)


def test_real_link_claims_quote_the_line_naming_the_build(real):
    bodies, rows, _ = real
    (bridge,) = [c for c in rows["n3-H100x8-NVLink"].claims if c.field == "intra_node_link"]
    assert bridge.value == "nvlink-bridge" and bridge.basis == Basis.STATED
    assert (
        bridge.quote.startswith("n3-H100x8-NVLink,H100-80G-PCIe-NVLink,8,252,1440.0,")
        and bridge.quote in bodies[VMS_URL]
    )
    (pcie,) = [c for c in rows["n3-H100x8"].claims if c.field == "intra_node_link"]
    assert pcie.value == "pcie" and "named apart from the '-NVLink' variant" in pcie.context
    assert not [c for c in rows["n3-H100-SXM5x8"].claims if c.field == "intra_node_link"]
    assert not [c for c in rows["n3-H100x1"].claims if c.field == "intra_node_link"]  # one GPU: no peer


def test_real_gpu_info_with_json_null_is_read(real):
    """GpuInfo writes 'Manufacturer': null, neither JSON (single quotes) nor Python (null)."""
    bodies, rows, prices = real
    assert "'Manufacturer': null" in bodies[VMS_URL] and "\r\n" not in bodies[VMS_URL]
    assert len(rows) == 24 and rows["n3-L40x8"].gpu_memory_gb == pytest.approx(51.539607552)
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_sxm5_in_two_regions_with_different_host_memory(real):
    rows, prices = real[1], real[2]
    assert (
        "regions disagree on MemoryGiB (1800.0, 960.0); the first line's is used"
        in rows["n3-H100-SXM5x8"].notes
    )
    sxm = sorted((p.region, p.usd_per_hour) for p in prices if p.instance_type == "n3-H100-SXM5x8")
    assert sxm == [("CANADA-1", 19.2), ("US-1", 19.2)]
    prices_8 = {p.instance_type: p.usd_per_hour for p in prices if p.region == "CANADA-1"}
    assert (prices_8["n3-H100x8"], prices_8["n3-H100x8-NVLink"], prices_8["n3-H100-SXM5x8"]) == (
        15.2,
        15.6,
        19.2,
    )
