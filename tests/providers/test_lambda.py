"""Lambda: SkyPilot's v8 Lambda catalog and a Lambda employee's copy of Lambda's docs, read from the
real documents in ../shared/mirror, plus the curated B200 1-Click Cluster node."""

from __future__ import annotations

import pytest

from normalize.vocab import Basis, Fabric, Link
from scrapers.documents.lambdalabs import CLUSTERS_URL, ON_DEMAND_URL, VMS_URL, LambdaCloud, on_demand_shapes
from tests.conftest import shared_fixture
from tests.helpers import parse_real, unquoted


@shared_fixture(scope="module")
def real():
    return parse_real(LambdaCloud())


def claim(row, field: str):
    (found,) = [c for c in row.claims if c.field == field]
    return found


def test_real_every_gpu_type_is_a_row_under_lambdas_name(real):
    bodies, rows, prices = real
    body = bodies[VMS_URL]
    assert body.count("\r\n") == 409  # CRLF, one line per type and region (17 regions)
    csv_types = {
        line.split(",", 1)[0] for line in body.split("\r\n")[1:] if line and not line.startswith("cpu_")
    }
    assert len(csv_types) == 22 and csv_types <= set(rows)
    assert {"gpu_8x_h100_sxm5", "gpu_1x_gh200", "gpu_8x_b200_sxm6", "gpu_1x_h100_pcie"} <= set(rows)
    assert set(rows) - csv_types == {"1-click-cluster-h100-sxm", "1-click-cluster-b200-8gpu"}
    assert not any(name.startswith("cpu_") for name in rows)
    assert unquoted(bodies, rows.values(), prices) == []


@pytest.mark.parametrize(
    ("name", "model", "count", "link", "intra"),
    [
        ("gpu_8x_h100_sxm5", "H100-SXM-80GB", 8, Link.NVSWITCH, 900),
        ("gpu_8x_b200_sxm6", "B200-SXM-180GB", 8, Link.NVSWITCH, 1800),
        ("gpu_8x_a100_80gb_sxm4", "A100-SXM-80GB", 8, Link.NVSWITCH, 600),
        ("gpu_1x_h100_pcie", "H100-PCIE-80GB", 1, Link.SINGLE_GPU, None),
        ("gpu_1x_gh200", "GH200-96GB", 1, Link.SINGLE_GPU, None),
        ("gpu_1x_rtx6000", "QUADRO-RTX-6000-24GB", 1, Link.SINGLE_GPU, None),
        ("gpu_4x_a6000", "RTX-A6000-48GB", 4, Link.UNKNOWN, None),  # bridged or not: not stated
        ("gpu_8x_v100", "V100-16GB", 8, Link.UNKNOWN, None),  # SXM2 or PCIe: not stated
    ],
)
def test_real_rows(real, name, model, count, link, intra):
    row = real[1][name]
    assert (row.gpu_model, row.gpu_count) == (model, count)  # the catalog writes counts as "8.0"
    assert (row.intra_node_link, row.intra_node_gbytes_per_s) == (link, intra)
    assert row.inter_node_fabric == Fabric.UNKNOWN and row.missing_inter_bw  # the catalog states no network
    assert "'up to 200 Gbps' in us-west-3 and us-south-1), not per instance type" in row.notes_text


def test_real_form_factor_from_the_name_is_inferred_from_the_name(real):
    rows = real[1]
    model = claim(rows["gpu_8x_h100_sxm5"], "gpu_model")
    assert model.basis == Basis.INFERRED and "form factor read from the name" in model.context
    assert model.quote.startswith("gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,31.92,")
    assert claim(rows["gpu_1x_a10"], "gpu_model").basis == Basis.STATED  # the columns say it all


def test_real_total_gpu_memory_trap_is_one_gpu_not_the_total(real):
    row = real[1]["gpu_8x_h100_sxm5"]
    assert row.gpu_memory_gb == pytest.approx(85.89934592)  # MemoryInfo.SizeInMiB 81920, per GPU
    assert "GpuInfo TotalGpuMemoryInMiB 81920 is not the 8 GPUs' 655360: not used" in row.notes_text


def test_real_docs_table_tells_the_a100_shapes_apart(real):
    """The proof of concept's table: 'A100 SXM' 8 x 40 GB with 124 vCPUs is gpu_8x_a100; the PCIe
    group has the 4- and 2-GPU shapes; the 1-GPU A100 fits both groups, so it stays family-level."""
    bodies, rows, _ = real
    shapes = on_demand_shapes(bodies[ON_DEMAND_URL])
    assert len(shapes) == 18 and shapes[0].gpu == "H100 SXM" and shapes[-1].gpu == "RTX 6000"
    eight = rows["gpu_8x_a100"]
    assert (eight.gpu_model, eight.intra_node_link, eight.intra_node_gbytes_per_s) == (
        "A100-SXM-40GB",
        "nvswitch",
        600,
    )
    model = claim(eight, "gpu_model")
    assert (model.source_url, model.basis) == (ON_DEMAND_URL, Basis.INFERRED)
    assert model.quote.startswith("| A100 SXM   | 8") and model.quote.endswith(
        "| 124        | 1800 GiB  | 5.8 TiB          |"
    )
    assert "Lambda's own repository, Oct 2024" in model.context
    assert (rows["gpu_4x_a100"].gpu_model, rows["gpu_2x_a100"].gpu_model) == (
        "A100-PCIE-40GB",
        "A100-PCIE-40GB",
    )
    assert rows["gpu_1x_a100"].gpu_model == "A100-40GB"


def test_real_one_click_cluster_from_the_proof_of_concept(real):
    node = real[1]["1-click-cluster-h100-sxm"]
    assert (node.gpu_model, node.gpu_count) == ("H100-SXM-80GB", None)  # GPUs per node not stated
    assert (node.inter_node_fabric, node.inter_node_gbits_per_s, node.inter_node_gbytes_per_s) == (
        Fabric.INFINIBAND,
        3200,
        400,
    )
    assert node.frontend_gbits_per_s == 200 and node.source_url == CLUSTERS_URL  # "2x100Gb/s Ethernet"
    fabric = claim(node, "inter_node_gbits_per_s")
    assert "up to 3200Gb/s" in fabric.quote and fabric.qualifiers.startswith("up to")
    assert (
        "is this catalog's stable slug" in node.notes_text
        and "not Lambda's live documentation" in node.notes_text
    )


def test_real_curated_b200_cluster_keeps_its_slug(real):
    node = real[1]["1-click-cluster-b200-8gpu"]
    assert (node.gpu_model, node.gpu_count, node.source_kind) == ("B200-SXM-180GB", 8, "curated")
    assert node.inter_node_fabric == Fabric.INFINIBAND and node.missing_inter_bw


def test_real_prices_same_in_all_17_regions(real):
    prices = [p for p in real[2] if p.instance_type == "gpu_8x_h100_sxm5"]
    assert len(prices) == 17 and {p.usd_per_hour for p in prices} == {31.92}
    assert {p.spot_usd_per_hour for p in prices} == {None}
    assert {"us-east-1", "europe-central-1", "asia-south-1"} <= {p.region for p in prices}
    assert len(real[2]) == 22 * 17
