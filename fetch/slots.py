"""Fair request slots, and a provider's deadline that counts only its own work.

A refresh fetches every provider at once through one client. With plain semaphores one provider that
asks for hundreds of documents from a host (Spare Cores: 378 on raw.githubusercontent.com) takes all
of that host's slots, and if its server drips, every other provider on the host waits behind it,
their deadlines running. ``FairSlots`` gives each provider at most ``per_provider`` of the slots,
and a freed slot to the waiting provider that holds the fewest. ``WorkClock`` is the time one
provider has been working: it stops while every request it has in flight is waiting for a slot,
so the wait for another provider's slot is never charged to it.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, TypeVar

T = TypeVar("T")


class FairSlots:
    """``capacity`` request slots shared by providers, each holding at most ``per_provider``; a
    freed slot goes to the waiting provider that holds the fewest (ties: the one waiting longest)."""

    def __init__(self, capacity: int, per_provider: int | None = None) -> None:
        self.capacity = capacity
        self.per_provider = min(capacity, per_provider or capacity)
        self.held: Counter[str] = Counter()
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        self._order: deque[str] = deque()  # providers with waiters, longest waiting first

    def _free(self) -> int:
        return self.capacity - sum(self.held.values())

    def _grant_waiters(self) -> None:
        while self._free() > 0:
            eligible = [p for p in self._order if self.held[p] < self.per_provider]
            if not eligible:
                return
            provider = min(eligible, key=lambda p: self.held[p])  # min keeps the earliest of ties
            queue = self._waiting[provider]
            future = queue.popleft()
            if not queue:
                del self._waiting[provider]
                self._order.remove(provider)
            if not future.done():
                self.held[provider] += 1
                future.set_result(None)

    async def acquire(self, provider: str) -> None:
        """Wait for a slot for ``provider``."""
        if provider not in self._waiting and self._free() > 0 and self.held[provider] < self.per_provider:
            self.held[provider] += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if provider not in self._waiting:
            self._waiting[provider] = deque()
            self._order.append(provider)
        self._waiting[provider].append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # granted as it was cancelled: give it back
                self.release(provider)
            else:
                self._forget(provider, future)
            raise

    def _forget(self, provider: str, future: asyncio.Future[None]) -> None:
        queue = self._waiting.get(provider)
        if queue is not None and future in queue:
            queue.remove(future)
            if not queue:
                del self._waiting[provider]
                self._order.remove(provider)

    def release(self, provider: str) -> None:
        """Give back one of ``provider``'s slots."""
        self.held[provider] -= 1
        if self.held[provider] <= 0:
            del self.held[provider]
        self._grant_waiters()


class WorkClock:
    """Seconds one provider has been working: wall time since ``start``, less the time every one of
    its requests in flight was waiting for a slot (``waiting()`` marks such a wait)."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.monotonic = monotonic
        self.started = monotonic()
        self.in_flight = 0
        self.waiting_now = 0
        self.paused_s = 0.0
        self._paused_at: float | None = None

    def _update(self) -> None:
        paused = self.in_flight > 0 and self.waiting_now == self.in_flight
        if paused and self._paused_at is None:
            self._paused_at = self.monotonic()
        elif not paused and self._paused_at is not None:
            self.paused_s += self.monotonic() - self._paused_at
            self._paused_at = None

    def worked_s(self) -> float:
        """Seconds charged so far."""
        now = self.monotonic()
        paused = self.paused_s + (now - self._paused_at if self._paused_at is not None else 0.0)
        return now - self.started - paused

    @contextmanager
    def request(self) -> Iterator[None]:
        """One request in flight (waiting for a slot or running)."""
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            self._update()

    @asynccontextmanager
    async def waiting(self):  # type: ignore[no-untyped-def]
        """One request in flight waiting for a slot: not charged while all of them wait."""
        self.waiting_now += 1
        self._update()
        try:
            yield
        finally:
            self.waiting_now -= 1
            self._update()


async def within_work_deadline(work: Coroutine[Any, Any, T], clock: WorkClock, deadline_s: float) -> T:
    """Run ``work``; cancel it and raise TimeoutError once ``clock`` has charged ``deadline_s``.
    The deadline is checked whenever the charged time could have reached it."""
    task = asyncio.ensure_future(work)
    try:
        while not task.done():
            remaining = deadline_s - clock.worked_s()
            if remaining <= 0:
                task.cancel()
                with suppress(asyncio.CancelledError, Exception):  # what it raises as it stops
                    await task
                raise TimeoutError(f"worked {clock.worked_s():.3g} s of {deadline_s:g} s")
            await asyncio.wait({task}, timeout=remaining)
        return task.result()
    finally:
        if not task.done():  # we were cancelled ourselves
            task.cancel()
