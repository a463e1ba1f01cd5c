"""The bookkeeping of one engine phase (one :meth:`~lensbench.runtime.engine.Engine.run` or
:meth:`~lensbench.runtime.engine.Engine.run_stream` call): what was admitted, the units the
workers take in order, the media asked for ahead of need, and the phase's tasks.

A *unit* is what one backend call sends: a ``(key, request)`` pair, or a list of pairs for a
backend that generates a batch at once (``batch_size > 1``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lensbench.backends.base import Backend
from lensbench.core.types import Request, StoredResponse
from lensbench.runtime.batching import plan_batches

__all__ = ["Phase", "once", "cut_units"]

Pair = tuple[str, Request]


async def once(requests: Sequence[Request]):
    """``requests`` as a stream of one batch."""
    yield requests


def cut_units(todo: list[Pair], batch_sizes: Mapping[str, int]) -> list:
    """``todo`` cut into units: one pair per request, or, for a role whose backend's batch size
    (``batch_sizes[role]``) is > 1, the batches of :func:`~lensbench.runtime.batching.plan_batches`
    (length-grouped); roles in order of first appearance."""
    sizes = {r.role: batch_sizes[r.role] for _k, r in todo}
    if all(s <= 1 for s in sizes.values()):
        return todo
    units: list = []
    for role, size in sizes.items():
        mine = [(k, r) for k, r in todo if r.role == role]
        units += plan_batches(mine, size, lambda kr: kr[1]) if size > 1 else mine
    return units


@dataclass(eq=False)
class Phase:
    """One phase's state. ``lab``: this label's counters in ``EngineStats.by_label``; ``total``: the
    caller's expected number of requests (progress display only); ``window``: units whose media is
    asked for (``backends[role].prefetch(request)``) ahead of the workers."""

    label: str
    lab: dict[str, int]
    total: int | None
    window: int
    backends: Mapping[str, Backend]
    keys: dict[str, str] = field(default_factory=dict)  # request id -> content key
    first: dict[str, Request] = field(default_factory=dict)  # content key -> the first request with it
    answered: dict[str, StoredResponse] = field(default_factory=dict)  # ok replies sent now (not read back)
    todo: int = 0  # admitted requests that had no stored ok reply
    errors: int = 0  # failed in this phase
    shown: bool = False  # the progress display started
    workers: int = 0  # running
    _units: list = field(default_factory=list)  # every unit expected, in sending order
    _queued: int = 0  # of those: released to the workers (pre-flight passed)
    _taken: int = 0  # units handed to workers
    _asked: int = 0  # units whose media was asked for
    _live: set = field(default_factory=set)
    _over: asyncio.Future | None = None

    def expect(self, units: list) -> None:
        """``units`` will be queued once their images pass pre-flight: ask for the media of those within
        the window now."""
        self._units.extend(units)
        self._ask()

    def release(self) -> None:
        """Every unit expected so far may be sent."""
        self._queued = len(self._units)

    def next_unit(self) -> Sequence[Pair] | None:
        """The next queued unit as pairs (None: none queued, or the phase failed); the media window
        moves on by one."""
        if self._taken == self._queued or self._over.done():
            return None
        unit = self._units[self._taken]
        self._units[self._taken] = None  # its media was asked for (the window is ahead): freed once sent
        self._taken += 1
        if self._asked < len(self._units):
            self._ask()
        return (unit,) if isinstance(unit, tuple) else unit

    def waiting(self) -> int:
        """Units queued and not taken yet."""
        return self._queued - self._taken

    def _ask(self) -> None:
        end = min(len(self._units), self._taken + self.window)
        while self._asked < end:
            unit = self._units[self._asked]
            for _k, r in (unit,) if isinstance(unit, tuple) else unit:
                self.backends[r.role].prefetch(r)
            self._asked += 1

    def spawn(self, coro) -> None:
        """Run ``coro`` as one of the phase's tasks (not once a task failed)."""
        if self._over is None:
            self._over = asyncio.get_running_loop().create_future()
        elif self._over.done():
            coro.close()
            return
        task = asyncio.ensure_future(coro)
        self._live.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Future) -> None:
        self._live.discard(task)
        exc = None if task.cancelled() else task.exception()
        if self._over.done():
            return
        if exc is not None:
            self._over.set_exception(exc)
        elif not self._live:
            self._over.set_result(None)

    async def wait(self) -> None:
        """Until every task ended (raises the first task's exception at once); then none is left running."""
        try:
            await self._over
        finally:
            live = list(self._live)
            for t in live:
                t.cancel()
            await asyncio.gather(*live, return_exceptions=True)
            self._units.clear()
