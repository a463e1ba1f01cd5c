"""Requests fed to the engine as they become ready: one worker pool for batches that arrive over time.

:meth:`Engine.run` takes the whole list at once. A benchmark whose requests need slow preparation
(IV-Bench: frames decoded from each video) would otherwise prepare everything, then send
everything: wall time = preparation + requests. :func:`run_stream` consumes an async iterator of
request batches (e.g. one per decoded video) while the engine's fixed pool of ``concurrency``
workers sends what is ready, so wall time approaches max(preparation, requests) (issue 11).

Per batch, as in :meth:`Engine.run`: request ids unique over the whole stream, requests
deduplicated by content key (also across batches), those with a stored ``ok`` reply not sent again,
the batch's images pre-flight checked before any of its requests is queued and handed to the
backend's media preparation at once. Backends that batch (``batch_size > 1``) and offline rebuilds
take the whole stream first, then go through :meth:`Engine.run`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, Sequence

from lensbench.core.types import Request, StoredResponse
from lensbench.media.preflight import preflight_media

__all__ = ["run_stream"]

_DONE = object()


async def run_stream(engine, batches: AsyncIterable[Sequence[Request]], label: str = "requests",
                     total: int | None = None) -> dict[str, StoredResponse]:
    """Send the requests of ``batches`` through ``engine`` (an :class:`~lensbench.runtime.engine.Engine`)
    as each batch arrives; returns ``{request.id: StoredResponse}`` for every request of every batch.

    ``total``: the expected number of requests (progress display only).
    Raises ValueError for a request id seen twice, ConfigError for a role without a backend,
    DataError from the pre-flight check of a batch's images, EndpointDown as :meth:`Engine.run` does.
    Exceptions raised by the iterator propagate after the workers stop.
    """
    if engine.offline or any(getattr(b, "batch_size", 1) > 1 for b in engine.backends.values()):
        every: list[Request] = []
        async for batch in batches:
            every.extend(batch)
        return await engine.run(every, label)
    keys: dict[str, str] = {}
    first: dict[str, Request] = {}
    lab = engine.stats.by_label.setdefault(label, {"unique": 0, "cached": 0, "sent": 0, "errors": 0})
    queue: asyncio.Queue = asyncio.Queue()
    n_workers = engine.concurrency
    state = {"errors": 0, "started": False}
    answered: dict[str, StoredResponse] = {}  # ok replies sent here (returned without reading them back)
    t0 = time.perf_counter()

    def start_progress() -> None:
        if not state["started"]:
            engine._progress.start(label, total or 0, 0)
            state["started"] = True

    async def feed() -> None:
        try:
            async for batch in batches:
                new: list[tuple[str, Request]] = []
                for r in batch:
                    if r.id in keys:
                        raise ValueError(f"duplicate request id {r.id!r}")
                    k = engine.key_of(r)
                    keys[r.id] = k
                    if k not in first:
                        first[k] = r
                        new.append((k, r))
                stored = engine.store.get_many(k for k, _r in new)
                todo = [(k, r) for k, r in new if not (k in stored and stored[k].ok)]
                n_cached = len(new) - len(todo)
                lab["unique"] += len(new)
                lab["cached"] += n_cached
                engine.stats.unique += len(new)
                engine.stats.cached += n_cached
                if todo:
                    await preflight_media([r for _k, r in todo])
                start_progress()
                for _ in range(n_cached):
                    engine._progress.advance(state["errors"])
                for k, r in todo:
                    engine.backends[r.role].prefetch(r)
                    queue.put_nowait((k, r))
        finally:
            for _ in range(n_workers):
                queue.put_nowait(_DONE)

    async def worker() -> None:
        while True:
            item = await queue.get()
            if item is _DONE:
                return
            key, req = item
            resp = await engine._send_one(key, req)
            if engine._settle(req, resp, lab, answered=answered):
                state["errors"] += 1
            engine._progress.advance(state["errors"])
            await engine.store.durable()  # stored before this worker buys another reply

    tasks = [asyncio.ensure_future(feed())] + [asyncio.ensure_future(worker()) for _ in range(n_workers)]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for t in done:
            if t.exception() is not None:
                raise t.exception()
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if state["started"]:
            engine._progress.stop()
    engine.stats.wall_s += time.perf_counter() - t0
    final = engine.store.get_many({k: r for k, r in first.items() if k not in answered})
    final.update(answered)
    return {rid: final[k] for rid, k in keys.items() if k in final}
