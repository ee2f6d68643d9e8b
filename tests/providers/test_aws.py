"""AWS: the parser on a fixture written for the test, then on the real page in ../shared/mirror."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.errors import LayoutError, ParseError
from normalize.vocab import Basis, Fabric, Link
from records.documents import Document, DocumentSet, copy_url
from scrapers.documents import aws_karpenter
from scrapers.documents.aws import AC_URL, NEWER, NEWER_NOTE, NEWER_ORIGINAL, Aws, parse_instance_types
from scrapers.documents.aws_karpenter import BANDWIDTH_URL
from tests.conftest import shared_fixture
from tests.helpers import SHARED, mirror_text

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
    assert slice_.intra_node_link == Link.SINGLE_GPU and "GPU partition" in slice_.notes_text


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
    assert len(offers) == 66  # 62 GPU types and the 4 Trainium ones the page names accelerators of
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
    assert offers["trn2.48xlarge"].gpu_model == "TRAINIUM2-96GB"  # Trainium: chips counted as GPUs (issue 20)
    assert (
        "trn2u.48xlarge" not in offers
    )  # the page names no accelerators for it ("✗ No"): the Neuron docs do
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
    # "1 x NVIDIA L4 GPU" beside "2 GiB": a slice, so the page's whole count is a claim it contradicts
    assert "is a slice of one L4-24GB" in offers["g6f.large"].notes_text


def test_real_page_every_quote_is_verbatim(real):
    text, offers = real
    flat = " ".join(text.split())
    for offer in offers.values():
        for claim in offer.claims:
            if claim.basis == Basis.STATED:
                assert " ".join(claim.quote.split()) in flat, (offer.instance_type, claim.quote)


@shared_fixture(scope="module")
def revisions():
    """AWS's page, the newer revision's third-party copy and Karpenter's table, read in place."""
    docs = [
        Document(AC_URL, "aws", 200, NOW, mirror_text(AC_URL.split("://", 1)[1])),
        Document(copy_url(NEWER), "aws", 200, NOW, (SHARED / NEWER).read_text(encoding="utf-8")),
        Document(BANDWIDTH_URL, "aws", 200, NOW, mirror_text(BANDWIDTH_URL.split("://", 1)[1])),
    ]
    return {o.instance_type: build_offer(o, scraped_at=NOW) for o in Aws().parse(DocumentSet(docs))}


def test_real_newer_revision_adds_both_flagships_cited_as_the_copy_it_is(revisions):
    assert len(revisions) == 74  # the page's 62 + 4 Trainium, p6-b300.48xlarge, six g7e sizes, trn2.3xlarge
    b300 = revisions["p6-b300.48xlarge"]
    assert (b300.gpu_model, b300.gpu_count, b300.inter_node_gbits_per_s, b300.nic_count) == (
        "B300-SXM-288GB",
        8,
        6400,
        17,
    )
    assert b300.source_url == f"copy:{NEWER}" and NEWER_NOTE in b300.notes_text
    from_copy = [c for c in b300.claims if c.source_url == f"copy:{NEWER}"]
    assert {c.original_url for c in from_copy} == {NEWER_ORIGINAL}
    assert next(c for c in from_copy if c.field == "inter_node_gbits_per_s").quote == "6400 Gigabit"
    g7e = {name: row for name, row in revisions.items() if name.startswith("g7e.")}
    assert sorted((row.gpu_count, row.inter_node_gbits_per_s) for row in g7e.values()) == [
        (1, 50),
        (1, 50),
        (1, 100),
        (2, 400),
        (4, 800),
        (8, 1600),
    ]
    assert {row.gpu_model for row in g7e.values()} == {"RTX-PRO-6000-SERVER-96GB"}  # "RTX PRO Server 6000"


def test_real_revisions_that_disagree_are_a_conflict_never_a_silent_pick(revisions):
    dl1 = revisions["dl1.24xlarge"]
    fabric = {(c.value, c.quote, c.source_url) for c in dl1.claims if c.field == "inter_node_fabric"}
    assert fabric == {("efa", "✓ Yes", AC_URL), ("ethernet", "✗ No", f"copy:{NEWER}")}
    assert dl1.conflict and "conflicting claims for inter_node_fabric: efa vs ethernet" in dl1.notes_text
    assert dl1.inter_node_fabric == Fabric.EFA  # AWS's own page leads; the copy's claim stands beside it
    agreeing = revisions["p5.48xlarge"]  # both revisions say 3200: two claims, no conflict
    assert not agreeing.conflict
    assert {c.source_url for c in agreeing.claims if c.field == "nic_count"} == {AC_URL, f"copy:{NEWER}"}


def test_real_karpenter_cross_checks_every_network_figure(revisions):
    """Every AWS row has Karpenter's figure beside the page's; on the real documents none disagrees."""
    for name, row in revisions.items():
        for field in ("inter_node_gbits_per_s", "frontend_gbits_per_s"):
            figures = {c.source_url: c.value for c in row.claims if c.field == field}
            assert figures[BANDWIDTH_URL] == figures[AC_URL if AC_URL in figures else f"copy:{NEWER}"], name
    p5 = next(c for c in revisions["p5.48xlarge"].claims if c.source_url == BANDWIDTH_URL)
    assert (p5.value, p5.quote) == (3200, '"p5.48xlarge":          3200000,')
    burst = next(c for c in revisions["g5.xlarge"].claims if c.source_url == BANDWIDTH_URL)
    assert burst.value == 2.5  # the baseline, as the page's "2.5 / 10.0"


def test_a_karpenter_figure_that_disagrees_is_a_conflict(fixture_text):
    go = 'var (\n\tInstanceTypeBandwidthMegabits = map[string]int64{\n\t\t"p5.48xlarge": 1600000,\n\t}\n)\n'
    offers = aws_karpenter.cross_check(
        parse_instance_types(fixture_text("aws/ac-small.md"), AC_URL), aws_karpenter.parse_bandwidths(go)
    )
    p5 = build_offer(next(o for o in offers if o.instance_type == "p5.48xlarge"), scraped_at=NOW)
    assert p5.conflict and p5.inter_node_gbits_per_s == 3200  # the page leads, Karpenter's 1600 beside it
    assert "conflicting claims for inter_node_gbits_per_s: 3200 vs 1600" in p5.notes_text
    assert (
        "not in Karpenter's bandwidth table"
        in next(o for o in offers if o.instance_type == "g5.xlarge").notes
    )
