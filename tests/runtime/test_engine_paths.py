"""The engine's three ways of sending held to one behaviour (issue 26, the safety net for issue 21's one send path).

Every test runs on each way, through the entry points a benchmark uses (:class:`RunContext`):

* ``plain``: ``ctx.generate`` with a one-request backend (``batch_size == 1``);
* ``batched``: ``ctx.generate`` with a backend that declares ``batch_size > 1`` (length-grouped batches);
* ``streamed``: ``ctx.generate_stream`` over request batches that arrive one after another.

and asserts the same things: the :class:`EngineStats` counters (unique / cached / sent / ok / errors /
retries) and ``by_label``, what is stored, the abort decisions (``abort_after``, ``refused_abort_after``,
:class:`EndpointDown`), retry counts with ``max_retries`` (0 included), the Retry-After wait and its
announcement, and the progress line's counts. Since issue 21 the three are options of one send path; these
tests held it to the same behaviour when the batched path still ignored ``refused_abort_after`` and never announced
a Retry-After wait, and the streamed progress line showed "0 cached" and left out the failure that aborted.

The backend is scripted per request text (so the outcome of a request does not depend on which worker or
batch sends it); ``asyncio.sleep`` is recorded, never waited.
"""

from __future__ import annotations

import asyncio
import io
import re

import pytest
from rich.console import Console

from lensbench.backends.base import Backend
from lensbench.core.errors import NOT_SENT
from lensbench.benchmarks.base import RunContext
from lensbench.core.errors import TransportError
from lensbench.core.types import Completion, Message, Request, StoredResponse
from lensbench.runtime.engine import EndpointDown, Engine, RetryPolicy
from lensbench.runtime.store import RunStore

PATHS = ["plain", "batched", "streamed"]
URL = "http://gpu-7:8000/v1"


class Scripted(Backend):
    """Answers ``"A:<text>"``; the request with text ``t`` follows ``script[t]``, one step per attempt (then
    ``default``). Steps: ``"ok"``, ``"retry"`` (HTTP 503, retryable), ``"fatal"`` (HTTP 400, not retryable),
    ``"refused"`` (connection refused, retryable), ``"401"``/``"403"``/``"404"`` (not retryable), a float (HTTP 429 with that Retry-After, retryable)."""

    fingerprint = "scripted"

    def __init__(self, script: dict[str, list] | None = None, *, batch_size: int = 1, default="ok"):
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.batch_size, self.default = batch_size, default
        self.calls: list[str] = []  # request texts, one per attempt

    async def generate(self, request: Request) -> Completion:
        text = request.messages[0].parts[0].text
        self.calls.append(text)
        steps = self.script.get(text)
        step = steps.pop(0) if steps else self.default
        if step == "ok":
            return Completion(text=f"A:{text}", finish_reason="stop")
        if step == "retry":
            raise TransportError("HTTP 503", retryable=True, kind="http", url=URL)
        if step == "fatal":
            raise TransportError("HTTP 400 bad request", retryable=False, kind="http", url=URL)
        if step == "refused":
            raise TransportError(f"cannot connect to {URL}", retryable=True, kind="refused", url=URL)
        if step in ("401", "403", "404"):
            raise TransportError(f"HTTP {step} from {URL}", retryable=False, kind="http", url=URL, status=int(step))
        raise TransportError("HTTP 429", retryable=True, retry_after=float(step), kind="http", url=URL)


def req(i: int, text: str) -> Request:
    return Request(id=f"r{i}", messages=(Message.user(text),))


@pytest.fixture(autouse=True)
def sleeps(monkeypatch) -> list[float]:
    """Every ``asyncio.sleep`` the engine asks for (seconds); control is yielded, no time passes."""
    waits: list[float] = []
    real = asyncio.sleep

    async def record(s, *a, **k):
        waits.append(s)
        await real(0)

    monkeypatch.setattr(asyncio, "sleep", record)
    return waits


class Harness:
    """A store, an engine over one scripted backend and the RunContext a benchmark would get."""

    def __init__(self, tmp_path, path: str, backend: Scripted, *, concurrency: int = 2, progress: bool = False,
                 retry: RetryPolicy | None = None, folder: str = "run", **engine_kw):
        self.path, self.backend = path, backend
        if path == "batched":
            backend.batch_size = max(backend.batch_size, 2)
        self.store = RunStore(tmp_path / folder)
        self.out = io.StringIO()
        console = Console(file=self.out, force_terminal=False, width=300)
        self.engine = Engine({"model": backend}, self.store, concurrency=concurrency, progress=progress,
                             console=console, retry=retry or RetryPolicy(max_retries=2, base_delay_s=0.0),
                             **engine_kw)
        self.ctx = RunContext(run_dir=tmp_path / folder, data_dir=tmp_path, seed=0, generate=self.engine.run,
                              generate_stream=self.engine.run_stream, has_judge=False, model_name="scripted")

    def send(self, requests: list[Request], label: str = "requests", chunk: int = 3) -> dict[str, StoredResponse]:
        """The requests through this harness's path (streamed: in batches of ``chunk``, as they become ready)."""
        if self.path != "streamed":
            return asyncio.run(self.ctx.generate(requests, label=label))

        async def batches():
            for i in range(0, len(requests), chunk):
                yield requests[i:i + chunk]

        return asyncio.run(self.ctx.generate_stream(batches(), label=label, total=len(requests)))

    def rows(self) -> dict[str, dict]:
        """Stored rows by request id."""
        return {r["request_id"]: r for r in self.store.iter_rows()}

    def stats(self) -> tuple[int, ...]:
        s = self.engine.stats
        return s.unique, s.cached, s.sent, s.ok, s.errors, s.retries

    def progress_line(self) -> dict[str, int]:
        """The last progress line's counts: done, total, cached, errors."""
        found = re.findall(r": (\d+)/(\d+) \((\d+) cached\), [\d.]+ req/s, (-?\d+) errors", self.out.getvalue())
        assert found, self.out.getvalue()
        done, total, cached, errors = map(int, found[-1])
        return {"done": done, "total": total, "cached": cached, "errors": errors}

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def harness(tmp_path):
    made: list[Harness] = []

    def make(path, backend, **kw) -> Harness:
        made.append(Harness(tmp_path, path, backend, **kw))
        return made[-1]

    yield make
    for h in made:
        h.close()


# a request list covering every outcome: cached, a stored error sent again, a retry that recovers, a duplicate
# of content (two ids, one key), a non-retryable failure, retries exhausted, a plain answer
SCRIPT = {"c": ["retry", "ok"], "d": ["fatal"], "e": ["retry", "retry", "retry"]}
TEXTS = ["a", "b", "c", "c", "d", "e", "f", "a"]


def _prestore(h: Harness) -> None:
    """Before the run: "a" answered, "b" failed (an error row is sent again)."""
    for text, status in (("a", "ok"), ("b", "error")):
        k = req(0, text).key_for(h.backend.fingerprint)
        h.store.put(StoredResponse(key=k, request_id=f"old-{text}", status=status,
                                   text="stored a" if status == "ok" else None,
                                   error=None if status == "ok" else "HTTP 500"))


@pytest.mark.parametrize("path", PATHS)
def test_counters_errors_retries_and_by_label(harness, path):
    h = harness(path, Scripted(SCRIPT))
    _prestore(h)
    out = h.send([req(i, t) for i, t in enumerate(TEXTS)], label="main")
    # one reply per request id; a duplicate gets its twin's reply, the cached one the stored text
    assert sorted(out) == [f"r{i}" for i in range(8)]
    assert {rid: (r.status, r.text, r.attempts) for rid, r in out.items()} == {
        "r0": ("ok", "stored a", 1), "r1": ("ok", "A:b", 1), "r2": ("ok", "A:c", 2), "r3": ("ok", "A:c", 2),
        "r4": ("error", None, 1), "r5": ("error", None, 3), "r6": ("ok", "A:f", 1), "r7": ("ok", "stored a", 1)}
    assert "HTTP 400" in out["r4"].error and "HTTP 503" in out["r5"].error
    # sent: b, c (twice), d, e (1 + 2 retries), f = 8 attempts; "a" never
    assert sorted(h.backend.calls) == ["b", "c", "c", "d", "e", "e", "e", "f"]
    # unique 6 keys, 1 cached, 8 attempts, 3 ok, 2 errors, 3 retries (c once, e twice)
    assert h.stats() == (6, 1, 8, 3, 2, 3)
    assert h.engine.stats.by_label == {"main": {"unique": 6, "cached": 1, "sent": 5, "errors": 2}}
    rows = h.rows()
    assert {rows[f"r{i}"]["status"] for i in (1, 2, 6)} == {"ok"} and rows["old-a"]["status"] == "ok"
    assert (rows["r4"]["status"], rows["r5"]["status"], rows["r5"]["attempts"]) == ("error", "error", 3)
    assert "old-b" not in rows  # the error row was replaced by the new answer

    # a second phase on the same engine: the answered are cached, the two errors are sent again (and answer)
    h.backend.calls.clear()
    again = h.send([req(i, t) for i, t in enumerate(TEXTS)], label="judge")
    assert sorted(h.backend.calls) == ["d", "e"]
    assert all(r.ok for r in again.values()) and again["r5"].text == "A:e"
    assert h.stats() == (12, 5, 10, 5, 2, 3)
    assert h.engine.stats.by_label == {"main": {"unique": 6, "cached": 1, "sent": 5, "errors": 2},
                                       "judge": {"unique": 6, "cached": 4, "sent": 2, "errors": 0}}
    # the same label once more accumulates (everything cached now)
    h.send([req(0, "a"), req(1, "z")], label="judge")
    assert h.engine.stats.by_label["judge"] == {"unique": 8, "cached": 5, "sent": 3, "errors": 0}


@pytest.mark.parametrize("path", PATHS)
def test_max_retries_zero_means_one_attempt(harness, path, sleeps):
    h = harness(path, Scripted({"x": ["retry", "ok"], "y": ["ok"]}), retry=RetryPolicy(max_retries=0))
    out = h.send([req(0, "x"), req(1, "y")])
    assert (out["r0"].status, out["r0"].attempts, out["r1"].status) == ("error", 1, "ok")
    assert h.stats() == (2, 0, 2, 1, 1, 0) and sleeps == []


@pytest.mark.parametrize("path", PATHS)
def test_abort_after_consecutive_failures_with_none_answered(harness, path):
    # abort_after = 4 and batches of 2: the abort falls on a batch boundary on every path
    h = harness(path, Scripted(default="fatal"), concurrency=1, abort_after=4)
    with pytest.raises(EndpointDown, match=r"giving up after 4 failed requests in a row.*HTTP 400"):
        h.send([req(i, f"q{i}") for i in range(10)])
    assert len(h.backend.calls) == 4 and h.backend.calls == [f"q{i}" for i in range(4)]
    assert [r["status"] for r in h.rows().values()] == ["error"] * 4  # what failed is stored, then the run stops
    assert h.engine.stats.errors == 4 and h.engine.stats.ok == 0


@pytest.mark.parametrize("path", PATHS)
def test_no_abort_once_a_request_answered_or_when_disabled(harness, path):
    h = harness(path, Scripted({"q0": ["ok"]}, default="fatal"), concurrency=1, abort_after=3)
    out = h.send([req(i, f"q{i}") for i in range(8)])
    assert out["r0"].ok and sum(not r.ok for r in out.values()) == 7
    assert h.stats() == (8, 0, 8, 1, 7, 0)
    h2 = harness(path, Scripted(default="fatal"), concurrency=1, abort_after=0, folder="run2")  # 0: never abort
    out = h2.send([req(i, f"q{i}") for i in range(6)])
    assert len(out) == 6 and not any(r.ok for r in out.values()) and h2.stats() == (6, 0, 6, 0, 6, 0)


def test_batched_abort_waits_for_the_whole_batch(harness):
    """Batch path only: a batch's replies are all stored before the abort (abort_after = 3, batches of 2)."""
    h = harness("batched", Scripted(default="fatal"), concurrency=1, abort_after=3)
    with pytest.raises(EndpointDown, match="giving up after 4 failed requests"):
        h.send([req(i, f"q{i}") for i in range(10)])
    assert len(h.rows()) == 4 and h.engine.stats.errors == 4


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("status,hint", [("401", "did not accept the API key"), ("403", "may not use this model"),
                                         ("404", "check --base-url")])
def test_identical_auth_or_not_found_errors_stop_the_run(harness, path, status, hint):
    """Issue 32.6: three 401/403/404 in a row stop the run with one message, even after answers (a key that
    expired mid-run), and nothing more is sent; abort_after (32 by default) would have sent 32."""
    h = harness(path, Scripted({"q0": ["ok"]}, default=status), concurrency=1)
    with pytest.raises(EndpointDown, match=rf"HTTP {status} 3 times in a row: .*{hint}"):
        h.send([req(i, f"q{i}") for i in range(40)])
    sent = len(h.backend.calls)
    assert sent == 4  # q0 answered, then 3 failures (batched: two batches of 2)
    assert h.rows()["r0"]["status"] == "ok" and sum(r["status"] == "error" for r in h.rows().values()) == sent - 1


@pytest.mark.parametrize("path", PATHS)
def test_auth_errors_that_alternate_with_answers_or_other_statuses_do_not_stop_the_run(harness, path):
    script = {f"q{i}": [("401", "404", "ok")[i % 3]] for i in range(9)}
    h = harness(path, Scripted(script, default="ok"), concurrency=1, abort_after=0)
    out = h.send([req(i, f"q{i}") for i in range(9)])
    assert sum(r.ok for r in out.values()) == 3 and len(h.backend.calls) == 9


@pytest.mark.parametrize("path", PATHS)
def test_refused_connections_abort_before_anything_is_stored(harness, path):
    h = harness(path, Scripted(default="refused"), concurrency=1,
                retry=RetryPolicy(max_retries=6, base_delay_s=0.0, refused_abort_after=3))
    with pytest.raises(EndpointDown, match="cannot be reached; check --base-url"):
        h.send([req(i, f"q{i}") for i in range(4)])
    assert h.backend.calls == ["q0", "q0", "q0"]  # the third refused attempt stops the run
    assert h.rows() == {}


@pytest.mark.parametrize("path", PATHS)
def test_refused_after_an_answer_is_an_ordinary_failure(harness, path):
    h = harness(path, Scripted({"q0": ["ok"]}, default="refused"), concurrency=1,
                retry=RetryPolicy(max_retries=1, base_delay_s=0.0, refused_abort_after=1))
    out = h.send([req(i, f"q{i}") for i in range(4)])
    assert out["r0"].ok and all(out[f"r{i}"].status == "error" and out[f"r{i}"].attempts == 2 for i in (1, 2, 3))
    assert h.stats() == (4, 0, 7, 1, 3, 3)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("retry_after,cap,waited", [(7.0, 120.0, 7.0), (500.0, 9.0, 9.0)])
def test_retry_after_is_waited_and_capped(harness, path, sleeps, retry_after, cap, waited):
    h = harness(path, Scripted({"x": [retry_after, "ok"]}),
                retry=RetryPolicy(max_retries=2, base_delay_s=0.0, max_retry_after_s=cap))
    out = h.send([req(0, "x"), req(1, "y"), req(2, "z")])
    assert all(r.ok for r in out.values()) and out["r0"].attempts == 2
    assert sleeps == [waited]  # the server's Retry-After (the backoff is 0 here), capped at max_retry_after_s
    assert h.stats() == (3, 0, 4, 3, 0, 1)


@pytest.mark.parametrize("path", PATHS)
def test_a_retry_after_wait_of_5_s_is_announced(harness, path, sleeps):
    h = harness(path, Scripted({"x": [5.0, "ok"]}), progress=True)
    out = h.send([req(0, "x")], label="main")
    assert out["r0"].ok and sleeps == [5.0]
    assert f"main: waiting 5 s (Retry-After from {URL})" in h.out.getvalue()


@pytest.mark.parametrize("path", PATHS)
def test_a_retry_after_wait_under_5_s_is_not_announced(harness, path, sleeps):
    h = harness(path, Scripted({"x": [4.5, "ok"]}), progress=True)
    out = h.send([req(0, "x")], label="main")
    assert out["r0"].ok and sleeps == [4.5]
    assert "waiting" not in h.out.getvalue()


@pytest.mark.parametrize("path", PATHS)
def test_progress_line_counts_done_and_errors(harness, path):
    h = harness(path, Scripted(SCRIPT), progress=True)
    _prestore(h)
    h.send([req(i, t) for i, t in enumerate(TEXTS)], label="main")
    line = h.progress_line()
    assert (line["done"], line["errors"]) == (6, 2)  # 6 unique requests, of which 2 failed


@pytest.mark.parametrize("path", PATHS)
def test_progress_line_shows_cached(harness, path):
    h = harness(path, Scripted(SCRIPT), progress=True)
    _prestore(h)
    h.send([req(i, t) for i, t in enumerate(TEXTS)], label="main")
    assert h.progress_line()["cached"] == 1


@pytest.mark.parametrize("path", PATHS)
def test_progress_line_at_abort_counts_every_stored_failure(harness, path):
    h = harness(path, Scripted(default="fatal"), concurrency=1, abort_after=4, progress=True)
    with pytest.raises(EndpointDown):
        h.send([req(i, f"q{i}") for i in range(10)], label="main")
    line = h.progress_line()
    assert (line["done"], line["errors"]) == (len(h.rows()), 4) == (4, 4)


@pytest.mark.parametrize("path", PATHS)
def test_offline_sends_nothing_returns_stored_and_marks_the_rest(harness, path):
    h = harness(path, Scripted(), offline=True)
    _prestore(h)
    out = h.send([req(0, "a"), req(1, "b"), req(2, "new"), req(3, "a")])
    assert h.backend.calls == []
    assert (out["r0"].status, out["r0"].text, out["r3"].text) == ("ok", "stored a", "stored a")
    # a request with no stored reply was never sent: reports count it as "not sent", not as failed in transport
    assert out["r1"].status == out["r2"].status == "error" and out["r2"].error == NOT_SENT
    assert len(h.rows()) == 2  # nothing written: the stored error stays as it was
    assert h.engine.stats.unique == 3 and h.engine.stats.cached == 1 and h.engine.stats.sent == 0


@pytest.mark.parametrize("path", PATHS)
def test_bad_input_is_refused_before_anything_is_sent(harness, path):
    from lensbench.core.errors import ConfigError

    h = harness(path, Scripted())
    with pytest.raises(ValueError, match="duplicate request id 'r1'"):
        h.send([req(0, "x"), req(1, "y"), req(1, "z")])
    judge = Request(id="j0", messages=(Message.user("judge this"),), role="judge")
    with pytest.raises(ConfigError, match="needs a 'judge' backend"):
        h.send([req(0, "x"), judge])
    assert h.backend.calls == [] and h.rows() == {}


class Counting(Scripted):
    """Records the most calls in flight at once (each call yields to the loop before answering)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.inflight = self.peak = 0

    async def generate(self, request: Request) -> Completion:
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        for _ in range(3):
            await asyncio.sleep(0)
        self.inflight -= 1
        return await super().generate(request)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("limit", [None, 1])
def test_a_role_limiter_bounds_calls_in_flight(harness, path, limit):
    backend = Counting()
    limiters = {} if limit is None else {"model": asyncio.Semaphore(limit)}
    h = harness(path, backend, concurrency=4, limiters=limiters)
    out = h.send([req(i, f"q{i}") for i in range(12)], chunk=12)
    assert all(r.ok for r in out.values()) and len(backend.calls) == 12
    assert backend.peak == 1 if limit == 1 else backend.peak > 1


@pytest.mark.parametrize("path", PATHS)
def test_model_and_judge_roles_each_reach_their_backend(harness, path):
    judge = Scripted({"verdict 1": ["retry", "ok"]})
    judge.fingerprint = "judge-fp"
    h = harness(path, Scripted({"m0": ["fatal"]}))
    h.engine.backends["judge"] = judge
    reqs = [req(0, "m0"), req(1, "m1")] + [Request(id=f"j{i}", messages=(Message.user(f"verdict {i}"),), role="judge")
                                           for i in range(2)]
    out = h.send(reqs, label="mixed")
    assert sorted(h.backend.calls) == ["m0", "m1"] and sorted(judge.calls) == ["verdict 0", "verdict 1", "verdict 1"]
    assert out["j1"].text == "A:verdict 1" and out["j1"].attempts == 2 and out["r0"].status == "error"
    assert {r["request_id"]: r["role"] for r in h.rows().values()} == {"r0": "model", "r1": "model", "j0": "judge",
                                                                       "j1": "judge"}
    assert h.stats() == (4, 0, 5, 3, 1, 1)
    assert h.engine.stats.by_label == {"mixed": {"unique": 4, "cached": 0, "sent": 4, "errors": 1}}
