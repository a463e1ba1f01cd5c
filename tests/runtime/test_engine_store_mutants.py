"""Engine and store behaviour that mutation testing (devtools/mutate.py) found unguarded: retry counts and
attempts (single and batch paths), the backoff bounds, offline mode, argument checks, and the store's
round trip of every column. Fake in-process backends; no server, no sleeping (asyncio.sleep is patched)."""

from __future__ import annotations

import asyncio
import random

import pytest

from lensbench.backends.base import Backend
from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.types import Completion, GenParams, Message, Request, StoredResponse, TextPart
from lensbench.runtime import engine as engine_mod
from lensbench.runtime.engine import Engine, EngineStats, RetryPolicy
from lensbench.runtime.store import RunStore


def _req(i: int, role: str = "model") -> Request:
    return Request(id=f"r{i}", role=role, messages=[Message(role="user", parts=[TextPart(text=f"q{i}")])],
                   params=GenParams(temperature=0))


class Flaky(Backend):
    """Fails each request ``fails`` times (retryable), then answers ``"A:<text>"``."""

    fingerprint = "flaky"

    def __init__(self, fails: int = 1, retryable: bool = True, batch_size: int = 1):
        self.fails, self.retryable, self.batch_size = fails, retryable, batch_size
        self.seen: dict[str, int] = {}
        self.batches: list[int] = []

    async def generate(self, request: Request) -> Completion:
        n = self.seen[request.id] = self.seen.get(request.id, 0) + 1
        if n <= self.fails:
            raise TransportError("HTTP 503", retryable=self.retryable)
        return Completion(text="A:" + request.messages[0].parts[0].text, reasoning="why", finish_reason="stop",
                          usage={"prompt_tokens": 3})

    async def generate_batch(self, requests):
        self.batches.append(len(requests))
        return await super().generate_batch(requests)


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    waits: list[float] = []

    async def fake_sleep(s, *a, **k):
        waits.append(s)

    monkeypatch.setattr(engine_mod.asyncio, "sleep", fake_sleep)
    return waits


def _run(backend, tmp_path, n=3, **kw):
    with RunStore(tmp_path) as store:
        eng = Engine({"model": backend}, store, concurrency=2, progress=False, **kw)
        out = asyncio.run(eng.run([_req(i) for i in range(n)]))
        rows = {r["request_id"]: r for r in store.iter_rows()}
    return eng, out, rows


@pytest.mark.parametrize("batch", [1, 4])
def test_one_retry_each_counts_and_attempts(tmp_path, batch):
    eng, out, rows = _run(Flaky(fails=1, batch_size=batch), tmp_path)
    assert {rid: r.text for rid, r in out.items()} == {"r0": "A:q0", "r1": "A:q1", "r2": "A:q2"}
    assert all(r.ok and r.attempts == 2 for r in out.values())
    assert eng.stats.retries == 3
    assert eng.stats.sent == 6 and eng.stats.ok == 3 and eng.stats.errors == 0
    assert eng.stats.unique == 3 and eng.stats.cached == 0
    assert all(r["attempts"] == 2 and r["status"] == "ok" for r in rows.values())
    assert all(r.reasoning == "why" and r.finish_reason == "stop" and r.usage == {"prompt_tokens": 3}
               for r in out.values())


@pytest.mark.parametrize("batch", [1, 4])
def test_retries_stop_at_max_retries(tmp_path, batch):
    eng, out, _rows = _run(Flaky(fails=99, batch_size=batch), tmp_path, n=2,
                           retry=RetryPolicy(max_retries=2), abort_after=0)
    # 1 attempt + 2 retries, then an error row
    assert all(r.status == "error" and r.attempts == 3 for r in out.values())
    assert eng.stats.retries == 4 and eng.stats.errors == 2 and eng.stats.ok == 0 and eng.stats.sent == 6


@pytest.mark.parametrize("batch", [1, 4])
def test_non_retryable_is_not_retried(tmp_path, batch):
    eng, out, _rows = _run(Flaky(fails=1, retryable=False, batch_size=batch), tmp_path, n=2, abort_after=0)
    assert all(r.status == "error" and r.attempts == 1 for r in out.values())
    assert eng.stats.retries == 0 and eng.stats.errors == 2


def test_engine_stats_start_at_zero():
    s = EngineStats()
    assert (s.unique, s.cached, s.sent, s.ok, s.errors, s.retries, s.wall_s, s.by_label) == (0, 0, 0, 0, 0, 0, 0.0, {})


def test_concurrency_must_be_positive(tmp_path):
    with RunStore(tmp_path) as store:
        with pytest.raises(ConfigError):
            Engine({"model": Flaky()}, store, concurrency=0, progress=False)
        Engine({"model": Flaky()}, store, concurrency=1, progress=False)


def test_offline_returns_stored_and_marks_missing_as_errors(tmp_path):
    backend = Flaky(fails=0)
    _run(backend, tmp_path, n=1)
    with RunStore(tmp_path) as store:
        eng = Engine({"model": backend}, store, progress=False, offline=True)
        out = asyncio.run(eng.run([_req(0), _req(1)]))
    assert out["r0"].ok and out["r0"].text == "A:q0"
    assert out["r1"].status == "error" and out["r1"].text is None
    assert backend.seen == {"r0": 1}  # nothing sent offline


class _Top:
    """An rng whose uniform(a, b) returns b: the top of the jitter range."""

    def uniform(self, a, b):
        return b


def test_backoff_bounds_and_retry_after():
    p = RetryPolicy()
    # documented defaults: 6 retries, base 0.5 s doubling, capped at 30 s, Retry-After capped at 120 s
    assert p.max_retries == 6
    assert p.delay(0, None, _Top()) == 0.5
    assert p.delay(3, None, _Top()) == 4.0
    assert p.delay(10, None, _Top()) == 30.0
    assert p.delay(0, 50.0, _Top()) == 50.0
    assert p.delay(0, 500.0, _Top()) == 120.0
    rng = random.Random(1)
    assert all(0 <= p.delay(k, None, rng) <= min(30.0, 0.5 * 2 ** k) for k in range(12))


def test_store_round_trips_every_column(tmp_path):
    resp = StoredResponse(key="k1", request_id="r1", status="ok", text="t", reasoning="why", error=None, attempts=3,
                          latency_s=1.25, finish_reason="length", usage={"completion_tokens": 7})
    with RunStore(tmp_path) as store:
        store.put(resp, role="judge", request_json='{"id": "r1"}')
        store.put(StoredResponse(key="k2", request_id="r2", status="error", text=None, error="boom", attempts=2,
                                 latency_s=0.5))
        assert store.n_rows() == 2
        assert store.counts() == {"ok": 1, "error": 1}
        got = store.get_many(["k1", "k2", "absent"])
    assert set(got) == {"k1", "k2"}
    g = got["k1"]
    assert (g.key, g.request_id, g.status, g.text, g.reasoning, g.error, g.attempts, g.latency_s, g.finish_reason,
            g.usage) == ("k1", "r1", "ok", "t", "why", None, 3, 1.25, "length", {"completion_tokens": 7})
    e = got["k2"]
    assert (e.status, e.error, e.attempts, e.latency_s, e.usage) == ("error", "boom", 2, 0.5, {})
    with RunStore(tmp_path) as store:
        rows = list(store.iter_rows())
        assert [r["key"] for r in rows] == ["k1", "k2"]
        assert rows[0]["role"] == "judge" and rows[0]["request"] == '{"id": "r1"}'
        # an ok reply is never overwritten by an error; an error is replaced by an ok
        store.put(StoredResponse(key="k1", request_id="r1", status="error", text=None, error="late"))
        store.put(StoredResponse(key="k2", request_id="r2", status="ok", text="fixed"))
        got = store.get_many(["k1", "k2"])
        assert got["k1"].text == "t" and got["k2"].text == "fixed"
        assert store.counts() == {"ok": 2, "error": 0}
        assert store.n_rows() == 2


def test_store_meta(tmp_path):
    with RunStore(tmp_path) as store:
        assert store.get_meta("manifest") is None
        store.put_meta("manifest", "{}")
        assert store.get_meta("manifest") == "{}"


class _Notes:
    def __init__(self):
        self.lines: list[str] = []

    def note(self, text):
        self.lines.append(text)

    def __getattr__(self, name):  # start / advance / stop: nothing to show
        return lambda *a, **k: None


class RetryAfterOnce(Flaky):
    def __init__(self, url):
        super().__init__(fails=1)
        self.url = url

    async def generate(self, request):
        n = self.seen[request.id] = self.seen.get(request.id, 0) + 1
        if n == 1:
            raise TransportError("HTTP 429", retryable=True, retry_after=10.0, url=self.url)
        return Completion(text="ok")


@pytest.mark.parametrize("url,shown", [(None, "server"), ("http://h:1/v1", "http://h:1/v1")])
def test_long_retry_after_wait_is_announced_with_its_source(tmp_path, no_sleep, url, shown):
    with RunStore(tmp_path) as store:
        eng = Engine({"model": RetryAfterOnce(url)}, store, concurrency=1, progress=False)
        eng._progress = notes = _Notes()
        out = asyncio.run(eng.run([_req(0)]))
    assert out["r0"].ok and out["r0"].attempts == 2
    assert no_sleep == [10.0]                     # the server's Retry-After (longer than the backoff)
    assert notes.lines == [f"waiting 10 s (Retry-After from {shown})"]


# ------------------------------------------- issue 26, second pass: survivors of the held-out draw (seed 20261126)
def test_get_many_keeps_the_stored_request_id_and_shares_an_equal_one(tmp_path):
    with RunStore(tmp_path) as store:
        store.put(StoredResponse(key="k1", request_id="first-asker", status="ok", text="t"))
        store.put(StoredResponse(key="k2", request_id="".join(["r", "2"]), status="ok", text="u"))
        mine = _req(2)  # id "r2": an equal string, not the same object as the stored one
        got = store.get_many({"k1": _req(1), "k2": mine})
    assert got["k1"].request_id == "first-asker"  # the row's own id, not the id of the request asking now
    assert got["k2"].request_id == "r2" and got["k2"].request_id is mine.id  # equal: the caller's string


def test_missing_backend_message_names_the_fix(tmp_path):
    with RunStore(tmp_path) as store:
        judge_only = Engine({"judge": Flaky()}, store, progress=False)
        with pytest.raises(ConfigError, match=r"request 'r0' needs a 'model' backend; none configured"):
            asyncio.run(judge_only.run([_req(0)]))
        model_only = Engine({"model": Flaky()}, store, progress=False)
        with pytest.raises(ConfigError, match=r"request 'r0' needs a 'judge' backend; give one with --judge-model"):
            asyncio.run(model_only.run([_req(1), _req(0, role="judge")]))


# ------------------------------------------------- survivors of the held-out draw of seed 20261127
from lensbench.core.writes import WriteFailed  # noqa: E402


class _ScheduleLoop(asyncio.SelectorEventLoop):
    """An event loop that records the delay of every group-commit retry the store schedules and runs the
    retry at once (so the test sees the backoff schedule without waiting it out)."""

    def __init__(self):
        super().__init__()
        self.retry_delays: list[float] = []

    def call_later(self, delay, callback, *args, **kw):
        if getattr(callback, "__name__", "") == "_group_commit":
            self.retry_delays.append(delay)
            delay = 0
        return super().call_later(delay, callback, *args, **kw)


def test_a_failed_group_commit_backs_off_doubling_from_50_ms_to_1_s_then_starts_over(tmp_path, monkeypatch):
    # the disk refuses the first 7 group commits of each outage: retries after 0.05, 0.1, 0.2, 0.4, 0.8 s,
    # then capped at 1 s; once a commit succeeds, the next outage starts again at 0.05 s
    fails = {"left": 0}
    write = RunStore._write

    def refusing_write(self):
        if fails["left"]:
            fails["left"] -= 1
            raise WriteFailed("disk is full", len(self._rows))
        write(self)

    monkeypatch.setattr(RunStore, "_write", refusing_write)
    loop = _ScheduleLoop()

    async def put_and_wait(store, i):
        fails["left"] = 7
        store.put(StoredResponse(key=f"k{i}", request_id=f"r{i}", status="ok", text=f"A{i}"))
        await asyncio.wait_for(store.durable(), 10)  # returns once the retried commit went through

    try:
        with RunStore(tmp_path) as store:
            loop.run_until_complete(put_and_wait(store, 0))
            assert loop.retry_delays == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
            loop.retry_delays.clear()
            loop.run_until_complete(put_and_wait(store, 1))
            assert loop.retry_delays == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
            assert {k: r.text for k, r in store.get_many(["k0", "k1"]).items()} == {"k0": "A0", "k1": "A1"}
    finally:
        loop.close()


def test_once_the_store_gave_up_and_closed_a_commit_raises_nothing_more(tmp_path, monkeypatch):
    # RunStore.commit: once the store has given up, no exception (close() reports the lost rows); that holds
    # after the close too, when the lost rows are still queued on a closed database
    monkeypatch.setattr(RunStore, "WRITE_RETRY_S", 0.1)
    store = RunStore(tmp_path)

    def refusing_write(self):
        raise WriteFailed("disk is full", len(self._rows))

    monkeypatch.setattr(RunStore, "_write", refusing_write)
    with pytest.raises(WriteFailed):  # outside an event loop put() commits at once: retried 0.1 s, then given up
        store.put(StoredResponse(key="k0", request_id="r0", status="ok", text="A"))
    with pytest.raises(WriteFailed) as ei:
        store.close()
    assert ei.value.unstored == 1 and "1 replies received but not stored" in str(ei.value)
    monkeypatch.undo()  # the disk has room again: the closed store still writes nothing and raises nothing
    store.commit()
    store.close()  # idempotent
    with RunStore(tmp_path) as again:
        assert again.n_rows() == 0
