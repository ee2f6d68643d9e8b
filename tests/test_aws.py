"""AWS: the parser on a fixture written for the test, then on the real page in ../shared/mirror."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.errors import LayoutError, ParseError
from normalize.vocab import Basis, Fabric, Link
from scrapers.aws import AC_URL, parse_instance_types
from tests.conftest import shared_fixture
from tests.helpers import mirror_text

NOW = datetime(2026, 12, 1)


def rows(text: str) -> dict:
    return {o.instance_type: build_offer(o, scraped_at=NOW) for o in parse_instance_types(text, AC_URL)}


def test_fixture_rows(fixture_text, caplog):
    offers = rows(fixture_text("aws/ac-small.md"))
    assert sorted(offers) == ["g5.12xlarge", "g5.xlarge", "p5.48xlarge"]  # Inferentia is not a GPU
    assert "Skipping aws row x9.large" in caplog.text
    p5 = offers["p5.48xlarge"]
    assert (p5.gpu_model, p5.gpu_count, p5.nic_count) == ("H100-SXM-80GB", 8, 32)
    assert (p5.inter_node_fabric, p5.inter_node_gbits_per_s) == (Fabric.EFA, 3200)
    g5 = offers["g5.12xlarge"]
    assert g5.inter_node_gbits_per_s == 40  # "4x 10 Gigabit" is per instance across 4 cards
    small = offers["g5.xlarge"]
    assert small.inter_node_fabric == Fabric.ETHERNET
    burst = next(c for c in small.claims if c.field == "inter_node_gbits_per_s")
    assert (burst.value, burst.qualifiers) == (
        2.5,
        "baseline; burst 10 Gbit/s; per instance, all network cards",
    )


def test_fractional_gpu_stays_a_fraction(fixture_text):
    # The newer revision of the page writes "0.125 x NVIDIA L4 GPU" with "2.79 GiB" for g6f.large.
    slice_ = rows(fixture_text("aws/ac-fractional.md"))["g6f.large"]
    assert slice_.gpu_count == 0.125 and slice_.gpu_model == "L4-24GB"
    assert slice_.gpu_memory_gb == pytest.approx(2.995739, abs=1e-6)  # 2.79 GiB of the slice, not 8x it
    assert slice_.intra_node_link == Link.SINGLE_GPU and "GPU partition" in slice_.notes


def test_missing_table_is_a_layout_error(fixture_text):
    text = fixture_text("aws/ac-small.md").replace("| Instance type      | Baseline", "| Type | Baseline")
    with pytest.raises(LayoutError, match="network specifications"):
        parse_instance_types(text, AC_URL)


def test_no_gpu_rows_is_an_error():
    with pytest.raises(ParseError):
        parse_instance_types("# nothing here\n", AC_URL)


@shared_fixture(scope="module")
def real():
    text = mirror_text("docs.aws.amazon.com/ec2/latest/instancetypes/ac.md")
    return text, rows(text)


def test_real_page_has_every_gpu_family(real):
    _, offers = real
    assert len(offers) == 62
    for name in (
        "p4d.24xlarge",
        "p5.48xlarge",
        "p6-b200.48xlarge",
        "g5.48xlarge",
        "p3dn.24xlarge",
        "g6e.48xlarge",
        "p5en.48xlarge",
        "g4dn.metal",
        "dl1.24xlarge",
        "p6e-gb200.36xlarge",
    ):
        assert name in offers
    assert "trn2.48xlarge" not in offers  # Trainium is not a GPU
    assert "f1.2xlarge" not in offers


@pytest.mark.parametrize(
    ("name", "model", "count", "link", "intra", "fabric", "gbits", "cards"),
    [
        ("p4d.24xlarge", "A100-SXM-40GB", 8, Link.NVSWITCH, 600, Fabric.EFA, 400, 4),  # "4x 100 Gigabit"
        ("p4de.24xlarge", "A100-SXM-80GB", 8, Link.NVSWITCH, 600, Fabric.EFA, 400, 4),
        ("p5.48xlarge", "H100-SXM-80GB", 8, Link.NVSWITCH, 900, Fabric.EFA, 3200, 32),
        ("p5e.48xlarge", "H200-SXM-141GB", 8, Link.NVSWITCH, 900, Fabric.EFA, 3200, 32),
        ("p5en.48xlarge", "H200-SXM-141GB", 8, Link.NVSWITCH, 900, Fabric.EFA, 3200, 16),
        ("p6-b200.48xlarge", "B200-SXM-180GB", 8, Link.NVSWITCH, 1800, Fabric.EFA, 3200, 8),
        ("p6e-gb200.36xlarge", "GB200-186GB", 4, Link.NVSWITCH, 1800, Fabric.EFA, 3200, 17),
        ("p3dn.24xlarge", "V100-SXM2-32GB", 8, Link.NVLINK, 300, Fabric.EFA, 100, 1),
        ("p3.16xlarge", "V100-SXM2-16GB", 8, Link.NVLINK, 300, Fabric.ETHERNET, 25, 1),
        ("g5.48xlarge", "A10G-24GB", 8, Link.PCIE, 64, Fabric.EFA, 100, 1),
        ("g6e.48xlarge", "L40S-48GB", 8, Link.PCIE, 64, Fabric.EFA, 400, 4),
        ("g4dn.metal", "T4-16GB", 8, Link.PCIE, 32, Fabric.EFA, 100, 1),
    ],
)
def test_real_page_facts(real, name, model, count, link, intra, fabric, gbits, cards):
    _, offers = real
    offer = offers[name]
    assert (offer.gpu_model, offer.gpu_count) == (model, count)
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s) == (link, intra)
    assert offer.intra_node_basis == Basis.INFERRED  # the page never states GPU-to-GPU bandwidth
    assert (offer.inter_node_fabric, offer.inter_node_gbits_per_s, offer.nic_count) == (fabric, gbits, cards)
    assert offer.inter_node_gbytes_per_s == gbits / 8
    assert offer.inter_node_basis == Basis.STATED
    assert offer.frontend_gbits_per_s == gbits and offer.fabric_shares_frontend


def test_real_page_memory_is_converted_from_gib(real):
    _, offers = real
    assert offers["g5.xlarge"].gpu_memory_gb == pytest.approx(23.622, abs=1e-3)  # "22 GiB" of a 24 GB A10G
    assert offers["p5.48xlarge"].gpu_memory_gb == pytest.approx(85.899, abs=1e-3)  # 80 GiB


def test_real_page_single_gpu_and_burst(real):
    _, offers = real
    small = offers["g5.xlarge"]
    assert small.intra_node_link == Link.SINGLE_GPU and small.intra_node_basis == Basis.NOT_APPLICABLE
    assert small.inter_node_gbits_per_s == 2.5  # baseline of "2.5 / 10.0"; the footnote "1" is dropped
    assert offers["p5.4xlarge"].intra_node_link == Link.SINGLE_GPU


def test_real_page_partitioned_l4_is_flagged(real):
    _, offers = real
    assert offers["g6f.large"].gpu_model == "L4-24GB"
    assert "GPU partition" in offers["g6f.large"].notes


def test_real_page_every_quote_is_verbatim(real):
    text, offers = real
    flat = " ".join(text.split())
    for offer in offers.values():
        for claim in offer.claims:
            if claim.basis == Basis.STATED:
                assert " ".join(claim.quote.split()) in flat, (offer.instance_type, claim.quote)
