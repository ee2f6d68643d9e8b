"""make bench's per-provider parse timing runs on the real mirror, where GCP has only its price file."""

from __future__ import annotations

import pytest

from devtools import bench
from tests.helpers import MIRROR

pytestmark = [pytest.mark.shared, pytest.mark.slow]


def test_parse_times_cover_every_provider_including_one_with_only_a_price_file(tmp_path):
    db = tmp_path / "c.duckdb"
    bench._refresh(db, str(MIRROR))
    times = bench.parse_times(db, repeat=1)
    assert set(times) == set(bench.REGISTRY)
    # GCP: its price file and the three captures of Google's pages (its pages are not mirrored);
    # OCI: the copy of its page and the two offer-list copies (the template is not in this mirror run)
    assert times["gcp"][1] == 4 and times["oci"][1] == 3
    # AWS: its page, Karpenter's table and price file, the newer revision's copy, 3 Neuron pages and the
    # two copies of AWS pages with a GPU peer-to-peer column
    assert times["aws"][1] == 9 and all(min(runs) > 0 for runs, _ in times.values())
