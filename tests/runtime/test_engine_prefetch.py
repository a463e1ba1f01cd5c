"""The engine asks for the first window's media before pre-flight, and sends nothing until pre-flight passes."""

from __future__ import annotations

import asyncio

import pytest

from lensbench.backends.base import Backend
from lensbench.core.errors import DataError
from lensbench.core.types import Completion, GenParams, Message, Request, TextPart
from lensbench.runtime import engine as engine_mod
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore


class Recorder(Backend):
    fingerprint = "rec"

    def __init__(self, events: list):
        self.events = events

    def prefetch(self, request: Request) -> None:
        self.events.append(("prefetch", request.id))

    async def generate(self, request: Request) -> Completion:
        self.events.append(("send", request.id))
        return Completion(text="ok")


def _reqs(n):
    return [Request(id=f"r{i}", messages=[Message(role="user", parts=[TextPart(text=f"q{i}")])],
                    params=GenParams(temperature=0)) for i in range(n)]


@pytest.mark.parametrize("conc", [4, 12])  # the window: 16 units, or twice the concurrency when that is more
@pytest.mark.parametrize("bad", [False, True])
def test_first_window_prefetched_before_preflight_and_nothing_sent_on_bad_media(tmp_path, monkeypatch, bad, conc):
    events: list = []

    async def fake_preflight(requests):
        events.append(("preflight", len(requests)))
        if bad:
            raise DataError("img.jpg", "cannot decode image")
        return len(requests)

    monkeypatch.setattr(engine_mod, "preflight_media", fake_preflight)
    n = 50
    with RunStore(tmp_path) as store:
        eng = Engine({"model": Recorder(events)}, store, concurrency=conc, progress=False)
        window = max(16, 2 * conc)
        if bad:
            with pytest.raises(DataError):
                asyncio.run(eng.run(_reqs(n)))
        else:
            asyncio.run(eng.run(_reqs(n)))
    pre = events.index(("preflight", n))
    assert events[:pre] == [("prefetch", f"r{i}") for i in range(window)]
    sent = [e for e in events if e[0] == "send"]
    if bad:
        assert sent == []
    else:
        assert len(sent) == n and events.index(sent[0]) > pre
        # every later request is asked for once, ahead of its turn
        assert sorted(rid for kind, rid in events if kind == "prefetch") == sorted(f"r{i}" for i in range(n))


def test_replies_answered_now_are_returned_without_reading_them_back(tmp_path):
    """Only cached and failed replies are read back from the store at the end; the result equals the store."""
    from lensbench.core.errors import TransportError

    class Mixed(Recorder):
        async def generate(self, request):
            if request.id == "r3":
                raise TransportError("HTTP 400", retryable=False)
            return Completion(text="ok " + request.id)

    reqs = _reqs(6)
    with RunStore(tmp_path) as store:
        eng = Engine({"model": Mixed([])}, store, concurrency=2, progress=False)
        asyncio.run(eng.run(reqs[:2]))  # r0, r1 cached for the next call
        reads: list[set] = []
        real = store.get_many
        store.get_many = lambda keys: (reads.append(set(keys)), real(keys))[1]
        got = asyncio.run(eng.run(reqs))
        by_key = {eng.key_of(r): r.id for r in reqs}
        assert [{by_key[k] for k in keys} for keys in reads] == [set(by_key.values()), {"r0", "r1", "r3"}]
        assert {rid: (x.status, x.text) for rid, x in got.items()} == {
            rid: (x.status, x.text) for rid, x in ((by_key[k], v) for k, v in real(list(by_key)).items())}
        assert got["r5"].text == "ok r5" and got["r3"].status == "error"


def test_kept_replies_share_repeated_strings(tmp_path):
    """Replies kept in memory hold one object per distinct short text / finish reason / usage key."""

    class Same(Recorder):
        async def generate(self, request):
            # fresh, equal-valued strings each time (as a JSON parser returns them)
            return Completion(text="".join(["Y", "es"]), finish_reason="".join(["st", "op"]),
                              usage={"".join(["prompt_", "tokens"]): 3})

    with RunStore(tmp_path) as store:
        got = asyncio.run(Engine({"model": Same([])}, store, concurrency=3, progress=False).run(_reqs(20)))
    texts = {id(r.text) for r in got.values()}
    finishes = {id(r.finish_reason) for r in got.values()}
    keys = {id(k) for r in got.values() for k in r.usage}
    assert len(got) == 20 and (len(texts), len(finishes), len(keys)) == (1, 1, 1)
    assert all(r.text == "Yes" and r.usage == {"prompt_tokens": 3} for r in got.values())
