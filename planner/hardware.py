"""An instance as the planner sees it: GPUs, memory, compute peaks and a hierarchy of links.

The catalog's conventions are turned into the one the planner computes with, here and only here:

- ``intra_node_gbytes_per_s`` is per GPU and two-way (NVLink's 900 GB/s on an H100 is 450 GB/s each
  way); the bytes a collective moves per GPU travel one way at a time, so the planner uses half.
- ``inter_node_gbits_per_s`` is per node, summed over the fabric's NICs, and NIC line rates are per
  direction: one way per GPU it is that figure in GB/s divided by the node's GPUs
  (3,200 Gb/s = 400 GB/s per node = 50 GB/s per GPU on an 8-GPU node).

A ``LinkLevel`` joins aligned blocks of ``gpus`` GPUs (an NVLink domain, a PCIe host); the fabric
joins the blocks. Every figure keeps its basis (stated, inferred, expected, measured, missing).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

from normalize.factors import BITS_PER_BYTE
from normalize.vocab import FABRIC_LABELS, LINK_LABELS, NVLINK_CLASS_LINKS, Basis, Fabric, Link
from records.frozen import record

#: A two-way (bidirectional) figure counts both directions of a full-duplex link.
DIRECTIONS_IN_TWO_WAY = 2


def one_way_gbytes_per_s(two_way_gbytes_per_s: float) -> float:
    """A per-GPU bidirectional figure (the catalog's intra-node convention) → one direction."""
    return two_way_gbytes_per_s / DIRECTIONS_IN_TWO_WAY


def fabric_gbytes_per_s_per_gpu(node_gbits_per_s: float, gpus_per_node: int) -> float:
    """A node's fabric (Gbit/s summed over its NICs, per direction) → GB/s per GPU, one way."""
    return node_gbits_per_s / BITS_PER_BYTE / gpus_per_node


@record
class Figure:
    """A bandwidth the plan uses: GB/s per GPU one way, its basis and how it was derived.
    ``achieved`` says what a measured figure is (a pair's ``copy``, a collective's ``busbw``; "" for
    a line rate): ``planner.comms`` turns an achieved rate back into the line rate it implies."""

    gbytes_per_s: float | None
    basis: str
    detail: str
    achieved: str = ""

    @property
    def known(self) -> bool:
        return self.gbytes_per_s is not None and math.isfinite(self.gbytes_per_s) and self.gbytes_per_s > 0


MISSING = Figure(None, Basis.MISSING, "not stated")


@record
class LinkLevel:
    """GPUs in one aligned block of ``gpus`` reach each other over ``name`` at ``figure`` (per GPU,
    one way). ``gpus`` None marks the fabric between blocks. ``kind`` is the ``Link`` or ``Fabric``
    value, which ``planner.link_costs`` prices."""

    name: str
    gpus: int | None
    figure: Figure
    kind: str = ""

    @property
    def is_fabric(self) -> bool:
        return self.gpus is None


@record
class Node:
    """One instance: ``gpus`` GPUs of ``gpu_model`` with their memory, HBM bandwidth and dense peaks,
    the link levels inside and out (innermost first, fabric last), and its on-demand price."""

    provider: str
    instance_type: str
    gpu_model: str
    gpus: int
    memory_gb_per_gpu: float
    memory_basis: str
    hbm_gbytes_per_s: float | None
    hbm_basis: str
    dense_bf16_tflops: float | None
    dense_fp8_tflops: float | None
    links: tuple[LinkLevel, ...]
    usd_per_hour: float | None = None
    price_detail: str = ""
    dense_fp4_tflops: float | None = None

    @property
    def fabric(self) -> LinkLevel:
        return self.links[-1]

    def with_link_scaled(self, name: str, factor: float) -> Node:
        """The same node with one link's bandwidth multiplied by ``factor`` (for sensitivity)."""
        links = tuple(
            replace(level, figure=replace(level.figure, gbytes_per_s=level.figure.gbytes_per_s * factor))
            if level.name == name and level.figure.gbytes_per_s is not None and level.figure.known
            else level
            for level in self.links
        )
        return replace(self, links=links)


#: ``Cluster.links_key``'s numbers, by what they stand for.
_LINKS_KEYS: dict[tuple, int] = {}


@record
class Cluster:
    """``nodes`` identical instances. Link blocks larger than the cluster are cut to its size."""

    node: Node
    nodes: int = 1

    @property
    def gpus(self) -> int:
        return self.node.gpus * self.nodes

    @functools.cached_property
    def links_key(self) -> int:
        """A number for what a collective's time on this cluster depends on: the cluster's size, the
        GPU (whether its switch reduces) and each link level's block, kind and figure (not the
        figure's basis or how it was derived). Clusters with the same number price every collective
        alike."""
        node = self.node
        links = tuple(
            (lv.name, lv.gpus, lv.kind, lv.figure.gbytes_per_s, lv.figure.achieved) for lv in node.links
        )
        return _LINKS_KEYS.setdefault((self.nodes, node.gpus, node.gpu_model, links), len(_LINKS_KEYS))

    @functools.cached_property
    def reach_key(self) -> tuple:
        """What decides where a group's calls run and whether they have a time: the cluster's size
        and each link level's block and whether its figure is known (not its value)."""
        node = self.node
        return (self.nodes, node.gpus, tuple((lv.gpus, lv.figure.known) for lv in node.links))

    @property
    def routed_levels(self) -> tuple[LinkLevel, ...]:
        """The levels a layout's calls may run on: every level, the fabric only when there are
        several nodes (on one node the widest level below the fabric spans the node, so every
        group stays inside it)."""
        return self.levels if self.nodes > 1 else self.levels[:-1]

    @functools.cached_property
    def gpu_key(self) -> tuple:
        """What a kernel's time depends on: the GPU, its dense peaks and its HBM bandwidth (not its
        memory, links or count). Clusters with the same key time every kernel alike."""
        node = self.node
        return (
            node.gpu_model,
            node.dense_bf16_tflops,
            node.dense_fp8_tflops,
            node.dense_fp4_tflops,
            node.hbm_gbytes_per_s,
        )

    @functools.cached_property
    def levels(self) -> tuple[LinkLevel, ...]:
        """The node's link levels, blocks cut to the cluster (computed once per cluster)."""
        gpus = self.gpus
        inner = [
            lv if lv.gpus <= gpus else replace(lv, gpus=gpus) for lv in self.node.links if lv.gpus is not None
        ]
        return (*inner, self.node.fabric)


def link_levels(
    *,
    link: str,
    intra: Figure,
    scale_up_gpus: int | None,
    gpus_per_node: int,
    pcie: Figure,
    fabric: str,
    inter: Figure,
) -> tuple[LinkLevel, ...]:
    """The link hierarchy of a node from its catalog row, every figure already one way per GPU.

    A scale-up link (NVSwitch, NVLink, Infinity Fabric) joins its domain, which may be smaller than
    the node (then PCIe joins the domains: ``pcie``) or larger (a GB200 NVL72 rack of 4-GPU
    instances); an NVLink bridge joins pairs over PCIe; a PCIe host is one block, and so is a host
    whose link is unknown (its figure is ``intra``, missing unless measured). The fabric comes last.
    """
    kind = Link(link)
    domain = scale_up_gpus or gpus_per_node
    levels: list[LinkLevel] = []
    if kind in NVLINK_CLASS_LINKS and domain > 1:
        levels.append(LinkLevel(LINK_LABELS[kind], domain, intra, kind))
        if domain < gpus_per_node:
            levels.append(LinkLevel(LINK_LABELS[Link.PCIE], gpus_per_node, pcie, Link.PCIE))
    elif kind == Link.PCIE and gpus_per_node > 1:
        levels.append(LinkLevel(LINK_LABELS[Link.PCIE], gpus_per_node, intra, Link.PCIE))
    elif gpus_per_node > 1:
        levels.append(LinkLevel(LINK_LABELS[Link.UNKNOWN], gpus_per_node, intra, Link.UNKNOWN))
    fabric_kind = Fabric(fabric)
    fabric_figure = inter if fabric_kind != Fabric.NONE else Figure(None, Basis.MISSING, "no fabric")
    levels.append(LinkLevel(FABRIC_LABELS[fabric_kind], None, fabric_figure, fabric_kind))
    return tuple(levels)
