"""The published-cases suite: measured runs nobody here wrote, each with its source, the planner's
prediction for the same hardware and work, and the ratio between them.

``role`` says how a case is used: a ``calibration`` case is one a factor in ``planner.link_costs``
(or the efficiency table) was read from, so it checks the arithmetic that carries the factor; a
``judge`` case was not used to set anything and measures the model. ``tolerance`` is the ratio
(either way) a case may be off before its test fails. ``python -m devtools.published_cases`` prints
the Markdown table the docs show and the typical (exp median |ln ratio|) and worst error per class.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from catalog.read.plan_inputs import node_from_row
from normalize.gpus import BY_ID
from planner.comms import bus_bandwidth_gbytes_per_s, collective_cost
from planner.hardware import Cluster, Node
from planner.layouts import Group


@dataclass(frozen=True)
class Case:
    """One measured run and how the planner predicts it."""

    case_id: str
    klass: str
    role: str
    source_url: str
    what: str
    published: float
    unit: str
    tolerance: float
    planner: Callable[[], float]

    def ratio(self) -> float:
        return self.planner() / self.published


def board(
    gpu: str, gpus: int, *, fabric: str = "infiniband", node_gbits_per_s: float | None = 3200.0
) -> Node:
    """A node built from the datasheet table the way the catalog builds one: the GPU's scale-up link
    (or PCIe x16 for a PCIe card), ``fabric`` at ``node_gbits_per_s`` per node."""
    spec = BY_ID[gpu]
    link = "pcie" if spec.link in ("pcie", "pcie-or-nvlink-bridge") else spec.link
    intra = spec.pcie_gbytes_per_s if link == "pcie" else spec.link_gbytes_per_s
    row = {
        "provider": "published",
        "instance_type": f"{gpus}x{gpu}",
        "gpu_model": gpu,
        "gpu_count": float(gpus),
        "gpu_memory_gb": spec.memory_gb,
        "gpu_memory_gbytes_per_s": spec.memory_gbytes_per_s,
        "gpu_memory_bw_basis": "inferred",
        "intra_node_link": link,
        "intra_node_gbytes_per_s": intra,
        "intra_node_basis": "inferred",
        "scale_up_domain_gpus": spec.scale_up_domain_gpus if link != "pcie" else 1,
        "inter_node_fabric": fabric,
        "inter_node_gbits_per_s": node_gbits_per_s,
        "inter_node_basis": "stated",
    }
    node = node_from_row(row)
    assert not isinstance(node, str), node
    return node


def collective(node: Node, nodes: int, op: str, size: float, measure: str = "time_us") -> Callable[[], float]:
    """The planner's time (µs) or busbw (GB/s) of ``op`` on ``size`` bytes over every GPU."""

    def predict() -> float:
        cluster = Cluster(node, nodes)
        cost, _ = collective_cost(op, Group(cluster.gpus, 1), size, cluster)
        assert cost.seconds is not None
        if measure == "busbw":
            return bus_bandwidth_gbytes_per_s(op, cluster.gpus, size, cost.seconds)
        return cost.seconds * 1e6

    return predict


_H100 = board("H100-SXM-80GB", 8)  # NVLink 4 board; stands in for the H20's (same 900 GB/s NVLink)
_B200 = board("B200-SXM-180GB", 8)
_P4DN = board("A100-SXM-40GB", 8, fabric="efa", node_gbits_per_s=400)
_P6 = board("B200-SXM-180GB", 8, fabric="efa", node_gbits_per_s=3200)
_A3_MEGA = board("H100-SXM-80GB", 8, fabric="gpudirect-tcpxo", node_gbits_per_s=1600)
_ROCE = board("H100-SXM-80GB", 8, fabric="roce", node_gbits_per_s=3200)
_PCIE4 = board("RTX-4090-24GB", 8, fabric="ethernet", node_gbits_per_s=100)
_PCIE5 = board("RTX-5090-32GB", 8, fabric="ethernet", node_gbits_per_s=100)
_PCIE5_4 = board("RTX-5090-32GB", 4, fabric="ethernet", node_gbits_per_s=100)

MOONCAKE = "https://github.com/kvcache-ai/Mooncake/pull/3484"
A3_README = (
    "https://github.com/GoogleCloudPlatform/ai-infra-cluster-provisioning/blob/"
    "16a9af07e7b9c63cae4edb3c1d2d879fab4d278c/sample_workloads/nccltest/a3-mega/README.md"
)
P4DN = "https://github.com/NVIDIA/nccl/issues/527"


def _comm(case_id, role, url, what, published, unit, node, nodes, op, size, tolerance=1.3) -> Case:
    measure = "busbw" if unit == "GB/s busbw" else "time_us"
    return Case(case_id, "communication", role, url, what, published, unit, tolerance,
                collective(node, nodes, op, size, measure))  # fmt: skip


COMMUNICATION = [
    _comm("nvlink4-ring-busbw", "calibration", "https://github.com/NVIDIA/nccl-tests/issues/212",
          "8 x H100 ring (all-gather) 8 GiB", 370, "GB/s busbw", _H100, 1, "all-gather", 8 * 2**30),
    _comm("nvlink4-nvls-busbw", "calibration", "https://github.com/NVIDIA/nccl-tests/issues/212",
          "8 x H100 all-reduce (NVLS) 8 GiB", 480, "GB/s busbw", _H100, 1, "all-reduce", 8 * 2**30),
    _comm("nvlink4-4B", "calibration", "https://github.com/deepseek-ai/DeepEP/issues/303",
          "8 x H20 all-reduce 4 B", 12.49, "µs", _H100, 1, "all-reduce", 4),
    _comm("nvlink4-32K", "calibration", MOONCAKE, "8 x H20 all-reduce 32 KiB", 18.66, "µs",
          _H100, 1, "all-reduce", 32768),
    _comm("nvlink4-512K", "calibration", MOONCAKE, "8 x H20 all-reduce 512 KiB", 20.39, "µs",
          _H100, 1, "all-reduce", 524288),
    _comm("nvlink4-128K", "judge", MOONCAKE, "8 x H20 all-reduce 128 KiB", 19.25, "µs",
          _H100, 1, "all-reduce", 131072),
    _comm("nvlink4-4M", "judge", MOONCAKE, "8 x H20 all-reduce 4 MiB", 53.24, "µs",
          _H100, 1, "all-reduce", 4 * 2**20, tolerance=1.65),
    _comm("nvlink4-32M", "judge", MOONCAKE, "8 x H20 all-reduce 32 MiB", 195.40, "µs",
          _H100, 1, "all-reduce", 32 * 2**20, tolerance=1.45),
    _comm("nvlink4-1G", "judge", MOONCAKE, "8 x H20 all-reduce 1 GiB (ring busbw 357.7)", 5252.64, "µs",
          _H100, 1, "all-reduce", 2**30, tolerance=1.45),
    _comm("nvlink5-busbw", "judge", "https://github.com/NVIDIA/nccl/issues/1807",
          "8 x B200 all-reduce peak ('Ours is 830+')", 830, "GB/s busbw", _B200, 1, "all-reduce", 8 * 2**30),
    _comm("ib-2node-4B", "calibration", "https://github.com/NVIDIA/nccl/issues/1244",
          "2 x 8 H20, NDR InfiniBand, all-reduce 4 B", 47.54, "µs",
          board("H100-SXM-80GB", 8), 2, "all-reduce", 4),
    _comm("ib-2node-nvls-tree", "calibration", "https://github.com/NVIDIA/nccl/issues/1221",
          "2 x 8 H100, 8 x 400 Gb/s, all-reduce NVLS tree", 430, "GB/s busbw",
          board("H100-SXM-80GB", 8), 2, "all-reduce", 8 * 2**30),
    _comm("roce-4node-busbw", "calibration", "https://github.com/NVIDIA/nccl/issues/1221",
          "4 x 8 H100, 8 x 400 Gb/s RoCE, all-reduce", 320, "GB/s busbw", _ROCE, 4, "all-reduce", 8 * 2**30),
    _comm("efa-p4dn-2node", "calibration", P4DN, "2 x p4dn.24xlarge all-reduce 1 GiB", 35215, "µs",
          _P4DN, 2, "all-reduce", 2**30),
    _comm("efa-p4dn-4node", "calibration", P4DN, "4 x p4dn.24xlarge all-reduce 1 GiB", 70253, "µs",
          _P4DN, 4, "all-reduce", 2**30),
    _comm("efa-p4dn-3node", "judge", P4DN, "3 x p4dn.24xlarge all-reduce 1 GiB", 64782, "µs",
          _P4DN, 3, "all-reduce", 2**30),
    _comm("efa-p6-8B", "calibration", "https://github.com/dstackai/dstack/pull/3961",
          "2 x p6-b200 all-reduce 8 B", 50.58, "µs", _P6, 2, "all-reduce", 8),
    _comm("tcpxo-8G", "calibration", A3_README, "2-node A3 Mega all-reduce 8 GiB", 179880, "µs",
          _A3_MEGA, 2, "all-reduce", 8 * 2**30),
    _comm("tcpxo-2M", "calibration", A3_README, "2-node A3 Mega all-reduce 2 MiB", 1645.1, "µs",
          _A3_MEGA, 2, "all-reduce", 2 * 2**20),
    _comm("tcpxo-256M", "judge", A3_README, "2-node A3 Mega all-reduce 256 MiB", 5969.3, "µs",
          _A3_MEGA, 2, "all-reduce", 256 * 2**20),
    _comm("tcpxo-32M", "judge", A3_README, "2-node A3 Mega all-reduce 32 MiB", 2190.8, "µs",
          _A3_MEGA, 2, "all-reduce", 32 * 2**20),
    _comm("pcie4-8gpu-8B", "calibration", "https://github.com/NVIDIA/nccl/issues/1530",
          "8 x RTX 4090 (PCIe) all-reduce 8 B", 42.14, "µs", _PCIE4, 1, "all-reduce", 8),
    _comm("pcie5-8gpu-busbw", "calibration", "https://github.com/NVIDIA/nccl/issues/1639",
          "8 x RTX 5090 (PCIe 5) all-reduce 1-8 GiB", 28, "GB/s busbw", _PCIE5, 1, "all-reduce", 8 * 2**30),
    _comm("pcie5-4gpu-busbw", "calibration", "https://github.com/NVIDIA/nccl/issues/1639",
          "4 x RTX 5090 (PCIe 5) all-reduce 1-8 GiB", 35, "GB/s busbw", _PCIE5_4, 1, "all-reduce", 8 * 2**30),
]  # fmt: skip

CASES: list[Case] = [*COMMUNICATION]


def typical_and_worst(ratios: list[float]) -> tuple[float, float]:
    """exp(median |ln r|) and exp(max |ln r|): the typical and the worst error as a factor."""
    logs = [abs(math.log(r)) for r in ratios]
    return math.exp(statistics.median(logs)), math.exp(max(logs))


def table() -> str:
    """The Markdown table of every case and the summary per class (and per role)."""
    lines = [
        "| case | class | role | source | published | planner | ratio | sign |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    by_class: dict[str, list[float]] = {}
    judges: dict[str, list[float]] = {}
    for case in CASES:
        ratio = case.ratio()
        by_class.setdefault(case.klass, []).append(ratio)
        if case.role == "judge":
            judges.setdefault(case.klass, []).append(ratio)
        sign = "+" if ratio > 1 else "−"
        lines.append(
            f"| {case.what} | {case.klass} | {case.role} | [{case.case_id}]({case.source_url}) | "
            f"{case.published:,.4g} {case.unit} | {case.planner():,.4g} | {ratio:.2f} | {sign} |"
        )
    lines += [
        "",
        "| class | cases | typical error | worst | judges: typical | judges: worst | over / under |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    everything = [r for rs in by_class.values() for r in rs]
    for klass, ratios in [*by_class.items(), ("all", everything)]:
        typical, worst = typical_and_worst(ratios)
        judged = judges.get(klass, []) if klass != "all" else [r for rs in judges.values() for r in rs]
        jt, jw = typical_and_worst(judged) if judged else (float("nan"), float("nan"))
        over = sum(r > 1 for r in ratios)
        lines.append(
            f"| {klass} | {len(ratios)} | {typical:.2f}x | {worst:.2f}x | {jt:.2f}x | {jw:.2f}x | "
            f"{over} / {len(ratios) - over} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table())
