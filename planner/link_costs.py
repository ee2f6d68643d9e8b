"""What a collective achieves on each kind of link: a latency and a share of the line rate, each read
from a published nccl-tests run (the URL and the figure it was read from travel with the value).

A collective of one message takes α + bytes / (η × B): α the fixed cost of one call (launch, the
ring's or tree's steps, the protocol's flags), B the link's line rate one way per GPU, η the share
of it NCCL's protocol reaches (``busbw`` / line rate for a ring). Several algorithms are priced and
the fastest is taken, which is how NCCL's tuner chooses (``src/graph/tuning.cc`` in NVIDIA/nccl
predicts each algorithm's and protocol's time and picks the least):

- ``ring`` everywhere (NCCL's Simple protocol); on NVLink-class links also ``ll`` (NCCL's
  low-latency protocol: a lower α, a much lower rate, which wins below tens of KiB) and ``ll128``
  (a middle α and rate, which wins from tens of KiB to a few MiB: NCCL's LL128 protocol, or the
  Simple one on fewer channels; the run it was read from does not say which);
- ``nvls`` (NVLink SHARP: the switch reduces) on NVSwitch boards of Hopper and later;
- ``tree`` across exactly two nodes (the inter-node bytes of a tree are the message once per node,
  not 2(n−1)/n of it; a gain published for two nodes, and reported absent at four, nccl#1221).

Values measured on one board are used for its whole link kind (NVLink 4 figures for NVLink 5, an
InfiniBand latency for RoCE); ``Calibration.figure`` says which run each came from.
"""

from __future__ import annotations

from normalize.vocab import Fabric, Link
from records.frozen import record


@record
class Calibration:
    """One factor: its value (seconds, a fraction, or bytes/s), the run it was read from (URL) and
    the figure read there, in that source's own numbers."""

    value: float
    source_url: str
    figure: str


@record
class LinkCost:
    """A link kind's ring latency and efficiency, and (NVLink-class) the LL and LL128 protocols'
    latencies and rates; ``tree_efficiency`` for fabrics (a two-node tree's bytes per node over its
    NICs)."""

    ring_latency_s: Calibration
    ring_efficiency: Calibration
    ll_latency_s: Calibration | None = None
    ll_bytes_per_s: Calibration | None = None
    tree_efficiency: Calibration | None = None
    ll128_latency_s: Calibration | None = None
    ll128_bytes_per_s: Calibration | None = None


_NCCL_TESTS_212 = "https://github.com/NVIDIA/nccl-tests/issues/212"
_MOONCAKE_3484 = "https://github.com/kvcache-ai/Mooncake/pull/3484"
_DEEPEP_303 = "https://github.com/deepseek-ai/DeepEP/issues/303"
_NCCL_1221 = "https://github.com/NVIDIA/nccl/issues/1221"
_NCCL_1244 = "https://github.com/NVIDIA/nccl/issues/1244"

#: The 8 x H20 all_reduce_perf curve of kvcache-ai/Mooncake#3484 (NVLink 4, 450 GB/s one way; no
#: NVLink SHARP in that run: its 1 GiB busbw, 357.7, is the ring's): 32 KiB in 18.66 us, 512 KiB in
#: 20.39, 4 MiB in 53.24, 32 MiB in 195.4. Up to a few MiB the time grows at ~220 GB/s of ring bytes
#: (2(n-1)/n of the message), above at the Simple ring's ~370: NCCL changes protocol (and channels)
#: with the size, and each regime has its own latency and rate.
_MOONCAKE_WIRE_32M = 58_720_256

_NVLINK = LinkCost(
    ring_latency_s=Calibration(
        195.4e-6 - _MOONCAKE_WIRE_32M / 370e9,
        _MOONCAKE_3484,
        "8 x H20 (NVLink 4) all_reduce_perf: 33,554,432 B in 195.4 us; less its 58,720,256 ring bytes "
        "at the Simple ring's 370 GB/s (158.7 us) leaves 36.7 us",
    ),
    ring_efficiency=Calibration(
        370 / 450,
        _NCCL_TESTS_212,
        "sjeaugey (NVIDIA): 'NCCL can get an effective NVLink bandwidth of 370GB/s' of the 450 GB/s "
        "line rate (ring busBw, 8 x H100)",
    ),
    ll_latency_s=Calibration(12.49e-6, _DEEPEP_303, "8 x H20 all_reduce_perf: 4 B in 12.49 us"),
    ll_bytes_per_s=Calibration(
        57_344 / (18.66e-6 - 12.49e-6),
        _MOONCAKE_3484,
        "8 x H20: 32,768 B in 18.66 us; its 57,344 ring bytes over the 6.17 us above the 4-byte "
        "latency: 9.3 GB/s for LL's few channels at small sizes",
    ),
    ll128_latency_s=Calibration(
        17.41e-6,
        _MOONCAKE_3484,
        "8 x H20: the line latency + ring bytes / rate nearest (each within 5.6%) to 32,768 B in "
        "18.66 us, 524,288 B in 20.39 us and 4,194,304 B in 53.24 us: 17.41 us",
    ),
    ll128_bytes_per_s=Calibration(
        222.4e9,
        _MOONCAKE_3484,
        "the same line through the 32 KiB, 512 KiB and 4 MiB points: 222.4 GB/s of ring bytes",
    ),
)

_PCIE = LinkCost(
    ring_latency_s=Calibration(
        42.14e-6, "https://github.com/NVIDIA/nccl/issues/1530", "8 x RTX 4090 on PCIe: 8 B in 42.14 us"
    ),
    ring_efficiency=Calibration(
        28 / 64,
        "https://github.com/NVIDIA/nccl/issues/1639",
        "8 x RTX 5090 on PCIe 5 (64 GB/s one way): busbw 28 GB/s at 8 GPUs (35 at 4): the GPUs share "
        "switch uplinks and the CPU's root complex",
    ),
)
#: PCIe groups of up to this many GPUs reach the 4-GPU share of the line rate.
PCIE_SMALL_GROUP = 4
PCIE_SMALL_GROUP_EFFICIENCY = Calibration(
    35 / 64, "https://github.com/NVIDIA/nccl/issues/1639", "8 x RTX 5090 on PCIe 5: busbw 35 GB/s at 4 GPUs"
)
#: Two PCIe GPUs: one hop, the shortest latency published.
PCIE_PAIR_LATENCY_S = Calibration(
    20.36e-6, "https://github.com/NVIDIA/nccl/issues/428", "2 x T4 on PCIe: 8 B in 20.36 us"
)

_INFINIBAND = LinkCost(
    ring_latency_s=Calibration(
        47.5e-6, _NCCL_1244, "2 nodes x 8 H20, ConnectX-7 NDR InfiniBand: 4 B to 64 B in 46.3 to 47.8 us"
    ),
    ring_efficiency=Calibration(
        47 / 50,
        "https://github.com/NVIDIA/nccl-tests/issues/290",
        "AddyLaddy (NVIDIA): 'For NDR @ 400Gbps you should see 46-48GB/s per NIC' (line rate 50 GB/s)",
    ),
    tree_efficiency=Calibration(
        430 / 1.875 / 400,
        _NCCL_1221,
        "2 nodes x 8 H100, 8 x 400 Gb/s (400 GB/s per node): busbw 430 GB/s with NVLS (tree across "
        "the nodes); 430 / (2 x 15/16) = 229 GB/s of message per node",
    ),
)
_ROCE = LinkCost(
    ring_latency_s=Calibration(
        47.5e-6, _NCCL_1244, "InfiniBand's two-node latency (same ConnectX-7 NICs; no RoCE latency found)"
    ),
    ring_efficiency=Calibration(
        320 / 400, _NCCL_1221, "4 nodes x 8 H100, 8 x 400 Gb/s RoCE (400 GB/s per node): busbw 320 GB/s"
    ),
    tree_efficiency=_INFINIBAND.tree_efficiency,
)
_EFA = LinkCost(
    ring_latency_s=Calibration(
        50.58e-6, "https://github.com/dstackai/dstack/pull/3961", "2 x p6-b200 (EFA): 8 B in 50.58 us"
    ),
    ring_efficiency=Calibration(
        29.61 / 50,
        "https://github.com/NVIDIA/nccl/issues/527",
        "4 x p4dn.24xlarge (4 x 100 Gb/s EFA, 50 GB/s per node): 1 GiB busbw 29.61 GB/s",
    ),
    tree_efficiency=Calibration(
        57.17 / 1.875 / 50,
        "https://github.com/NVIDIA/nccl/issues/527",
        "2 x p4dn.24xlarge: 1 GiB busbw 57.17 GB/s, above the 50 GB/s per node a ring allows (a tree)",
    ),
)
_A3_README = (
    "https://github.com/GoogleCloudPlatform/ai-infra-cluster-provisioning/blob/"
    "16a9af07e7b9c63cae4edb3c1d2d879fab4d278c/sample_workloads/nccltest/a3-mega/README.md"
)
_TCPX = LinkCost(
    ring_latency_s=Calibration(
        1645.1e-6, _A3_README, "2-node all_reduce_perf example output: 2,097,152 B in 1,645.1 us"
    ),
    ring_efficiency=Calibration(
        89.54 / 200,
        _A3_README,
        "the same run, 8 GiB busbw 89.54 GB/s, of A3 Mega's 8 x 200 Gb/s = 200 GB/s per node (the "
        "README's heading says TCPX: if the output is A3's 100 GB/s per node, the share is 0.9)",
    ),
)

#: Each link or fabric kind's costs (``LinkLevel.kind``). An NVLink bridge, a direct NVLink and
#: Infinity Fabric use NVLink's figures (no RCCL or bridge run was found): they are inferred.
LINK_COSTS: dict[str, LinkCost] = {
    Link.NVSWITCH: _NVLINK,
    Link.NVLINK: _NVLINK,
    Link.NVLINK_BRIDGE: _NVLINK,
    Link.INFINITY_FABRIC: _NVLINK,
    Link.PCIE: _PCIE,
    Link.UNKNOWN: _PCIE,
    Fabric.INFINIBAND: _INFINIBAND,
    Fabric.ROCE: _ROCE,
    Fabric.EFA: _EFA,
    Fabric.GPUDIRECT_TCPX: _TCPX,
    Fabric.GPUDIRECT_TCPXO: _TCPX,
    Fabric.ETHERNET: _TCPX,
    Fabric.UNKNOWN: _TCPX,
}

#: NVLink SHARP's latency per call: no small-message NVLS run was found, so it is LL128's (inferred).
NVLS_LATENCY_S = Calibration(
    17.41e-6,
    _MOONCAKE_3484,
    "no NVLink SHARP latency was found in a published run: the LL128 protocol's 17.41 us (inferred)",
)
#: NVLink SHARP: all-reduce algbw as a share of the one-way line rate.
NVLS_EFFICIENCY = Calibration(
    480 / 1.75 / 450,
    _NCCL_TESTS_212,
    "sjeaugey (NVIDIA): 'On 8 GPUs, you should reach a peak busBw of ~480GB/s (algbw ~275GB/s)' "
    "with NVLink SHARP, line rate 450 GB/s",
)
#: GPU families whose NVSwitch reduces in the switch (NVLink SHARP, NVSwitch 3 and later).
NVLS_FAMILIES = frozenset({"H100", "H200", "H20", "H800", "GH200", "B200", "B300", "GB200", "GB300"})
#: A mesh (every GPU pair on its own links: MI300X's seven xGMI links) gives a group of n GPUs
#: n − 1 of each GPU's D − 1 links; ROCm/rccl#1270: "When using less than 8 GPUs, one can only
#: achieve a fraction of the potential bandwidth on the system."
MESH_LINKS = frozenset({Link.INFINITY_FABRIC})
MESH_SOURCE = "https://github.com/ROCm/rccl/pull/1270"


def cost_of(kind: str) -> LinkCost:
    """The costs of a link kind (an unknown or empty kind is priced as the slowest: PCIe inside a
    node, TCP-class across)."""
    return LINK_COSTS.get(kind, _PCIE)


def every_calibration() -> list[tuple[str, str, Calibration]]:
    """(kind, factor, calibration) for every factor in the table, for the docs and their test."""
    found = []
    for kind, cost in LINK_COSTS.items():
        for name in (
            "ring_latency_s",
            "ring_efficiency",
            "ll_latency_s",
            "ll_bytes_per_s",
            "tree_efficiency",
            "ll128_latency_s",
            "ll128_bytes_per_s",
        ):
            value = getattr(cost, name)
            if value is not None:
                found.append((str(kind), name, value))
    found.append(("nvswitch", "nvls_efficiency", NVLS_EFFICIENCY))
    found.append(("nvswitch", "nvls_latency_s", NVLS_LATENCY_S))
    found.append(("pcie", "small_group_efficiency", PCIE_SMALL_GROUP_EFFICIENCY))
    found.append(("pcie", "pair_latency_s", PCIE_PAIR_LATENCY_S))
    return found
