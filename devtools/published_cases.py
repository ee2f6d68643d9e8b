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


def collective(
    node: Node, nodes: int, op: str, size: float, measure: str = "time_us", nvls: bool = True
) -> Callable[[], float]:
    """The planner's time (µs) or busbw (GB/s) of ``op`` on ``size`` bytes over every GPU (``nvls``
    False for a run that did not use NVLink SHARP)."""

    def predict() -> float:
        cluster = Cluster(node, nodes)
        cost, _ = collective_cost(op, Group(cluster.gpus, 1), size, cluster, nvls=nvls)
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


def _comm(case_id, role, url, what, published, unit, node, nodes, op, size, tolerance=1.3, nvls=True) -> Case:
    measure = "busbw" if unit == "GB/s busbw" else "time_us"
    return Case(case_id, "communication", role, url, what, published, unit, tolerance,
                collective(node, nodes, op, size, measure, nvls))  # fmt: skip


COMMUNICATION = [
    _comm("nvlink4-ring-busbw", "calibration", "https://github.com/NVIDIA/nccl-tests/issues/212",
          "8 x H100 ring (all-gather) 8 GiB", 370, "GB/s busbw", _H100, 1, "all-gather", 8 * 2**30),
    _comm("nvlink4-nvls-busbw", "calibration", "https://github.com/NVIDIA/nccl-tests/issues/212",
          "8 x H100 all-reduce (NVLS) 8 GiB", 480, "GB/s busbw", _H100, 1, "all-reduce", 8 * 2**30),
    _comm("nvlink4-4B", "calibration", "https://github.com/deepseek-ai/DeepEP/issues/303",
          "8 x H20 all-reduce 4 B", 12.49, "µs", _H100, 1, "all-reduce", 4, nvls=False),
    _comm("nvlink4-32K", "calibration", MOONCAKE, "8 x H20 all-reduce 32 KiB", 18.66, "µs",
          _H100, 1, "all-reduce", 32768, nvls=False),
    _comm("nvlink4-512K", "calibration", MOONCAKE, "8 x H20 all-reduce 512 KiB", 20.39, "µs",
          _H100, 1, "all-reduce", 524288, nvls=False),
    _comm("nvlink4-128K", "judge", MOONCAKE, "8 x H20 all-reduce 128 KiB", 19.25, "µs",
          _H100, 1, "all-reduce", 131072, nvls=False),
    _comm("nvlink4-4M", "calibration", MOONCAKE, "8 x H20 all-reduce 4 MiB", 53.24, "µs",
          _H100, 1, "all-reduce", 4 * 2**20, nvls=False),
    _comm("nvlink4-32M", "calibration", MOONCAKE, "8 x H20 all-reduce 32 MiB", 195.40, "µs",
          _H100, 1, "all-reduce", 32 * 2**20, nvls=False),
    _comm("nvlink4-1G", "judge", MOONCAKE, "8 x H20 all-reduce 1 GiB (ring busbw 357.7)", 5252.64, "µs",
          _H100, 1, "all-reduce", 2**30, nvls=False),
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
        "| case | class | role | source | published | planner | ratio | sign | tolerance |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
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
            f"{case.published:,.4g} {case.unit} | {case.planner():,.4g} | {ratio:.2f} | {sign} | "
            f"{case.tolerance:g}x |"
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


# --- serving and training -------------------------------------------------------------------------

_LLAMA2_70B = {
    "hidden_size": 8192,
    "num_hidden_layers": 80,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 32000,
    "torch_dtype": "float16",
}  # fmt: skip  (meta-llama/Llama-2-70b-hf config.json sizes)
MLPERF_41 = "https://github.com/mlcommons/inference_results_v4.1"
MLPERF_50 = "https://github.com/mlcommons/inference_results_v5.0"
TRTLLM = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/docs/source/"
    "performance/perf-overview.md"
)
NIM = "https://docs.nvidia.com/nim/benchmarking/llm/latest/performance.html"
#: How TRTLLM's runs were made, as its "Reproducing Benchmarked Results" states: each ISL/OSL is one
#: run of ``$num_requests`` requests of exactly that length (``--input-stdev=0 --output-stdev=0``),
#: all "queued in rapid succession" (its table of ``$num_requests``), with ``cuda_graph_config:
#: enable_padding: true`` at these ``batch_sizes`` (its ``llm_options.yml``): ``planner.runs``.
TRTLLM_REQUESTS = {
    (128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
    (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000,
}  # fmt: skip
TRTLLM_GRAPH_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192)
#: MLPerf's llama2-70b run logs give 291 output tokens per sample (tokens/s over samples/s, e.g.
#: 31,302.7 / 107.477 on 8 x H200); the prompt length is assumed (OpenOrca prompts are a few hundred
#: tokens; no published mean was found).
MLPERF_PROMPT, MLPERF_OUTPUT = 300, 291
#: MLPerf's mixtral-8x7b logs give 146 output tokens per sample (52,415.9 / 359.173; the reference
#: README's 144.84 tokens_per_sample). Its prompts mix three datasets a third each: OpenOrca
#: (assumed 300, as for Llama 2), GSM8K 5-shot as a six-turn conversation (662 tokens in the
#: dataset's first record) and MBXP (assumed 300): a mean of 421, an assumption.
MIXTRAL_PROMPT, MIXTRAL_OUTPUT = 421, 146


def _llama2_70b():
    import json

    from planner.models import model_from_hf_config

    return model_from_hf_config(json.dumps(_LLAMA2_70B), "Llama 2 70B")


def serving(model, node: Node, *, prompt: int, output: int, precision: str, batch: int | None = None,
            measure: str = "tokens_per_s", per: float = 1.0, layout: tuple[int, int, int, int] | None = None,
            requests: int | None = None, graphs: tuple[int, ...] = ()) -> Callable[[], float]:  # fmt: skip
    """The planner's serving prediction: cluster output tokens/s (divided by ``per``), or TPOT in ms;
    at the published layout (TP, PP, EP, DP) when the run states one, else the planner's best; a run
    of ``requests`` with CUDA graphs at ``graphs`` when it states them (``planner.runs``)."""

    def predict() -> float:
        from planner.layouts import Layout
        from planner.models import ServeWorkload, preset
        from planner.plan import plan

        work = ServeWorkload(
            batch_sequences=batch, prompt_tokens=prompt, output_tokens=output, precision=precision,
            run_requests=requests, graph_batch_sizes=graphs,
        )  # fmt: skip
        spec = model() if callable(model) else preset(model)
        forced = None if layout is None else Layout(*layout)
        best = plan(spec, work, node, nodes=1 if forced is None else None, layout=forced).best
        assert best is not None and best.tokens_per_s is not None and best.tpot_s is not None
        return best.tpot_s * 1e3 if measure == "tpot_ms" else best.tokens_per_s / per

    return predict


def _case(klass, case_id, role, url, what, published, unit, predict, tolerance=1.6) -> Case:
    return Case(case_id, klass, role, url, what, published, unit, tolerance, predict)


def trtllm_run(model, node: Node, isl: int, osl: int, precision: str,
               layout: tuple[int, int, int, int] | None) -> Callable[[], float]:  # fmt: skip
    """The planner's output tokens/s for one of TRTLLM's runs, as it was made (``TRTLLM_REQUESTS``)."""
    return serving(model, node, prompt=isl, output=osl, precision=precision, layout=layout,
                   requests=TRTLLM_REQUESTS[isl, osl], graphs=TRTLLM_GRAPH_BATCHES)  # fmt: skip


_H100_2 = board("H100-SXM-80GB", 2)
_H100_1 = board("H100-SXM-80GB", 1, fabric="none", node_gbits_per_s=None)
_H200 = board("H200-SXM-141GB", 8)
_H200_1 = board("H200-SXM-141GB", 1, fabric="none", node_gbits_per_s=None)
_B200_1 = board("B200-SXM-180GB", 1, fabric="none", node_gbits_per_s=None)
_B200_4 = board("B200-SXM-180GB", 4)
_MI300X = board("MI300X-192GB", 8)

TP1, TP2, TP4, TP8 = (1, 1, 1, 1), (2, 1, 1, 1), (4, 1, 1, 1), (8, 1, 1, 1)
#: NVIDIA's MLPerf llama2-70b Offline runs: TP1 x PP2 engines, four per 8-GPU node ('tensor_parallelism':
#: 1, 'pipeline_parallelism': 2 in closed/NVIDIA/configs/llama2-70b/Offline/__init__.py, v5.0).
MLPERF_PP2X4 = (1, 2, 1, 4)

SERVING = [
    _case("serving", "mlperf41-h100-llama2-70b", "judge", MLPERF_41,
          "MLPerf v4.1 DGX-H100 llama2-70b-99.9 Offline (FP8)", 24525, "tok/s",
          serving(_llama2_70b, _H100, prompt=MLPERF_PROMPT, output=MLPERF_OUTPUT, precision="fp8",
                  layout=MLPERF_PP2X4)),
    _case("serving", "mlperf50-h100-llama2-70b", "judge", MLPERF_50,
          "MLPerf v5.0 DGX-H100 llama2-70b-99 Offline (FP8)", 31307, "tok/s",
          serving(_llama2_70b, _H100, prompt=MLPERF_PROMPT, output=MLPERF_OUTPUT, precision="fp8",
                  layout=MLPERF_PP2X4)),
    _case("serving", "mlperf50-b200-fp4-llama2-70b", "judge", MLPERF_50,
          "MLPerf v5.0 8 x B200 llama2-70b-99.9 Offline (FP4)", 98858, "tok/s",
          serving(_llama2_70b, _B200, prompt=MLPERF_PROMPT, output=MLPERF_OUTPUT, precision="fp4",
                  layout=MLPERF_PP2X4)),
    _case("serving", "mlperf41-h100-mixtral", "judge", MLPERF_41,
          "MLPerf v4.1 DGX-H100 mixtral-8x7b Offline (FP8)", 52416, "tok/s",
          serving("mixtral-8x7b", _H100, prompt=MIXTRAL_PROMPT, output=MIXTRAL_OUTPUT, precision="fp8")),
    _case("serving", "trtllm-h100-70b-1000", "judge", TRTLLM,
          "TensorRT-LLM Llama 3.3 70B FP8 H100 TP2, 1000/1000", 4205, "tok/s",
          trtllm_run("llama-3.1-70b", _H100_2, 1000, 1000, "fp8", TP2)),
    _case("serving", "trtllm-h100-70b-128-2048", "judge", TRTLLM,
          "TensorRT-LLM Llama 3.3 70B FP8 H100 TP2, 128/2048", 6651, "tok/s",
          trtllm_run("llama-3.1-70b", _H100_2, 128, 2048, "fp8", TP2)),
    _case("serving", "trtllm-h100-70b-5000-500", "judge", TRTLLM,
          "TensorRT-LLM Llama 3.3 70B FP8 H100 TP2, 5000/500", 898, "tok/s",
          trtllm_run("llama-3.1-70b", _H100_2, 5000, 500, "fp8", TP2)),
    _case("serving", "trtllm-b200-70b-fp4", "judge", TRTLLM,
          "TensorRT-LLM Llama 3.3 70B FP4 B200 TP1, 1000/1000", 7007, "tok/s",
          trtllm_run("llama-3.1-70b", _B200_1, 1000, 1000, "fp4", TP1)),
    _case("serving", "trtllm-h100-8b", "judge", TRTLLM,
          "TensorRT-LLM Llama 3.1 8B FP8 H100 TP1, 1000/1000", 15220, "tok/s",
          trtllm_run("llama-3.1-8b", _H100_1, 1000, 1000, "fp8", TP1)),
    _case("serving", "nim-h100-70b-itl", "judge", NIM,
          "NIM Llama-3.3-70B FP8, 2 x H100 TP2, concurrency 1, 5000/500: inter-token latency", 18.58, "ms",
          serving("llama-3.1-70b", _H100_2, prompt=5000, output=500, precision="fp8", batch=1,
                  measure="tpot_ms", layout=TP2)),
]  # fmt: skip

CASES += [*SERVING]


# --- training (issue 19, the training half) -------------------------------------------------------
#
# Each case plans the run's own layout (``--layout``), workload and cluster, and compares tokens/s
# per GPU (or model TFLOP/s per GPU, converted with the source's own FLOP count). A calibration case
# is the run a row of planner/training_efficiency.csv was read from (it must reproduce it within
# 5%); every other case judges the model. Fabrics the sources do not state are 8 x 400 Gb/s per node
# (DGX H100/B200, GB200/GB300 racks, Meta's RoCE cluster) or 8 x 200 Gb/s (DGX A100: Selene).

BRIDGE_2511 = (
    "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/00b7660be0254ac6f95f44164ddd0c3e9cc798ed/"
    "docs/performance-summary.md"
)
BRIDGE_ARCHIVE = (
    "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/0a25f911b2ed6c6905a539504fdb8e5b40e3438b/"
    "docs/performance-summary-archive.md"
)
TORCHTITAN = (
    "https://github.com/pytorch/torchtitan/blob/041336434916bdc0f88c1f89fda176fd3c2092e4/docs/performance.md"
)
LLAMA3 = "https://arxiv.org/abs/2407.21783"
MEGATRON_2021 = "https://arxiv.org/abs/2104.04473"
DEEPSEEK_V3 = "https://arxiv.org/abs/2412.19437"


def _h800() -> Node:
    """DeepSeek's H800 node: an H100's compute and memory, NVLink cut to 400 GB/s two-way (the H800
    SXM datasheet's figure: inferred), 8 x 400 Gb/s InfiniBand."""
    from dataclasses import replace

    node = board("H100-SXM-80GB", 8)
    links = tuple(
        replace(lv, figure=replace(lv.figure, gbytes_per_s=200.0)) if lv.gpus else lv for lv in node.links
    )
    return replace(node, instance_type="8xH800", links=links)


def _gpt(name: str, layers: int, hidden: int, heads: int, vocab: int = 51200, sequence: int = 2048):
    """A Megatron-LM GPT (GeLU MLP of 4h, learned positions): 12 l h^2 + (V + s) h parameters."""
    from planner.models import model_from_mapping

    params = 12 * layers * hidden * hidden + (vocab + sequence) * hidden
    return model_from_mapping(
        {
            "name": name, "source_url": MEGATRON_2021, "source_note": "Megatron-LM 2021 (Table 1, 5.1)",
            "params_total": params, "params_active": params, "layers": layers, "hidden_size": hidden,
            "attention_heads": heads, "kv_heads": heads, "head_dim": hidden // heads,
            "ffn_hidden_size": 4 * hidden, "vocab_size": vocab,
        },
        name,
    )  # fmt: skip


def megatron_flops_per_token(layers: int, hidden: int, sequence: int = 2048, vocab: int = 51200) -> float:
    """Megatron-LM 2021's count (its equation 3, recomputation included) per token:
    96 l h^2 (1 + s / 6h + V / 16 l h)."""
    return 96 * layers * hidden**2 * (1 + sequence / (6 * hidden) + vocab / (16 * layers * hidden))


def published_training(model, node: Node, gpus: int, layout: str, *, sequence: int, batch: int,
                       precision: str, micro: int = 1, virtual: int = 0, recompute: str = "auto",
                       overlap: bool = True, per_token_flops: float = 0.0,
                       ) -> Callable[[], float]:  # fmt: skip
    """The planner's tokens/s per GPU for ``layout`` (as ``--layout`` reads it, with ``virtual``
    interleaved chunks, 0 for the planner's choice) on ``gpus`` GPUs of ``node``; TFLOP/s per GPU
    when ``per_token_flops`` (the source's FLOPs per token) is given."""

    def predict() -> float:
        from dataclasses import replace

        from catalog.cli_plan import parse_layout
        from planner.layouts import interleave
        from planner.models import TrainWorkload, preset
        from planner.plan import plan

        spec = model() if callable(model) else preset(model)
        work = TrainWorkload(
            global_batch_tokens=batch * sequence, sequence_tokens=sequence, precision=precision,
            micro_batch_sequences=micro, recompute=recompute, overlap_all_to_all=overlap,
        )  # fmt: skip
        shape = parse_layout(layout)
        assert shape is not None
        shape = replace(shape, virtual=virtual or interleave(spec, shape.pp))
        best = plan(spec, work, node, nodes=gpus // node.gpus, layout=shape).best
        assert best is not None and best.tokens_per_s is not None, layout
        per_gpu = best.tokens_per_s / gpus
        return per_gpu * per_token_flops / 1e12 if per_token_flops else per_gpu

    return predict


def llama3_tflops_per_token(sequence: int) -> float:
    """Llama 3 405B's model FLOPs per token as the planner counts them (6 per matmul parameter, causal
    attention): the paper does not state its own count."""
    from planner.models import preset
    from planner.training import training_flops_by_kernel

    return 3 * sum(training_flops_by_kernel(preset("llama-3.1-405b"), sequence).values())


_DGX_H100 = board("H100-SXM-80GB", 8)
_DGX_B200 = board("B200-SXM-180GB", 8)
_GB200 = board("GB200-186GB", 4)
_GB300 = board("GB300-288GB", 4)
_META_ROCE = board("H100-SXM-80GB", 8, fabric="roce")
_DGX_A100 = board("A100-SXM-80GB", 8, node_gbits_per_s=1600)
_GPT_1T = lambda: _gpt("GPT 1T (Megatron-LM 2021)", 128, 25600, 160)  # noqa: E731
_GPT_175B = lambda: _gpt("GPT-3 175B (Megatron-LM 2021)", 96, 12288, 96)  # noqa: E731


def _train(case_id, role, url, what, published, unit, predict, tolerance=None) -> Case:
    bound = tolerance or (1.05 if role == "calibration" else 1.6)
    return _case("training", case_id, role, url, what, published, unit, predict, bound)


TRAINING = [
    # Calibration: one run per row of planner/training_efficiency.csv.
    _train("llama3-405b-8192-h100", "calibration", LLAMA3,
           "Llama 3 paper Table 4: 405B on 8,192 H100, TP8 PP16 DP64 (BF16)", 430, "TFLOP/s per GPU",
           published_training("llama-3.1-405b", _META_ROCE, 8192, "TP8xPP16xEP1xDP64", sequence=8192,
                              batch=2048, precision="bf16", per_token_flops=llama3_tflops_per_token(8192))),
    _train("bridge-70b-64-h100-fp8", "calibration", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3 70B on 64 x H100 FP8, TP4 PP8 VP5", 1602, "tok/s per GPU",
           published_training("llama-3.1-70b", _DGX_H100, 64, "TP4xPP8xEP1xDP2", sequence=8192, batch=128,
                              precision="fp8", virtual=5)),
    _train("deepseek-v3-2048-h800", "calibration", DEEPSEEK_V3,
           "DeepSeek-V3 report: 180K H800 GPU-hours per trillion tokens, PP16 EP64 (FP8)",
           1e12 / (180_000 * 3600), "tok/s per GPU",
           published_training("deepseek-v3", _h800(), 2048, "TP1xPP16xEP64xDP2", sequence=4096,
                              batch=15360, precision="fp8")),
    _train("bridge-gpt-oss-120b-64-h100-bf16", "calibration", BRIDGE_2511,
           "Megatron-Bridge 25.11: GPT-OSS 120B on 64 x H100 BF16, PP4 EP8, MBS 4", 5630, "tok/s per GPU",
           published_training("gpt-oss-120b", _DGX_H100, 64, "TP1xPP4xEP8xDP2", sequence=4096, batch=512,
                              precision="bf16", micro=4, virtual=1, overlap=False)),
    _train("bridge-405b-128-b200-fp8", "calibration", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3.1 405B on 128 x B200 FP8, TP4 PP8 CP2 VP8", 661, "tok/s per GPU",
           published_training("llama-3.1-405b", _DGX_B200, 128, "TP4xCP2xPP8xEP1xDP2", sequence=8192,
                              batch=64, precision="fp8", virtual=8)),
    _train("bridge-deepseek-v3-256-gb200-fp8", "calibration", BRIDGE_2511,
           "Megatron-Bridge 25.11: DeepSeek-V3 on 256 x GB200 FP8, PP8 VP4 EP32", 4018, "tok/s per GPU",
           published_training("deepseek-v3", _GB200, 256, "TP1xPP8xEP32xDP1", sequence=4096, batch=4096,
                              precision="fp8", virtual=4)),
    _train("megatron-1t-3072-a100", "calibration", MEGATRON_2021,
           "Megatron-LM 2021 Table 1: 1T GPT on 3,072 A100, TP8 PP64", 163, "TFLOP/s per GPU",
           published_training(_GPT_1T, _DGX_A100, 3072, "TP8xPP64xEP1xDP6", sequence=2048, batch=3072,
                              precision="bf16", recompute="full",
                              per_token_flops=megatron_flops_per_token(128, 25600))),
    # Judges.
    _train("llama3-405b-16384-h100", "judge", LLAMA3,
           "Llama 3 paper Table 4: 405B on 16,384 H100, TP8 PP16 DP128 (BF16)", 400, "TFLOP/s per GPU",
           published_training("llama-3.1-405b", _META_ROCE, 16384, "TP8xPP16xEP1xDP128", sequence=8192,
                              batch=2048, precision="bf16", per_token_flops=llama3_tflops_per_token(8192))),
    _train("llama3-405b-16384-h100-cp16", "judge", LLAMA3,
           "Llama 3 paper Table 4: 405B on 16,384 H100, 131,072 tokens, TP8 CP16 PP16 DP8", 380,
           "TFLOP/s per GPU",
           published_training("llama-3.1-405b", _META_ROCE, 16384, "TP8xCP16xPP16xEP1xDP8", sequence=131072,
                              batch=128, precision="bf16", per_token_flops=llama3_tflops_per_token(131072))),
    _train("megatron-gpt3-175b-1024-a100", "judge", MEGATRON_2021,
           "Megatron-LM 2021 section 5.1: GPT-3 175B on 1,024 A100, batch 1,536 (layout assumed TP8 PP16)",
           140, "TFLOP/s per GPU",
           published_training(_GPT_175B, _DGX_A100, 1024, "TP8xPP16xEP1xDP8", sequence=2048, batch=1536,
                              precision="bf16", recompute="full",
                              per_token_flops=megatron_flops_per_token(96, 12288))),
    _train("bridge-405b-1024-h100-fp8", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3.1 405B on 1,024 x H100 FP8, TP8 PP8 CP2 VP8", 292, "tok/s per GPU",
           published_training("llama-3.1-405b", _DGX_H100, 1024, "TP8xCP2xPP8xEP1xDP8", sequence=8192,
                              batch=512, precision="fp8", virtual=8)),
    _train("bridge-8b-8-h100-fp8-fsdp", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3 8B on 8 x H100 FP8, FSDP", 14451, "tok/s per GPU",
           published_training("llama-3.1-8b", _DGX_H100, 8, "TP1xPP1xEP1xFSDP8", sequence=8192, batch=128,
                              precision="fp8")),
    _train("bridge-8b-8-b200-fp8", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3 8B on 8 x B200 FP8, MBS 2", 30624, "tok/s per GPU",
           published_training("llama-3.1-8b", _DGX_B200, 8, "TP1xPP1xEP1xDP8", sequence=8192, batch=128,
                              precision="fp8", micro=2)),
    _train("bridge-8b-8-gb200-fp8", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3 8B on 8 x GB200 FP8, MBS 2", 31508, "tok/s per GPU",
           published_training("llama-3.1-8b", _GB200, 8, "TP1xPP1xEP1xDP8", sequence=8192, batch=128,
                              precision="fp8", micro=2)),
    _train("bridge-8b-8-gb300-fp8", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3 8B on 8 x GB300 FP8, MBS 2", 37556, "tok/s per GPU",
           published_training("llama-3.1-8b", _GB300, 8, "TP1xPP1xEP1xDP8", sequence=8192, batch=128,
                              precision="fp8", micro=2)),
    _train("bridge-70b-64-gb200-fp8-fsdp", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3 70B on 64 x GB200 FP8, FSDP64, MBS 2", 4312, "tok/s per GPU",
           published_training("llama-3.1-70b", _GB200, 64, "TP1xPP1xEP1xFSDP64", sequence=8192, batch=256,
                              precision="fp8", micro=2)),
    _train("bridge-70b-64-gb300-fp8-fsdp", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3 70B on 64 x GB300 FP8, FSDP64, MBS 2", 4520, "tok/s per GPU",
           published_training("llama-3.1-70b", _GB300, 64, "TP1xPP1xEP1xFSDP64", sequence=8192, batch=256,
                              precision="fp8", micro=2)),
    _train("bridge-405b-256-gb200-fp8", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3.1 405B on 256 x GB200 FP8, TP4 PP16 VP4", 813, "tok/s per GPU",
           published_training("llama-3.1-405b", _GB200, 256, "TP4xPP16xEP1xDP4", sequence=8192, batch=1536,
                              precision="fp8", virtual=4)),
    _train("bridge-405b-256-gb300-fp8", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: Llama 3.1 405B on 256 x GB300 FP8, TP2 PP8 CP2 VP4", 999, "tok/s per GPU",
           published_training("llama-3.1-405b", _GB300, 256, "TP2xCP2xPP8xEP1xDP8", sequence=8192,
                              batch=1536, precision="fp8", virtual=4)),
    _train("bridge-deepseek-v3-256-b200", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: DeepSeek-V3 (with MTP) on 256 x B200 FP8, PP16 EP8", 2139, "tok/s per GPU",
           published_training("deepseek-v3", _DGX_B200, 256, "TP1xPP16xEP8xDP2", sequence=4096, batch=2048,
                              precision="fp8", virtual=1, overlap=False)),
    _train("bridge-2602-deepseek-v3-256-b200", "judge", BRIDGE_ARCHIVE,
           "Megatron-Bridge 26.02: DeepSeek-V3 on 256 x B200 MXFP8, PP16 EP8, GBS 4096", 2689,
           "tok/s per GPU",
           published_training("deepseek-v3", _DGX_B200, 256, "TP1xPP16xEP8xDP2", sequence=4096, batch=4096,
                              precision="fp8", virtual=1, overlap=False)),
    _train("bridge-deepseek-v3-256-gb300-fp8", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: DeepSeek-V3 on 256 x GB300 FP8, PP2 VP4 EP32", 4357, "tok/s per GPU",
           published_training("deepseek-v3", _GB300, 256, "TP1xPP2xEP32xDP4", sequence=4096, batch=4096,
                              precision="fp8", virtual=4)),
    _train("bridge-deepseek-v3-256-gb200-bf16", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: DeepSeek-V3 on 256 x GB200 BF16, PP4 VP4 EP64", 3139, "tok/s per GPU",
           published_training("deepseek-v3", _GB200, 256, "TP1xPP4xEP64xDP1", sequence=4096, batch=4096,
                              precision="bf16", virtual=4)),
    _train("bridge-2509-deepseek-v3-1024-h100", "judge", BRIDGE_ARCHIVE,
           "Megatron-Bridge 25.09: DeepSeek-V3 on 1,024 x H100 (FP8), TP2 PP8 VP4 EP64 across 8 nodes", 1297,
           "tok/s per GPU",
           published_training("deepseek-v3", _DGX_H100, 1024, "TP2xPP8xEP64xDP1", sequence=4096, batch=8192,
                              precision="fp8", virtual=4)),
    _train("bridge-gpt-oss-120b-64-gb200-bf16", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: GPT-OSS 120B on 64 x GB200 BF16, EP64, 8,192 tokens", 15876,
           "tok/s per GPU",
           published_training("gpt-oss-120b", _GB200, 64, "TP1xPP1xEP64xDP1", sequence=8192, batch=1280,
                              precision="bf16")),
    _train("bridge-gpt-oss-120b-64-b200-bf16", "judge", BRIDGE_2511,
           "Megatron-Bridge 25.11: GPT-OSS 120B on 64 x B200 BF16, EP8, MBS 4", 8213, "tok/s per GPU",
           published_training("gpt-oss-120b", _DGX_B200, 64, "TP1xPP1xEP8xDP8", sequence=4096, batch=512,
                              precision="bf16", micro=4)),
    _train("torchtitan-70b-64-a100", "judge", TORCHTITAN,
           "torchtitan: Llama 3 70B on 64 A100, FSDP2, local batch 1, full AC", 331, "tok/s per GPU",
           published_training("llama-3.1-70b", _DGX_A100, 64, "TP1xPP1xEP1xFSDP64", sequence=8192, batch=64,
                              precision="bf16", recompute="full")),
    _train("torchtitan-8b-64-a100", "judge", TORCHTITAN,
           "torchtitan: Llama 3 8B on 64 A100, FSDP2, local batch 1", 2904, "tok/s per GPU",
           published_training("llama-3.1-8b", _DGX_A100, 64, "TP1xPP1xEP1xFSDP64", sequence=8192, batch=64,
                              precision="bf16")),
]  # fmt: skip

# --- serving: more measured runs, held back to judge the serving model (issue 19, serving half) ---
# None of these set a factor. TensorRT-LLM's performance overview (v1.0, the commit cited in TRTLLM)
# states its layout, format and fixed ISL/OSL per column, so each case plans exactly that, as the run
# it was (``trtllm_run``: its request count and CUDA graph batch sizes); MLPerf
# v4.1 Offline runs on 8 x H200 and 8 x MI300X (AMD's vLLM FP8 submission) set the planner's choice
# of layout beside NVIDIA's, on the same dataset assumption as the cases above.

_QWEN3_235B = {
    "hidden_size": 4096,
    "num_hidden_layers": 94,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
}  # fmt: skip  (Qwen/Qwen3-235B-A22B config.json sizes: 235 B total, 22 B active)
_QWEN3_30B = {
    "hidden_size": 2048,
    "num_hidden_layers": 48,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "vocab_size": 151936,
    "tie_word_embeddings": False,
}  # fmt: skip  (Qwen/Qwen3-30B-A3B config.json sizes: 30.5 B total, 3.3 B active)


def _hf(config: dict, name: str) -> Callable[[], object]:
    def build():
        import json

        from planner.models import model_from_hf_config

        return model_from_hf_config(json.dumps(config), name)

    return build


def _trt(case_id: str, what: str, published: float, model, node: Node, isl: int, osl: int, precision: str,
         layout: tuple[int, int, int, int] | None) -> Case:  # fmt: skip
    return _case("serving", case_id, "judge", TRTLLM, f"TensorRT-LLM {what}, {isl}/{osl}", published, "tok/s",
                 trtllm_run(model, node, isl, osl, precision, layout))  # fmt: skip


SERVING_JUDGES = [
    _trt("trtllm-h100-70b-2048-128", "Llama 3.3 70B FP8 H100 TP2", 762, "llama-3.1-70b", _H100_2,
         2048, 128, "fp8", TP2),
    _trt("trtllm-h100-70b-20000-2000", "Llama 3.3 70B FP8 H100 TP2", 437, "llama-3.1-70b", _H100_2,
         20000, 2000, "fp8", TP2),
    _trt("trtllm-h200-70b-1000", "Llama 3.3 70B FP8 H200 TP1", 2909, "llama-3.1-70b", _H200_1,
         1000, 1000, "fp8", TP1),
    _trt("trtllm-h200-70b-128-2048", "Llama 3.3 70B FP8 H200 TP1", 4336, "llama-3.1-70b", _H200_1,
         128, 2048, "fp8", TP1),
    _trt("trtllm-b200-70b-fp4-128-2048", "Llama 3.3 70B FP4 B200 TP1", 9922, "llama-3.1-70b", _B200_1,
         128, 2048, "fp4", TP1),
    _trt("trtllm-b200-70b-fp4-5000-500", "Llama 3.3 70B FP4 B200 TP1", 1459, "llama-3.1-70b", _B200_1,
         5000, 500, "fp4", TP1),
    _trt("trtllm-h100-405b-1000", "Llama 3.1 405B FP8 H100 TP8", 2919, "llama-3.1-405b", _H100,
         1000, 1000, "fp8", TP8),
    _trt("trtllm-h200-405b-1000", "Llama 3.1 405B FP8 H200 TP8", 3330, "llama-3.1-405b", _H200,
         1000, 1000, "fp8", TP8),
    _trt("trtllm-b200-405b-fp4-1000", "Llama 3.1 405B FP4 B200 TP4", 5209, "llama-3.1-405b", _B200_4,
         1000, 1000, "fp4", TP4),
    _trt("trtllm-h100-8b-128-2048", "Llama 3.1 8B FP8 H100 TP1", 22714, "llama-3.1-8b", _H100_1,
         128, 2048, "fp8", TP1),
    _trt("trtllm-h200-8b-1000", "Llama 3.1 8B FP8 H200 TP1", 17744, "llama-3.1-8b", _H200_1,
         1000, 1000, "fp8", TP1),
    _trt("trtllm-h100-qwen3-235b-1000", "Qwen3-235B-A22B FP8 on 8 x H100 (layout: the planner's)", 14898,
         _hf(_QWEN3_235B, "Qwen3-235B-A22B"), _H100, 1000, 1000, "fp8", None),
    _trt("trtllm-h200-qwen3-235b-1000", "Qwen3-235B-A22B FP8 on 8 x H200 (layout: the planner's)", 23789,
         _hf(_QWEN3_235B, "Qwen3-235B-A22B"), _H200, 1000, 1000, "fp8", None),
    _trt("trtllm-b200-qwen3-30b-fp4-1000", "Qwen3-30B-A3B FP4 B200 TP1", 25828,
         _hf(_QWEN3_30B, "Qwen3-30B-A3B"), _B200_1, 1000, 1000, "fp4", TP1),
    _case("serving", "mlperf41-h200-llama2-70b", "judge", MLPERF_41,
          "MLPerf v4.1 8 x H200 llama2-70b-99 Offline (FP8)", 31302.7, "tok/s",
          serving(_llama2_70b, _H200, prompt=MLPERF_PROMPT, output=MLPERF_OUTPUT, precision="fp8",
                  layout=(1, 1, 1, 8))),
    _case("serving", "mlperf41-mi300x-llama2-70b", "judge", MLPERF_41,
          "MLPerf v4.1 8 x MI300X llama2-70b-99 Offline (FP8, vLLM; layout: the planner's)", 23514.8, "tok/s",
          serving(_llama2_70b, _MI300X, prompt=MLPERF_PROMPT, output=MLPERF_OUTPUT, precision="fp8")),
    _case("serving", "mlperf41-h200-mixtral", "judge", MLPERF_41,
          "MLPerf v4.1 8 x H200 mixtral-8x7b Offline (FP8)", 59022.3, "tok/s",
          serving("mixtral-8x7b", _H200, prompt=MIXTRAL_PROMPT, output=MIXTRAL_OUTPUT, precision="fp8")),
]  # fmt: skip


CASES += [*TRAINING, *SERVING_JUDGES]


if __name__ == "__main__":
    print(table())
