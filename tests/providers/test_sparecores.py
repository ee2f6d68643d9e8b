"""sparecores: Spare Cores' nvbandwidth runs on real instances (CC BY-SA 4.0), read in place."""

from __future__ import annotations

import json
import logging

import pytest

from normalize.errors import LayoutError
from records.documents import DocumentSet
from scrapers.measurements.sparecores import (
    LICENCE,
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


def test_real_every_meta_and_every_announced_stdout_is_fetched(fetched):
    runs = known_runs()
    assert len(runs) == 216 and runs[0] == "alicloud/ecs.gn5-c28g1.7xlarge"
    metas = [d for d in fetched if d.url.endswith("meta.json")]
    assert len(metas) == 216 and all(d.ok for d in metas)
    stdouts = [d for d in fetched if d.url.endswith("/stdout")]
    assert len(stdouts) == 162  # runs whose meta.json lists a stdout output
    assert stdout_url("upcloud/GPU-16xCPU-192GB-2xL40S") not in {d.url for d in stdouts}  # 409: no server


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
    assert "Skipping Spare Cores run aws/p4d.24xlarge: line 4: nvbandwidth reported an error" in caplog.text
    assert "Skipping Spare Cores run aws/g4dn.metal: line 1: not nvbandwidth JSON" in caplog.text
    assert not [m for m in readings if m.instance_type in ("p4d.24xlarge", "g4dn.metal")]
    assert len(readings) == 1364  # 1,328 bandwidth readings and 36 "Waived" peer statuses (2+ GPUs)
    assert len({(m.provider, m.instance_type) for m in readings}) == 160


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
    with pytest.raises(LayoutError, match="no Spare Cores nvbandwidth run gave a reading"):
        SpareCores().parse_measurements(documents)
