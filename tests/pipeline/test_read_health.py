"""What is missing and why, conflicting claims one line per claim, and how old the data is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog import snapshot
from catalog.read import conflicts, missing, scoring, status
from catalog.read.connect import connect_readonly
from catalog.read.filters import Filters
from scrapers.documents.gcp import capture as gcp_capture


@pytest.fixture(scope="module")
def real(real_catalog_file):
    with connect_readonly(real_catalog_file) as con:
        yield con


def lines_of(frame, instance_type):
    return frame[frame["instance_type"] == instance_type].reset_index(drop=True)


@pytest.mark.shared
def test_real_conflicts_are_one_line_per_claim_with_the_value_the_row_kept(real):
    a3 = lines_of(conflicts.conflicts(real), "a3-highgpu-8g")
    # Google's table in the capture (the row's own source), our restatement, cluster-toolkit's figure
    assert list(a3["value"]) == [1000.0, 1000.0, 1600.0] and list(a3["kept"]) == [True, True, False]
    assert (a3.loc[0, "quote"], a3.loc[0, "source_url"]) == ("1,000", "copy:" + gcp_capture.MACHINES_COPY)
    assert a3.loc[0, "why"] == "kept: stated on the page the row comes from, and read first"
    assert a3.loc[1, "quote"] == "| A3 High | NVIDIA H100 80GB | 1,000 Gbps | GPUDirect-TCPX |"
    assert a3.loc[1, "source_url"] == "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"
    assert a3.loc[2, "quote"].endswith("200 Gbps of networking throughput per GPU")
    assert a3.loc[2, "source_url"].endswith("examples/gke-a3-highgpu/README.md")
    assert a3.loc[2, "why"] == (
        "not kept: the row shows 1,000 Gbit/s; this claim disagrees, so the row is flagged conflict"
    )
    ranked = scoring.ranking(real, Filters(search="a3-highgpu-8g"))
    assert ranked.loc[0, "inter_node_gbits_per_s"] == 1000.0  # what "kept" says the row shows


@pytest.mark.shared
def test_real_conflicts_follow_the_filters(real):
    """Defect (issue 14): the Conflicts tab ignored the sidebar filters."""
    assert set(conflicts.conflicts(real)["provider"]) == {"aws", "coreweave", "gcp", "runpod"}
    assert set(conflicts.conflicts(real, Filters(providers=("runpod",)))["provider"]) == {"runpod"}
    assert conflicts.conflicts(real, Filters(search="p5.48xlarge")).empty


@pytest.mark.shared
def test_real_missing_items_say_why(real):
    items = missing.missing_items(real)
    why = {(r.instance_type, r.missing): (r.why, r.detail) for r in items.itertuples()}
    assert why["Standard_ND12s", "fabric bandwidth"] == (
        missing.NOT_FETCHED,
        "a page this row needs was not fetched: nd-series-summary.md",
    )
    assert why["gpu-h100x8-640gb", "GPU-to-GPU link and bandwidth"] == (  # DigitalOcean's 8 x H100
        missing.FORM_FACTOR,
        "the sources name H100-80GB without its form factor (SXM or PCIe), so the link cannot be inferred",
    )
    # (Azure's NC80adis H100 v5 has its bridge from the health check now: tests/pipeline/test_row_facts.py)
    assert why["gpu_2x_a100", "GPU-to-GPU link and bandwidth"] == (
        missing.BRIDGE,
        "A100-PCIE-40GB cards may be joined by an NVLink bridge or by PCIe only; the source states neither",
    )
    assert why["g4ad.16xlarge", "GPU-to-GPU bandwidth"] == (
        missing.NOT_STATED,
        "the provider states no figure and the GPU datasheet table has none for RADEON-PRO-V520-8GB",
    )
    assert why["gd-8xh100ib-i128", "fabric bandwidth"] == (  # CoreWeave: InfiniBand, rate unpublished
        missing.NOT_STATED,
        "the provider's page states nothing for it",  # its NCCL job file and docs index give no rate
    )
    assert why["NVIDIA H100 80GB HBM3", "GPU count"][0] == missing.NOT_STATED
    assert set(items["why"]) == {
        missing.NOT_STATED,
        missing.NOT_FETCHED,
        missing.FORM_FACTOR,
        missing.BRIDGE,
        missing.NO_PRICE,
    }
    assert items["source_url"].str.startswith(("https://", "copy:")).all()  # copy: a local copy (OCI)


@pytest.mark.shared
def test_real_missing_follows_the_filters(real):
    """Defect (issue 14): What's missing ignored the sidebar filters."""
    oci = missing.missing_items(real, Filters(providers=("oci",)))
    links = oci[oci["missing"] != "on-demand price"]
    assert set(oci["provider"]) == {"oci"} and "BM.GPU2.2" in set(links["instance_type"])  # P100
    # the shapes only the offer lists give have no network figures; Oracle's table's shapes miss none
    assert "BM.GPU.B300.8" in set(links["instance_type"]) and "BM.GPU.H100.8" not in set(
        links["instance_type"]
    )
    # issue 21: the rows without a price say so; only the shapes Oracle's template alone names lack one
    assert (oci["missing"] == "on-demand price").sum() == 5
    summary = missing.missing_summary(real, Filters(providers=("oci",), gpu_counts=(8,)))
    assert list(summary["provider"]) == ["oci"] and summary.loc[0, "rows"] == 12 < 26
    assert missing.missing_items(real, Filters(search="p5.48xlarge")).empty


def test_data_as_of_is_when_the_pages_were_read_not_when_the_file_was_built(tmp_path):
    """Defect (issue 14): a catalog seeded today from the snapshot showed today as its date."""
    db = tmp_path / "seeded.duckdb"
    snapshot.load(snapshot.DEFAULT_DIR, db)
    built = json.loads((snapshot.DEFAULT_DIR / snapshot.META_FILE).read_text())["built_at"]
    with connect_readonly(db) as con:
        as_of = status.data_as_of(con).set_index("provider")
        refreshed = status.latest_refresh(con).loc[0, "finished_at"]
    assert {str(t) for t in as_of["last_fetched_at"]} == {built.replace("T", " ")}
    assert refreshed > as_of["last_fetched_at"].max()
    assert set(as_of.index) >= {"aws", "azure", "gcp"}


def test_data_as_of_a_refreshed_catalog_is_its_fetch_time(small_catalog_file: Path):
    with connect_readonly(small_catalog_file) as con:
        as_of = status.data_as_of(con).set_index("provider")
        fetched = con.execute("SELECT provider, max(fetched_at) FROM fetches GROUP BY 1").fetchall()
    for provider, at in fetched:
        assert as_of.loc[provider, "last_fetched_at"] <= at
