"""Bytes each collective moves per GPU, on which link, and how long that takes.

For a group of n GPUs and a message of M bytes (what one GPU holds before the collective):

- ring all-reduce: each GPU sends 2(n−1)/n × M (a reduce-scatter then an all-gather, (n−1)/n × M each);
- all-gather, reduce-scatter: (n−1)/n × M, M being the whole gathered (or scattered) buffer;
- all-to-all (expert dispatch or combine): (n−1)/n × M leaves each GPU;
- point-to-point (a pipeline stage boundary): M, at the slowest boundary's link.

One call takes α + bytes / (η × B) (``planner.link_costs``: α and η per link kind, each read from a
published nccl-tests run; B the line rate one way per GPU). Several algorithms are priced and the
fastest taken, as NCCL's tuner does: ring and LL on every NVLink-class link, NVLink SHARP on Hopper
and later NVSwitch boards (the switch reduces: M / (η × B)), a tree across two nodes (the message
once per node over its NICs). Topology: a mesh (MI300X's xGMI) gives a group of n of its D GPUs
n − 1 of its D − 1 links; PCIe's share depends on the group (switch uplinks and the root complex
are shared). A figure that was measured as an achieved rate (a pair's copy, a busbw) is turned back
into the line rate it implies before η applies, so measured and unmeasured boards agree.

Across the fabric, with ``local`` members per block: a ring's bytes leave each block through its
NICs, so the rate is the slower of the block's own link and ``local`` × the per-GPU fabric share
(this is why an all_reduce across nodes can report a busbw above one NIC's line rate); an all-to-all
sends (local−1)/n × M inside the block and (n−local)/n × M over each GPU's own share (it cannot
aggregate several NICs, nccl-tests#267), the two at once. A missing bandwidth makes the time
unknown (None), never zero.
"""

from __future__ import annotations

from collections.abc import Callable

from normalize.gpus import BY_ID
from normalize.vocab import Link
from planner.conversions import gbytes_per_s_to_bytes_per_s
from planner.hardware import Cluster, LinkLevel
from planner.layouts import Group, Route, route
from planner.link_costs import (
    MESH_LINKS,
    NVLS_EFFICIENCY,
    NVLS_FAMILIES,
    NVLS_LATENCY_S,
    PCIE_PAIR_LATENCY_S,
    PCIE_SMALL_GROUP,
    PCIE_SMALL_GROUP_EFFICIENCY,
    cost_of,
)
from planner.memo import store
from records.frozen import record

#: The collectives ``collective_cost`` prices, by the names nccl-tests gives them.
OPERATIONS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")


@record
class Cost:
    """One call: ``seconds`` (None when a bandwidth is missing) = ``latency_s`` + ``wire_bytes`` /
    ``rate_bytes_per_s`` under ``algorithm``; ``wire_bytes`` is what each GPU sends."""

    seconds: float | None
    algorithm: str
    latency_s: float
    wire_bytes: float
    rate_bytes_per_s: float | None


@record
class Transfer:
    """One collective's traffic in one step: ``count`` messages of ``message_bytes``, sending
    ``bytes_per_gpu`` in all from each GPU, on ``link`` (level names joined with " + "), taking
    ``seconds`` (None when a bandwidth it needs is missing), of which ``latency_s`` is the calls'
    fixed cost, under ``algorithm``."""

    collective: str
    group_gpus: int
    count: float
    message_bytes: float
    bytes_per_gpu: float
    link: str
    levels: tuple[str, ...]
    seconds: float | None
    algorithm: str = ""
    latency_s: float = 0.0


def ring_fraction(n: int) -> float:
    """All-reduce bytes each GPU sends per message byte: 2(n−1)/n."""
    return 2 * (n - 1) / n


def _domain_gpus(level: LinkLevel, cluster: Cluster) -> int:
    """The level's block size on one node (before it is cut to the cluster)."""
    for own in cluster.node.links:
        if own.name == level.name and own.gpus is not None:
            return own.gpus
    return level.gpus or 1


def _nvls(level: LinkLevel, cluster: Cluster) -> bool:
    spec = BY_ID.get(cluster.node.gpu_model)
    return level.kind == Link.NVSWITCH and spec is not None and spec.family in NVLS_FAMILIES


def _ring_efficiency(level: LinkLevel, n: int) -> float:
    if level.kind in (Link.PCIE, Link.UNKNOWN, "") and n <= PCIE_SMALL_GROUP:
        return PCIE_SMALL_GROUP_EFFICIENCY.value
    return cost_of(level.kind).ring_efficiency.value


def _ring_latency(level: LinkLevel, n: int) -> float:
    if level.kind in (Link.PCIE, Link.UNKNOWN, "") and n <= 2:
        return PCIE_PAIR_LATENCY_S.value
    return cost_of(level.kind).ring_latency_s.value


def line_rate(level: LinkLevel, cluster: Cluster, n: int) -> float | None:
    """bytes/s one way per GPU the group of ``n`` can use on ``level``: the line rate (an achieved
    figure divided by the share the calibration says it reaches), a mesh's n − 1 of D − 1 links."""
    figure = level.figure
    if figure.gbytes_per_s is None or not figure.known:
        return None
    rate = gbytes_per_s_to_bytes_per_s(figure.gbytes_per_s)
    domain = _domain_gpus(level, cluster)
    if figure.achieved == "copy":
        rate /= _ring_efficiency(level, 2)
    elif figure.achieved == "busbw":
        full = NVLS_EFFICIENCY.value * ring_fraction(domain) if _nvls(level, cluster) else 0.0
        rate /= max(full, _ring_efficiency(level, domain))
    if level.kind in MESH_LINKS and domain > 1 and not level.is_fabric:
        rate *= (max(n, 2) - 1) / (domain - 1)
    return rate


def _scaled(rate: float | None, share: float) -> float | None:
    return None if rate is None else rate * share


#: One call's price as a function of its message bytes (the route, rates and latencies found once).
Pricer = Callable[[float], Cost]
#: An algorithm a call may run: its name, latency (s), rate (bytes/s; None when unknown) and the
#: bytes each GPU sends per message byte (None: the message itself).
Option = tuple[str, float, float | None, float | None]
NO_CALL = Cost(0.0, "none", 0.0, 0.0, None)


def _fastest(options: list[Option]) -> Pricer:
    """The fastest of ``options`` for a message (the first of the quickest, or the first
    option when no time is known), building only its ``Cost``."""

    def price(message_bytes: float) -> Cost:
        chosen, fastest = options[0], None
        for option in options:
            name, latency, rate, fraction = option
            if rate is None:
                continue
            seconds = latency + (message_bytes if fraction is None else fraction * message_bytes) / rate
            if fastest is None or seconds < fastest:
                chosen, fastest = option, seconds
        name, latency, rate, fraction = chosen
        wire = message_bytes if fraction is None else fraction * message_bytes
        return Cost(fastest, name, latency, wire, rate)

    return price


def _protocols(
    kind: str, level: LinkLevel, n: int, ring: float | None, fraction: float | None
) -> list[Option]:
    """A ring under each protocol the link has: Simple (``ring``), and on NVLink-class links LL
    and LL128, each with its latency and at most its rate."""
    cost = cost_of(level.kind)
    options: list[Option] = [(kind, _ring_latency(level, n), ring, fraction)]
    for name, latency, cap in (
        ("ll", cost.ll_latency_s, cost.ll_bytes_per_s),
        ("ll128", cost.ll128_latency_s, cost.ll128_bytes_per_s),
    ):
        if latency is not None and cap is not None:
            options.append((name, latency.value, None if ring is None else min(ring, cap.value), fraction))
    return options


def _wire_fraction(op: str, n: int) -> float:
    """Bytes each GPU sends per message byte: a ring all-reduce's 2(n−1)/n, else (n−1)/n."""
    return ring_fraction(n) if op == "all-reduce" else (n - 1) / n


def _inside(op: str, level: LinkLevel, cluster: Cluster, n: int, nvls: bool) -> Pricer:
    """One collective over ``n`` GPUs inside one block of ``level`` (``nvls``: NVLink SHARP may
    be used where the switch has it)."""
    rate = line_rate(level, cluster, n)
    fraction = _wire_fraction(op, n)
    ring = _scaled(rate, _ring_efficiency(level, n))
    if op == "all-to-all":
        return _fastest([("direct", _ring_latency(level, n), ring, fraction)])
    options = _protocols("ring", level, n, ring, fraction)
    if op == "all-reduce" and nvls and _nvls(level, cluster):
        options.append(("nvls", NVLS_LATENCY_S.value, _scaled(rate, NVLS_EFFICIENCY.value), None))
    return _fastest(options)


def _across(op: str, where: Route, cluster: Cluster, n: int) -> Pricer:
    """One collective over ``n`` GPUs spread over several blocks, ``where.local`` in each."""
    fabric, island, local = where.level, where.island, where.local
    cost = cost_of(fabric.kind)
    latency = cost.ring_latency_s.value
    per_gpu = _scaled(line_rate(fabric, cluster, n), cost.ring_efficiency.value)
    inner = None
    if island is not None and local > 1:
        inner = _scaled(line_rate(island, cluster, local), _ring_efficiency(island, local))
    if op == "all-to-all":
        return _all_to_all_across(latency, (local - 1) / n, (n - local) / n, inner, per_gpu)
    node_share = _scaled(per_gpu, local)
    ring_rate = (
        node_share
        if local == 1
        else (None if inner is None or node_share is None else min(inner, node_share))
    )
    options: list[Option] = [("ring", latency, ring_rate, _wire_fraction(op, n))]
    nodes = n // max(local, 1)
    if op == "all-reduce" and nodes == 2 and cost.tree_efficiency is not None:
        tree_rate = _scaled(line_rate(fabric, cluster, n), cost.tree_efficiency.value * local)
        if tree_rate is not None and local > 1:
            tree_rate = (
                None if inner is None else min(tree_rate, _reduce_in_node(island, cluster, local, inner))
            )
        options.append(("tree", latency, tree_rate, None))
    return _fastest(options)


def _all_to_all_across(
    latency: float, inside_share: float, across_share: float, inner: float | None, per_gpu: float | None
) -> Pricer:
    """An all-to-all that sends ``inside_share`` of its message inside the block (at ``inner``) and
    ``across_share`` over the GPU's own share of the fabric (``per_gpu``), the two at once."""

    def price(message_bytes: float) -> Cost:
        inside_bytes, across_bytes = inside_share * message_bytes, across_share * message_bytes
        inside = 0.0 if not inside_bytes else (None if inner is None else inside_bytes / inner)
        across = None if per_gpu is None else across_bytes / per_gpu
        seconds = None if inside is None or across is None else latency + max(inside, across)
        rate = None if seconds is None else (inside_bytes + across_bytes) / (seconds - latency)
        return Cost(seconds, "direct", latency, inside_bytes + across_bytes, rate)

    return price


def _reduce_in_node(island: LinkLevel | None, cluster: Cluster, local: int, ring: float) -> float:
    """The message bytes/s a node reduces (and broadcasts) among its ``local`` members: NVLink SHARP
    where the switch can, else a ring (2(local−1)/local bytes sent per message byte)."""
    by_ring = ring / ring_fraction(local)
    if island is not None and _nvls(island, cluster):
        line = line_rate(island, cluster, local)
        if line is not None:
            return max(by_ring, line * NVLS_EFFICIENCY.value)
    return by_ring


def _pricer(op: str, where: Route, cluster: Cluster, n: int, nvls: bool) -> Pricer:
    if not where.level.is_fabric:
        return _inside(op, where.level, cluster, n, nvls)
    return _across(op, where, cluster, n)


def collective_cost(
    op: str, group: Group, message_bytes: float, cluster: Cluster, *, nvls: bool = True
) -> tuple[Cost, Route]:
    """One ``op`` of ``message_bytes`` over ``group``, and where it runs (``nvls`` False prices a
    run without NVLink SHARP, as NCCL_NVLS_ENABLE=0 or a system without it would be)."""
    if op not in OPERATIONS:
        raise ValueError(f"collective {op!r}; expected one of {OPERATIONS}")
    where = route(group, cluster)
    n = group.size
    if n == 1 or message_bytes == 0:
        return NO_CALL, where
    return _pricer(op, where, cluster, n, nvls)(message_bytes), where


def _levels(where: Route, op: str) -> tuple[str, ...]:
    if not where.level.is_fabric or where.island is None or where.local == 1:
        return (where.level.name,)
    return (where.island.name, where.level.name)


#: ``reach`` by group and ``Cluster.reach_key``.
_REACH: dict[tuple, tuple[bool, ...]] = {}


def reach(group: Group, cluster: Cluster) -> tuple[bool, ...]:
    """What decides whether a call over ``group`` has a time on ``cluster``, whatever the operation
    and message: the levels its route runs on and which of them have a figure (a missing one leaves
    the time unknown, a known one of any size gives it a time). Empty for a group of one."""
    key = (group, cluster.reach_key)
    found = _REACH.get(key)
    if found is None:
        found = ()
        if group.size > 1:
            where = route(group, cluster)
            inner = where.island is not None and where.island.figure.known
            found = (where.level.is_fabric, where.level.figure.known, where.local > 1, inner)
        store(_REACH, key, found)
    return found


#: A call's pricer and the levels it runs on, by operation, group and the cluster's ``links_key``:
#: layouts and nodes share them, and only the message's own arithmetic is done per call.
_PRICERS: dict[tuple, tuple[Pricer | None, tuple[str, ...]]] = {}


def _call(op: str, group: Group, message_bytes: float, cluster: Cluster) -> tuple[Cost, tuple[str, ...]]:
    """``collective_cost`` of one call and the names of the levels it runs on."""
    key = (op, group, cluster.links_key)
    found = _PRICERS.get(key)
    if found is None:
        if op not in OPERATIONS:
            raise ValueError(f"collective {op!r}; expected one of {OPERATIONS}")
        where = route(group, cluster)
        price = None if group.size == 1 else _pricer(op, where, cluster, group.size, True)
        found = store(_PRICERS, key, (price, _levels(where, op)))
    price, levels = found
    return (NO_CALL if price is None or message_bytes == 0 else price(message_bytes)), levels


def _transfer(
    collective: str, op: str, group: Group, message_bytes: float, count: float, cluster: Cluster
) -> Transfer:
    cost, levels = _call(op, group, message_bytes, cluster)
    seconds = None if cost.seconds is None else cost.seconds * count
    return Transfer(
        collective,
        group.size,
        count,
        message_bytes,
        cost.wire_bytes * count,
        " + ".join(levels),
        levels,
        seconds,
        cost.algorithm,
        cost.latency_s * count,
    )


def all_reduce(
    collective: str, group: Group, message_bytes: float, count: float, cluster: Cluster
) -> Transfer:
    """``count`` all-reduces of ``message_bytes`` over ``group``."""
    return _transfer(collective, "all-reduce", group, message_bytes, count, cluster)


def all_gather(
    collective: str, group: Group, message_bytes: float, count: float, cluster: Cluster
) -> Transfer:
    """``count`` all-gathers (or reduce-scatters) of a ``message_bytes`` buffer over ``group``."""
    return _transfer(collective, "all-gather", group, message_bytes, count, cluster)


def all_to_all(
    collective: str, group: Group, message_bytes: float, count: float, cluster: Cluster
) -> Transfer:
    """``count`` all-to-alls of ``message_bytes`` per GPU over ``group``."""
    return _transfer(collective, "all-to-all", group, message_bytes, count, cluster)


def send(collective: str, group: Group, message_bytes: float, count: float, cluster: Cluster) -> Transfer:
    """``count`` point-to-point sends of ``message_bytes`` from each stage of ``group`` to the next.
    The pipeline runs at its slowest boundary: when the stages do not all sit in one block, some
    boundary crosses the fabric, over the sending GPU's own share of it."""
    key = ("send", group, cluster.links_key)
    found = _PRICERS.get(key)
    if found is None:
        found = store(_PRICERS, key, _send_pricer(group, cluster))
    price, (name,) = found
    assert price is not None, "a send always has a pricer"
    one = NO_CALL if message_bytes == 0 else price(message_bytes)
    seconds = None if one.seconds is None else one.seconds * count
    return Transfer(
        collective,
        group.size,
        count,
        message_bytes,
        message_bytes * count,
        name,
        (name,),
        seconds,
        one.algorithm,
        one.latency_s * count,
    )


def _send_pricer(group: Group, cluster: Cluster) -> tuple[Pricer, tuple[str]]:
    """A send's pricer over the slowest boundary of ``group``, and that boundary's level."""
    level = route(group, cluster).level
    cost = cost_of(level.kind)
    if level.is_fabric:
        rate = _scaled(line_rate(level, cluster, 2), cost.ring_efficiency.value)
        return _fastest([("p2p", cost.ring_latency_s.value, rate, None)]), (level.name,)
    rate = _scaled(line_rate(level, cluster, 2), _ring_efficiency(level, 2))
    return _fastest(_protocols("p2p", level, 2, rate, None)), (level.name,)


def bus_bandwidth_gbytes_per_s(op: str, n: int, message_bytes: float, seconds: float) -> float:
    """nccl-tests' busbw: algbw (size / time) × 2(n−1)/n for all-reduce, × (n−1)/n otherwise."""
    factor = ring_fraction(n) if op == "all-reduce" else (n - 1) / n
    return message_bytes / seconds * factor / gbytes_per_s_to_bytes_per_s(1.0)
