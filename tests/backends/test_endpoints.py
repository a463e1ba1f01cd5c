"""Several endpoints for one model: least outstanding requests, cool-down of a failing endpoint,
per-endpoint counts in run.json."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from lensbench.backends.base import BackendConfig
from lensbench.backends.endpoints import EndpointPool
from lensbench.backends.openai_compat import OpenAIChatBackend
from lensbench.core.errors import TransportError
from lensbench.core.types import GenParams, Message, Request, TextPart
from lensbench.testing.server import FakeOpenAIServer


def req(i: int) -> Request:
    return Request(id=f"r{i}", messages=[Message(role="user", parts=[TextPart(text=f"q{i}")])],
                   params=GenParams(temperature=0))


# ------------------------------------------------------------------ the pool alone
def test_pool_picks_least_outstanding_then_least_served():
    p = EndpointPool(["a", "b", "c"])
    assert [p.acquire() for _ in range(3)] == [0, 1, 2]  # spread while all are idle
    p.release(1, ok=True)  # b finished first: it has nothing in flight
    assert p.acquire() == 1
    p.release(0, ok=True)
    p.release(2, ok=True)
    # a and c: 0 in flight, 1 served each; b: 1 in flight -> a (first of the tie)
    assert p.acquire() == 0


def test_pool_sets_a_failing_endpoint_aside_with_exponential_cooldown():
    now = [0.0]
    p = EndpointPool(["a", "b"], fail_threshold=2, base_cooldown_s=10, max_cooldown_s=25, clock=lambda: now[0])

    def fail_a_twice():
        for _ in range(2):
            assert p.acquire() == 0  # a: nothing in flight, served no more than b
            p.release(0, ok=False)

    fail_a_twice()
    assert p.stats[0].set_aside == 1 and p.stats[0].until == 10.0
    for _ in range(5):  # set aside: everything goes to b
        assert p.acquire() == 1
        p.release(1, ok=True)
    now[0] = 10.0  # back after 10 s; fails twice more: 20 s this time
    fail_a_twice()
    assert p.stats[0].until == 30.0
    now[0] = 30.0
    fail_a_twice()
    assert p.stats[0].until == 30.0 + 25  # 40 s capped at max_cooldown_s
    now[0] = 55.0
    assert p.acquire() == 0
    p.release(0, ok=True)  # a success resets the back-off
    fail_a_twice()
    assert p.stats[0].until == 65.0 and p.summary()["endpoints"][0] == {"url": "a", "served": 1, "failed": 8,
                                                                          "set_aside": 4}


def test_all_set_aside_uses_the_one_back_first():
    now = [0.0]
    p = EndpointPool(["a", "b"], fail_threshold=1, base_cooldown_s=10, clock=lambda: now[0])
    p.acquire(), p.release(0, ok=False)
    now[0] = 1.0
    assert p.acquire() == 1
    p.release(1, ok=False)
    assert p.acquire() == 0  # a is back at 10 s, b at 11 s


def test_non_retryable_failures_do_not_set_an_endpoint_aside():
    p = EndpointPool(["a", "b"], fail_threshold=1)
    p.acquire()
    p.release(0, ok=False, counts_as_failure=False)
    assert p.stats[0].until == 0 and p.stats[0].failed == 1


def test_single_endpoint_is_never_set_aside():
    p = EndpointPool(["a"], fail_threshold=1)
    p.acquire()
    p.release(0, ok=False)
    assert p.stats[0].until == 0


# ------------------------------------------------------------------ over HTTP
async def _send(backend: OpenAIChatBackend, n: int, concurrency: int) -> list:
    sem = asyncio.Semaphore(concurrency)

    async def one(i):
        async with sem:
            try:
                return await backend.generate(req(i))
            except TransportError as exc:
                return exc

    try:
        return await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        await backend.aclose()


def test_the_faster_endpoint_serves_more():
    """The slow endpoint answers nothing until the fast one has answered 76 of the 80 requests (no timing involved:
    the old 10 ms / 100 ms latencies and a 4x ratio failed on a loaded machine). With 8 in flight, the pool sends
    each request to the endpoint with the fewest in flight, so the held one gets at most its first 4 (round robin
    would give it 40, and then wait on it)."""
    released = [0]

    def fast_reply(body):
        released[0] += 1
        if released[0] == 76:
            slow.release()
        return "Yes"

    with FakeOpenAIServer(fast_reply) as fast, FakeOpenAIServer(hold_after=0) as slow:
        b = OpenAIChatBackend("m", BackendConfig(base_urls=[slow.url, fast.url]))
        unstick = threading.Timer(20, slow.release)  # a pool that sends the held endpoint more would wait forever
        unstick.start()
        try:
            outs = asyncio.run(_send(b, 80, 8))
        finally:
            unstick.cancel()
        assert all(not isinstance(o, TransportError) for o in outs)
        n_fast, n_slow = sum(fast.answered.values()), sum(slow.answered.values())
    assert n_fast + n_slow == 80
    assert 1 <= n_slow <= 4 and n_fast >= 76, (n_fast, n_slow)
    eps = b.endpoint_summary()["endpoints"]
    assert [e["served"] for e in eps] == [n_slow, n_fast]


def test_an_endpoint_returning_500s_is_set_aside():
    always_500 = lambda key, attempt: "500"
    with FakeOpenAIServer() as good, FakeOpenAIServer(fault_plan=always_500) as bad:
        b = OpenAIChatBackend("m", BackendConfig(base_urls=[bad.url, good.url]))
        outs = asyncio.run(_send(b, 60, 4))
        n_bad = sum(bad.received.values())
    failures = [o for o in outs if isinstance(o, TransportError)]
    summary = b.endpoint_summary()["endpoints"]
    assert summary[1]["served"] == 60 - len(failures)
    assert summary[0]["served"] == 0 and summary[0]["set_aside"] == 1
    # the bad endpoint saw its threshold of failures plus those already in flight, then nothing more
    assert n_bad == summary[0]["failed"] == len(failures) <= 3 + 4


def test_run_json_has_the_per_endpoint_counts(tmp_path):
    from lensbench.benchmarks.registry import get_benchmark
    from lensbench.runtime.runner import run_benchmark
    from lensbench.runtime.settings import RunSettings
    from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release

    data = make_rgbth_release(tmp_path / "d", n_scenes=2, questions_per_unit=2)
    with FakeOpenAIServer(latency=0.005) as a, FakeOpenAIServer(latency=0.05) as b:
        bench = get_benchmark("rgb-th-bench")(None)
        run_benchmark(bench, RunSettings(model="openai:m", base_url=[a.url, b.url], data_dir=data,
                                         out=tmp_path / "run", progress=False, concurrency=4))
        answered = [sum(a.answered.values()), sum(b.answered.values())]
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    eps = manifest["endpoints"]
    assert eps["policy"] == "least_outstanding"
    assert [e["served"] for e in eps["endpoints"]] == answered
    assert sum(answered) == manifest["store_counts"]["ok"]
    assert answered[0] > answered[1]
