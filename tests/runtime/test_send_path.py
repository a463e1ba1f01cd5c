"""The one send path (issue 21): what the three ways in share beyond tests/runtime/test_engine_paths.py.

A failure that is not a transport failure (a backend's ConfigError, a bug) stops the phase on every way
in and nothing more is sent; a stream's progress display grows with the batches when no total is given and
says "all N replies cached" when nothing was to be sent; the default ``generate_batch`` stops at a refused
connection.
"""

from __future__ import annotations

import asyncio
import io
import re

import pytest
from rich.console import Console

from lensbench.backends.base import Backend
from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.types import Completion, Message, Request
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore


class Picky(Backend):
    """Answers ``"A:<text>"``; raises ConfigError for the text ``bad`` (as the replay backend does for a
    file recorded under another input mode); records every call."""

    fingerprint = "picky"

    def __init__(self, batch_size: int = 1):
        self.batch_size, self.calls = batch_size, []

    async def generate(self, request: Request) -> Completion:
        text = request.messages[0].parts[0].text
        self.calls.append(text)
        if text == "bad":
            raise ConfigError("recorded under another input mode")
        await asyncio.sleep(0)
        return Completion(text=f"A:{text}")


def _req(i: int, text: str) -> Request:
    return Request(id=f"r{i}", messages=(Message.user(text),))


def _send(engine: Engine, requests: list[Request], way: str, chunk: int = 2, total: int | None = None):
    if way != "streamed":
        return asyncio.run(engine.run(requests))

    async def batches():
        for i in range(0, len(requests), chunk):
            await asyncio.sleep(0)
            yield requests[i:i + chunk]

    return asyncio.run(engine.run_stream(batches(), total=total))


@pytest.mark.parametrize("way,batch", [("plain", 1), ("batched", 2), ("streamed", 1)])
def test_a_backend_error_that_is_not_a_transport_failure_stops_the_phase(tmp_path, way, batch):
    backend = Picky(batch)
    with RunStore(tmp_path) as store:
        engine = Engine({"model": backend}, store, concurrency=1, progress=False)
        reqs = [_req(0, "q00"), _req(1, "bad")] + [_req(i, f"q{i:02}") for i in range(2, 12)]  # one length: batches keep the order
        with pytest.raises(ConfigError, match="another input mode"):
            _send(engine, reqs, way)
        assert "bad" in backend.calls and len(backend.calls) <= 2  # nothing sent after it
        assert all(r["status"] == "ok" for r in store.iter_rows())  # the failure is not stored as a reply


def test_a_stream_without_a_total_grows_the_display_and_counts_cached(tmp_path):
    out = io.StringIO()
    with RunStore(tmp_path) as store:
        console = Console(file=out, force_terminal=False, width=300)
        engine = Engine({"model": Picky()}, store, concurrency=2, progress=True, console=console)
        asyncio.run(engine.run([_req(0, "q2"), _req(1, "q5")]))  # stored before the stream
        out.truncate(0), out.seek(0)
        got = _send(engine, [_req(i, f"q{i}") for i in range(7)], "streamed", chunk=3)
    assert all(r.ok for r in got.values()) and len(got) == 7
    last = re.findall(r"requests: (\d+)/(\d+) \((\d+) cached\)", out.getvalue())[-1]
    assert tuple(map(int, last)) == (7, 7, 2)


@pytest.mark.parametrize("way", ["plain", "streamed"])
def test_nothing_to_send_says_all_cached(tmp_path, way):
    out = io.StringIO()
    with RunStore(tmp_path) as store:
        console = Console(file=out, force_terminal=False, width=300)
        engine = Engine({"model": Picky()}, store, progress=True, console=console)
        reqs = [_req(i, f"q{i}") for i in range(5)]
        asyncio.run(engine.run(reqs))
        out.truncate(0), out.seek(0)
        got = _send(engine, reqs, way)
    assert len(got) == 5 and out.getvalue().strip() == "requests: all 5 replies cached"


def test_default_generate_batch_stops_at_a_refused_connection():
    class Down(Backend):
        fingerprint = "down"

        def __init__(self):
            self.calls = []

        async def generate(self, request):
            self.calls.append(request.id)
            if request.id == "r0":
                raise TransportError("HTTP 500", retryable=True, kind="http")
            raise TransportError("cannot connect", retryable=True, kind="refused")

    b = Down()
    res = asyncio.run(b.generate_batch([_req(i, f"q{i}") for i in range(4)]))
    assert b.calls == ["r0", "r1"]  # r2, r3 not sent: the endpoint is not listening
    assert [r.kind for r in res] == ["http", "refused", "refused", "refused"] and res[2] is res[1]
