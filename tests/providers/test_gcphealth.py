"""gcphealth: Google's cluster-health-scanner NCCL thresholds, read in place."""

from __future__ import annotations

import pytest

from normalize.errors import LayoutError
from records.documents import DocumentSet
from scrapers.measurements.gcphealth import BASE, FILES, GcpHealth, threshold_reading
from tests.conftest import shared_fixture
from tests.helpers import fetch_from_mirror


@shared_fixture(scope="module")
def readings():
    documents = fetch_from_mirror(GcpHealth())
    assert [d.url for d in documents] == list(FILES) and all(d.ok for d in documents)
    return {m.instance_type: m for m in GcpHealth().parse_measurements(DocumentSet(documents))}


def test_real_each_machine_type_has_its_two_node_all_gather_floor(readings):
    assert {k: v.value for k, v in readings.items()} == {
        "a3-highgpu-8g": 60.0,
        "a3-megagpu-8g": 150.0,
        "a3-ultragpu-8g": 250.0,
        "a4-highgpu-8g": 250.0,
        "a4-highgpu-8g-8lssd": 250.0,
        "a4x-highgpu-4g": 160.0,
    }
    a3 = readings["a3-highgpu-8g"]
    assert (a3.metric, a3.kind, a3.provider, a3.nodes, a3.gpus) == (
        "nccl_allgather_busbw_gbytes_per_s",
        "expected",
        "gcp",
        2,
        16,
    )
    assert (a3.locator, a3.quote, a3.source_url) == (
        "line 38",
        '    BANDWIDTH_THRESHOLD: "60"',
        BASE + "a3.yaml",
    )
    assert "BENCHMARK not set: nccl_startup.py's default" in a3.notes and "2G..8G messages" in a3.notes
    assert readings["a4x-highgpu-4g"].gpus == 8  # 2 nodes x 4 GPUs


def test_real_quotes_are_the_files_own_lines(readings, real_document):
    for m in readings.values():
        assert m.quote in real_document(m.source_url)


def test_fixture_a_benchmark_value_is_followed_and_a_missing_key_is_a_layout_error():
    text = 'env:\n  INSTANCE_TYPE: "x-8g"\n  NHOSTS: "4"\n  nr: "8"\n  BENCHMARK: "all_reduce_perf"\n'
    reading = threshold_reading(text + '  BANDWIDTH_THRESHOLD: "300"\n', BASE + "x.yaml", "gcphealth")
    assert (reading.metric, reading.value, reading.gpus) == ("nccl_allreduce_busbw_gbytes_per_s", 300.0, 32)
    with pytest.raises(LayoutError, match=r"x\.yaml: no BANDWIDTH_THRESHOLD"):
        threshold_reading(text, BASE + "x.yaml", "gcphealth")
