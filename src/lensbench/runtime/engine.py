"""The async engine: bounded concurrency, retries with backoff, persistence as replies arrive.

Requests are deduplicated by content key; those with a stored ``ok`` reply are not sent again.
A fixed pool of ``concurrency`` workers pulls from the to-do list, so memory does not grow with
the number of requests in flight beyond the pool.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from rich.console import Console

from lensbench.backends.base import Backend
from lensbench.core.errors import NOT_SENT, ConfigError, LensbenchError, TransportError
from lensbench.media.preflight import preflight_media
from lensbench.runtime.batching import plan_batches
from lensbench.runtime.progress import NullProgress, make_progress
from lensbench.runtime.store import BadRow, RunStore
from lensbench.core.records import log_messages
from lensbench.core.types import Request, StoredResponse, params_dump

__all__ = ["RetryPolicy", "Engine", "EngineStats", "EndpointDown", "request_json"]


def request_json(req: Request) -> str:
    """What the store keeps of a request: id, role, messages as sent (log format: text verbatim,
    images by path + sha256, frames by video + timestamps) and the generation parameters."""
    return json.dumps({"id": req.id, "role": req.role, "messages": log_messages(req.messages),
                       "params": params_dump(req.params, exclude_defaults=True)}, ensure_ascii=False)


class EndpointDown(LensbenchError):
    """Raised when every request so far failed after retries (server unreachable, bad URL or key)."""


class RetryPolicy(BaseModel):
    """Retry schedule for retryable transport failures.

    Attempt ``k`` (0-based) waits ``uniform(0, min(max_delay_s, base_delay_s * 2**k))`` seconds
    ("full jitter"), or the server's Retry-After when that is longer. ``max_retries`` = retries
    after the first attempt (>= 0).
    """

    max_retries: int = Field(default=6, ge=0)
    base_delay_s: float = Field(default=0.5, ge=0)
    max_delay_s: float = Field(default=30.0, ge=0)
    max_retry_after_s: float = Field(default=120.0, ge=0)
    refused_abort_after: int = Field(default=3, ge=1)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt + 1``: the jittered backoff, or the server's
        Retry-After when longer, capped at ``max_retry_after_s``."""
        d = rng.uniform(0, min(self.max_delay_s, self.base_delay_s * (2 ** attempt)))
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_retry_after_s))
        return d


@dataclass
class EngineStats:
    """Counters over an engine's lifetime: unique requests seen, served from the store, sent,
    succeeded, failed after retries, retries made, wall seconds spent sending."""

    unique: int = 0
    cached: int = 0
    sent: int = 0
    ok: int = 0
    errors: int = 0
    retries: int = 0
    wall_s: float = 0.0
    by_label: dict[str, dict[str, int]] = field(default_factory=dict)


class Engine:
    """Runs requests against backends by role (``"model"``, ``"judge"``) into a :class:`RunStore`.

    Args:
        backends: role -> backend.
        store: the run store (a reply is committed before its worker sends the next request).
        concurrency: requests in flight at most (>= 1).
        retry: the retry policy.
        progress: show a rich progress bar (done / cached / errors / ETA); or a display object
            (:class:`~lensbench.runtime.progress.NullProgress` subclass) to report to.
    """

    def __init__(self, backends: dict[str, Backend], store: RunStore, *, concurrency: int = 8,
                 retry: RetryPolicy | None = None, progress: "bool | NullProgress" = True,
                 console: Console | None = None, seed: int = 0, abort_after: int = 32, offline: bool = False,
                 limiters: dict[str, asyncio.Semaphore] | None = None):
        if concurrency < 1:
            raise ConfigError(f"--concurrency must be >= 1, got {concurrency}")
        self.backends = backends
        self.store = store
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.progress = progress is True
        self.console = console or Console(stderr=True, markup=False, highlight=False)
        self.stats = EngineStats()
        self._rng = random.Random(seed)
        self.abort_after = abort_after
        self._consecutive_errors = 0
        self._refused = 0
        self.offline = offline
        self.limiters = limiters or {}
        self.last_error: str | None = None
        self._same: dict = {}  # one object per distinct short value of kept replies (see _shared)
        self._progress = make_progress(progress, self.console)

    def key_of(self, request: Request) -> str:
        """The request's content key under its role's backend fingerprint."""
        backend = self.backends.get(request.role)
        if backend is None:
            raise ConfigError(f"request {request.id!r} needs a {request.role!r} backend; "
                              + ("give one with --judge-model" if request.role == "judge" else "none configured"))
        return request.key_for(backend.fingerprint)

    async def run(self, requests: Sequence[Request], label: str = "requests") -> dict[str, StoredResponse]:
        """Send what is missing and return ``{request.id: StoredResponse}`` for all ``requests``.

        Raises:
            ValueError: duplicate request ids.
            ConfigError: a request whose role has no backend.
        """
        keys: dict[str, str] = {}
        first: dict[str, Request] = {}
        for r in requests:
            if r.id in keys:
                raise ValueError(f"duplicate request id {r.id!r}")
            k = self.key_of(r)
            keys[r.id] = k
            first.setdefault(k, r)
        stored = self.store.get_many(first)
        todo = [(k, r) for k, r in first.items() if not (k in stored and stored[k].ok)]
        del stored  # read again at the end (memory: not two copies of every stored reply at once)
        n_cached = len(first) - len(todo)
        lab = self.stats.by_label.setdefault(label, {"unique": 0, "cached": 0, "sent": 0, "errors": 0})
        lab["unique"] += len(first)
        lab["cached"] += n_cached
        self.stats.unique += len(first)
        self.stats.cached += n_cached
        t0 = time.perf_counter()
        if todo and self.offline:  # a stored error keeps its reason; a request never stored was not sent
            final = self.store.get_many(first)
            for k, r in todo:
                if k not in final:
                    final[k] = StoredResponse(key=k, request_id=r.id, status="error", text=None, error=NOT_SENT)
            return {rid: final[k] for rid, k in keys.items()}
        answered: dict[str, StoredResponse] = {}  # ok replies of this call, not read back from the store
        if todo:
            for _k, r in todo[:self._window()]:  # the first images are prepared while pre-flight checks them all
                self.backends[r.role].prefetch(r)
            await preflight_media([r for _k, r in todo])
            if any(getattr(self.backends[r.role], "batch_size", 1) > 1 for _k, r in todo):
                await self._send_batches(todo, label, n_cached, len(first), lab, answered)
            else:
                await self._send_all(todo, label, n_cached, len(first), lab, answered)
            del todo  # its (key, request) pairs freed before the replies are read back
        elif first and self.progress:
            self.console.print(f"{label}: all {len(first)} replies cached", highlight=False, markup=False)
        self.stats.wall_s += time.perf_counter() - t0
        final = self.store.get_many({k: r for k, r in first.items() if k not in answered})
        final.update(answered)
        return {rid: final[k] for rid, k in keys.items() if k in final}

    async def run_stream(self, batches, label: str = "requests", total: int | None = None) -> dict[str, StoredResponse]:
        """:meth:`run` for request batches that arrive over time (an async iterator of request lists):
        each batch is sent as soon as it arrives, by one pool of ``concurrency`` workers; returns
        ``{request.id: StoredResponse}`` for all. See :func:`lensbench.runtime.stream.run_stream`."""
        from lensbench.runtime.stream import run_stream

        return await run_stream(self, batches, label, total)

    def _settle(self, req: Request, resp: StoredResponse, lab: dict[str, int], check: bool = True,
                answered: dict[str, StoredResponse] | None = None) -> bool:
        """Store one reply and count it; True when it is an error. An ``ok`` reply is also kept in
        ``answered`` (key -> reply; the caller returns it without reading it back). With ``check``,
        raises EndpointDown when every request so far failed (``abort_after`` in a row and none answered).
        A reply the store cannot hold (:class:`~lensbench.runtime.store.BadRow`, e.g. a list as its text)
        is stored as an error naming the field, alone: the replies around it are stored as usual."""
        lab["sent"] += 1
        try:
            self.store.put(resp, role=req.role, request_json=request_json(req))
        except BadRow as exc:
            resp = StoredResponse(key=resp.key, request_id=resp.request_id, status="error", text=None, error=str(exc),
                                  attempts=resp.attempts, latency_s=resp.latency_s if type(resp.latency_s) is float
                                  else None)
            self.store.put(resp, role=req.role, request_json=request_json(req))
        if resp.ok:
            if answered is not None:
                answered[resp.key] = self._shared(resp)
            self.stats.ok += 1
            self._consecutive_errors = 0
            return False
        self._consecutive_errors += 1
        self.last_error = resp.error
        self.stats.errors += 1
        lab["errors"] += 1
        if check:
            self._check_abort()
        return True

    def _shared(self, resp: StoredResponse) -> StoredResponse:
        """``resp`` with its short reply (<= 64 characters), finish reason and usage key strings pointing at
        one object per distinct value, as :meth:`RunStore.get_many` returns rows (a kept reply then costs
        ~0.3 KB less: issue 11 memory at 16k requests)."""
        same = self._same
        if len(same) > 100_000:
            same.clear()
        if resp.text is not None and len(resp.text) <= 64:
            resp.text = same.setdefault(resp.text, resp.text)
        resp.finish_reason = same.setdefault(resp.finish_reason, resp.finish_reason)
        if resp.usage:
            resp.usage = {same.setdefault(k, k): v for k, v in resp.usage.items()}
        return resp

    def _check_abort(self) -> None:
        """Raise EndpointDown once ``abort_after`` requests in a row failed and none ever answered."""
        if self.abort_after and self._consecutive_errors >= self.abort_after and self.stats.ok == 0:
            raise EndpointDown(f"giving up after {self._consecutive_errors} failed requests in a row and "
                               f"none answered (replies stored so far are kept); last error: {self.last_error}")

    def _window(self) -> int:
        """How many requests ahead of need their media are prepared."""
        return max(16, 2 * self.concurrency)

    async def _send_all(self, todo, label, n_cached, total, lab, answered) -> None:
        it = iter(enumerate(todo))
        self._progress.start(label, total, n_cached)
        errors = 0
        window = self._window()  # the first window was asked for in run(), before pre-flight

        async def worker():
            nonlocal errors
            for i, (key, req) in it:
                if i + window < len(todo):
                    ahead = todo[i + window][1]
                    self.backends[ahead.role].prefetch(ahead)
                resp = await self._send_one(key, req)
                errors += self._settle(req, resp, lab, check=False, answered=answered)
                self._progress.advance(errors)
                await self.store.durable()  # stored before this worker buys another reply
                self._check_abort()

        try:
            await asyncio.gather(*(worker() for _ in range(min(self.concurrency, len(todo)))))
        finally:
            self._progress.stop()

    async def _send_batches(self, todo, label, n_cached, total, lab, answered) -> None:
        """Batch path (a role whose backend declares ``batch_size > 1``): the role's requests cut by
        :func:`~lensbench.runtime.batching.plan_batches` (length-grouped), other roles one per unit;
        ``concurrency`` workers each send one unit at a time; a unit's replies are committed as soon
        as it returns."""
        units = []
        for role in dict.fromkeys(r.role for _k, r in todo):
            size = max(1, getattr(self.backends[role], "batch_size", 1))
            units += plan_batches([(k, r) for k, r in todo if r.role == role], size, lambda kr: kr[1])
        it = iter(units)
        errors = 0
        self._progress.start(label, total, n_cached)

        async def worker():
            nonlocal errors
            for unit in it:
                if getattr(self.backends[unit[0][1].role], "batch_size", 1) > 1:
                    resps = await self._send_batch(unit)
                else:
                    resps = [await self._send_one(k, r) for k, r in unit]
                for (_k, req), resp in zip(unit, resps):  # the whole unit is stored before any abort
                    errors += self._settle(req, resp, lab, check=False, answered=answered)
                    self._progress.advance(errors)
                await self.store.durable()
                self._check_abort()

        try:
            await asyncio.gather(*(worker() for _ in range(min(self.concurrency, len(units)))))
        finally:
            self._progress.stop()

    async def _send_batch(self, unit: list[tuple[str, Request]]) -> list[StoredResponse]:
        """One batch through ``generate_batch``; requests that failed retryably are sent again together
        (the retry policy's schedule, one attempt counter for the batch). ``latency_s`` of each reply is
        the wall time of its batch call(s)."""
        backend = self.backends[unit[0][1].role]
        limiter = self.limiters.get(unit[0][1].role)
        out: list[StoredResponse | None] = [None] * len(unit)
        pending, attempt = list(range(len(unit))), 0
        t = time.perf_counter()
        while pending:
            reqs = [unit[i][1] for i in pending]
            self.stats.sent += len(reqs)
            try:
                if limiter is None:
                    results = await backend.generate_batch(reqs)
                else:
                    async with limiter:
                        results = await backend.generate_batch(reqs)
            except TransportError as exc:
                results = [exc] * len(reqs)
            retry, waits = [], []
            for i, res in zip(pending, results):
                key, req = unit[i]
                if isinstance(res, TransportError):
                    if res.retryable and attempt < self.retry.max_retries:
                        retry.append(i)
                        waits.append(res.retry_after)
                        continue
                    out[i] = StoredResponse(key=key, request_id=req.id, status="error", text=None, error=str(res),
                                            attempts=attempt + 1, latency_s=time.perf_counter() - t)
                else:
                    out[i] = StoredResponse(key=key, request_id=req.id, status="ok", text=res.text,
                                            reasoning=res.reasoning, attempts=attempt + 1,
                                            latency_s=time.perf_counter() - t, finish_reason=res.finish_reason,
                                            usage=res.usage)
            if retry:
                self.stats.retries += len(retry)
                after = max((w for w in waits if w is not None), default=None)
                await asyncio.sleep(self.retry.delay(attempt, after, self._rng))
                attempt += 1
            pending = retry
        return out  # type: ignore[return-value]

    async def _send_one(self, key: str, req: Request) -> StoredResponse:
        backend = self.backends[req.role]
        attempt = 0
        while True:
            self.stats.sent += 1
            t = time.perf_counter()
            try:
                limiter = self.limiters.get(req.role)
                if limiter is None:
                    c = await backend.generate(req)
                else:
                    async with limiter:
                        c = await backend.generate(req)
            except TransportError as exc:
                if exc.kind == "refused" and self.stats.ok == 0:
                    self._refused += 1
                    if self._refused >= self.retry.refused_abort_after:
                        raise EndpointDown(f"{exc} — no request has succeeded and the endpoint refuses connections; "
                                           "check --base-url (replies stored so far are kept)") from None
                if exc.retryable and attempt < self.retry.max_retries:
                    self.stats.retries += 1
                    wait = self.retry.delay(attempt, exc.retry_after, self._rng)
                    if exc.retry_after is not None and wait >= 5:
                        self._progress.note(f"waiting {wait:.0f} s (Retry-After from {exc.url or 'server'})")
                    await asyncio.sleep(wait)
                    attempt += 1
                    continue
                return StoredResponse(key=key, request_id=req.id, status="error", text=None, error=str(exc),
                                      attempts=attempt + 1, latency_s=time.perf_counter() - t)
            return StoredResponse(key=key, request_id=req.id, status="ok", text=c.text, reasoning=c.reasoning,
                                  attempts=attempt + 1, latency_s=time.perf_counter() - t,
                                  finish_reason=c.finish_reason, usage=c.usage)
