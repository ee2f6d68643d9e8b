"""Nebius: SkyPilot's v8 Nebius catalog, on a CRLF fixture written for the test (with the v7 file's
host-RAM trap), then on the real CSV."""

from __future__ import annotations

import logging
from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.errors import LayoutError
from normalize.vocab import Basis, Fabric, Link
from scrapers.offer_lists.nebius import VMS_URL, Nebius
from scrapers.offer_lists.skypilot import csv_rows
from tests.conftest import shared_fixture
from tests.helpers import FIXTURES, parse_real, unquoted

NOW = datetime(2026, 12, 1)


def build(text: str) -> dict:
    return {o.instance_type: build_offer(o, scraped_at=NOW) for o in Nebius().read(text)[0]}


@pytest.fixture
def small() -> str:
    """The fixture byte for byte: read_text would turn its CRLF line endings into LF."""
    return (FIXTURES / "nebius/vms-small.csv").read_bytes().decode("utf-8")


def claims(offer, field: str) -> list:
    return [c for c in offer.claims if c.field == field]


def test_fixture_rows_and_skips(small, caplog):
    assert small.count("\r\n") == 9 and "\n" not in small.replace("\r\n", "")
    with caplog.at_level(logging.WARNING):
        offers = build(small)
    assert list(offers) == [
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",  # two regions, one offer
        "gpu-l40s-d_2gpu-64vcpu-384gb",
        "gpu-b200-sxm_8gpu-160vcpu-1792gb",
        "gpu-h200-sxm_1gpu-16vcpu-200gb",
    ]
    assert "Skipping nebius row gpu-h100-sxm_1gpu-16vcpu-200gb: not a GPU count: 'eight'" in caplog.text
    assert "Skipping nebius row gpu-x9000-sxm_8gpu-128vcpu-1600gb: unknown GPU 'X9000'" in caplog.text
    assert "cpu-e2" not in caplog.text  # CPU-only types are not GPU rows, not failures


def test_platform_and_preset_are_kept_apart(small):
    offer = build(small)["gpu-h100-sxm_8gpu-128vcpu-1600gb"]
    assert (offer.platform, offer.preset) == ("gpu-h100-sxm", "8gpu-128vcpu-1600gb")
    (model,) = claims(offer, "gpu_model")
    assert model.basis == Basis.INFERRED  # the columns say "H100"; SXM is in the platform's name
    assert (
        "InstanceType of 'gpu-h100-sxm_8gpu-128vcpu-1600gb' (form factor read from the name)" in model.context
    )


def test_fixture_host_ram_trap_is_not_gpu_memory(small):
    offer = build(small)["gpu-h100-sxm_8gpu-128vcpu-1600gb"]
    assert (offer.gpu_model, offer.gpu_count, offer.gpu_memory_gb) == ("H100-SXM-80GB", 8, None)
    assert claims(offer, "gpu_memory_gb") == []
    assert (
        "GpuInfo MemoryInfo.SizeInMiB 204800 (one GPU's memory in MiB: 204800 MiB per GPU)"
        in offer.notes_text
    )
    assert "is the host RAM per GPU (MemoryGiB 1600 / 8 GPUs), not GPU memory" in offer.notes_text
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s) == (Link.NVSWITCH, 900)
    assert offer.intra_node_basis == Basis.INFERRED
    l40s = build(small)["gpu-l40s-d_2gpu-64vcpu-384gb"]  # 196608 MiB = 384 GiB / 2: host RAM again
    assert (l40s.gpu_model, l40s.gpu_count, l40s.gpu_memory_gb) == ("L40S-48GB", 2, None)
    assert "is the host RAM per GPU" in l40s.notes_text


def test_fixture_memory_that_fits_the_gpu_is_stated_and_a_misfit_is_dropped(small):
    b200 = build(small)["gpu-b200-sxm_8gpu-160vcpu-1792gb"]  # 184320 MiB = 180 GiB, host RAM is 224 GiB
    assert b200.gpu_memory_gb == pytest.approx(193.27352832)
    (claim,) = claims(b200, "gpu_memory_gb")
    assert claim.quote.startswith("gpu-b200-sxm_8gpu-160vcpu-1792gb,B200,8,") and claim.quote in small
    h200 = build(small)["gpu-h200-sxm_1gpu-16vcpu-200gb"]  # 1024 MiB is neither host RAM nor 141 GB
    assert (h200.gpu_model, h200.gpu_memory_gb) == ("H200-SXM-141GB", None)
    assert "1024 MiB per GPU) fits no H200 part (141 GB): not used" in h200.notes_text


def test_fixture_prices_one_per_line(small):
    prices = Nebius().read(small)[1]
    h100 = [p for p in prices if p.instance_type == "gpu-h100-sxm_8gpu-128vcpu-1600gb"]
    assert [(p.region, p.usd_per_hour, p.spot_usd_per_hour) for p in h100] == [
        ("eu-north1", 20.0, 9.0),
        ("us-central1", 21.0, 9.5),
    ]
    assert not any(p.instance_type.startswith("cpu-") for p in prices)
    assert len(csv_rows(small, "vms.csv")) == 8  # the header is not a row


def test_regions_that_disagree_are_noted(small):
    text = small.replace("8,128,1600,21.00,us-central1", "8,96,1600,21.00,us-central1")
    offer = build(text)["gpu-h100-sxm_8gpu-128vcpu-1600gb"]
    assert "regions disagree on vCPUs (128, 96); the first line's is used" in offer.notes_text


def test_platform_and_accelerator_must_name_one_family(small, caplog):
    text = small.replace("gpu-l40s-d_2gpu-64vcpu-384gb,L40S,", "gpu-l40s-d_2gpu-64vcpu-384gb,H100,")
    assert "gpu-l40s-d_2gpu-64vcpu-384gb" not in build(text)
    assert "platform 'gpu-l40s-d' names L40S but AcceleratorName is 'H100'" in caplog.text


def test_missing_column_and_cpu_only_catalog_are_layout_errors(small):
    with pytest.raises(LayoutError, match="GpuInfo"):
        Nebius().read(small.replace(",GpuInfo,", ",Gpu,"))
    header, cpu = small.split("\r\n")[:2]
    with pytest.raises(LayoutError, match="no GPU instance rows"):
        Nebius().read(f"{header}\r\n{cpu}\r\n")


@shared_fixture(scope="module")
def real():
    return parse_real(Nebius())


def test_real_catalog_has_every_gpu_type_once(real):
    bodies, offers, prices = real
    body = bodies[VMS_URL]
    assert VMS_URL.endswith("/v8/nebius/vms.csv") and body.count("\r\n") == 62  # CRLF survives the fetch
    assert len(offers) == 17 and sum(name.startswith("gpu-l40s-") for name in offers) == 12
    assert not any(name.startswith("cpu-") for name in offers)
    assert len(prices) == 21  # one per GPU line: the H200 presets are sold in three regions
    assert unquoted(bodies, offers.values(), prices) == []


@pytest.mark.parametrize(
    ("name", "model", "count", "link", "intra"),
    [
        ("gpu-h100-sxm_8gpu-128vcpu-1600gb", "H100-SXM-80GB", 8, Link.NVSWITCH, 900),
        ("gpu-h100-sxm_1gpu-16vcpu-200gb", "H100-SXM-80GB", 1, Link.SINGLE_GPU, None),
        ("gpu-h200-sxm_8gpu-128vcpu-1600gb", "H200-SXM-141GB", 8, Link.NVSWITCH, 900),
        ("gpu-b200-sxm_8gpu-160vcpu-1792gb", "B200-SXM-180GB", 8, Link.NVSWITCH, 1800),
        ("gpu-l40s-a_1gpu-8vcpu-32gb", "L40S-48GB", 1, Link.SINGLE_GPU, None),
        ("gpu-l40s-d_4gpu-192vcpu-1152gb", "L40S-48GB", 4, Link.PCIE, 64),
    ],
)
def test_real_facts(real, name, model, count, link, intra):
    offer = real[1][name]
    assert (offer.gpu_model, offer.gpu_count) == (model, count)
    assert (offer.intra_node_link, offer.intra_node_gbytes_per_s) == (link, intra)
    assert offer.intra_node_basis == (Basis.NOT_APPLICABLE if count == 1 else Basis.INFERRED)
    assert offer.platform + "_" + offer.preset == name


def test_real_v8_gpu_memory_is_one_gpus(real):
    """Unlike v7 (host RAM per GPU in SizeInMiB), v8 gives one GPU's memory: 81920 MiB on an H100."""
    offers = real[1]
    assert offers["gpu-h100-sxm_8gpu-128vcpu-1600gb"].gpu_memory_gb == pytest.approx(85.89934592)
    assert offers["gpu-h200-sxm_8gpu-128vcpu-1600gb"].gpu_memory_gb == pytest.approx(151.397597184)
    assert offers["gpu-l40s-d_4gpu-192vcpu-1152gb"].gpu_memory_gb == pytest.approx(51.539607552)
    assert not any("TRAP" in o.notes_text for o in offers.values())


def test_real_the_catalog_states_no_network_and_the_curated_infiniband_facts_join(real):
    offers = real[1]
    h100 = offers["gpu-h100-sxm_8gpu-128vcpu-1600gb"]  # curated: 8 x 400 Gb/s, paraphrased
    assert (h100.inter_node_fabric, h100.inter_node_gbits_per_s, h100.inter_node_basis) == (
        Fabric.INFINIBAND,
        3200,
        Basis.PARAPHRASED,
    )
    l40s = offers["gpu-l40s-d_4gpu-192vcpu-1152gb"]
    assert l40s.inter_node_fabric == Fabric.UNKNOWN and l40s.missing_inter_bw


def test_real_prices_per_region(real):
    prices = [p for p in real[2] if p.instance_type == "gpu-h200-sxm_8gpu-128vcpu-1600gb"]
    assert sorted((p.region, p.usd_per_hour, p.spot_usd_per_hour) for p in prices) == [
        ("eu-north1", 28.0, 11.6),
        ("eu-west1", 28.0, 11.6),
        ("us-central1", 28.0, 11.6),
    ]
    b200 = next(p for p in real[2] if p.instance_type == "gpu-b200-sxm_8gpu-160vcpu-1792gb")
    assert (b200.region, b200.usd_per_hour, b200.spot_usd_per_hour) == ("us-central1", 44.0, None)
