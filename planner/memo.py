"""Bounded caches for the planner's pure functions. A ranking plans a few hundred nodes, and most of
their per-layout work repeats from node to node (the same candidate layouts and memory on every
GPU of one size, the same kernel times on every board of one GPU, the same collectives on every
board with the same links): it is computed once per distinct input and then looked up. Entries are
frozen values, shared; a cache that grows past ``MAX_ENTRIES`` starts again empty, so a long-lived
process (the app) stays bounded."""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

#: Entries one cache holds at most (a ranking of the shipped catalog needs a few thousand).
MAX_ENTRIES = 50_000


def store(cache: dict[K, V], key: K, value: V) -> V:
    """Put ``value`` in ``cache`` under ``key`` (emptying a full cache first); returns ``value``."""
    if len(cache) >= MAX_ENTRIES:
        cache.clear()
    cache[key] = value
    return value
