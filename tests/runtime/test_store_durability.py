"""Issue 20 item 4: a reply is in the store before its worker sends again (group commit), so kill -9
loses only requests in flight; one row SQLite cannot bind costs only itself."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from lensbench.backends.base import Backend
from lensbench.core.types import Completion, Message, Request
from lensbench.runtime.engine import Engine
from lensbench.runtime.rows import count_ok
from lensbench.runtime.store import BadRow, RunStore
from lensbench.core.types import StoredResponse
from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
from lensbench.testing.server import FakeOpenAIServer


def _req(i: int) -> Request:
    return Request(id=f"r{i}", messages=(Message.user(f"question {i}"),))


def _ok_rows(folder: Path) -> int:
    return count_ok(folder) or 0


class Watching(Backend):
    """Answers at once; before each answer it counts, through a second connection, the replies already
    in the database, so the test sees how many returned replies were not yet durable at each send."""

    fingerprint = "watching"

    def __init__(self, folder: Path, delay: float = 0.0):
        self.folder, self.delay = folder, delay
        self.returned = 0
        self.gaps: list[int] = []

    async def generate(self, request: Request) -> Completion:
        self.gaps.append(self.returned - _ok_rows(self.folder))
        if self.delay:
            await asyncio.sleep(self.delay)
        self.returned += 1
        return Completion(text=f"reply {request.id}")


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_no_worker_sends_again_before_its_reply_is_committed(tmp_path, concurrency):
    backend = Watching(tmp_path, delay=0.001)
    with RunStore(tmp_path) as store:
        engine = Engine({"model": backend}, store, concurrency=concurrency, progress=False)
        got = asyncio.run(engine.run([_req(i) for i in range(300)]))
    assert sum(r.ok for r in got.values()) == 300
    # at any send, the replies returned but not committed are those of the OTHER workers (at most C - 1)
    assert max(backend.gaps) <= concurrency - 1, max(backend.gaps)


class OneBadReply(Backend):
    """Answers every request; request ``bad`` gets a list as its text (as a broken replay file could give)."""

    fingerprint = "one-bad"

    def __init__(self, bad: str):
        self.bad = bad

    async def generate(self, request: Request) -> Completion:
        await asyncio.sleep(0)
        if request.id == self.bad:
            return Completion(text=["Yes", "No"])  # type: ignore[arg-type]
        return Completion(text="Yes")


def test_a_row_that_cannot_be_bound_costs_only_itself(tmp_path):
    with RunStore(tmp_path) as store:
        engine = Engine({"model": OneBadReply("r7")}, store, concurrency=8, progress=False)
        got = asyncio.run(engine.run([_req(i) for i in range(40)]))
    assert sum(r.ok for r in got.values()) == 39
    assert got["r7"].status == "error" and "reply text is list" in got["r7"].error
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        rows = dict(db.execute("SELECT request_id, status FROM responses"))
    assert len(rows) == 40 and rows["r7"] == "error" and sum(s == "ok" for s in rows.values()) == 39


def test_put_refuses_a_bad_row_by_name_and_keeps_the_rest(tmp_path):
    with RunStore(tmp_path) as store:
        store.put(StoredResponse(key="a", request_id="ra", status="ok", text="fine"))
        with pytest.raises(BadRow, match=r"'rb'.*usage is not JSON"):
            store.put(StoredResponse(key="b", request_id="rb", status="ok", text="x", usage={"t": object()}))
        with pytest.raises(BadRow, match=r"'rc'.*latency_s is str"):
            store.put(StoredResponse(key="c", request_id="rc", status="ok", text="x", latency_s="1s"))  # type: ignore
        store.put(StoredResponse(key="d", request_id="rd", status="ok", text="also fine"))
        assert store.counts() == {"ok": 2, "error": 0}


def _answer(body: dict) -> str:
    text = body["messages"][-1]["content"][-1]["text"]
    return "Yes." if zlib.crc32(text.encode()) % 2 else "No."


def test_kill_9_rebuys_at_most_the_requests_in_flight(tmp_path):
    """Three kill -9 at different points of one run (each resumed): the replies the server answered but
    the store lacks after each kill are at most the concurrency (the requests in flight)."""
    data = make_rgbth_release(tmp_path / "d", n_scenes=8)
    out = tmp_path / "run"
    concurrency = 4
    argv = [sys.executable, "-m", "lensbench", "run", "rgb-th-bench", "--data-dir", str(data), "--model",
            "openai:fake", "--base-url", "", "--out", str(out), "--no-progress", "--concurrency", str(concurrency)]
    lost = []
    with FakeOpenAIServer(_answer, latency=0.003) as srv:
        argv[argv.index("--base-url") + 1] = srv.url
        for wait_for in (30, 120, 200):
            start = sum(srv.answered.values())
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            srv.wait_answered(start + wait_for, p)
            p.kill()
            p.wait()
            time.sleep(0.1)  # replies the server was writing when the client died are counted by now
            lost.append(sum(srv.answered.values()) - _ok_rows(out) - sum(lost))
        final = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    assert all(0 <= n <= concurrency for n in lost), lost
    assert sum(srv.answered.values()) - _ok_rows(out) == sum(lost)  # nothing else was bought twice
    assert not os.path.exists(out / "run.json.tmp")


def test_a_row_sqlite_itself_refuses_is_left_out_alone(tmp_path, monkeypatch):
    """Should a row pass the checks yet SQLite refuse it (here: a status its CHECK constraint forbids), the
    group commit writes the others one by one and lists that row; every waiter is released."""
    from lensbench.runtime import store as store_mod

    real = store_mod.make_row
    monkeypatch.setattr(store_mod, "make_row", lambda resp, role, rj: real(resp, role, rj) if resp.status != "maybe"
                        else (resp.key, resp.request_id, role, "maybe", None, None, None, 1, None, None, None, None,
                              0.0))

    async def main(store):
        for i, status in enumerate(["ok", "maybe", "ok"]):
            store.put(StoredResponse(key=f"k{i}", request_id=f"r{i}", status=status, text="t"))
        await asyncio.wait_for(store.durable(), 5)

    with RunStore(tmp_path) as store:
        asyncio.run(main(store))
        assert store.counts() == {"ok": 2, "error": 0}
        assert len(store.bad_rows) == 1 and "'r1'" in store.bad_rows[0]


def test_rows_queued_in_an_ended_event_loop_are_committed_by_the_next(tmp_path):
    """A store used by two asyncio.run calls: a row queued just before the first loop ended (its group
    commit never ran) is committed as soon as the store is used in the next loop, and durable() returns."""
    async def put_and_leave(store, i):
        store.put(StoredResponse(key=f"k{i}", request_id=f"r{i}", status="ok", text="t"))

    async def put_and_wait(store, i):
        store.put(StoredResponse(key=f"k{i}", request_id=f"r{i}", status="ok", text="t"))
        await asyncio.wait_for(store.durable(), 5)

    with RunStore(tmp_path) as store:
        loop = asyncio.new_event_loop()
        loop.run_until_complete(put_and_leave(store, 0))
        loop.close()  # the scheduled commit never ran
        asyncio.run(put_and_wait(store, 1))
        assert _ok_rows(tmp_path) == 2
