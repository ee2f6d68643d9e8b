"""Layouts: every way to split a model over a cluster as TP x PP x EP x DP, and where each group sits.

GPUs are numbered node by node, and a layout's groups are laid over them in a fixed order, innermost
first: tensor parallel ranks are neighbours, then expert parallel, then (serving) pipeline stages and
data-parallel replicas, or (training) data-parallel ranks and pipeline stages, as Megatron-LM orders
them by default (``tp-ep-dp-pp``): the big gradient all-reduce stays as close as the layout allows.

A group of ``size`` GPUs ``stride`` apart stays on a link level when it fits in one of that level's
aligned blocks; otherwise its traffic crosses the fabric, where ``local`` of its members share each
block (and that block's NICs).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.hardware import Cluster, LinkLevel
from planner.models import ModelSpec


@dataclass(frozen=True, slots=True)
class Layout:
    """Tensor, pipeline, expert and data parallel degrees; ``recompute`` is training's activation
    recomputation ("selective" or "full"; "" when serving); ``virtual`` the model chunks each
    training pipeline stage holds (interleaved 1F1B: the bubble shrinks v-fold, the sends grow)."""

    tp: int
    pp: int
    ep: int
    dp: int
    recompute: str = ""
    virtual: int = 1

    @property
    def replica_gpus(self) -> int:
        """GPUs holding one copy of the model (TP x PP x EP)."""
        return self.tp * self.pp * self.ep

    @property
    def gpus(self) -> int:
        return self.replica_gpus * self.dp

    @property
    def label(self) -> str:
        text = f"TP{self.tp} x PP{self.pp} x EP{self.ep} x DP{self.dp}"
        if self.virtual > 1:
            text += f" (interleaved x{self.virtual})"
        return f"{text}, {self.recompute} recompute" if self.recompute else text


@dataclass(frozen=True)
class Group:
    """One kind of communicating group: ``size`` GPUs, ``stride`` apart in GPU numbering."""

    size: int
    stride: int


#: Innermost first: the order ranks are laid over GPUs.
ORDER = {"serve": ("tp", "ep", "pp", "dp"), "train": ("tp", "ep", "dp", "pp")}


def groups(layout: Layout, workload: str) -> dict[str, Group]:
    """Each parallel dimension's group (and ``dp_ep``, the data-parallel ranks of non-expert
    weights in training: EP and DP together) with its stride."""
    stride, found = 1, {}
    for dim in ORDER[workload]:
        size = getattr(layout, dim)
        found[dim] = Group(size, stride)
        stride *= size
    found["dp_ep"] = Group(layout.dp * layout.ep, found["ep"].stride)
    return found


@dataclass(frozen=True)
class Route:
    """Where a group's traffic runs: on ``level`` (inside one block), or across the fabric with
    ``local`` members per block of ``island`` (the widest level below the fabric, None when a
    node holds a single GPU)."""

    level: LinkLevel
    island: LinkLevel | None = None
    local: int = 1


def route(group: Group, cluster: Cluster) -> Route:
    """The link level a group's members talk over (the smallest block holding the whole group)."""
    span = group.size * group.stride
    levels = cluster.levels
    for level in levels[:-1]:
        assert level.gpus is not None
        if span <= level.gpus and level.gpus % span == 0:
            return Route(level)
    island = levels[-2] if len(levels) > 1 else None
    local = 1
    if island is not None and island.gpus is not None and group.stride < island.gpus:
        local = max(1, min(group.size, island.gpus // group.stride))
    return Route(levels[-1], island, local)


def _divisors(n: int) -> list[int]:
    """The divisors of ``n`` in order, in O(√n) steps (a cluster's GPU count may be large)."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def layout_problem(
    model: ModelSpec, layout: Layout, cluster: Cluster, *, tp_across_domain: bool = False
) -> str | None:
    """Why ``layout`` cannot run ``model`` on ``cluster`` (None when its shape can): it must use every
    GPU, TP must divide the attention heads and stay in the NVLink domain, EP divide the experts, PP
    be at most the layers."""
    if layout.gpus != cluster.gpus:
        return f"--layout {layout.label} uses {layout.gpus} GPUs, the cluster has {cluster.gpus}"
    limit = tp_limit(cluster, tp_across_domain)
    if layout.tp > limit:
        return (
            f"--layout TP{layout.tp} is wider than the {limit}-GPU NVLink domain "
            "(--tp-across-domain allows it)"
        )
    if model.attention_heads % layout.tp:
        return f"--layout TP{layout.tp} does not divide the {model.attention_heads} attention heads"
    if layout.ep > 1 and (not model.is_moe or model.experts % layout.ep):
        return f"--layout EP{layout.ep} does not divide the model's {model.experts} routed experts"
    if layout.pp > model.layers:
        return f"--layout PP{layout.pp} is more stages than the {model.layers} layers"
    return None


#: The most model chunks an interleaved pipeline stage holds (Megatron-LM's virtual pipeline stages,
#: arXiv 2104.04473 section 2.2.2: the bubble is (p − 1) / (v x m)); at least one layer per chunk.
MAX_VIRTUAL_STAGES = 4


def interleave(model: ModelSpec, pp: int) -> int:
    """Chunks per stage for a training pipeline of ``pp`` stages (1 without a pipeline)."""
    return 1 if pp == 1 else max(1, min(MAX_VIRTUAL_STAGES, model.layers // pp))


def tp_limit(cluster: Cluster, tp_across_domain: bool) -> int:
    """The largest TP group: the widest block below the fabric (the NVLink domain, which a GB200
    rack stretches over several instances, or the PCIe host), 1 on single-GPU instances, or the
    whole cluster when the user lets TP cross the fabric."""
    if tp_across_domain:
        return cluster.gpus
    levels = cluster.levels
    return levels[-2].gpus or 1 if len(levels) > 1 else 1


def candidate_layouts(
    model: ModelSpec, workload: str, cluster: Cluster, *, tp_across_domain: bool = False
) -> list[Layout]:
    """Every TP x PP x EP x DP that uses all the cluster's GPUs and that the model's shape allows:
    TP divides the attention heads and stays within ``tp_limit``; PP is at most the layers; EP
    divides the routed experts (1 for a dense model). Memory is checked later."""
    total, limit = cluster.gpus, tp_limit(cluster, tp_across_domain)
    found = []
    for tp in _divisors(total):
        if tp > limit or model.attention_heads % tp:
            continue
        for ep in _divisors(total // tp):
            if ep > 1 and (not model.is_moe or model.experts % ep):
                continue
            for pp in _divisors(total // (tp * ep)):
                if pp <= model.layers:
                    virtual = interleave(model, pp) if workload == "train" else 1
                    found.append(Layout(tp, pp, ep, total // (tp * ep * pp), virtual=virtual))
    return found
