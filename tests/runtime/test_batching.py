"""Batch planning (length grouping) and the engine's batch path, with a fake batch backend."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from lensbench.backends.base import Backend
from lensbench.core.errors import TransportError
from lensbench.core.types import Completion, GenParams, ImagePart, Message, Request
from lensbench.runtime.batching import estimate_length, group_key, input_shape, plan_batches
from lensbench.runtime.engine import Engine, RetryPolicy
from lensbench.runtime.store import RunStore


def img(n: str, video: str | None = None) -> ImagePart:
    return ImagePart(path=n, sha256=n, video=video)


def mk(i: int, text: str, n_img: int = 1, frames: int = 0, temp: float = 0.0) -> Request:
    parts = [img(f"i{i}_{k}") for k in range(n_img)] + [img(f"f{i}_{k}", "v.mp4") for k in range(frames)] + [text]
    return Request(id=f"r{i}", messages=(Message.user(*parts),), params=GenParams(temperature=temp))


def test_shape_and_length_estimates():
    r = mk(0, "abcde", n_img=2, frames=3)
    assert input_shape(r) == (2, 3)
    assert estimate_length(r) == 5 + 5
    assert group_key(r) != group_key(mk(1, "abcde", n_img=2, frames=3, temp=0.5))


def test_batches_group_by_shape_and_sort_by_length():
    reqs = [mk(0, "x" * 50), mk(1, "x" * 5), mk(2, "x" * 30, n_img=2), mk(3, "x" * 10), mk(4, "x" * 40),
            mk(5, "x" * 20), mk(6, "x" * 1, n_img=2), mk(7, "x" * 7, temp=0.7)]
    batches = plan_batches(reqs, 2)
    ids = [[r.id for r in b] for b in batches]
    # largest group first (5 one-image greedy requests, shortest first), then the two-image pair, then the sampled one
    assert ids == [["r1", "r3"], ["r5", "r4"], ["r0"], ["r6", "r2"], ["r7"]]
    assert sorted(r.id for b in batches for r in b) == sorted(r.id for r in reqs)
    assert plan_batches([], 4) == []
    with pytest.raises(ValueError):
        plan_batches(reqs, 0)
    pairs = plan_batches([("k1", reqs[0]), ("k2", reqs[1])], 8, lambda kr: kr[1])
    assert pairs == [[("k2", reqs[1]), ("k1", reqs[0])]]


class FakeBatchBackend(Backend):
    """Answers with the request id; records each batch; can fail chosen ids (retryably) once."""

    fingerprint = "fake-batch"

    def __init__(self, batch_size: int, flaky: set[str] = frozenset(), broken: set[str] = frozenset()):
        self.batch_size = batch_size
        self.batches: list[list[str]] = []
        self.flaky = set(flaky)
        self.broken = set(broken)
        self.inflight = self.peak = 0

    async def generate(self, request: Request) -> Completion:  # pragma: no cover - batch path only
        raise AssertionError("single path used")

    async def generate_batch(self, requests):
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        self.batches.append([r.id for r in requests])
        await asyncio.sleep(0.01)
        self.inflight -= 1
        out = []
        for r in requests:
            if r.id in self.flaky:
                self.flaky.discard(r.id)
                out.append(TransportError("busy", retryable=True))
            elif r.id in self.broken:
                out.append(TransportError("bad image", retryable=False))
            else:
                out.append(Completion(text=f"answer {r.id}", usage={"completion_tokens": 2}))
        return out


def run_engine(tmp_path, backend, reqs, concurrency=2):
    store = RunStore(tmp_path)
    eng = Engine({"model": backend}, store, concurrency=concurrency, progress=False,
                 retry=RetryPolicy(max_retries=2, base_delay_s=0.0))
    try:
        return eng, asyncio.run(eng.run(reqs)), store
    finally:
        store.close()


def test_engine_sends_length_grouped_batches_and_stores_every_reply(tmp_path):
    reqs = [mk(i, "q" * (i * 7 % 23), n_img=0) for i in range(10)]
    be = FakeBatchBackend(4)
    eng, out, _ = run_engine(tmp_path, be, reqs)
    assert sorted(len(b) for b in be.batches) == [2, 4, 4]
    lens = {r.id: estimate_length(r) for r in reqs}
    for b in be.batches:  # each batch is a contiguous run of the length-sorted order
        assert [lens[i] for i in b] == sorted(lens[i] for i in b)
    assert {k: v.text for k, v in out.items()} == {r.id: f"answer {r.id}" for r in reqs}
    assert eng.stats.ok == 10 and eng.stats.sent == 10
    # a second run finds everything stored: no batch sent
    be2 = FakeBatchBackend(4)
    _, out2, _ = run_engine(tmp_path, be2, reqs)
    assert be2.batches == [] and {k: v.text for k, v in out2.items()} == {k: v.text for k, v in out.items()}


def test_engine_batch_retries_only_failed_requests_and_keeps_errors(tmp_path):
    reqs = [mk(i, "q" * i, n_img=0) for i in range(6)]
    be = FakeBatchBackend(8, flaky={"r1", "r4"}, broken={"r5"})
    eng, out, store = run_engine(tmp_path, be, reqs)
    assert be.batches == [[f"r{i}" for i in range(6)], ["r1", "r4"]]
    assert out["r1"].ok and out["r1"].attempts == 2 and out["r0"].attempts == 1
    assert not out["r5"].ok and "bad image" in out["r5"].error
    assert eng.stats.retries == 2 and eng.stats.errors == 1 and eng.stats.ok == 5


def test_whole_batch_failure_is_an_error_per_request(tmp_path):
    class Down(FakeBatchBackend):
        async def generate_batch(self, requests):
            raise TransportError("device lost", retryable=False)

    eng, out, _ = run_engine(tmp_path, Down(4), [mk(i, "q", n_img=0) for i in range(3)])
    assert all(not v.ok and "device lost" in v.error for v in out.values())


def test_single_request_backends_keep_the_plain_path(tmp_path):
    class Single(Backend):
        fingerprint = "single"

        async def generate(self, request):
            return Completion(text="ok")

    be = Single()
    assert be.batch_size == 1
    _, out, _ = run_engine(tmp_path, be, [mk(i, "q", n_img=0) for i in range(3)])
    assert all(v.text == "ok" for v in out.values())
    # the default generate_batch is generate one after another, errors returned in place
    res = asyncio.run(be.generate_batch([mk(0, "q", n_img=0), mk(1, "q", n_img=0)]))
    assert [r.text for r in res] == ["ok", "ok"]


def test_each_batch_is_stored_before_the_next_one_is_generated(tmp_path):
    reqs = [mk(i, "q" * i, n_img=0) for i in range(7)]
    keys = [r.key_for("fake-batch") for r in reqs]
    store = RunStore(tmp_path)
    seen: list[int] = []

    class Watching(FakeBatchBackend):
        async def generate_batch(self, requests):
            seen.append(len(store.get_many(keys)))  # the engine's store: rows written so far
            return await super().generate_batch(requests)

    eng = Engine({"model": Watching(3)}, store, concurrency=1, progress=False)
    asyncio.run(eng.run(reqs))
    store.close()
    assert seen == [0, 3, 6]


def test_batched_model_and_single_judge_in_one_call(tmp_path):
    class Judge(Backend):
        fingerprint = "judge"

        async def generate(self, request):
            return Completion(text="judged")

    model = FakeBatchBackend(4)
    reqs = [mk(i, "q" * i, n_img=0) for i in range(5)]
    judged = [dataclasses.replace(r, id=f"j{i}", role="judge") for i, r in enumerate(reqs[:2])]
    store = RunStore(tmp_path)
    eng = Engine({"model": model, "judge": Judge()}, store, concurrency=2, progress=False)
    out = asyncio.run(eng.run(reqs + judged))
    store.close()
    assert sorted(len(b) for b in model.batches) == [1, 4]
    assert out["j0"].text == "judged" and out["r4"].text == "answer r4"
