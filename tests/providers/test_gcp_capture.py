"""GCP from Google's own words: the text captures of its machine-family pages, on the real captures
(../shared/reference/thirdparty-copies/docs.cloud.google.com/...), with the MANIFEST's traps, and on
small fixtures of our own for the layout rules."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from catalog.provenance import quote_in
from normalize.errors import LayoutError
from normalize.vocab import Basis, Evidence, Fabric, Link
from records.documents import Document, DocumentSet, copy_url
from scrapers.documents.gcp import Gcp, capture
from tests.conftest import shared_fixture
from tests.helpers import SHARED

NOW = datetime(2026, 12, 3)


@shared_fixture(scope="module")
def captures() -> dict[str, str]:
    return {path: (SHARED / path).read_text(encoding="utf-8") for path in capture.COPIES}


@shared_fixture(scope="module")
def machines(captures) -> dict:
    offers = capture.parse_capture(captures[capture.MACHINES_COPY], capture.MACHINES_COPY)
    return {o.instance_type: o for o in offers}


def claims(offer, field: str) -> list:
    return [c for c in offer.claims if c.field == field]


def test_every_machine_type_of_the_page_is_read(machines):
    assert len(machines) == 34
    for name in ("a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal", "g4-standard-6"):
        assert name in machines


def test_every_quote_is_in_the_capture_and_google_is_the_original(captures, machines):
    text = captures[capture.MACHINES_COPY]
    for offer in machines.values():
        for claim in offer.claims:
            assert claim.evidence == Evidence.VERBATIM
            # only a form factor taken from the series' board (normalize/board_families.csv) is inferred
            assert claim.basis == Basis.STATED or claim.field == "gpu_model"
            assert quote_in(claim.quote, text), (offer.instance_type, claim.field, claim.quote)
            assert claim.source_url == copy_url(capture.MACHINES_COPY)
            assert (
                claim.original_url
                == "https://docs.cloud.google.com/compute/docs/accelerator-optimized-machines"
            )


def test_maximum_network_bandwidth_is_the_machine_total_not_the_gpu_fabric(machines):
    """TRAP: 3,600 Gbps on a3-ultragpu-8g / a4-highgpu-8g is GPU NICs + gVNIC; it is no field's value."""
    for name in ("a3-ultragpu-8g", "a4-highgpu-8g"):
        offer = machines[name]
        assert [c.value for c in offer.claims if c.field.endswith("_gbits_per_s")] == []
        assert claims(offer, "inter_node_fabric")[0].value == Fabric.ROCE
        assert "'Maximum network bandwidth' (3,600 Gbps)" in " ".join(offer.notes)
        assert not offer.fabric_shares_frontend
    # A4X: only the prose splits it: 1,600 for the GPU NICs, 400 general purpose (2,000 total).
    a4x = machines["a4x-highgpu-4g"]
    assert [c.value for c in claims(a4x, "inter_node_gbits_per_s")] == [1600]
    assert [c.value for c in claims(a4x, "frontend_gbits_per_s")] == [400]
    # GPUDirect-TCPX: the total is one allowance shared with the front end, said so; no front-end figure.
    high = machines["a3-highgpu-8g"]
    (total,) = claims(high, "inter_node_gbits_per_s")
    assert (total.value, total.quote) == (1000, "1,000") and "shared with the gVNIC" in total.qualifiers
    assert claims(high, "frontend_gbits_per_s") == [] and high.fabric_shares_frontend
    assert claims(high, "inter_node_fabric")[0].value == Fabric.GPUDIRECT_TCPX
    # One physical NIC and no GPU fabric: the total is the front end.
    assert [c.value for c in claims(machines["a3-highgpu-1g"], "frontend_gbits_per_s")] == [25]
    assert claims(machines["a3-highgpu-1g"], "inter_node_fabric") == []  # TCPX is named for -8g only


def test_a_cell_on_two_lines_is_one_cell(machines):
    edge = machines["a3-edgegpu-8g"]  # "600: for asia-south1 ..." / "400: for all other A3 Edge regions"
    assert claims(edge, "inter_node_gbits_per_s") == []  # per region: no one figure
    note = " ".join(edge.notes)
    assert "600: for asia-south1 and northamerica-northeast2 / 400: for all other A3 Edge regions" in note
    assert claims(edge, "gpu_count")[0].value == 8


def test_nvlink_in_googles_words_with_its_direction(machines):
    (h100,) = claims(machines["a3-megagpu-8g"], "intra_node_gbytes_per_s")
    assert h100.value == 900 and "450 GB/s unidirectionally" in h100.qualifiers
    assert "450 GB/s, unidirectionally" in h100.quote
    (b200,) = claims(machines["a4-highgpu-8g"], "intra_node_gbytes_per_s")
    assert b200.value == 1800 and "bidirectionally per GPU" in b200.quote
    a4x = machines["a4x-maxgpu-4g-metal"]
    assert claims(a4x, "scale_up_domain_gpus")[0].value == 72
    assert claims(a4x, "intra_node_link")[0].value == Link.NVSWITCH
    assert claims(machines["a3-highgpu-1g"], "intra_node_gbytes_per_s") == []  # one GPU: no GPU-to-GPU


def test_fractional_g4_shapes_and_peer_to_peer(machines):
    counts = {n: claims(machines[n], "gpu_count")[0].value for n in ("g4-standard-6", "g4-standard-12")}
    assert counts == {"g4-standard-6": 0.125, "g4-standard-12": 0.25}
    # a slice keeps its own memory (12 GB of 1/8 GPU), as AWS's g6f slices do; the part is the 96 GB card
    assert claims(machines["g4-standard-6"], "gpu_memory_gb")[0].value == 12
    assert claims(machines["g4-standard-96"], "intra_node_link")[0].value == Link.PCIE
    assert claims(machines["g4-standard-48"], "intra_node_link") == []


def test_the_gpus_page_tables_without_footnotes_and_its_chart(captures):
    offers = {
        o.instance_type: o for o in capture.parse_capture(captures[capture.GPUS_COPY], capture.GPUS_COPY)
    }
    assert len(offers) == 34
    (chart,) = claims(offers["a3-ultragpu-8g"], "intra_node_gbytes_per_s")
    assert chart.value == 900 and "direction not stated" in chart.qualifiers  # against 900 one way elsewhere


def test_google_words_and_our_restatement_both_kept(captures):
    docs = DocumentSet([Document(copy_url(p), "gcp", 200, NOW, t) for p, t in captures.items()])
    offers = {o.instance_type: o for o in Gcp().parse(docs)}
    assert len(offers) == 34
    high = offers["a3-highgpu-8g"]
    evidence = {(c.value, c.evidence) for c in claims(high, "inter_node_gbits_per_s")}
    assert (1000, Evidence.VERBATIM) in evidence and (1000, Evidence.PARAPHRASE) in evidence
    assert (1600, Evidence.PARAPHRASE) in evidence  # cluster-toolkit's 8 x 200: a conflict, kept
    row = build_offer(offers["a3-ultragpu-8g"], scraped_at=NOW)
    assert (row.gpu_model, row.inter_node_fabric) == ("H200-SXM-141GB", Fabric.ROCE)


def test_layout_rules_on_a_fixture():
    text = "\n".join(
        [
            "Attached NVIDIA H100 GPUs",
            "Machine type",
            "vCPU count 1",
            "Maximum network bandwidth (Gbps) 2",
            "GPU count",
            "GPU memory 3 (GB HBM3)",
            "a3-highgpu-2g",
            "52",
            "50",
            "2",
            "160",
            "A3 High limitations",
            "a3-highgpu-8g is named here in prose only",
        ]
    )
    (row,) = capture.machine_tables(text)
    assert row.cells == {
        "vCPU count": "52",
        "Maximum network bandwidth (Gbps)": "50",
        "GPU count": "2",
        "GPU memory 3 (GB HBM3)": "160",
    }
    with pytest.raises(LayoutError):
        capture.machine_tables("Machine type\nGPU count\n")
