"""Row facts of issue 20 on the catalog built from the real documents in ../shared: fractions,
currencies, front-end totals, memory units, resellers, basis honesty and placeholder prices."""

from __future__ import annotations

import pytest

from tests.helpers import query


def _row(db, provider: str, instance_type: str, columns: str) -> tuple:
    where = f"provider = '{provider}' AND instance_type = '{instance_type}'"
    rows = query(db, f"SELECT {columns} FROM instances WHERE {where}")
    assert len(rows) == 1, (provider, instance_type)
    return rows[0]


def test_aws_fractional_gpus_are_fractions_with_price_per_whole_gpu(real_catalog_file):
    fractions = {
        "g6f.large": 0.125,
        "g6f.xlarge": 0.125,
        "g6f.2xlarge": 0.25,
        "g6f.4xlarge": 0.5,
        "gr6f.4xlarge": 0.5,
    }
    for name, share in fractions.items():
        count, memory, price, per_gpu = _row(
            real_catalog_file, "aws", name, "gpu_count, gpu_memory_gb, min_usd_per_hour, usd_per_gpu_hour"
        )
        assert count == share, name
        assert memory == pytest.approx(24 * share, rel=0.01), name  # the slice's share of an L4's 24 GB
        assert per_gpu == pytest.approx(price / share), name
    # AWS's own page says "1 x NVIDIA L4 GPU" beside "2 GiB": kept, as the claim its page contradicts
    whole = query(
        real_catalog_file,
        "SELECT value, qualifiers FROM current_claims "
        "WHERE instance_type = 'g6f.large' AND field = 'gpu_count' ORDER BY value",
    )
    assert [v for v, _ in whole] == [0.125, 1.0] and whole[1][1].startswith("contradicted by its own source")
