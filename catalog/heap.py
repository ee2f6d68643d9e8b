"""The cyclic garbage collector while a refresh runs.

A refresh allocates a few hundred thousand records that live until they are written, in a process
whose heap already holds pandas, pint, pyarrow and DuckDB's modules. With the interpreter's
thresholds (a young pass every 700 net allocations) a refresh of the real mirror made ~135 young
passes, 12 middle ones and two full ones, each full pass walking that whole heap: 0.15-0.17 s of CPU
in a cold ``catalog refresh``, a tenth of it, to find almost no garbage (reference counting frees
the records). While a refresh runs a young pass comes every ``YOUNG_THRESHOLD`` allocations instead:
one young pass and no full one, about 1 ms in an in-process rebuild (every 10,000 allocations it was
two passes of 6-10 ms together). Only cyclic garbage waits longer; the thresholds are restored when
the refresh ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Net allocations between two young collections while a refresh runs (the interpreter's default: 700).
YOUNG_THRESHOLD = 50_000

_lock = threading.Lock()
_depth = 0  # refreshes running in this process: the first one sets the thresholds, the last restores them
_saved: tuple[int, ...] = ()


@contextmanager
def refresh_heap() -> Iterator[None]:
    """The collector's thresholds set for a refresh for the ``with`` block, as they were after."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            first, *older = _saved
            gc.set_threshold(max(first, YOUNG_THRESHOLD), *older)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
