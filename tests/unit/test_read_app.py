"""Read-side questions the app asks beyond the ranking (connection in, DataFrame out), on the shipped
snapshot: the planner's ranking planned once per hardware, one row's prices per region, and the
expected and measured marks of several instances' cliffs."""

from __future__ import annotations

import statistics

import duckdb
import pytest

from catalog import snapshot
from catalog.read.filters import Filters
from catalog.read.measurements import cliff_marks_for
from catalog.read.plan import COLUMNS, plan_rows, rank
from catalog.read.plan_inputs import cheapest_prices, measurements_by_instance, node_from_row
from catalog.read.prices import region_prices
from planner.models import ServeWorkload, TrainWorkload, preset
from planner.plan import _lacks_link, _link_key, _node_problem, plan
from planner.step import Options
from planner.verdict import verdict
from tests.helpers import SNAPSHOT_ROWS


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    db = tmp_path_factory.mktemp("shipped") / "catalog.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    with duckdb.connect(str(db), read_only=True) as con:
        yield con


@pytest.mark.parametrize(
    ("model", "workload"),
    [("llama-3.1-70b", ServeWorkload()), ("llama-3.1-405b", TrainWorkload(global_batch_tokens=64 * 8192))],
)
def test_planning_once_per_hardware_gives_every_row_its_own_plan(shipped, model, workload):
    """Rows with the same hardware share one plan; each row's plan, verdict and cost are what
    planning that row alone gives (names and prices differ, layouts and times do not)."""
    spec = preset(model)
    prices, measured = cheapest_prices(shipped), measurements_by_instance(shipped)
    shared = plan_rows(shipped, spec, workload)
    assert len(shared) == SNAPSHOT_ROWS
    planned = [r for _, r in shared if not isinstance(r, str)]
    assert len({id(r.results) for r in planned}) < len(planned)  # some rows share one computation
    for row, result in shared:
        key = (row["provider"], row["instance_type"])
        node = node_from_row(row, prices.get(key), measured.get(key))
        if isinstance(node, str):
            assert result == node
            continue
        alone = plan(spec, workload, node)
        assert result == alone, key
        assert verdict(result) == verdict(alone)


@pytest.mark.parametrize(
    ("model", "workload"),
    [
        ("llama-3.1-70b", ServeWorkload()),
        ("mixtral-8x7b", ServeWorkload(batch_sequences=64)),
        ("llama-3.1-405b", TrainWorkload()),
    ],
)
def test_a_ranking_s_plan_reads_as_the_full_plan(shipped, model, workload):
    """A ranking asks only for what its rows show (``plan(..., ranking=True)``: a node no layout can
    be timed on keeps the first layout alone; a plan leaves out the layouts whose compute or HBM
    time alone is slower than the best step); every node's row reads as from the full plan."""
    spec = preset(model)
    shortened = pruned = 0
    for row, full in plan_rows(shipped, spec, workload):
        if isinstance(full, str):
            continue
        short = plan(spec, workload, full.cluster.node, ranking=True)
        shown = [(p.best, p.fits, p.min_gpus, p.reason, verdict(p), p.sensitivity) for p in (short, full)]
        assert shown[0] == shown[1], row
        shortened += len(short.results) < len(full.results)
        pruned += short.best is not None and len(short.results) < len(full.results)
    assert shortened  # some node has no peak or HBM figure: its plan stops at the first layout
    assert pruned  # a ranking leaves out layouts that cannot win


@pytest.mark.parametrize(
    ("model", "workload"),
    [("llama-3.1-70b", ServeWorkload()), ("llama-3.1-405b", TrainWorkload(cluster_gpus=256))],
)
def test_whether_a_layout_lacks_a_link_figure_follows_from_the_links_its_groups_reach(
    shipped, model, workload
):
    """A ranking learns on one node which layouts' steps lack a link figure and does not evaluate
    them on a later node whose groups reach figured and missing links alike
    (``planner.plan._link_key``): on every node of the shipped catalog, layouts with one key all
    lack one or all have every figure."""
    spec, options = preset(model), Options()
    lacking: dict[tuple, set[bool]] = {}
    for _, full in plan_rows(shipped, spec, workload):
        if isinstance(full, str) or any(_node_problem(r) for r in full.results):
            continue
        for result in full.results:
            key = _link_key(spec, workload, result.layout, full.cluster, options)
            lacking.setdefault(key, set()).add(_lacks_link(result))
    assert all(len(found) == 1 for found in lacking.values())
    assert {True, False} <= {t for found in lacking.values() for t in found}  # both kinds were seen


def test_a_ranking_of_no_rows_is_empty_with_its_columns(shipped):
    found = rank(shipped, preset("llama-3.1-8b"), ServeWorkload(), filters=Filters(search="no such gpu"))
    assert found.empty and list(found.columns) == list(COLUMNS)


def test_prices_per_region_cheapest_first(shipped):
    found = region_prices(shipped, "azure", "Standard_ND96isr_H100_v5")
    assert found.loc[0, "region"] == "eastus" and found.loc[0, "usd_per_hour"] == 98.32
    assert found["usd_per_hour"].is_monotonic_increasing and len(found) == found["region"].nunique()
    assert found.loc[0, "quote"] == '"Standard_ND96isr_H100_v5":              98.320000'
    assert region_prices(shipped, "aws", "no-such-type").empty


def test_cliff_marks_of_several_instances(shipped):
    marks = cliff_marks_for(shipped, [("aws", "p5.48xlarge"), ("gcp", "a3-highgpu-8g"), ("aws", "none")])
    p5 = marks[marks["instance_type"] == "p5.48xlarge"]
    assert list(p5["level"]) == ["fabric per GPU"] and list(p5["gbytes_per_s"]) == [50.0]
    a3 = marks[marks["instance_type"] == "a3-highgpu-8g"]
    assert set(a3["kind"]) == {"measured"} and a3["gbytes_per_s"].max() == pytest.approx(388.755)
    assert list(marks["instance_type"].unique()) == ["p5.48xlarge", "a3-highgpu-8g"]


def test_the_median_of_measurements_is_statistics_median():
    from catalog.read.plan_inputs import _median

    for values in ([5.0], [3.0, 1.0], [400.0, 100.0, 200.0, 390.5], [7, 1, 3], [0.1, 0.2, 0.3, 0.4, 1e9]):
        assert _median(iter(values)) == statistics.median(values), values
