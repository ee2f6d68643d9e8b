"""The app's questions (catalog/queries.py) on a small catalog built here, and on the real one."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from catalog.read import conflicts, missing, queries, scoring, status
from catalog.read.connect import connect_readonly
from catalog.read.filters import Filters
from normalize.vocab import GPU_FABRICS, NVLINK_CLASS_LINKS
from scrapers import PROVIDER_NAMES
from scrapers.documents.azure import SIZES
from scrapers.documents.gcp import capture as gcp_capture
from tests.helpers import AWS_PAGE, SMALL, build_mirror, cli_refresh

refresh = cli_refresh


@pytest.fixture(scope="module")
def small_db(small_catalog_file) -> Path:
    return small_catalog_file


@pytest.fixture(scope="module")
def stale_db(tmp_path_factory) -> Path:
    """The small catalog refreshed a second time without the AWS page: AWS rows are kept, stale."""
    root = tmp_path_factory.mktemp("stale")
    db, mirror = root / "c.duckdb", build_mirror(root / "m")
    assert refresh(mirror, db, *SMALL) == 0
    (mirror / AWS_PAGE).unlink()
    assert refresh(mirror, db, *SMALL) == 1
    return db


@pytest.fixture(scope="module")
def real_db(real_catalog_file) -> Path:
    return real_catalog_file


@pytest.fixture
def small(small_db):
    with connect_readonly(small_db) as con:
        yield con


@pytest.fixture
def real(real_db):
    with connect_readonly(real_db) as con:
        yield con


def by_type(frame):
    return frame.set_index("instance_type")


# --- the small catalog: exact values -------------------------------------------------------------


def test_tensor_ranking_puts_nvswitch_above_pcie_above_a_single_gpu(small):
    ranked = scoring.ranking(small, Filters(workload="tensor"))
    assert list(ranked["instance_type"]) == [
        "p5.48xlarge",  # 900 x log2(8); ties with ND96isr, wins on fabric (50 vs 25 GB/s per GPU)
        "Standard_ND96isr_T9_v9",
        "Standard_ND48is_T9_v9",  # 900 x log2(4)
        "g5.12xlarge",  # PCIe 64 x log2(4)
        "g5.xlarge",  # single GPU
    ]
    assert list(ranked["rank"]) == [1, 2, 3, 4, 5]
    assert list(ranked["score_weighted_gbytes_per_s"]) == [2700.0, 2700.0, 1800.0, 128.0, 0.0]
    reasons = dict(zip(ranked["instance_type"], ranked["reason"], strict=True))
    assert reasons["p5.48xlarge"] == "NVSwitch 900 GB/s per GPU (inferred), 8-GPU domain: TP up to 8"
    assert (
        reasons["Standard_ND48is_T9_v9"] == "NVSwitch 900 GB/s per GPU (inferred), 4-GPU domain: TP up to 4"
    )
    assert reasons["g5.12xlarge"] == (
        "PCIe only: TP crosses PCIe at 64 GB/s (inferred), 4 GPUs per host: 64 × log2(4) = 128"
    )
    assert reasons["g5.xlarge"] == "single GPU: no tensor parallelism inside the instance"


def test_derived_columns_carry_units_and_known_values(small):
    rows = by_type(queries.filtered_instances(small))
    p5, nd96, g5 = rows.loc["p5.48xlarge"], rows.loc["Standard_ND96isr_T9_v9"], rows.loc["g5.12xlarge"]
    assert p5["fabric_gbytes_per_s_per_gpu"] == 50.0  # 3,200 Gb/s / 8 / 8 GPUs
    assert p5["nvlink_to_fabric_ratio"] == 9.0  # one way each: 900 / 2 / 50 (issue 21: it said 18)
    assert (p5["max_tp_degree_gpus"], bool(p5["confined_to_one_node"])) == (8, True)
    assert p5["frontend_gbytes_per_s_per_gpu"] == 50.0  # AWS: one allowance shared with EFA
    assert nd96["fabric_gbytes_per_s_per_gpu"] == 25.0  # 1,600 Gb/s (HDR unit corrected) / 8 / 8
    assert nd96["nvlink_to_fabric_ratio"] == 18.0  # 450 / 25
    assert nd96["frontend_gbytes_per_s_per_gpu"] == 1.25  # 80 Gb/s / 8 / 8
    assert (g5["max_tp_degree_gpus"], bool(g5["confined_to_one_node"])) == (4, True)
    assert g5["fabric_gbytes_per_s_per_gpu"] == 1.25
    assert math.isnan(g5["nvlink_to_fabric_ratio"])  # PCIe is not a scale-up link
    assert rows.loc["g5.xlarge", "max_tp_degree_gpus"] == 1


def test_pipeline_ranking_counts_ethernet_at_half(small):
    ranked = scoring.ranking(small, Filters(workload="pipeline"))
    assert list(ranked["instance_type"]) == [
        "p5.48xlarge",
        "Standard_ND96isr_T9_v9",
        "g5.12xlarge",
        "Standard_ND48is_T9_v9",
        "g5.xlarge",
    ]
    assert list(ranked["score_weighted_gbytes_per_s"]) == [50.0, 25.0, 1.25, 0.625, 0.15625]
    reasons = dict(zip(ranked["instance_type"], ranked["reason"], strict=True))
    assert reasons["p5.48xlarge"] == "fabric 50 GB/s per GPU over EFA: 3,200 Gb/s per node (stated)"
    assert (
        reasons["Standard_ND96isr_T9_v9"]
        == "fabric 25 GB/s per GPU over InfiniBand: 1,600 Gb/s per node (stated)"
    )
    assert (
        reasons["Standard_ND48is_T9_v9"]
        == "Ethernet only, counted at half: 1.25 GB/s per GPU from 40 Gb/s per node (stated)"
    )


def test_expert_ranking_is_the_geometric_mean_of_fabric_and_intra_node(small):
    ranked = scoring.ranking(small, Filters(workload="expert"))
    assert list(ranked["instance_type"]) == [
        "p5.48xlarge",
        "Standard_ND96isr_T9_v9",
        "Standard_ND48is_T9_v9",
        "g5.12xlarge",
        "g5.xlarge",
    ]
    scores = dict(zip(ranked["instance_type"], ranked["score_weighted_gbytes_per_s"], strict=True))
    assert scores["p5.48xlarge"] == pytest.approx(math.sqrt(50 * 900))
    assert scores["Standard_ND48is_T9_v9"] == pytest.approx(math.sqrt(0.625 * 900))
    assert scores["g5.12xlarge"] == pytest.approx(math.sqrt(1.25 * 64))
    assert scores["g5.xlarge"] == 0.15625  # a single GPU: its pipeline score
    reason = ranked.loc[ranked["instance_type"] == "p5.48xlarge", "reason"].item()
    assert reason == (
        "fabric 50 GB/s per GPU over EFA: 3,200 Gb/s per node (stated); "
        "NVSwitch 900 GB/s per GPU (inferred) (8-GPU domain)"
    )


def test_without_inferred_values_they_are_missing_and_rank_below_a_known_zero(small):
    ranked = scoring.ranking(small, Filters(workload="tensor", include_inferred=False))
    # Every intra-node figure in the small catalog is inferred; only the single GPU stays known.
    assert ranked.loc[0, "instance_type"] == "g5.xlarge"
    assert ranked.loc[0, "rank"] == 1 and ranked.loc[0, "score_weighted_gbytes_per_s"] == 0.0
    rest = ranked.iloc[1:]
    assert rest["rank"].isna().all() and rest["score_weighted_gbytes_per_s"].isna().all()
    assert set(rest["reason"]) == {
        "NVSwitch, bandwidth unknown: only inferred from the GPU datasheet (inferred values excluded)",
        "PCIe, bandwidth unknown: only inferred from the GPU datasheet (inferred values excluded)",
    }


def test_filters_select_providers_gpu_counts_and_models(small):
    def types(**kw):
        return sorted(queries.filtered_instances(small, Filters(**kw))["instance_type"])

    assert types(providers=("azure",)) == ["Standard_ND48is_T9_v9", "Standard_ND96isr_T9_v9"]
    assert types(gpu_counts=(8,)) == ["Standard_ND96isr_T9_v9", "p5.48xlarge"]
    assert types(gpu_counts=(1, 4)) == ["Standard_ND48is_T9_v9", "g5.12xlarge", "g5.xlarge"]
    assert types(search="a10g") == ["g5.12xlarge", "g5.xlarge"]
    assert types(search="ND48") == ["Standard_ND48is_T9_v9"]
    empty = scoring.ranking(small, Filters(search="no such gpu"))
    assert empty.empty and {"rank", "reason", "score_weighted_gbytes_per_s"} <= set(empty.columns)


def test_instances_sql_binds_every_user_value():
    sql, params = queries.instances_sql(
        Filters(
            providers=("aws",),
            gpu_counts=(2,),
            intra_links=("nvswitch",),
            min_fabric_gbits_per_s_per_node=400,
            search=" H100' 8x, ND96 ",
            include_curated=False,
        )
    )
    assert params == {
        "inferred": True,
        "providers": ["aws"],
        "gpu_counts": [2.0],
        "intra_links": ["nvswitch"],
        "min_fabric_node": 400.0,
        "term_0_0": "h100'",
        "term_0_1": 8.0,
        "term_1_0": "nd96",
    }
    assert "H100" not in sql and "ND96" not in sql and "source_kind <> 'curated'" in sql


def test_cliff_of_p5_goes_memory_intra_fabric_frontend(small):
    cliff = queries.cliff(small, "aws", "p5.48xlarge")
    assert list(cliff["level"]) == list(queries.CLIFF_LEVELS)
    assert list(cliff["gbytes_per_s"]) == [3350.0, 900.0, 50.0, 50.0]
    assert list(cliff["basis"]) == ["inferred", "inferred", "stated", "stated"]
    assert list(cliff["link"]) == ["H100-SXM-80GB", "NVSwitch", "EFA", "front-end network"]
    assert cliff.loc[2, "detail"] == "3,200 Gb/s per node / 8 / 8 GPUs"
    assert cliff.loc[3, "detail"] == "3,200 Gb/s per node / 8 / 8 GPUs; one allowance shared with the fabric"


def test_cliff_of_a_single_gpu_has_no_intra_node_level(small):
    cliff = queries.cliff(small, "aws", "g5.xlarge")
    assert cliff.loc[1, "basis"] == "not-applicable" and math.isnan(cliff.loc[1, "gbytes_per_s"])
    assert cliff.loc[2, "gbytes_per_s"] == 0.3125  # 2.5 Gb/s / 8
    assert queries.cliff(small, "aws", "no-such-instance").empty


def test_claims_show_the_quote_and_the_unit_correction(small):
    claims = queries.claims(small, "azure", "Standard_ND96isr_T9_v9")
    fabric = claims[claims["field"] == "inter_node_gbits_per_s"]
    assert list(fabric["value"]) == [1600.0, 1600.0]
    assert fabric["unit_suspect"].all() and set(fabric["unit"]) == {"Gbit/s"}
    assert (
        "Each GPU within the VM is provided with its own dedicated 200 GB/s NVIDIA HDR InfiniBand connection."
        in set(fabric["quote"])
    )
    assert set(fabric["source_url"]) == {f"{SIZES}includes/nd-test-v9-series-summary.md"}
    assert set(fabric["evidence"]) == {"verbatim"}
    assert set(fabric["provenance"]) == {f"quoted from {SIZES}includes/nd-test-v9-series-summary.md"}
    intra = claims[claims["field"] == "intra_node_gbytes_per_s"].iloc[0]
    assert (intra["value"], intra["basis"], intra["evidence"], intra["context"]) == (
        900.0,
        "inferred",
        "datasheet",
        "GPU table row H100-SXM-80GB (normalize/gpus.csv)",
    )
    assert intra["quote"] == "id=H100-SXM-80GB; link=nvswitch; link_gbytes_per_s=900"  # the cells it used
    assert intra["provenance"] == "GPU table row; datasheet https://www.nvidia.com/en-us/data-center/h100/"


def test_missing_summary_counts_rows_per_provider(small):
    summary = missing.missing_summary(small).set_index("provider")
    assert summary.loc["aws", "rows"] == 3 and summary.loc["azure", "rows"] == 2
    assert summary.loc["azure", "unit_suspect_rows"] == 1  # ND96isr: "200 GB/s ... HDR"
    assert summary.loc["aws", "inferred_intra_bw_rows"] == 2  # p5 and g5.12xlarge
    assert summary[["missing_intra_bw_rows", "missing_inter_bw_rows", "stale_rows"]].sum().sum() == 0
    assert missing.missing_items(small).empty
    assert conflicts.conflicts(small).empty


def test_status_of_a_healthy_catalog(small):
    latest = status.latest_refresh(small)
    assert (latest.loc[0, "mode"], latest.loc[0, "exit_code"]) == ("mirror", 0)
    outcomes = status.provider_status(small).set_index("provider")
    assert list(outcomes["outcome"]) == ["ok", "ok"] and list(outcomes["rows"]) == [3, 2]
    assert status.stale_providers(small).empty
    assert queries.providers(small) == ["aws", "azure"]


def test_a_failed_refresh_shows_stale_rows_with_cause_and_last_success(stale_db):
    with connect_readonly(stale_db) as con:
        stale = status.stale_providers(con)
        outcomes = status.provider_status(con).set_index("provider")
        latest = status.latest_refresh(con)
        ranked = scoring.ranking(con, Filters())
        fresh_only = scoring.ranking(con, Filters(include_stale=False))
        first_success = con.execute("SELECT min(finished_at) FROM refreshes WHERE exit_code = 0").fetchone()[
            0
        ]
    assert list(stale["provider"]) == ["aws"] and stale.loc[0, "stale_rows"] == 3
    assert "HTTP 404" in stale.loc[0, "stale_cause"]
    assert stale.loc[0, "last_success_at"] <= first_success
    assert outcomes.loc["aws", "outcome"] == "stale" and outcomes.loc["azure", "outcome"] == "ok"
    assert outcomes.loc["aws", "stale_rows"] == 3
    assert latest.loc[0, "exit_code"] == 1
    assert ranked.loc[ranked["instance_type"] == "p5.48xlarge", "flags"].item() == "stale"
    assert set(fresh_only["provider"]) == {"azure"}


def test_unknown_workload_is_refused(small):
    with pytest.raises(ValueError, match="unknown workload 'data'"):
        scoring.ranking(small, Filters(workload="data"))


# --- the real catalog (../shared/mirror) ---------------------------------------------------------


@pytest.mark.shared
def test_real_tensor_ranking_starts_with_scale_up_boards_and_racks(real):
    ranked = scoring.ranking(real, Filters(workload="tensor"))
    racks = ranked[ranked["gpu_model"].str.startswith(("GB200", "GB300"), na=False)]
    assert len(racks) >= 4
    # NVL72 racks: the 72-GPU domain spans instances, so TP is not confined to one node.
    assert (racks["max_tp_degree_gpus"] == 72).all() and (~racks["confined_to_one_node"].astype(bool)).all()
    top = ranked.head(len(racks))
    assert set(top["instance_type"]) == set(racks["instance_type"])
    assert set(ranked.head(20)["intra_node_link"]) <= set(NVLINK_CLASS_LINKS)
    p5 = ranked[ranked["instance_type"] == "p5.48xlarge"].iloc[0]
    # stated: AWS's own "900 GB/s NVSwitch" (the HPC workshop page, read as a local copy; issue 20)
    assert p5["reason"] == "NVSwitch 900 GB/s per GPU (stated), 8-GPU domain: TP up to 8"
    assert bool(p5["confined_to_one_node"]) and p5["score_weighted_gbytes_per_s"] == 2700.0


@pytest.mark.shared
def test_real_pcie_and_single_gpu_rows_rank_below_every_scale_up_row(real):
    ranked = scoring.ranking(real, Filters(workload="tensor"))
    scored = ranked[ranked["rank"].notna()]
    scale_up = scored[scored["intra_node_link"].isin(list(NVLINK_CLASS_LINKS))]
    slow = scored[scored["intra_node_link"].isin(["pcie", "single-gpu"])]
    assert len(scale_up) > 20 and len(slow) > 20
    assert scale_up["rank"].max() < slow["rank"].min()
    g5 = ranked[ranked["instance_type"] == "g5.48xlarge"].iloc[0]  # Spare Cores: every peer copy waived
    assert g5["reason"] == (
        "PCIe without GPU peer access (measured): GPU-to-GPU copies are staged through host memory"
    )
    g6e = ranked[ranked["instance_type"] == "g7e.48xlarge"].iloc[0]
    assert g6e["reason"].startswith("PCIe only: TP crosses PCIe at 128 GB/s (inferred), 8 GPUs per host")
    assert ranked[ranked["intra_node_link"] == "single-gpu"]["score_weighted_gbytes_per_s"].eq(0).all()


@pytest.mark.shared
@pytest.mark.parametrize("workload", queries.WORKLOADS)
def test_real_missing_values_never_rank_above_known_ones(real, workload):
    ranked = scoring.ranking(real, Filters(workload=workload))
    scored = ranked["score_weighted_gbytes_per_s"].notna().tolist()
    first_unscored = scored.index(False)
    assert first_unscored > 0 and not any(scored[first_unscored:])
    assert ranked["rank"].notna().tolist() == scored
    assert list(ranked["rank"].dropna()) == list(range(1, first_unscored + 1))
    scores = ranked["score_weighted_gbytes_per_s"].dropna().tolist()
    assert scores == sorted(scores, reverse=True)
    # Rows missing the link (tensor) or the fabric (pipeline, expert) carry no score; the reason says so.
    if workload == "tensor":
        unknown = ranked[ranked["intra_node_link"] == "unknown"]
        said = "GPU-to-GPU link unknown: not stated by the provider"
    else:
        unknown = ranked[(ranked["inter_node_fabric"] == "unknown") & ranked["inter_node_gbits_per_s"].isna()]
        said = "fabric unknown: not stated by the provider"
    assert len(unknown) > 5 and unknown["rank"].isna().all()
    assert unknown["reason"].str.startswith(said).all()


@pytest.mark.shared
def test_real_pipeline_top_rows_have_the_most_fabric_per_gpu(real):
    ranked = scoring.ranking(real, Filters(workload="pipeline"))
    top = ranked.iloc[0]
    assert top["score_weighted_gbytes_per_s"] == top["fabric_gbytes_per_s_per_gpu"] == 100.0
    assert top["inter_node_fabric"] in GPU_FABRICS
    coreweave = ranked[ranked["provider"] == "coreweave"]
    assert coreweave["rank"].isna().all()  # no per-node figure: never scored as zero, never guessed
    assert set(coreweave["reason"]) == {
        "fabric unknown: not stated by the provider",  # L40, L40S, RTX PRO 6000, GH200
        "InfiniBand, bandwidth unknown: not stated by the provider",  # HGX and NVL72 nodes
        "RoCE, bandwidth unknown: not stated by the provider",  # gb300-4x-e (Spectrum-X)
    }


@pytest.mark.shared
def test_real_catalog_health(real):
    found = conflicts.conflicts(real)
    a3 = found[found["instance_type"] == "a3-highgpu-8g"]
    assert set(a3["field"]) == {"inter_node_gbits_per_s"}
    # Google's table (the capture), our restatement of the network page, cluster-toolkit's 8 x 200
    assert sorted(a3["value"]) == [1000.0, 1000.0, 1600.0]
    summary = missing.missing_summary(real).set_index("provider")
    assert set(summary.index) == set(PROVIDER_NAMES) and len(PROVIDER_NAMES) >= 15
    assert summary.loc["lambda", "curated_rows"] == 1  # the 1-Click Cluster node: curated alone
    assert (summary["missing_intra_bw_rows"] <= summary["rows"]).all()
    outcomes = status.provider_status(real).set_index("provider")
    assert outcomes.loc["gcp", "outcome"] == "ok"  # Google's captures read offline (issue 20)
    assert status.stale_providers(real).empty
    scraped = queries.filtered_instances(real, Filters(include_curated=False))
    assert (scraped["source_kind"] == "scraped").all() and len(scraped) < len(
        queries.filtered_instances(real)
    )


@pytest.mark.shared
def test_real_claim_conflicts_view_pairs_each_value_with_its_own_quote(real):
    """Defect (issue 14): the view listed values DISTINCT and unordered beside quotes in another order."""
    rows = real.execute(
        "SELECT values, quotes, source_urls FROM claim_conflicts WHERE instance_type = 'a3-highgpu-8g'"
    ).fetchall()
    values, quotes, urls = rows[0]
    assert len(values) == len(quotes) == len(urls) == 3
    triples = list(zip(values, quotes, urls, strict=True))
    capture = "copy:" + gcp_capture.MACHINES_COPY
    assert ("1000.0", "1,000", capture) in triples  # Google's table cell (the machine's total)
    network = "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"
    assert ("1000.0", "| A3 High | NVIDIA H100 80GB | 1,000 Gbps | GPUDirect-TCPX |", network) in triples
    (toolkit,) = [(q, u) for v, q, u in triples if v == "1600.0"]
    assert (
        toolkit[0] == "A3 High VMs feature 8 NVIDIA H100 GPUs and 200 Gbps of networking throughput per GPU"
    )
    assert toolkit[1].endswith("examples/gke-a3-highgpu/README.md")
