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
        or "partition of one GPU" in "; ".join(r["notes"])
    ]
    assert len(single) > 40
    for r in single:
        assert (r["intra_node_link"], r["intra_node_basis"]) == ("single-gpu", "not-applicable"), r[
            "instance_type"
        ]
        assert r["intra_node_gbytes_per_s"] != r["intra_node_gbytes_per_s"]  # NaN: no figure


def by_name(rows, provider):
    return {r["instance_type"]: r for r in rows if r["provider"] == provider}


def test_hgx_and_nvl72_nodes_of_coreweave_and_nebius_are_on_infiniband(rows):
    """CoreWeave's HGX H100/H200/A100/B200 and GB200 nodes and Nebius's 8-GPU H100/H200/B200 presets
    run on InfiniBand: none may be 'unknown'; the A100 HGX row is NVSwitch, not a guess left open."""
    coreweave, nebius = by_name(rows, "coreweave"), by_name(rows, "nebius")
    for name in ("gb200-4x", "b200-8x", "gd-8xh200ib-i128", "gd-8xh100ib-i128", "gd-8xa100-i128"):
        assert coreweave[name]["inter_node_fabric"] == "infiniband", name
    assert (coreweave["gd-8xa100-i128"]["gpu_model"], coreweave["gd-8xa100-i128"]["intra_node_link"]) == (
        "A100-SXM-80GB",
        "nvswitch",
    )
    eight = [
        name for name in nebius if "_8gpu-" in name and name.startswith(("gpu-h100", "gpu-h200", "gpu-b200"))
    ]
    assert sorted(eight) == [
        "gpu-b200-sxm_8gpu-160vcpu-1792gb",
        "gpu-h100-sxm_8gpu-128vcpu-1600gb",
        "gpu-h200-sxm_8gpu-128vcpu-1600gb",
    ]
    assert {nebius[name]["inter_node_fabric"] for name in eight} == {"infiniband"}
    h100 = nebius["gpu-h100-sxm_8gpu-128vcpu-1600gb"]
    assert (h100["inter_node_gbits_per_s"], h100["nic_count"], h100["inter_node_basis"]) == (
        3200,
        8,
        "paraphrased",
    )


def test_one_inference_policy_for_families_sold_only_as_hgx_boards(rows, real_catalog_file):
    """AWS P5, Azure ND H100 v5, Google A3 High and Oracle BM.GPU.H100.8 are all HGX (SXM) machines:
    each row infers the form factor by the same table, with the same note, and its gpu_model claim
    says inferred; before, AWS inferred SXM and Oracle did not."""
    flagships = {
        ("aws", "p5.48xlarge"): "P5",
        ("azure", "Standard_ND96isr_H100_v5"): "ND-H100-v5",
        ("gcp", "a3-highgpu-8g"): "A3 High",
        ("oci", "BM.GPU.H100.8"): "BM.GPU.H100.8",
    }
    found = {(r["provider"], r["instance_type"]): r for r in rows}
    for key, family in flagships.items():
        row = found[key]
        assert (row["gpu_model"], row["intra_node_link"]) == ("H100-SXM-80GB", "nvswitch"), key
        assert f"form factor SXM inferred: {family} is sold only as HGX (SXM) boards" in "; ".join(
            row["notes"]
        ), key
    with duckdb.connect(str(real_catalog_file), read_only=True) as con:
        bases = dict(
            ((provider, name), basis)
            for provider, name, basis in con.execute(
                "SELECT provider, instance_type, basis FROM current_claims WHERE field = 'gpu_model' "
                "AND basis <> 'measured'"  # a GPU's own report (nvidia-smi) confirms some of them
            ).fetchall()
        )
    noted = [(r["provider"], r["instance_type"]) for r in rows if "is sold only as" in "; ".join(r["notes"])]
    assert len(noted) > 30
    assert {bases[key] for key in noted} == {"inferred"}
