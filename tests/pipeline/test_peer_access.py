"""GPU peer access as a fact (issue 20): Spare Cores runs that waived every device-to-device test are
kept as evidence of no peer access, an inferred PCIe figure they contradict is withdrawn, GeForce
cards get no PCIe P2P figure, and a resold slice of an SXM board is not NVSwitch by assumption."""

from __future__ import annotations

import pytest

from catalog.offers import build_offer
from catalog.peer_access import from_measurements
from measure.common import Origin
from measure.nvbandwidth import parse_json
from normalize.vocab import SellerKind
from records.clock import utcnow
from records.offers import OfferIdentity, RawOffer
from scrapers.claims import fact
from tests.helpers import MIRROR, query

SPARECORES = "raw.githubusercontent.com/SpareCores/sc-inspector-data/main/data"


def _run(run: str) -> list:
    path = MIRROR / SPARECORES / run / "nvbandwidth" / "stdout"
    origin = Origin("sparecores", f"https://{SPARECORES}/{run}/nvbandwidth/stdout", "measured", "aws", run)
    return parse_json(path.read_text(), origin, "v0.5")


@pytest.mark.shared
def test_a_multi_gpu_run_that_waived_every_peer_copy_is_kept_as_no_peer_access():
    readings = _run("aws/g5.48xlarge")
    [status] = [m for m in readings if m.metric == "gpu_p2p_status"]
    assert (status.value_text, status.gpus, status.quote) == ("Waived", 8, '"status" : "Waived"')
    assert status.locator == "$.nvbandwidth.testcases[4].status"
    assert not [m for m in readings if m.metric.startswith("gpu_to_gpu")]


@pytest.mark.shared
def test_a_one_gpu_run_waives_peer_copies_too_and_proves_nothing():
    assert not [m for m in _run("aws/g5.xlarge") if m.metric == "gpu_p2p_status"]


def test_measured_readings_decide_peer_access_and_withdraw_a_contradicted_inference():
    row = {"intra_node_basis": "inferred", "intra_node_gbytes_per_s": 64.0}
    base = {"kind": "measured", "tool": "nvbandwidth", "tool_version": "v0.5", "quote": "q", "locator": "l"}
    slow = {
        **base,
        "metric": "gpu_to_gpu_gbytes_per_s",
        "direction": "one-way",
        "value": 10.1,
        "source_url": "u",
    }
    fast = {**slow, "value": 30.0}
    waived = {**base, "metric": "gpu_p2p_status", "direction": None, "value": None, "value_text": "Waived"}
    measured = from_measurements([slow], row)
    assert measured.peer is not None and measured.peer.access == "yes" and measured.peer.basis == "measured"
    assert measured.withdraw_note and "20.2 GB/s both ways together" in measured.withdraw_note
    assert from_measurements([fast], row).withdraw_note is None  # 60 GB/s both ways: not contradicted
    no = from_measurements([{**waived, "source_url": "w"}], row)
    assert no.peer is not None and no.peer.access == "no" and no.withdraw_note
    stated = from_measurements([{**waived, "source_url": "w"}], {**row, "intra_node_basis": "stated"})
    assert stated.withdraw_note is None  # a stated figure is the source's: never withdrawn


def _raw(model: str, count: float, kind: str = "cloud") -> RawOffer:
    url = "https://example.test/list"
    identity = OfferIdentity() if kind == "cloud" else OfferIdentity(seller_kind=SellerKind(kind))
    claims = (
        fact("gpu_model", model, quote=model, source_url=url),
        fact("gpu_count", float(count), quote=f"{count:g}", source_url=url),
    )
    return RawOffer("boxtest", "box", url, claims, identity=identity)


def test_geforce_cards_get_no_pcie_peer_figure_and_no_peer_access():
    offer = build_offer(_raw("RTX-4090-24GB", 4), scraped_at=utcnow())
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s, offer.intra_node_basis) == (
        "pcie",
        None,
        "missing",
    )
    assert (offer.gpu_peer_access, offer.gpu_peer_access_basis) == ("no", "inferred")
    assert "GeForce" in (offer.gpu_peer_access_evidence or "")
    workstation = build_offer(_raw("RTX-6000-ADA-48GB", 4), scraped_at=utcnow())
    assert (workstation.intra_node_gbytes_per_s, workstation.gpu_peer_access) == (64.0, "unknown")


def test_a_resold_slice_of_an_sxm_board_is_not_nvswitch_by_assumption():
    sliced = build_offer(_raw("H100-SXM-80GB", 2, "marketplace"), scraped_at=utcnow())
    assert (sliced.intra_node_link, sliced.intra_node_basis, sliced.gpu_peer_access) == (
        "unknown",
        "missing",
        "unknown",
    )
    assert "does not say" in sliced.notes_text
    whole = build_offer(_raw("H100-SXM-80GB", 8, "marketplace"), scraped_at=utcnow())
    assert (whole.intra_node_link, whole.intra_node_gbytes_per_s, whole.gpu_peer_access) == (
        "nvswitch",
        900.0,
        "yes",
    )


def test_real_rows_keep_no_pcie_figure_the_measurements_contradict(real_catalog_file):
    rows = dict(
        (r[0], r[1:])
        for r in query(
            real_catalog_file,
            "SELECT instance_type, intra_node_gbytes_per_s, intra_node_basis, gpu_peer_access, "
            "gpu_peer_access_basis FROM instances WHERE provider IN ('aws', 'gcp')",
        )
    )
    no_p2p = [
        "g4dn.12xlarge",
        "g5.12xlarge",
        "g5.24xlarge",
        "g5.48xlarge",
        "g5g.16xlarge",
        "g6.48xlarge",
        "g6e.48xlarge",
    ]
    for name in no_p2p:
        assert rows[name] == (None, "missing", "no", "measured"), name
    for name in ("g2-standard-24", "g2-standard-48", "g2-standard-96"):
        assert rows[name] == (None, "missing", "yes", "measured"), name  # ~10 GB/s measured, 64 withdrawn
    assert rows["a3-highgpu-8g"][2:] == ("yes", "measured")
    evidence = query(
        real_catalog_file,
        "SELECT gpu_peer_access_evidence FROM instances WHERE instance_type = 'g5.48xlarge'",
    )
    assert "Waived" in evidence[0][0] and "sc-inspector-data" in evidence[0][0]
    # no row anywhere shows a PCIe P2P figure next to a measured "no"
    assert query(
        real_catalog_file,
        "SELECT count(*) FROM instances WHERE gpu_peer_access = 'no' AND intra_node_gbytes_per_s IS NOT NULL",
    ) == [(0,)]


def test_ovh_runs_reach_the_ovhcloud_rows(real_catalog_file):
    matched = query(
        real_catalog_file,
        "SELECT count(DISTINCT m.instance_type) FROM measurements m "
        "JOIN instances i USING (provider, instance_type) "
        "WHERE m.source = 'sparecores' AND m.provider = 'ovhcloud'",
    )
    assert matched[0][0] >= 12
    assert query(real_catalog_file, "SELECT count(*) FROM measurements WHERE provider = 'ovh'") == [(0,)]
