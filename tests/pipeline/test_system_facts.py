"""What MLPerf system descriptions, GPUs' nvidia-smi reports and AWS's health-check profiles add to
the rows of the catalog built from the real documents in ../shared."""

from __future__ import annotations

from scrapers.measurements.mlperf import SYSTEMS
from tests.helpers import query

NEBIUS = ("gpu-b200-sxm_8gpu-160vcpu-1792gb", "gpu-h200-sxm_8gpu-128vcpu-1600gb")


def test_nebius_rows_take_mlperf_fabric_figure_and_front_end(real_catalog_file):
    for preset in NEBIUS:
        [(fabric, gbits, basis, frontend, conflict)] = query(
            real_catalog_file,
            "SELECT inter_node_fabric, inter_node_gbits_per_s, inter_node_basis, frontend_gbits_per_s, "
            f"conflict FROM instances WHERE provider = 'nebius' AND instance_type = '{preset}'",
        )
        assert (fabric, gbits, basis, frontend, conflict) == ("infiniband", 3200, "expected", 200, False)
        claims = query(
            real_catalog_file,
            "SELECT field, value, basis, quote, source_url FROM current_claims WHERE provider = 'nebius' "
            f"AND instance_type = '{preset}' AND source_url LIKE '%training_results_v5.1%' ORDER BY field",
        )
        fields = {f: (v, b) for f, v, b, _, _ in claims}
        assert fields["frontend_gbits_per_s"] == (200, "expected")
        assert fields["inter_node_gbits_per_s"] == (3200, "expected")
        assert all(
            "8x ConnectX-7 IB NDR 400Gb/s + 200Gb/s Ethernet NIC" in q
            for f, _, _, q, _ in claims
            if "node" in f and "intra" not in f
        )
    # the H100 row's own curated 3,200 stands; its front end is still not stated anywhere
    assert query(
        real_catalog_file,
        "SELECT frontend_gbits_per_s FROM instances WHERE instance_type = 'gpu-h100-sxm_8gpu-128vcpu-1600gb'",
    ) == [(None,)]


def test_mlperf_matches_name_rows_with_the_described_gpu_and_count(real_catalog_file):
    for system in SYSTEMS.values():
        if system.instance_type is None:
            continue
        [(model, count)] = query(
            real_catalog_file,
            f"SELECT gpu_model, gpu_count FROM instances WHERE provider = '{system.provider}' "
            f"AND instance_type = '{system.instance_type}'",
        )
        assert count == 8 and model.startswith(("B200-SXM", "H200-SXM")), system
    unmatched = query(
        real_catalog_file,
        "SELECT DISTINCT provider FROM measurements WHERE source = 'mlperf' AND instance_type IS NULL "
        "ORDER BY 1",
    )
    assert unmatched == [("lambda",), ("verda",)]


def test_oracle_b200_gets_expected_nvswitch_and_1800_claims_that_agree(real_catalog_file):
    claims = query(
        real_catalog_file,
        "SELECT field, coalesce(value_text, CAST(value AS VARCHAR)) FROM current_claims "
        "WHERE instance_type = 'BM.GPU.B200.8' AND basis = 'expected' AND source_url LIKE '%mlcommons%' "
        "ORDER BY 1",
    )
    assert claims == [
        ("inter_node_fabric", "roce"),
        ("intra_node_gbytes_per_s", "1800.0"),
        ("intra_node_link", "nvswitch"),
    ]
    assert query(
        real_catalog_file, "SELECT conflict FROM instances WHERE instance_type = 'BM.GPU.B200.8'"
    ) == [(False,)]


def test_nvidia_smi_product_names_confirm_the_rows_parts(real_catalog_file):
    measured = query(
        real_catalog_file,
        "SELECT c.instance_type, c.value_text, i.gpu_model FROM current_claims c JOIN instances i "
        "USING (provider, instance_type) WHERE c.field = 'gpu_model' AND c.basis = 'measured' ORDER BY 1",
    )
    assert measured == [
        ("a3-megagpu-8g", "H100-SXM-80GB", "H100-SXM-80GB"),
        ("a3-ultragpu-8g", "H200-SXM-141GB", "H200-SXM-141GB"),
        ("p4d.24xlarge", "A100-SXM-40GB", "A100-SXM-40GB"),  # the form factor AWS's page leaves to inference
    ]


def test_aws_health_check_efa_counts_reach_their_rows_and_equal_them(real_catalog_file):
    rows = query(
        real_catalog_file,
        "SELECT m.instance_type, m.value, i.nic_count FROM measurements m JOIN instances i "
        "USING (provider, instance_type) WHERE m.source = 'awshealth' AND m.metric = 'nic_count' ORDER BY 1",
    )
    assert [r[0] for r in rows] == [
        "g6.48xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
        "p6-b200.48xlarge",
    ]  # fmt: skip
    assert all(expected == stated for _, expected, stated in rows)
