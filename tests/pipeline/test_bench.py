"""The bench's own machinery: the synthetic scale really multiplies the work, figures read right."""

from __future__ import annotations

import os

import duckdb
import pytest

from devtools import bench, synthetic
from scrapers import REGISTRY
from tests.helpers import build_mirror


def test_a_scaled_refresh_copies_every_mirrored_source(tmp_path):
    mirror = build_mirror(tmp_path / "m")
    db = tmp_path / "c.duckdb"
    with synthetic.scaled(mirror, 3) as names:
        assert {"aws2", "aws3", "azure2", "azure3"} <= set(names)
        report = bench._refresh(
            db, str(mirror), names, transport=synthetic.CopyTransport(mirror), copies=None
        )
    assert not {"aws2", "azure3"} & set(REGISTRY)  # the copies live for the with block only
    outcomes = {o.provider: (o.outcome, o.rows_after) for o in report.outcomes}
    assert outcomes["aws"] == outcomes["aws2"] == outcomes["aws3"] == ("ok", 3)
    assert outcomes["azure"] == outcomes["azure3"] == ("ok", 2)
    with duckdb.connect(str(db), read_only=True) as con:
        hosts = con.execute(
            "SELECT DISTINCT split_part(url, '/', 3) FROM fetches WHERE provider = 'aws3' "
            "AND url LIKE 'https://%' ORDER BY 1"
        ).fetchall()
        assert hosts == [("c3.docs.aws.amazon.com",), ("c3.raw.githubusercontent.com",)]
        per_copy = con.execute(
            "SELECT provider, count(*) FROM instances WHERE provider LIKE 'aws%' GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert per_copy == [("aws", 3), ("aws2", 3), ("aws3", 3)]


def test_spread_reads_median_then_range():
    assert bench.spread([0.5, 0.41, 0.52]) == "0.50 s (0.41–0.52, 3 runs)"
    assert bench.spread([0.0012, 0.0009], "ms", 1000) == "1 ms (1–1, 2 runs)"


def test_the_rebuild_ratio_pairs_each_rebuild_with_the_floor_taken_before_it():
    # rounds of 40x, 30x and 45x: their median is 40x, where the medians apart would read 30x
    times, floors = [0.6, 0.6, 0.9], [0.015, 0.02, 0.02]
    assert bench.rebuild_ratio(times, floors) == pytest.approx(40)


def test_the_machine_line_names_what_it_ran_on():
    line = bench.machine()
    assert f"{os.cpu_count()} cores" in line and "Python 3." in line
