"""Engine.run_stream: batches sent while later ones are still being produced, one worker pool,
dedupe across batches, stored replies not sent again (issue 11)."""

from __future__ import annotations

import asyncio

import pytest

from lensbench.backends.base import Backend
from lensbench.core.types import Completion, GenParams, Message, Request, TextPart
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore


def _req(i: int, text: str | None = None) -> Request:
    return Request(id=f"r{i}", messages=[Message(role="user", parts=[TextPart(text=text or f"q{i}")])],
                   params=GenParams(temperature=0))


class Slow(Backend):
    """Answers after ``latency`` s; records the event-loop time of each call and the peak in flight."""

    fingerprint = "slow"

    def __init__(self, latency: float = 0.05):
        self.latency, self.calls, self.inflight, self.peak = latency, [], 0, 0

    async def generate(self, request: Request) -> Completion:
        self.calls.append((request.id, asyncio.get_running_loop().time()))
        self.inflight += 1
        self.peak = max(self.peak, self.inflight)
        await asyncio.sleep(self.latency)
        self.inflight -= 1
        return Completion(text="A:" + request.messages[0].parts[0].text)


async def _batches(groups, pause: float, produced: list):
    for g in groups:
        await asyncio.sleep(pause)  # the next batch is "being prepared"
        produced.append(asyncio.get_running_loop().time())
        yield g


def test_batches_are_sent_while_later_ones_are_prepared(tmp_path):
    backend = Slow(latency=0.05)
    groups = [[_req(3 * b + i) for i in range(3)] for b in range(4)]
    produced: list[float] = []

    async def main():
        with RunStore(tmp_path) as store:
            eng = Engine({"model": backend}, store, concurrency=2, progress=False)
            return await eng.run_stream(_batches(groups, 0.2, produced), total=12)

    got = asyncio.run(main())
    assert sorted(got) == sorted(r.id for g in groups for r in g)
    assert all(r.ok and r.text == "A:" + r.request_id.replace("r", "q") for r in got.values())
    first_sent = min(t for rid, t in backend.calls if rid == "r0")
    assert first_sent < produced[-1]  # the first batch went out before the last one existed
    assert backend.peak <= 2  # one pool of `concurrency` workers for all batches
    # streamed: 4 x 0.2 s of preparation + the last batch's 2 rounds of 0.05 s, not 0.8 + 6 x 0.05
    assert len(backend.calls) == 12


def test_dedupe_across_batches_cached_rows_and_duplicate_ids(tmp_path):
    backend = Slow(latency=0.0)

    async def run(groups):
        with RunStore(tmp_path) as store:
            eng = Engine({"model": backend}, store, concurrency=4, progress=False)
            return await eng.run_stream(_batches(groups, 0.0, []))

    same_a, same_b = _req(1, "same"), _req(2, "same")  # same content, two ids: sent once
    got = asyncio.run(run([[same_a, _req(3)], [same_b, _req(4)]]))
    assert len(backend.calls) == 3 and got["r1"].text == got["r2"].text == "A:same"
    backend.calls.clear()
    again = asyncio.run(run([[_req(3)], [_req(4), _req(5)]]))  # r3, r4 stored: only r5 is sent
    assert [rid for rid, _t in backend.calls] == ["r5"] and len(again) == 3
    with pytest.raises(ValueError, match="duplicate request id 'r7'"):
        asyncio.run(run([[_req(7)], [_req(7, "other")]]))
