"""catalog.offers.build_offer: stated beats inferred, inferred cites the datasheet, gaps are flagged."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from catalog.offers import build_offer
from normalize.errors import InvalidOffer
from normalize.gpus import BY_ID, gpu_table_lines
from normalize.vocab import Basis, Evidence, Fabric, Link, SellerKind
from records.offers import Claim, OfferIdentity, RawOffer

URL = "https://example.test/page"
NOW = datetime(2026, 12, 1)


def claim(field, value, **kw):
    return Claim(field=field, value=value, quote=kw.pop("quote", f"{field} {value}"), source_url=URL, **kw)


def raw(*claims, **kw):
    return RawOffer(
        provider="test", instance_type=kw.pop("name", "x.large"), source_url=URL, claims=claims, **kw
    )


def test_sxm_board_gets_inferred_nvswitch_figure_with_datasheet_claim():
    offer = build_offer(raw(claim("gpu_model", "H100-SXM-80GB"), claim("gpu_count", 8.0)), scraped_at=NOW)
    assert offer.intra_node_link == Link.NVSWITCH
    assert offer.intra_node_gbytes_per_s == 900
    assert offer.intra_node_basis == Basis.INFERRED
    assert offer.scale_up_domain_gpus == 8
    assert offer.gpu_memory_gbytes_per_s == 3350
    inferred = [c for c in offer.claims if c.basis == Basis.INFERRED]
    assert {c.field for c in inferred} == {"intra_node_gbytes_per_s", "gpu_memory_gbytes_per_s"}
    assert all(c.source_url == "https://www.nvidia.com/en-us/data-center/h100/" for c in inferred)
    # The quote is the cells of the GPU table row the value came from, as written: adding a column to
    # the table changes no claim.
    assert {(c.field, c.evidence, c.quote) for c in inferred} == {
        (
            "intra_node_gbytes_per_s",
            Evidence.DATASHEET,
            "id=H100-SXM-80GB; link=nvswitch; link_gbytes_per_s=900",
        ),
        ("gpu_memory_gbytes_per_s", Evidence.DATASHEET, "id=H100-SXM-80GB; memory_gbytes_per_s=3350"),
    }


def test_every_gpu_spec_quotes_its_own_table_row():
    lines = gpu_table_lines()
    assert len(lines) == len(BY_ID) + 1
    for spec in BY_ID.values():
        assert spec.table_row in lines and spec.table_row.startswith(f"{spec.id},{spec.family},")
        assert f",{spec.datasheet_url}," in spec.table_row


@pytest.mark.parametrize(
    ("basis", "evidence", "read_on", "message"),
    [
        (Basis.STATED, Evidence.PARAPHRASE, date(2026, 12, 1), "stated figure needs verbatim evidence"),
        (Basis.STATED, Evidence.DATASHEET, None, "stated figure needs verbatim evidence"),
        (Basis.PARAPHRASED, Evidence.VERBATIM, None, "paraphrased figure needs paraphrase evidence"),
        (Basis.PARAPHRASED, Evidence.PARAPHRASE, None, "needs the day it was read"),
        (Basis.INFERRED, Evidence.PARAPHRASE, None, "needs the day it was read"),
        (Basis.MISSING, Evidence.DATASHEET, None, "datasheet evidence backs inferred figures only"),
    ],
)
def test_a_claim_cannot_pass_off_its_evidence(basis, evidence, read_on, message):
    with pytest.raises(InvalidOffer, match=message):
        claim("gpu_count", 8.0, basis=basis, evidence=evidence, read_on=read_on)


def test_evidence_defaults_keep_scraped_claims_verbatim():
    plain = claim("gpu_count", 8.0)
    assert (plain.basis, plain.evidence, plain.original_url) == (Basis.STATED, Evidence.VERBATIM, None)
    inferred = claim("gpu_count", 8.0, basis=Basis.INFERRED)  # from a name: its quote is the name
    assert inferred.evidence == Evidence.VERBATIM


def test_stated_figure_wins_and_nvlink_on_nvswitch_board_is_refined():
    offer = build_offer(
        raw(
            claim("gpu_model", "H200-SXM-141GB"),
            claim("gpu_count", 8.0),
            claim("intra_node_link", "nvlink"),
            claim("intra_node_gbytes_per_s", 900.0),
        ),
        scraped_at=NOW,
    )
    assert offer.intra_node_basis == Basis.STATED
    assert offer.intra_node_link == Link.NVSWITCH


def test_single_gpu_has_no_gpu_to_gpu_bandwidth():
    offer = build_offer(raw(claim("gpu_model", "H100-SXM-80GB"), claim("gpu_count", 1.0)), scraped_at=NOW)
    assert offer.intra_node_link == Link.SINGLE_GPU
    assert offer.intra_node_gbytes_per_s is None
    assert offer.intra_node_basis == Basis.NOT_APPLICABLE
    assert not offer.missing_intra_bw


def test_a_slice_of_one_gpu_has_no_gpu_peer_whatever_its_count():
    raw_offer = raw(
        claim("gpu_model", "RTX-PRO-6000-SERVER-96GB"),
        claim("intra_node_link", "single-gpu", basis=Basis.INFERRED, quote="... MIG 1g.24gb"),
    )
    offer = build_offer(raw_offer, scraped_at=NOW)  # no count: pods choose it at deploy time
    assert (offer.intra_node_link, offer.intra_node_basis, offer.scale_up_domain_gpus) == (
        Link.SINGLE_GPU,
        Basis.NOT_APPLICABLE,
        1,
    )
    assert not any(c.field == "intra_node_gbytes_per_s" for c in offer.claims)


def test_fractional_gpu_is_kept_as_a_fraction():
    offer = build_offer(raw(claim("gpu_model", "A10-24GB"), claim("gpu_count", 1 / 6)), scraped_at=NOW)
    assert offer.gpu_count == pytest.approx(0.1666667)
    assert offer.intra_node_link == Link.SINGLE_GPU


def test_bridge_or_pcie_card_is_not_guessed():
    offer = build_offer(raw(claim("gpu_model", "H100-NVL-94GB"), claim("gpu_count", 2.0)), scraped_at=NOW)
    assert offer.intra_node_link == Link.UNKNOWN
    assert offer.intra_node_gbytes_per_s is None
    assert offer.missing_intra_bw
    assert "NVLink bridge (600 GB/s) or PCIe Gen5 (128 GB/s)" in offer.notes_text


def test_pcie_only_gpu_is_inferred_pcie():
    offer = build_offer(raw(claim("gpu_model", "A10G-24GB"), claim("gpu_count", 8.0)), scraped_at=NOW)
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s) == (Link.PCIE, 64)
    assert offer.scale_up_domain_gpus == 1


def test_rack_scale_domain_spans_instances():
    offer = build_offer(raw(claim("gpu_model", "GB200-186GB"), claim("gpu_count", 4.0)), scraped_at=NOW)
    assert offer.scale_up_domain_gpus == 72


def test_fabric_gbytes_is_gbits_over_eight_and_missing_is_flagged():
    offer = build_offer(
        raw(
            claim("gpu_model", "H100-SXM-80GB"),
            claim("gpu_count", 8.0),
            claim("inter_node_fabric", "infiniband"),
            claim("inter_node_gbits_per_s", 3200.0),
        ),
        scraped_at=NOW,
    )
    assert offer.inter_node_fabric == Fabric.INFINIBAND
    assert offer.inter_node_gbytes_per_s == 400
    assert not offer.missing_inter_bw
    bare = build_offer(raw(claim("gpu_model", "H100-SXM-80GB"), claim("gpu_count", 8.0)), scraped_at=NOW)
    assert bare.inter_node_fabric == Fabric.UNKNOWN
    assert bare.inter_node_gbits_per_s is None
    assert bare.missing_inter_bw


def test_disagreeing_claims_are_both_kept_and_flagged():
    offer = build_offer(
        raw(
            claim("gpu_model", "H100-SXM-80GB"),
            claim("inter_node_gbits_per_s", 1800.0, quote="1,800 Gbps"),
            claim("inter_node_gbits_per_s", 1600.0, quote="up to 1,600 Gbps"),
        ),
        scraped_at=NOW,
    )
    assert offer.conflict
    assert "conflicting claims for inter_node_gbits_per_s: 1800 vs 1600" in offer.notes_text
    assert [c.value for c in offer.claims if c.field == "inter_node_gbits_per_s"] == [1800.0, 1600.0]


def test_agreeing_claims_are_not_a_conflict():
    offer = build_offer(
        raw(
            claim("inter_node_gbits_per_s", 3200.0, quote="3.2 Tbps"),
            claim("inter_node_gbits_per_s", 3200.0, quote="8 x 400 Gbps"),
        ),
        scraped_at=NOW,
    )
    assert not offer.conflict


def test_unit_suspect_claim_marks_the_row():
    offer = build_offer(raw(claim("inter_node_gbits_per_s", 1600.0, unit_suspect=True)), scraped_at=NOW)
    assert offer.unit_suspect


def test_claim_invariants():
    with pytest.raises(InvalidOffer, match="unknown claim field"):
        claim("bandwidth", 1.0)
    with pytest.raises(InvalidOffer, match="wrong kind"):
        claim("gpu_count", "eight")
    with pytest.raises(InvalidOffer, match="no quote"):
        Claim("gpu_count", 8.0, quote=" ", source_url=URL)


def test_row_invariants():
    with pytest.raises(InvalidOffer, match="lower-case"):
        build_offer(RawOffer("AWS", "p5", URL, ()), scraped_at=NOW)
    with pytest.raises(InvalidOffer, match="gpu_count must be positive"):
        build_offer(raw(claim("gpu_model", "L4-24GB"), claim("gpu_count", 0.0)), scraped_at=NOW)
    with pytest.raises(InvalidOffer, match="without gpu_model"):
        build_offer(raw(claim("gpu_count", 8.0)), scraped_at=NOW)


def test_identity_passes_through_and_says_who_sells():
    resold = OfferIdentity(SellerKind.AGGREGATOR, "lambda", "gpu_8x_h100_sxm5")
    offer = build_offer(raw(claim("gpu_model", "H100-SXM-80GB"), identity=resold), scraped_at=NOW)
    assert (offer.seller_kind, offer.upstream_provider, offer.upstream_instance_type) == (
        SellerKind.AGGREGATOR,
        "lambda",
        "gpu_8x_h100_sxm5",
    )
    own = build_offer(raw(claim("gpu_model", "H100-SXM-80GB")), scraped_at=NOW)
    assert (own.seller_kind, own.upstream_provider, own.platform, own.preset) == (
        SellerKind.CLOUD,
        None,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("identity", "problem"),
    [
        (OfferIdentity(SellerKind.CLOUD, "lambda"), "a cloud's own offer has no upstream provider"),
        (
            OfferIdentity(SellerKind.MARKETPLACE, None, "gpu_1x_a10"),
            "upstream_instance_type without upstream_provider",
        ),
        (OfferIdentity(preset="8gpu-128vcpu-1600gb"), "preset without platform"),
        (OfferIdentity(platform=" "), "platform is blank"),
        (OfferIdentity("reseller"), "unknown seller_kind 'reseller'"),  # type: ignore[arg-type]
    ],
)
def test_identity_invariants(identity, problem):
    with pytest.raises(InvalidOffer, match=problem):
        build_offer(raw(claim("gpu_model", "H100-SXM-80GB"), identity=identity), scraped_at=NOW)


def test_expected_and_measured_figures_carry_a_value_and_missing_ones_do_not():
    from dataclasses import replace

    row = build_offer(raw(claim("gpu_model", "H100-SXM-80GB"), claim("gpu_count", 8.0)), scraped_at=NOW)
    assert row.inter_node_basis == Basis.MISSING and row.inter_node_gbits_per_s is None
    filled = replace(
        row,
        inter_node_gbits_per_s=3200.0,
        inter_node_gbytes_per_s=400.0,
        inter_node_basis=Basis.EXPECTED,
        missing_inter_bw=False,
    )
    assert filled.inter_node_basis == "expected"
    measured = replace(row, intra_node_gbytes_per_s=781.4, intra_node_basis=Basis.MEASURED)
    assert measured.intra_node_basis == "measured"
    with pytest.raises(InvalidOffer, match="disagrees with its basis expected"):
        replace(row, inter_node_basis=Basis.EXPECTED, missing_inter_bw=False)
