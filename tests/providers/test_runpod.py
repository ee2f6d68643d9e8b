"""RunPod: the parser on fixtures written for the test, then on the real docs in ../shared/mirror."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.errors import LayoutError, ParseError
from normalize.vocab import Basis, Fabric, Link
from records.documents import Document, DocumentSet
from scrapers.documents.runpod import (
    CLUSTERS_URL,
    COUNT_NOTE,
    FLASH_GPU_TYPES_URL,
    GPU_TYPES_URL,
    OBSERVABILITY_URL,
    RunPod,
    enum_key,
    gpus_per_node,
)
from tests.conftest import shared_fixture
from tests.helpers import FIXTURES, fetch_from_mirror

NOW = datetime(2026, 12, 1)
FIXTURE_FILES = {
    CLUSTERS_URL: "instant-clusters.mdx",
    GPU_TYPES_URL: "gpu-types.mdx",
    FLASH_GPU_TYPES_URL: "flash-gpu-types.mdx",
    OBSERVABILITY_URL: "cluster-observability.mdx",
}


def doc(url: str, body: str | None, status: int = 200) -> Document:
    return Document(url=url, provider="runpod", status=status, fetched_at=NOW, body=body)


def fixture_documents(*, absent: tuple[str, ...] = ()) -> DocumentSet:
    return DocumentSet(
        doc(url, None, 404) if url in absent else doc(url, (FIXTURES / "runpod" / name).read_text())
        for url, name in FIXTURE_FILES.items()
    )


def build(documents: DocumentSet) -> dict:
    return {o.instance_type: build_offer(o, scraped_at=NOW) for o in RunPod().parse(documents)}


def claim(offer, field: str, url: str | None = None):
    return next(c for c in offer.claims if c.field == field and (url is None or c.source_url == url))


def test_fixture_cluster_rows(caplog):
    offers = build(fixture_documents())
    clusters = sorted(name for name in offers if name.startswith("instant-cluster-"))
    assert clusters == [
        "instant-cluster-a100-8gpu",
        "instant-cluster-b200-8gpu",
        "instant-cluster-h100-8gpu",
    ]
    assert "Skipping runpod row X9000" in caplog.text  # unknown GPU
    assert "Skipping runpod row H200" in caplog.text  # 16-60 GPUs over 2-8 nodes is no whole number
    b200 = offers["instant-cluster-b200-8gpu"]
    assert (b200.gpu_model, b200.gpu_count, b200.nic_count) == ("B200-SXM-180GB", 8, 4)  # `ens1`-`ens4`
    assert (b200.inter_node_fabric, b200.inter_node_gbits_per_s) == (Fabric.UNKNOWN, 3200)
    assert (b200.intra_node_link, b200.intra_node_basis) == (Link.NVSWITCH, Basis.INFERRED)
    assert "'InfiniBand / RoCE'" in b200.notes_text and b200.gpu_memory_gb is None
    assert claim(b200, "gpu_count").quote == "2-4 nodes (16-32 GPUs)"
    assert "'instant-cluster-b200-8gpu' is this catalog's stable slug" in b200.notes_text
    assert offers["instant-cluster-a100-8gpu"].inter_node_gbits_per_s == 1600  # "1.6 Tbps"
    h100 = offers["instant-cluster-h100-8gpu"]
    assert (h100.gpu_model, h100.intra_node_link, h100.missing_intra_bw) == ("H100", Link.UNKNOWN, True)
    assert "RunPod lists NVIDIA H100 80GB HBM3, NVIDIA H100 PCIe" in h100.notes_text


def test_fixture_pod_rows(caplog):
    offers = build(fixture_documents())
    pods = sorted(name for name in offers if not name.startswith("instant-cluster-"))
    assert len(pods) == 6 and "AMPERE_80" not in str(pods)  # the pool table is not GPU types
    assert "Skipping runpod row NVIDIA Quantum Q1" in caplog.text
    h100 = offers["NVIDIA H100 80GB HBM3"]
    assert (h100.gpu_model, h100.gpu_count, h100.gpu_memory_gb) == ("H100-SXM-80GB", None, 80)
    assert COUNT_NOTE in h100.notes_text and not h100.conflict  # Flash's "80GB" agrees
    assert h100.inter_node_basis == Basis.MISSING and h100.inter_node_fabric == Fabric.UNKNOWN
    a100 = offers["NVIDIA A100 80GB PCIe"]  # Flash's "TBD" VRAM is ignored, the row stands
    assert a100.gpu_model == "A100-PCIE-80GB"
    assert not any(c.source_url == FLASH_GPU_TYPES_URL for c in a100.claims)
    assert "Ignoring runpod Flash VRAM of NVIDIA A100 80GB PCIe" in caplog.text
    mig = offers["NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb"]
    assert (mig.gpu_model, mig.gpu_memory_gb) == ("RTX-PRO-6000-SERVER-96GB", 24)
    assert "MIG slice 1g.24gb" in mig.notes_text and claim(mig, "gpu_memory_gb").qualifiers == "per MIG slice"
    ada = offers["NVIDIA RTX 4000 Ada Generation"]
    assert ada.conflict and ada.gpu_memory_gb == 20  # the reference's 20 first, Flash's 16GB kept
    assert claim(ada, "gpu_memory_gb", FLASH_GPU_TYPES_URL).value == 16
    assert "datasheet figure is 141 GB" in offers["NVIDIA H200 NVL"].notes_text


def test_optional_documents_may_be_absent():
    offers = build(fixture_documents(absent=(FLASH_GPU_TYPES_URL, OBSERVABILITY_URL)))
    assert not offers["NVIDIA RTX 4000 Ada Generation"].conflict
    assert "no RunPod document states" in offers["instant-cluster-b200-8gpu"].notes_text


def test_missing_required_document_is_a_layout_error():
    with pytest.raises(LayoutError, match=r"references/gpu-types\.mdx"):
        RunPod().parse(fixture_documents(absent=(GPU_TYPES_URL,)))


def test_missing_cluster_table_is_a_layout_error():
    text = (FIXTURES / "runpod/instant-clusters.mdx").read_text().replace("| Network speed |", "| Speed |")
    documents = {**fixture_documents(), CLUSTERS_URL: doc(CLUSTERS_URL, text)}
    with pytest.raises(LayoutError, match="Instant Clusters hardware"):
        RunPod().parse(DocumentSet(documents.values()))


@pytest.mark.parametrize(
    ("cell", "per_node"),
    [("2-8 nodes (16-64 GPUs)", 8), ("1 node (4 GPUs)", 4), ("2-4 nodes (8-16 GPUs)", 4)],
)
def test_gpus_per_node(cell, per_node):
    assert gpus_per_node(cell) == per_node


@pytest.mark.parametrize("cell", ["2-8 nodes (16-60 GPUs)", "3 nodes (16 GPUs)", "up to 8 nodes"])
def test_gpus_per_node_refuses_what_is_not_one_whole_number(cell):
    with pytest.raises(ParseError):
        gpus_per_node(cell)


def test_flash_enum_key_of_gpu_ids():
    assert enum_key("NVIDIA A100-SXM4-80GB") == "NVIDIA_A100_SXM4_80GB"
    assert enum_key("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition") == (
        "NVIDIA_RTX_PRO_6000_BLACKWELL_MAX_Q_WORKSTATION_EDITION"
    )


@shared_fixture(scope="module")
def real():

    documents = fetch_from_mirror(RunPod())
    return documents, build(DocumentSet(documents))


def test_real_fetch_stores_all_four_documents(real):
    documents, offers = real
    assert {d.url for d in documents if d.status == 200} == set(FIXTURE_FILES)
    assert len(offers) == 49  # 4 Instant Cluster GPU types + 45 GPU IDs (2 of them MIG slices)


@pytest.mark.parametrize(
    ("name", "model", "link", "gbits"),
    [
        ("instant-cluster-b200-8gpu", "B200-SXM-180GB", Link.NVSWITCH, 3200),
        ("instant-cluster-h200-8gpu", "H200-141GB", Link.UNKNOWN, 3200),
        ("instant-cluster-h100-8gpu", "H100", Link.UNKNOWN, 3200),
        ("instant-cluster-a100-8gpu", "A100", Link.UNKNOWN, 1600),
    ],
)
def test_real_instant_clusters(real, name, model, link, gbits):
    _, offers = real
    offer = offers[name]
    assert (offer.gpu_model, offer.gpu_count, offer.intra_node_link) == (model, 8, link)
    assert (offer.inter_node_gbits_per_s, offer.inter_node_gbytes_per_s) == (gbits, gbits / 8)
    assert (offer.inter_node_basis, offer.inter_node_fabric, offer.nic_count) == (
        Basis.STATED,
        Fabric.UNKNOWN,
        8,
    )
    assert claim(offer, "gpu_count").quote == "2-8 nodes (16-64 GPUs)"
    assert "`ens1`-`ens8`" in claim(offer, "nic_count").quote
    assert "'InfiniBand / RoCE'" in offer.notes_text
    assert offer.frontend_gbits_per_s is None and offer.gpu_memory_gb is None


@pytest.mark.parametrize(
    ("gpu_id", "model", "memory_gb", "link"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM-80GB", 80, Link.NVSWITCH),
        ("NVIDIA A100-SXM4-80GB", "A100-SXM-80GB", 80, Link.NVSWITCH),
        ("NVIDIA H100 NVL", "H100-NVL-94GB", 94, Link.UNKNOWN),
        ("NVIDIA B300 SXM6 AC", "B300-SXM-288GB", 288, Link.NVSWITCH),
        ("AMD Instinct MI300X OAM", "MI300X-192GB", 192, Link.INFINITY_FABRIC),
        ("NVIDIA GeForce RTX 4090", "RTX-4090-24GB", 24, Link.PCIE),
        ("Tesla V100-SXM2-32GB", "V100-SXM2-32GB", 32, Link.NVLINK),
        ("NVIDIA RTX 4000 SFF Ada Generation", "RTX-4000-ADA-SFF-20GB", 20, Link.PCIE),
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX-PRO-6000-MAXQ-96GB", 96, Link.PCIE),
        ("NVIDIA H200 NVL", "H200-NVL-141GB", 143, Link.UNKNOWN),
    ],
)
def test_real_gpu_types(real, gpu_id, model, memory_gb, link):
    _, offers = real
    offer = offers[gpu_id]
    assert (offer.gpu_model, offer.gpu_memory_gb, offer.intra_node_link) == (model, memory_gb, link)
    assert offer.gpu_count is None and COUNT_NOTE in offer.notes_text
    assert offer.inter_node_gbits_per_s is None and offer.inter_node_fabric == Fabric.UNKNOWN


def test_real_pool_ids_are_not_gpu_types(real):
    _, offers = real
    assert not any("AMPERE" in name or "HOPPER" in name for name in offers)


def test_real_mig_slices_are_their_parent_gpu(real):
    _, offers = real
    for gpu_id, memory_gb in (
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb", 24),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 2g.48gb", 48),
    ):
        offer = offers[gpu_id]
        assert (offer.gpu_model, offer.gpu_memory_gb) == ("RTX-PRO-6000-SERVER-96GB", memory_gb)
        assert "a partition of one GPU" in offer.notes_text
        # A slice of one GPU has no GPU peer: no PCIe GPU-to-GPU figure is inferred for it.
        assert (offer.intra_node_link, offer.intra_node_gbytes_per_s, offer.intra_node_basis) == (
            Link.SINGLE_GPU,
            None,
            Basis.NOT_APPLICABLE,
        )
        assert offer.scale_up_domain_gpus == 1 and not offer.missing_intra_bw
        link = claim(offer, "intra_node_link")
        assert (link.basis, link.quote) == (Basis.INFERRED, gpu_id)
        assert not any(c.field == "intra_node_gbytes_per_s" for c in offer.claims)


def test_real_flash_page_disagrees_on_rtx_4000_ada(real):
    _, offers = real
    ada = offers["NVIDIA RTX 4000 Ada Generation"]
    assert ada.conflict and ada.gpu_memory_gb == 20
    assert claim(ada, "gpu_memory_gb", FLASH_GPU_TYPES_URL).quote == "16GB"
    assert not offers["NVIDIA B200"].conflict  # Flash's "180GB" agrees


def test_real_every_quote_is_verbatim(real):
    documents, offers = real
    flat = {d.url: " ".join((d.body or "").split()) for d in documents}
    for offer in offers.values():
        for c in offer.claims:
            if c.basis == Basis.STATED:
                assert " ".join(c.quote.split()) in flat[c.source_url], (offer.instance_type, c.quote)
