"""The async engine: one send path for every way requests arrive.

:meth:`Engine.run` takes a whole list of requests, :meth:`Engine.run_stream` takes request
batches that arrive over time (IV-Bench decodes one video's frames while the previous video's
requests are sent, so wall time approaches max(preparation, requests) instead of their sum).
Both are one *phase* of the same path:

1. admission, per arriving batch: request ids unique over the phase, requests deduplicated by
   content key (also across batches), those with a stored ``ok`` reply not sent again;
2. the batch's images pre-flight checked before any of its requests is queued, the media of the
   next requests handed to the backend's preparation a window ahead of need;
3. a pool of at most ``concurrency`` workers takes *units* from one queue: a single request, or
   a length-grouped batch for a backend that declares ``batch_size > 1`` (such a backend gets the
   whole stream first: :func:`~lensbench.runtime.batching.plan_batches` groups over all of it);
4. every unit through the same attempt loop (retries with backoff, Retry-After, refused
   connections), its replies stored and counted, committed before its worker takes the next unit;
   the abort check after the unit is stored and shown.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from rich.console import Console

from lensbench.backends.base import Backend
from lensbench.core.errors import NOT_SENT, ConfigError, LensbenchError, TransportError
from lensbench.core.records import log_messages
from lensbench.core.types import Request, StoredResponse, params_dump
from lensbench.media.preflight import preflight_media
from lensbench.runtime.phase import Phase, cut_units, once
from lensbench.runtime.progress import NullProgress, make_progress
from lensbench.runtime.store import BadRow, RunStore

__all__ = ["RetryPolicy", "Engine", "EngineStats", "EndpointDown", "request_json"]


def request_json(req: Request) -> str:
    """What the store keeps of a request: id, role, messages as sent (log format: text verbatim,
    images by path + sha256, frames by video + timestamps) and the generation parameters."""
    return json.dumps({"id": req.id, "role": req.role, "messages": log_messages(req.messages),
                       "params": params_dump(req.params, exclude_defaults=True)}, ensure_ascii=False)


#: HTTP statuses that fail every request alike (issue 32.6), with what to check.
FATAL_STATUS = {
    401: "the server did not accept the API key (--api-key-env names the variable that holds it)",
    403: "the key may not use this model or endpoint",
    404: "not found: check --base-url (an OpenAI-compatible URL usually ends in /v1) and the model name",
}


class EndpointDown(LensbenchError):
    """Raised when every request so far failed after retries (server unreachable, bad URL or key)."""


class RetryPolicy(BaseModel):
    """Retry schedule for retryable transport failures.

    Attempt ``k`` (0-based) waits ``uniform(0, min(max_delay_s, base_delay_s * 2**k))`` seconds
    ("full jitter"), or the server's Retry-After when that is longer. ``max_retries`` = retries
    after the first attempt (>= 0). ``refused_abort_after``: refused connection attempts, with no
    request answered yet, after which the run stops (a batch call refused counts once).
    ``fatal_abort_after``: HTTP 401 / 403 / 404 replies with the same status in a row (no answer between
    them) after which the run stops: a wrong key, a model the key may not use, or a wrong URL or model
    name fails every request alike, so nothing more is sent (and paid for) once it has been seen a few times.
    """

    max_retries: int = Field(default=6, ge=0)
    base_delay_s: float = Field(default=0.5, ge=0)
    max_delay_s: float = Field(default=30.0, ge=0)
    max_retry_after_s: float = Field(default=120.0, ge=0)
    refused_abort_after: int = Field(default=3, ge=1)
    fatal_abort_after: int = Field(default=3, ge=1)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt + 1``: the jittered backoff, or the server's
        Retry-After when longer, capped at ``max_retry_after_s``."""
        d = rng.uniform(0, min(self.max_delay_s, self.base_delay_s * (2 ** attempt)))
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_retry_after_s))
        return d


@dataclass
class EngineStats:
    """Counters over an engine's lifetime: unique requests seen, served from the store, sent
    (attempts), succeeded, failed after retries, retries made, wall seconds spent in phases;
    ``by_label``: per phase label, ``unique`` / ``cached`` / ``sent`` (requests, not attempts) / ``errors``."""

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
        concurrency: units (single requests or batches) in flight at most (>= 1).
        retry: the retry policy.
        progress: show a rich progress bar (done / cached / errors / ETA); or a display object
            (:class:`~lensbench.runtime.progress.NullProgress` subclass) to report to.
        console: where the display and notes go; seed: the backoff jitter's seed;
        abort_after: failed requests in a row, with none answered, after which :class:`EndpointDown`
            is raised (0: never); offline: send nothing (a request with no stored reply comes back as
            an error, :data:`~lensbench.core.errors.NOT_SENT`);
        limiters: role -> semaphore bounding that role's calls in flight (shared with other engines).

    Raises:
        ConfigError: ``concurrency`` < 1.
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
        self._answered = False  # some request got an answer (refused connections no longer stop the run)
        self._fatal: tuple[int, int, str] | None = None  # (HTTP status, times in a row, last message): 401/403/404
        self.offline = offline
        self.limiters = limiters or {}
        self.last_error: str | None = None
        self._same: dict = {}  # one object per distinct short value of kept replies (see _shared)
        self._progress = make_progress(progress, self.console)

    def key_of(self, request: Request) -> str:
        """The request's content key under its role's backend fingerprint.

        Raises ConfigError when the request's role has no backend."""
        backend = self.backends.get(request.role)
        if backend is None:
            raise ConfigError(f"request {request.id!r} needs a {request.role!r} backend; "
                              + ("give one with --judge-model" if request.role == "judge" else "none configured"))
        return request.key_for(backend.fingerprint)

    async def run(self, requests: Sequence[Request], label: str = "requests") -> dict[str, StoredResponse]:
        """Send what is missing and return ``{request.id: StoredResponse}`` for all ``requests``.

        ``label`` names the phase (progress display, ``stats.by_label``). Offline, a request with no
        stored reply comes back as an error reply saying it was not sent.

        Raises:
            ValueError: duplicate request ids; ConfigError: a request whose role has no backend (both
            before anything is sent). DataError: an image fails the pre-flight check (nothing sent).
            EndpointDown: ``abort_after`` failures in a row or refused connections with none answered.
        """
        return await self._phase(once(requests), label, None)

    async def run_stream(self, batches: AsyncIterable[Sequence[Request]], label: str = "requests",
                         total: int | None = None) -> dict[str, StoredResponse]:
        """:meth:`run` for request batches that arrive over time (an async iterator of request lists):
        each batch is admitted and sent as soon as it arrives, by the same pool of workers; returns
        ``{request.id: StoredResponse}`` for every request of every batch. ``total``: the expected
        number of requests (progress display only). Raises as :meth:`run` does, per batch (the
        batches before it may have been sent); exceptions of the iterator propagate after the
        workers stop."""
        return await self._phase(batches, label, total)

    # ------------------------------------------------------------------ one phase
    async def _phase(self, batches: AsyncIterable[Sequence[Request]], label: str,
                     total: int | None) -> dict[str, StoredResponse]:
        """One phase (see the module docstring): the feed and the workers as tasks of one :class:`Phase`,
        then every request's reply: answered now, read back from the store, or "not sent"."""
        lab = self.stats.by_label.setdefault(label, {"unique": 0, "cached": 0, "sent": 0, "errors": 0})
        ph = Phase(label, lab, total, window=max(16, 2 * self.concurrency), backends=self.backends)
        t0 = time.perf_counter()
        ph.spawn(self._feed(ph, batches))
        try:
            await ph.wait()
        finally:
            if ph.shown:
                self._progress.stop()
        self.stats.wall_s += time.perf_counter() - t0
        if not ph.todo and ph.first and self.progress:
            self.console.print(f"{label}: all {len(ph.first)} replies cached", highlight=False, markup=False)
        final = self.store.get_many({k: r for k, r in ph.first.items() if k not in ph.answered})
        final.update(ph.answered)
        for k, r in ph.first.items():  # offline: a stored error keeps its reason; a request never stored was not sent
            if k not in final:
                final[k] = StoredResponse(key=k, request_id=r.id, status="error", text=None, error=NOT_SENT)
        return {rid: final[k] for rid, k in ph.keys.items()}

    async def _feed(self, ph: Phase, batches: AsyncIterable[Sequence[Request]]) -> None:
        """Admit each batch as it arrives and queue what is to be sent."""
        if any(getattr(b, "batch_size", 1) > 1 for b in self.backends.values()):
            every: list[Request] = []  # length-grouped batches are planned over the whole stream
            async for batch in batches:
                every.extend(batch)
            batches = once(every)
        async for batch in batches:
            todo = self._admit(ph, batch)
            if todo and not self.offline:
                await self._enqueue(ph, todo)

    def _admit(self, ph: Phase, batch: Sequence[Request]) -> list[tuple[str, Request]]:
        """Key, deduplicate and count one batch; the ``(key, request)`` pairs with no stored ok reply."""
        new: dict[str, Request] = {}
        for r in batch:
            if r.id in ph.keys:
                raise ValueError(f"duplicate request id {r.id!r}")
            k = self.key_of(r)
            ph.keys[r.id] = k
            if k not in ph.first:
                ph.first[k] = new[k] = r
        stored = self.store.get_many(new)
        todo = [(k, r) for k, r in new.items() if not (k in stored and stored[k].ok)]
        n_cached = len(new) - len(todo)
        ph.lab["unique"] += len(new)
        ph.lab["cached"] += n_cached
        self.stats.unique += len(new)
        self.stats.cached += n_cached
        ph.todo += len(todo)
        if ph.shown:
            self._progress.add(0 if ph.total is not None else len(new), n_cached)
        return todo

    async def _enqueue(self, ph: Phase, todo: list[tuple[str, Request]]) -> None:
        """Check ``todo`` with its backends (:meth:`Backend.check_request`), pre-flight its images (the first
        ones' preparation asked for meanwhile), then queue it as units and start workers for them,
        ``concurrency`` at most in all."""
        for _k, r in todo:  # a request the backend can never answer stops the run before anything is sent
            self.backends[r.role].check_request(r)
        units = cut_units(todo, {role: getattr(b, "batch_size", 1) for role, b in self.backends.items()})
        ph.expect(units)
        await preflight_media([r for _k, r in todo])
        if not ph.shown:
            total = ph.total if ph.total is not None else len(ph.first)
            self._progress.start(ph.label, total, len(ph.first) - ph.todo)
            ph.shown = True
        ph.release()
        for _ in range(min(self.concurrency - ph.workers, ph.waiting())):
            ph.workers += 1
            ph.spawn(self._worker(ph))

    async def _worker(self, ph: Phase) -> None:
        """Send queued units until none is left: each unit's replies stored, counted and shown, committed,
        then the abort check (so the display at an abort counts every stored failure)."""
        try:
            while (unit := ph.next_unit()) is not None:
                replies = await self._send(unit)
                for key, req in unit:
                    self._settle(ph, req, replies[key])
                    self._progress.advance(ph.errors)
                await self.store.durable()  # stored before this worker buys another reply
                self._check_abort()
        finally:
            ph.workers -= 1

    # ------------------------------------------------------------------ one unit
    async def _send(self, unit: Sequence[tuple[str, Request]]) -> dict[str, StoredResponse]:
        """One unit through its backend until every request has a reply (key -> reply): one call
        (``generate``, or ``generate_batch`` for a backend with ``batch_size > 1``) under the role's
        limiter, then the failed-retryable requests sent again together after the policy's delay (the
        longest Retry-After among them; announced when >= 5 s). A TransportError raised by a call fails
        every request of it. ``latency_s``: wall time of the call that gave the reply."""
        role = unit[0][1].role
        backend, limiter = self.backends[role], self.limiters.get(role)
        batch = getattr(backend, "batch_size", 1) > 1
        out: dict[str, StoredResponse] = {}
        pending, attempt = unit, 0
        while pending:
            self.stats.sent += len(pending)
            t = time.perf_counter()
            try:  # not batch: pending is one request
                if limiter is None:
                    results = await (backend.generate_batch([r for _k, r in pending]) if batch
                                     else backend.generate(pending[0][1]))
                else:
                    async with limiter:
                        results = await (backend.generate_batch([r for _k, r in pending]) if batch
                                         else backend.generate(pending[0][1]))
                if not batch:
                    results = (results,)
            except TransportError as exc:
                results = (exc,) * len(pending)
            latency = time.perf_counter() - t
            retry, refused, after = [], None, None
            for (key, req), res in zip(pending, results):
                if not isinstance(res, TransportError):
                    self._answered = True
                    self._fatal = None
                    out[key] = StoredResponse(key=key, request_id=req.id, status="ok", text=res.text,
                                              reasoning=res.reasoning, attempts=attempt + 1, latency_s=latency,
                                              finish_reason=res.finish_reason, usage=res.usage)
                    continue
                refused = res if res.kind == "refused" else refused
                self._count_fatal(res)
                if res.retryable and attempt < self.retry.max_retries:
                    retry.append((key, req))
                    if res.retry_after is not None and (after is None or res.retry_after > after.retry_after):
                        after = res
                    continue
                out[key] = StoredResponse(key=key, request_id=req.id, status="error", text=None, error=str(res),
                                          attempts=attempt + 1, latency_s=latency)
            if refused is not None and not self._answered:
                self._refused += 1
                if self._refused >= self.retry.refused_abort_after:
                    raise EndpointDown(f"{refused} — no request has succeeded and the endpoint cannot be reached; "
                                       "check --base-url (replies stored so far are kept)") from None
            if retry:
                self.stats.retries += len(retry)
                wait = self.retry.delay(attempt, after and after.retry_after, self._rng)
                if after is not None and wait >= 5:
                    self._progress.note(f"waiting {wait:.0f} s (Retry-After from {after.url or 'server'})")
                await asyncio.sleep(wait)
                attempt += 1
            pending = retry
        return out

    def _settle(self, ph: Phase, req: Request, resp: StoredResponse) -> None:
        """Store one reply and count it; an ``ok`` reply is also kept in ``ph.answered`` (returned without
        reading it back). A reply the store cannot hold (:class:`~lensbench.runtime.store.BadRow`, e.g. a
        list as its text) is stored as an error naming the field, alone: the replies around it as usual."""
        ph.lab["sent"] += 1
        try:
            self.store.put(resp, role=req.role, request_json=request_json(req))
        except BadRow as exc:
            resp = StoredResponse(key=resp.key, request_id=resp.request_id, status="error", text=None, error=str(exc),
                                  attempts=resp.attempts, latency_s=resp.latency_s if type(resp.latency_s) is float
                                  else None)
            self.store.put(resp, role=req.role, request_json=request_json(req))
        if resp.ok:
            ph.answered[resp.key] = self._shared(resp)
            self.stats.ok += 1
            self._consecutive_errors = 0
            return
        if not getattr(self.backends.get(req.role), "recorded", False):  # a replay file's failure: no endpoint down
            self._consecutive_errors += 1
        self.last_error = resp.error
        self.stats.errors += 1
        ph.lab["errors"] += 1
        ph.errors += 1

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

    def _count_fatal(self, err: TransportError) -> None:
        """Count an HTTP 401 / 403 / 404 in a row with the same status (any other failure leaves the count)."""
        status = getattr(err, "status", None)
        if status not in FATAL_STATUS:
            return
        n = self._fatal[1] + 1 if self._fatal is not None and self._fatal[0] == status else 1
        self._fatal = (status, n, str(err))

    def _check_abort(self) -> None:
        """Raise EndpointDown once ``fatal_abort_after`` identical 401/403/404 replies came in a row, or
        ``abort_after`` requests in a row failed and none ever answered."""
        if self._fatal is not None and self._fatal[1] >= self.retry.fatal_abort_after:
            status, n, last = self._fatal
            raise EndpointDown(f"HTTP {status} {n} times in a row: {FATAL_STATUS[status]}; stopped so that nothing "
                               f"more is sent (replies stored so far are kept). Last: {last[:300]}")
        if self.abort_after and self._consecutive_errors >= self.abort_after and self.stats.ok == 0:
            raise EndpointDown(f"giving up after {self._consecutive_errors} failed requests in a row and "
                               f"none answered (replies stored so far are kept); last error: {self.last_error}")
