"""make bench's per-provider parse timing runs on the real mirror, where GCP has only its price file."""

from __future__ import annotations

import pytest

from devtools import bench
from tests.helpers import MIRROR

pytestmark = [pytest.mark.shared, pytest.mark.slow]


def test_parse_times_cover_every_provider_including_one_with_only_a_price_file(tmp_path):
    times = bench.parse_times(MIRROR, tmp_path, repeat=1)
    assert set(times) == set(bench.REGISTRY)
    assert times["gcp"][1] == 1 and times["oci"][1] == 0  # GCP: the price file; OCI: nothing mirrored
    assert times["aws"][1] == 2 and all(seconds > 0 for seconds, _ in times.values())
