"""Hyperbolic: SkyPilot's v8 Hyperbolic catalog, real file from ../shared/mirror."""

from __future__ import annotations

import pytest

from normalize.vocab import Link
from scrapers.offer_lists.hyperbolic import VMS_URL, Hyperbolic
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(Hyperbolic())


def test_real_three_h100_shapes(real):
    bodies, rows, prices = real
    assert ",StorageGiB," in bodies[VMS_URL].split("\r\n", 1)[0]  # an extra column, read by name
    assert sorted(rows) == ["1x-H100-75-722", "2x-H100-149-1443", "3x-H100-224-2165"]
    assert [(p.instance_type, p.region, p.usd_per_hour) for p in prices] == [
        ("1x-H100-75-722", "default", 1.29),
        ("2x-H100-149-1443", "default", 2.58),
        ("3x-H100-224-2165", "default", 3.87),
    ]
    assert unquoted(bodies, rows.values(), prices) == []


def test_real_gpu_named_with_its_memory_but_no_form_factor(real):
    row = real[1]["3x-H100-224-2165"]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link) == ("H100-80GB", 3, Link.UNKNOWN)
    assert row.gpu_memory_gb == pytest.approx(85.520809984)  # 'NVIDIA-H100-80GB-HBM3', 81559 MiB
