"""Nebius: the SkyPilot vms.csv parser on a CRLF fixture written for the test, then on the real CSV."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.errors import LayoutError, ParseError
from normalize.vocab import Basis, Fabric, Link
from records.documents import DocumentSet
from scrapers.nebius import VMS_URL, Nebius, csv_rows, gpu_info, parse_vms
from tests.conftest import shared_fixture
from tests.helpers import FIXTURES, fetch_from_mirror

NOW = datetime(2026, 12, 1)
H100_INFO = (
    "{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8, "
    "'MemoryInfo': {'SizeInMiB': 204800}}], 'TotalGpuMemoryInMiB': 1638400}"
)


def build(text: str) -> dict:
    return {o.instance_type: build_offer(o, scraped_at=NOW) for o in parse_vms(text, VMS_URL)}


@pytest.fixture
def small() -> str:
    """The fixture byte for byte: read_text would turn its CRLF line endings into LF."""
    return (FIXTURES / "nebius/vms-small.csv").read_bytes().decode("utf-8")


def claims(offer, field: str) -> list:
    return [c for c in offer.claims if c.field == field]


def test_fixture_rows_and_skips(small, caplog):
    assert small.count("\r\n") == 9 and "\n" not in small.replace("\r\n", "")
    offers = build(small)
    assert list(offers) == [
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",  # two regions, one offer
        "gpu-l40s-d_2gpu-64vcpu-384gb",
        "gpu-b200-sxm_8gpu-160vcpu-1792gb",
        "gpu-h200-sxm_1gpu-16vcpu-200gb",
    ]
    assert "Skipping nebius row gpu-h100-sxm_1gpu-16vcpu-200gb: not a GPU count: 'eight'" in caplog.text
    assert "Skipping nebius row gpu-x9000-sxm_8gpu-128vcpu-1600gb: unknown GPU" in caplog.text
    assert "cpu-e2" not in caplog.text  # CPU-only types are not GPU rows, not failures


def test_fixture_host_ram_trap_is_not_gpu_memory(small):
    offer = build(small)["gpu-h100-sxm_8gpu-128vcpu-1600gb"]
    assert (offer.gpu_model, offer.gpu_count, offer.gpu_memory_gb) == ("H100-SXM-80GB", 8, None)
    assert claims(offer, "gpu_memory_gb") == []
    assert (
        "not GPU memory: GpuInfo MemoryInfo.SizeInMiB 204800 MiB (214.748 GB) is the host RAM per GPU"
        in offer.notes
    )
    assert "(MemoryGiB 1600 / 8 GPUs)" in offer.notes and "H100-SXM-80GB has 80 GB" in offer.notes
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s) == (Link.NVSWITCH, 900)
    assert offer.intra_node_basis == Basis.INFERRED
    assert offer.gpu_memory_bw_basis == Basis.INFERRED and offer.gpu_memory_gbytes_per_s == 3350
    l40s = build(small)["gpu-l40s-d_2gpu-64vcpu-384gb"]  # 196608 MiB = 384 GiB / 2: host RAM again
    assert (l40s.gpu_model, l40s.gpu_count, l40s.gpu_memory_gb) == ("L40S-48GB", 2, None)
    assert "not GPU memory: " in l40s.notes and "TRAP" not in l40s.notes


def test_fixture_no_network_is_missing(small):
    for offer in build(small).values():
        assert offer.inter_node_fabric == Fabric.UNKNOWN
        assert offer.inter_node_gbits_per_s is None and offer.missing_inter_bw
        assert offer.nic_count is None and offer.frontend_gbits_per_s is None


def test_fixture_gpu_memory_that_fits_the_gpu_is_stated(small):
    b200 = build(small)["gpu-b200-sxm_8gpu-160vcpu-1792gb"]  # 184320 MiB = 180 GiB, host RAM is 224 GiB
    assert b200.gpu_model == "B200-SXM-180GB"
    assert b200.gpu_memory_gb == pytest.approx(193.273528, abs=1e-6)
    (claim,) = claims(b200, "gpu_memory_gb")
    assert claim.quote.startswith("{'Gpus': [{'Name': 'B200'") and claim.quote in small
    assert claim.context == "vms.csv › GpuInfo › MemoryInfo.SizeInMiB"
    assert "host RAM" not in b200.notes


def test_fixture_implausible_gpu_memory_is_dropped(small):
    h200 = build(small)["gpu-h200-sxm_1gpu-16vcpu-200gb"]  # 1024 MiB is neither host RAM nor 141 GB
    assert (h200.gpu_model, h200.gpu_memory_gb) == ("H200-SXM-141GB", None)
    assert "1024 MiB (1.07374 GB) is implausible as GPU memory (H200-SXM-141GB has 141 GB)" in h200.notes
    assert h200.intra_node_link == Link.SINGLE_GPU


def test_fixture_quotes_are_raw_crlf_free_lines(small):
    rows = csv_rows(small)
    assert len(rows) == 8  # the header is not a row
    for offer in build(small).values():
        for claim in offer.claims:
            if claim.basis == Basis.STATED:
                assert claim.quote in small and "\r" not in claim.quote
    (count,) = claims(build(small)["gpu-l40s-d_2gpu-64vcpu-384gb"], "gpu_count")
    assert count.quote.startswith("gpu-l40s-d_2gpu-64vcpu-384gb,L40S,2,64,384,4.00,eu-north1,")
    assert count.context == "vms.csv › AcceleratorCount"


def test_gpu_info_is_a_python_repr_not_json():
    with pytest.raises(json.JSONDecodeError):
        json.loads(H100_INFO)
    info = gpu_info(H100_INFO)
    assert info["Gpus"][0]["MemoryInfo"]["SizeInMiB"] == 204800
    assert info["TotalGpuMemoryInMiB"] == 1638400
    with pytest.raises(ParseError):
        gpu_info("__import__('os').getcwd()")  # literal_eval, never eval
    with pytest.raises(ParseError):
        gpu_info("{'Gpus': []}")


def test_unreadable_gpu_info_keeps_the_row(small):
    text = small.replace("'TotalGpuMemoryInMiB': 393216}", "'TotalGpuMemoryInMiB': 393216")
    offer = build(text)["gpu-l40s-d_2gpu-64vcpu-384gb"]
    assert (offer.gpu_model, offer.gpu_count, offer.gpu_memory_gb) == ("L40S-48GB", 2, None)
    assert "GpuInfo or MemoryGiB unreadable" in offer.notes


def test_regions_that_disagree_are_noted(small):
    text = small.replace("8,128,1600,21.00,us-central1", "8,96,1600,21.00,us-central1")
    offer = build(text)["gpu-h100-sxm_8gpu-128vcpu-1600gb"]
    assert "regions disagree on vCPUs: ['128', '96']; first row kept" in offer.notes


def test_platform_and_accelerator_must_name_one_family(small, caplog):
    text = small.replace("gpu-l40s-d_2gpu-64vcpu-384gb,L40S,", "gpu-l40s-d_2gpu-64vcpu-384gb,H100,")
    assert "gpu-l40s-d_2gpu-64vcpu-384gb" not in build(text)
    assert "platform 'gpu-l40s-d' names L40S but AcceleratorName is 'H100'" in caplog.text


def test_missing_column_is_a_layout_error(small):
    with pytest.raises(LayoutError, match="GpuInfo"):
        parse_vms(small.replace(",GpuInfo,", ",Gpu,"), VMS_URL)


def test_cpu_only_catalog_is_a_layout_error(small):
    header, cpu = small.split("\r\n")[:2]
    with pytest.raises(LayoutError, match="no GPU instance rows"):
        parse_vms(f"{header}\r\n{cpu}\r\n", VMS_URL)


@shared_fixture(scope="module")
def real():

    documents = fetch_from_mirror(Nebius())
    body = DocumentSet(documents).text(VMS_URL)
    offers = {o.instance_type: build_offer(o, scraped_at=NOW) for o in Nebius().parse(DocumentSet(documents))}
    return body, offers


def test_real_catalog_has_every_gpu_type_once(real):
    body, offers = real
    assert body.count("\r\n") == 62  # CRLF survives the fetch
    assert len(offers) == 17
    assert sum(name.startswith("gpu-l40s-") for name in offers) == 12
    assert not any(name.startswith("cpu-") for name in offers)
    assert body.count("gpu-h200-sxm_8gpu-128vcpu-1600gb,") == 3  # eu-north1, eu-west1, us-central1


@pytest.mark.parametrize(
    ("name", "model", "count", "link", "intra"),
    [
        ("gpu-h100-sxm_8gpu-128vcpu-1600gb", "H100-SXM-80GB", 8, Link.NVSWITCH, 900),
        ("gpu-h100-sxm_1gpu-16vcpu-200gb", "H100-SXM-80GB", 1, Link.SINGLE_GPU, None),
        ("gpu-h200-sxm_8gpu-128vcpu-1600gb", "H200-SXM-141GB", 8, Link.NVSWITCH, 900),
        ("gpu-h200-sxm_1gpu-16vcpu-200gb", "H200-SXM-141GB", 1, Link.SINGLE_GPU, None),
        ("gpu-b200-sxm_8gpu-160vcpu-1792gb", "B200-SXM-180GB", 8, Link.NVSWITCH, 1800),
        ("gpu-l40s-a_1gpu-8vcpu-32gb", "L40S-48GB", 1, Link.SINGLE_GPU, None),
        ("gpu-l40s-d_4gpu-192vcpu-1152gb", "L40S-48GB", 4, Link.PCIE, 64),
    ],
)
def test_real_facts(real, name, model, count, link, intra):
    _, offers = real
    offer = offers[name]
    assert (offer.gpu_model, offer.gpu_count) == (model, count)
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s) == (link, intra)
    assert offer.intra_node_basis == (Basis.NOT_APPLICABLE if count == 1 else Basis.INFERRED)
    assert offer.inter_node_fabric == Fabric.UNKNOWN and offer.missing_inter_bw  # the CSV has no network
    assert offer.gpu_memory_gb is None  # only the host-RAM trap figure is in the CSV


def test_real_host_ram_trap_is_caught_everywhere(real):
    _, offers = real
    for offer in offers.values():
        assert claims(offer, "gpu_memory_gb") == [], offer.instance_type
        assert "is the host RAM per GPU" in offer.notes, offer.instance_type
    h100 = offers["gpu-h100-sxm_8gpu-128vcpu-1600gb"].notes
    assert "SizeInMiB 204800 MiB (214.748 GB)" in h100 and "H100-SXM-80GB has 80 GB" in h100
    b200 = offers["gpu-b200-sxm_8gpu-160vcpu-1792gb"].notes
    assert "SizeInMiB 229376 MiB (240.518 GB)" in b200 and "(MemoryGiB 1792 / 8 GPUs)" in b200
    assert not any("regions disagree" in o.notes for o in offers.values())


def test_real_every_quote_is_verbatim(real):
    body, offers = real
    lines = set(body.split("\r\n"))
    for offer in offers.values():
        stated = [c for c in offer.claims if c.basis == Basis.STATED]
        assert {c.field for c in stated} == {"gpu_model", "gpu_count"}
        for claim in stated:
            assert claim.quote in lines, (offer.instance_type, claim.quote)  # a whole raw CSV line
            assert claim.quote.startswith(offer.instance_type + ",")
