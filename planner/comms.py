"""Bytes each collective moves per GPU, on which link, and how long that takes.

For a group of n GPUs and a message of M bytes (what one GPU holds before the collective):

- ring all-reduce: each GPU sends 2(n−1)/n × M (a reduce-scatter then an all-gather, (n−1)/n × M each);
- all-to-all (expert dispatch or combine): (n−1)/n × M leaves each GPU;
- point-to-point (a pipeline stage boundary): M, at the slowest boundary's link.

Time is bytes / bandwidth, with the link's GB/s per GPU one way. A group inside one block of a link
level uses that level. A ring across the fabric with ``local`` members per block is limited by the
slower of the block's own link and ``local`` × the fabric's per-GPU figure: every ring enters and
leaves each block once, so a block's NICs together carry its members' whole share. (This is why an
NCCL all_reduce across nodes can report a bus bandwidth above one NIC's line rate.) An all-to-all
across the fabric sends (local−1)/n × M inside the block and (n−local)/n × M over each GPU's own
fabric share, the two at once. A missing bandwidth makes the time unknown (None), never zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.conversions import gbytes_per_s_to_bytes_per_s
from planner.hardware import Cluster, Figure
from planner.layouts import Group, route


@dataclass(frozen=True)
class Transfer:
    """One collective's traffic in one step: ``count`` messages of ``message_bytes``, sending
    ``bytes_per_gpu`` in all from each GPU, on ``link`` (level names joined with " + "), taking
    ``seconds`` (None when a bandwidth it needs is missing)."""

    collective: str
    group_gpus: int
    count: float
    message_bytes: float
    bytes_per_gpu: float
    link: str
    levels: tuple[str, ...]
    seconds: float | None


def _rate(figure: Figure, times: float = 1.0) -> float | None:
    """bytes/s of a per-GPU GB/s figure (scaled by ``times``), or None when it is missing."""
    if figure.gbytes_per_s is None or not figure.known:
        return None
    return gbytes_per_s_to_bytes_per_s(figure.gbytes_per_s) * times


def _time(n_bytes: float, rate: float | None) -> float | None:
    if n_bytes == 0:
        return 0.0
    return None if rate is None else n_bytes / rate


def ring_fraction(n: int) -> float:
    """All-reduce bytes each GPU sends per message byte: 2(n−1)/n."""
    return 2 * (n - 1) / n


def all_reduce(
    collective: str, group: Group, message_bytes: float, count: float, cluster: Cluster
) -> Transfer:
    """``count`` ring all-reduces of ``message_bytes`` over ``group``."""
    sent = ring_fraction(group.size) * message_bytes * count
    where = route(group, cluster)
    levels: tuple[str, ...]
    if not where.level.is_fabric or where.local == 1:
        rate, levels = _rate(where.level.figure), (where.level.name,)
    else:
        assert where.island is not None
        inside, across = _rate(where.island.figure), _rate(where.level.figure, where.local)
        rate = None if inside is None or across is None else min(inside, across)
        levels = (where.island.name, where.level.name)
    return Transfer(
        collective, group.size, count, message_bytes, sent, " + ".join(levels), levels, _time(sent, rate)
    )


def all_to_all(
    collective: str, group: Group, message_bytes: float, count: float, cluster: Cluster
) -> Transfer:
    """``count`` all-to-alls of ``message_bytes`` per GPU over ``group``."""
    n = group.size
    sent = (n - 1) / n * message_bytes * count
    where = route(group, cluster)
    levels: tuple[str, ...]
    if not where.level.is_fabric:
        seconds, levels = _time(sent, _rate(where.level.figure)), (where.level.name,)
    else:
        inside_bytes = (where.local - 1) / n * message_bytes * count
        across_bytes = (n - where.local) / n * message_bytes * count
        levels = (
            (where.level.name,)
            if where.island is None or where.local == 1
            else (where.island.name, where.level.name)
        )
        inside: float | None = 0.0
        if inside_bytes:
            assert where.island is not None, "route() names the island when a node holds several members"
            inside = _time(inside_bytes, _rate(where.island.figure))
        across = _time(across_bytes, _rate(where.level.figure))
        seconds = None if inside is None or across is None else max(inside, across)
    return Transfer(collective, n, count, message_bytes, sent, " + ".join(levels), levels, seconds)


def send(collective: str, group: Group, message_bytes: float, count: float, cluster: Cluster) -> Transfer:
    """``count`` point-to-point sends of ``message_bytes`` from each stage of ``group`` to the next.
    The pipeline runs at its slowest boundary: when the stages do not all sit in one block, some
    boundary crosses the fabric, over the sending GPU's own share of it."""
    sent = message_bytes * count
    where = route(group, cluster)
    return Transfer(
        collective,
        group.size,
        count,
        message_bytes,
        sent,
        where.level.name,
        (where.level.name,),
        _time(sent, _rate(where.level.figure)),
    )
