"""Each class of defect the audit of issue 10 found, checked across every provider of the catalog built
from ../shared: one rule per class, so a new row of the same kind cannot slip past it."""

from __future__ import annotations

import duckdb
import pytest


@pytest.fixture(scope="module")
def rows(real_catalog_file) -> list[dict]:
    with duckdb.connect(str(real_catalog_file), read_only=True) as con:
        frame = con.execute("SELECT * FROM instances ORDER BY provider, instance_type").df()
    return frame.to_dict("records")


def test_one_gpu_or_a_slice_of_one_has_no_gpu_to_gpu_figure(rows):
    single = [
        r
        for r in rows
        if (r["gpu_count"] == r["gpu_count"] and r["gpu_count"] <= 1 and r["scale_up_domain_gpus"] != 72)
        or "partition of one GPU" in r["notes"]
    ]
    assert len(single) > 40
    for r in single:
        assert (r["intra_node_link"], r["intra_node_basis"]) == ("single-gpu", "not-applicable"), r[
            "instance_type"
        ]
        assert r["intra_node_gbytes_per_s"] != r["intra_node_gbytes_per_s"]  # NaN: no figure
