"""Layouts: every way to split a model over a cluster as TP x PP x EP x DP, and where each group sits.

GPUs are numbered node by node, and a layout's groups are laid over them in a fixed order, innermost
first: tensor parallel ranks are neighbours, then (training) context parallel, then expert parallel,
then (serving) pipeline stages and data-parallel replicas, or (training) data-parallel ranks and
pipeline stages, as Megatron-LM orders them by default (``tp-cp-ep-dp-pp``): the big gradient
all-reduce stays as close as the layout allows. Training layouts may also split each sequence over
``cp`` context-parallel ranks and shard weights, gradients and optimizer state over the
data-parallel ranks (``fsdp``, ZeRO-3); ``planner.training`` prices both.

A group of ``size`` GPUs ``stride`` apart stays on a link level when it fits in one of that level's
aligned blocks; otherwise its traffic crosses the fabric, where ``local`` of its members share each
block (and that block's NICs).
"""

from __future__ import annotations

from functools import lru_cache

from planner.hardware import Cluster, LinkLevel
from planner.memo import fields_hash, state_without_hash
from planner.models import ModelSpec
from records.frozen import record


@record
class Layout:
    """Tensor, pipeline, expert and data parallel degrees; ``recompute`` is training's activation
    recomputation ("selective" or "full"; "" when serving), ``recomputed`` the share of each stage's
    layers the full recomputation covers (Megatron-LM's ``--recompute-num-layers``: the rest keep
    their activations); ``virtual`` the model chunks each training pipeline stage holds (interleaved
    1F1B: the bubble shrinks v-fold, the sends grow); ``cp`` the context-parallel ranks a sequence is
    split over; ``fsdp`` whether the data-parallel ranks shard weights, gradients and optimizer state
    (ZeRO-3) rather than only the optimizer state."""

    tp: int
    pp: int
    ep: int
    dp: int
    recompute: str = ""
    virtual: int = 1
    cp: int = 1
    fsdp: bool = False
    recomputed: float = 1.0

    __hash__ = fields_hash  # computed once: the planner's caches are keyed on the layout
    __getstate__ = state_without_hash

    def with_recompute(self, recompute: str, recomputed: float) -> Layout:
        """The same degrees with ``recompute`` over ``recomputed`` of each stage's layers (built
        directly: ``dataclasses.replace`` costs twice as much, and a training ranking makes a
        thousand of these)."""
        return Layout(
            self.tp, self.pp, self.ep, self.dp, recompute, self.virtual, self.cp, self.fsdp, recomputed
        )

    @property
    def recomputed_share(self) -> float:
        """The share of layers whose forward pass runs twice (0 unless ``recompute`` is "full")."""
        return self.recomputed if self.recompute == "full" else 0.0

    @property
    def replica_gpus(self) -> int:
        """GPUs holding one copy of the model: TP x PP x EP, or every GPU when FSDP shards it over
        the data-parallel ranks."""
        return self.gpus if self.fsdp else self.tp * self.pp * self.ep

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.ep * self.cp * self.dp

    @property
    def label(self) -> str:
        cp = f" x CP{self.cp}" if self.cp > 1 else ""
        dp = f"FSDP{self.dp}" if self.fsdp else f"DP{self.dp}"
        text = f"TP{self.tp}{cp} x PP{self.pp} x EP{self.ep} x {dp}"
        if self.virtual > 1:
            text += f" (interleaved x{self.virtual})"
        if self.recompute == "full" and self.recomputed < 1:
            return f"{text}, full recompute of {self.recomputed:.0%} of layers"
        return f"{text}, {self.recompute} recompute" if self.recompute else text


@record
class Group:
    """One kind of communicating group: ``size`` GPUs, ``stride`` apart in GPU numbering."""

    size: int
    stride: int


#: Innermost first: the order ranks are laid over GPUs.
ORDER = {"serve": ("tp", "ep", "pp", "dp"), "train": ("tp", "cp", "ep", "dp", "pp")}


@lru_cache(maxsize=4096)
def groups(layout: Layout, workload: str) -> dict[str, Group]:
    """Each parallel dimension's group with its stride, and in training the ranks sharing weights:
    ``dp_ep`` (non-expert weights: CP, EP and DP together) and ``dp_cp`` (experts: CP and DP; when
    EP sits between them the group is taken as DP's, widened by CP: an approximation)."""
    stride, found = 1, {}
    for dim in ORDER[workload]:
        size = getattr(layout, dim)
        found[dim] = Group(size, stride)
        stride *= size
    first = found["cp"].stride if "cp" in found else found["ep"].stride
    found["dp_ep"] = Group(layout.cp * layout.dp * layout.ep, first)
    found["dp_cp"] = Group(layout.cp * layout.dp, max(1, found["dp"].stride // layout.cp))
    return found


@record
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
    model: ModelSpec,
    layout: Layout,
    cluster: Cluster,
    *,
    tp_across_domain: bool = False,
    sequence_tokens: int | None = None,
) -> str | None:
    """Why ``layout`` cannot run ``model`` on ``cluster`` (None when its shape can): it must use every
    GPU, TP must divide the attention heads and stay in the NVLink domain, EP divide the experts, PP
    be at most the layers, CP split the sequence into 2 x CP equal chunks (load-balanced causal
    attention), and FSDP have data-parallel ranks to shard over."""
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
    if layout.cp > 1 and (sequence_tokens is None or sequence_tokens % (2 * layout.cp)):
        what = "serving" if sequence_tokens is None else f"the {sequence_tokens:,}-token sequence"
        return f"--layout CP{layout.cp} does not split {what} into {2 * layout.cp} equal chunks"
    if layout.fsdp and (sequence_tokens is None or layout.dp * layout.cp * layout.ep == 1):
        return f"--layout FSDP{layout.dp} has no data-parallel ranks to shard over (training only)"
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


#: The shortest chunk of a sequence a context-parallel rank takes: the published runs split 8,192
#: tokens over CP2 (Megatron-Bridge's Llama 3.1 405B recipes) and 131,072 over CP16 (Llama 3 paper,
#: arXiv 2407.21783, Table 4), 4,096 and 8,192 tokens per rank.
MIN_CP_CHUNK_TOKENS = 4096


def context_splits(sequence_tokens: int, room: int) -> list[int]:
    """The CP degrees a training layout may take: powers of two dividing ``room`` (the GPUs left)
    that leave each rank at least ``MIN_CP_CHUNK_TOKENS`` of a sequence cut into 2 x CP chunks."""
    found, cp = [1], 2
    while room % cp == 0 and sequence_tokens % (2 * cp) == 0:
        if sequence_tokens // cp < MIN_CP_CHUNK_TOKENS:
            break
        found.append(cp)
        cp *= 2
    return found


def candidate_layouts(
    model: ModelSpec,
    workload: str,
    cluster: Cluster,
    *,
    tp_across_domain: bool = False,
    sequence_tokens: int = 0,
) -> list[Layout]:
    """Every TP x PP x EP x DP that uses all the cluster's GPUs and that the model's shape allows:
    TP divides the attention heads and stays within ``tp_limit``; PP is at most the layers; EP
    divides the routed experts (1 for a dense model). Training (``sequence_tokens`` given) also
    splits sequences over CP ranks (``context_splits``) and, without a pipeline (as Megatron-Bridge's
    and torchtitan's FSDP runs have none), shards over the data-parallel ranks (FSDP) or not. Memory
    is checked later."""
    total, limit = cluster.gpus, tp_limit(cluster, tp_across_domain)
    found = []
    training = workload == "train"
    for tp in _divisors(total):
        if tp > limit or model.attention_heads % tp:
            continue
        for ep in _divisors(total // tp):
            if ep > 1 and (not model.is_moe or model.experts % ep):
                continue
            for pp in _divisors(total // (tp * ep)):
                if pp > model.layers:
                    continue
                virtual = interleave(model, pp) if training else 1
                room = total // (tp * ep * pp)
                splits = context_splits(sequence_tokens, room) if training and sequence_tokens else [1]
                for cp in splits:
                    dp = room // cp
                    found.append(Layout(tp, pp, ep, dp, virtual=virtual, cp=cp))
                    if training and pp == 1 and dp * cp * ep > 1:
                        found.append(Layout(tp, pp, ep, dp, virtual=virtual, cp=cp, fsdp=True))
    return found
