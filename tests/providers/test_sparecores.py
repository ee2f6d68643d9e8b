"""sparecores: Spare Cores' nvbandwidth runs on real instances (CC BY-SA 4.0), read in place."""

from __future__ import annotations

import json
import logging

import pytest

from normalize.errors import LayoutError
from records.documents import DocumentSet
from scrapers.measurements.sparecores import (
    LICENCE,
    NVIDIA_SMI,
    SpareCores,
    known_runs,
    meta_url,
    run_readings,
    stdout_url,
)
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror
from tests.properties.property_inputs import doc

A3 = "gcp/a3-highgpu-8g"


@shared_fixture(scope="module")
def fetched():
    return fetch_from_mirror(SpareCores())


@shared_fixture(scope="module")
def readings(fetched):
    return SpareCores().parse_measurements(DocumentSet(fetched))


def test_real_every_meta_and_every_stdout_is_fetched_whatever_meta_says(fetched):
    runs, smi = known_runs(), known_runs(NVIDIA_SMI)
    assert len(runs) == 216 and runs[0] == "alicloud/ecs.gn5-c28g1.7xlarge" and len(smi) == 5
    metas = [d for d in fetched if d.url.endswith("meta.json")]
    assert len(metas) == 221 and all(d.ok for d in metas)
    stdouts = [d for d in fetched if d.url.endswith("/stdout")]
    assert len(stdouts) == 221  # asked for every run: meta.json may describe a later, failed attempt
    got = {d.url for d in stdouts if d.ok}
    assert len(got) == 173  # 168 nvbandwidth outputs (162 that meta.json announces, 6 it does not) + 5
    assert stdout_url("upcloud/GPU-16xCPU-192GB-2xL40S") not in got  # 409: no server, no output ever
    assert stdout_url("ovh/h100-760", NVIDIA_SMI) in got  # meta: "Flavor out of stock", outputs []


def test_real_a3_highgpu_8g_v05_run_with_date_version_and_licence(readings, real_document):
    a3 = [m for m in readings if m.instance_type == "a3-highgpu-8g"]
    assert {m.provider for m in a3} == {"gcp"} and {m.tool_version for m in a3} == {"v0.5"}
    assert {m.run_at.isoformat() for m in a3} == {"2024-09-26T06:33:44.771947"}
    one_way = [m.value for m in a3 if m.metric == "gpu_to_gpu_gbytes_per_s" and m.direction == "one-way"]
    assert one_way == [370.895, 388.755, 374.675, 369.131]  # read/write CE, read/write SM
    assert not [m for m in a3 if m.metric == "gpu_to_gpu_gbytes_per_s" and m.direction == "two-way"]
    for m in a3:
        assert m.source_url == stdout_url(A3) and m.quote in real_document(m.source_url)
        assert m.notes.endswith(LICENCE) and m.source == "sparecores" and m.kind == "measured"


def test_real_v08_runs_give_two_way_totals(readings):
    (total,) = [
        m
        for m in readings
        if m.instance_type == "a3-ultragpu-8g"
        and m.direction == "two-way"
        and m.metric == "gpu_to_gpu_gbytes_per_s"
        and "read_ce" in m.locator
    ]
    assert (total.value, total.tool_version, total.gpus) == (778.497, "v0.8", 8)


def test_real_failed_runs_are_skipped_with_a_warning_and_the_rest_stand(fetched, caplog):
    with caplog.at_level(logging.WARNING):
        readings = SpareCores().parse_measurements(DocumentSet(fetched))
    assert (
        "Skipping Spare Cores nvbandwidth run aws/p4d.24xlarge: line 4: nvbandwidth reported an error"
        in caplog.text
    )
    assert "Skipping Spare Cores nvbandwidth run aws/g4dn.metal: line 1: not nvbandwidth JSON" in caplog.text
    failed = ("p4d.24xlarge", "g4dn.metal")
    assert not [m for m in readings if m.instance_type in failed and m.tool == "nvbandwidth"]
    bandwidth = [m for m in readings if m.tool == "nvbandwidth"]
    # 1,344 bandwidth readings (16 of them from two Vultr outputs meta.json disowns) and 36 "Waived"
    # peer statuses (2+ GPUs); 13 more from the five nvidia-smi runs
    assert len(bandwidth) == 1380 and len(readings) == 1393
    assert len({(m.provider, m.instance_type) for m in bandwidth}) == 162


def test_fixture_a_run_uses_its_meta_version_when_the_json_has_none():
    stdout = json.dumps(
        {
            "nvbandwidth": {
                "testcases": [
                    {
                        "name": "host_to_device_memcpy_ce",
                        "status": "Passed",
                        "bandwidth_description": "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)",
                        "bandwidth_matrix": [["55.5"]],
                    }
                ]
            }
        }
    )
    (reading,) = run_readings(
        "aws/x.large", stdout, {"version": "v0.8", "start": "2026-01-02T03:04:05"}, "sparecores"
    )
    assert (reading.tool_version, reading.value, reading.provider, reading.instance_type) == (
        "v0.8",
        55.5,
        "aws",
        "x.large",
    )
    assert reading.run_at.isoformat() == "2026-01-02T03:04:05"
    documents = DocumentSet([doc(meta_url("aws/x.large"), "sparecores", "{}")])
    with pytest.raises(LayoutError, match="no Spare Cores nvbandwidth or nvidia_smi run gave a reading"):
        SpareCores().parse_measurements(documents)


def smi(readings, instance):
    return {m.metric: m for m in readings if m.instance_type == instance and m.tool == "nvidia-smi -q -x"}


def test_real_nvidia_smi_meta_records_a_failed_later_attempt_but_stdout_is_an_earlier_success(
    readings, real_document
):
    """ovh/h100-760: meta.json is a 2026-02-13 attempt that failed ("Flavor out of stock", no
    outputs); the stdout beside it is a successful run of 2025-12-19. The output is read, dated by
    its own <timestamp> and driver, and the notes say what meta.json records."""
    meta = json.loads(real_document(meta_url("ovh/h100-760", NVIDIA_SMI)))
    assert meta["outputs"] == [] and meta["exit_code"] == -1 and "Flavor out of stock" in meta["error_msg"]
    found = smi(readings, "h100-760")
    assert set(found) == {"gpu_product_name", "pcie_link_gbytes_per_s"}  # a PCIe card: no NVLink fabric
    product = found["gpu_product_name"]
    assert (product.provider, product.value_text, product.gpus) == ("ovhcloud", "NVIDIA H100 PCIe", 2)
    assert product.run_at.isoformat() == "2025-12-19T23:55:04" and product.tool_version == "535.274.02"
    assert "= H100-PCIE-80GB" in product.notes and "records a later attempt with no output" in product.notes
    assert "Flavor out of stock" in product.notes and product.notes.endswith(LICENCE)
    assert (found["pcie_link_gbytes_per_s"].value, found["pcie_link_gbytes_per_s"].gpus) == (128.0, 2)


def test_real_nvidia_smi_meta_describing_another_successful_run_is_noted(readings, real_document):
    """gcp/a3-ultragpu-8g: meta.json says 2026-02-13 and driver v590.48.01; the XML says 2026-07-14
    and 595.71.05 (and is not the size meta.json gives)."""
    found = smi(readings, "a3-ultragpu-8g")
    product = found["gpu_product_name"]
    assert product.run_at.date().isoformat() == "2026-07-14" and product.tool_version == "595.71.05"
    assert "start 2026-02-13 vs <timestamp> 2026-07-14" in product.notes
    assert "version v590.48.01 vs <driver_version> 595.71.05" in product.notes
    assert "= H200-SXM-141GB: inferred from the product name" in product.notes
    assert found["gpu_fabric_state"].value_text == "Completed"
    for m in found.values():
        assert m.quote in real_document(m.source_url) and m.source_url == stdout_url(
            "gcp/a3-ultragpu-8g", NVIDIA_SMI
        )


def test_real_nvidia_smi_form_factors_and_pcie_links_per_gpu(readings):
    p4d = smi(readings, "p4d.24xlarge")
    assert (
        p4d["gpu_product_name"].value_text == "NVIDIA A100-SXM4-40GB"
        and "= A100-SXM-40GB" in p4d["gpu_product_name"].notes
    )
    assert (p4d["pcie_link_gbytes_per_s"].value, p4d["pcie_link_gbytes_per_s"].gpus) == (64.0, 8)  # Gen4 x16
    assert "gpu_fabric_state" not in p4d  # <state>N/A</state> on the 535 driver: no reading
    mega = smi(readings, "a3-megagpu-8g")["pcie_link_gbytes_per_s"]
    assert (
        mega.value == 64.0 and "supports Gen5 (max_device_link_gen): the host holds it at Gen4" in mega.notes
    )
    assert (
        "<max_link_gen>4</max_link_gen>" in mega.quote
        and "<max_device_link_gen>5</max_device_link_gen>" in mega.quote
    )
    upcloud = smi(readings, "GPU-48xCPU-960GB-4xH100")
    assert upcloud["gpu_product_name"].provider == "upcloud"  # no UpCloud provider: kept, unmatched
    assert (
        upcloud["gpu_product_name"].value_text == "NVIDIA H100 80GB HBM3"
        and upcloud["gpu_product_name"].gpus == 4
    )
    assert "= H100-SXM-80GB" in upcloud["gpu_product_name"].notes  # the SXM module, not a PCIe card
    assert upcloud["gpu_fabric_state"].value_text == "Completed"
