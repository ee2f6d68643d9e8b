"""Bounded caches for the planner's pure functions. A ranking plans a few hundred nodes, and most of
their per-layout work repeats from node to node (the same candidate layouts and memory on every
GPU of one size, the same kernel times on every board of one GPU, the same collectives on every
board with the same links): it is computed once per distinct input and then looked up. Entries are
frozen values, shared; a cache that grows past ``MAX_ENTRIES`` starts again empty, so a long-lived
process (the app) stays bounded."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from operator import itemgetter
from typing import Any, TypeVar

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


def fields_hash(value: Any) -> int:
    """A frozen dataclass's hash as its generated ``__hash__`` computes it (of its fields' tuple),
    computed once and kept in the instance's dictionary: the planner's caches are keyed on the
    model, workload, options and layouts some ten thousand times a ranking. A class takes it as its
    ``__hash__`` (with ``state_without_hash`` as its ``__getstate__``). The first call on a value
    reads its fields from its dictionary by a getter made once per class (``_FIELDS``): a ranking
    hashes some 4,000 new layouts, and ``dataclasses.fields`` per call was most of that."""
    own = value.__dict__
    found = own.get("_hash")
    if found is None:
        read = _FIELDS.get(type(value)) or _fields_getter(type(value))
        found = own["_hash"] = hash(read(own))
    return found


#: ``fields_hash``'s getter of a class's fields' tuple from an instance's dictionary, by class.
_FIELDS: dict[type, Callable[[dict], tuple]] = {}


def _fields_getter(cls: type) -> Callable[[dict], tuple]:
    """The getter of the fields the generated ``__hash__`` hashes (a field's ``hash``, else its
    ``compare``), in order, as a tuple; made once per class."""
    names = [f.name for f in fields(cls) if (f.compare if f.hash is None else f.hash)]
    if len(names) > 1:
        read: Callable[[dict], tuple] = itemgetter(*names)
    else:  # itemgetter of one name gives the value, of none raises
        read = lambda d: tuple(d[n] for n in names)  # noqa: E731
    _FIELDS[cls] = read
    return read


def state_without_hash(value: Any) -> dict:
    """The state to pickle, without the hash ``fields_hash`` kept (another process hashes strings
    differently)."""
    return {k: v for k, v in value.__dict__.items() if k != "_hash"}
