"""Issue 20 item 5: a full disk. A write the disk refuses is retried (a 0.3 s outage costs nothing), the
workers wait meanwhile (nothing more is bought), and a lasting one ends ``run`` / ``report`` in one
line, no traceback, no temporary file, every reply stored before kept.

In-process tests inject SQLite's own "database or disk is full" through a connection subclass; the
CLI tests fill a real tmpfs (:class:`lensbench.testing.small_disk.SmallDisk`; skipped where a private
mount namespace is not allowed)."""

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
from lensbench.core.writes import WriteFailed
from lensbench.runtime import store as store_mod
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore
from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
from lensbench.testing.server import FakeOpenAIServer
from lensbench.testing.small_disk import SmallDisk, small_disk_available

DISK = {"full": False}


class FullDiskConnection(sqlite3.Connection):
    """A connection whose writes fail as SQLite's do on a full disk while ``DISK["full"]``."""

    def _check(self, sql: str) -> None:
        if DISK["full"] and sql.lstrip().upper().startswith(("INSERT", "COMMIT")):
            raise sqlite3.OperationalError("database or disk is full")

    def execute(self, sql, *args):
        self._check(sql)
        return super().execute(sql, *args)

    def executemany(self, sql, *args):
        self._check(sql)
        return super().executemany(sql, *args)


@pytest.fixture()
def flaky_disk(monkeypatch, tmp_path):
    real = sqlite3.connect
    DISK["full"] = False

    def connect(path, *a, **k):
        if str(path).startswith(str(tmp_path)):
            k["factory"] = FullDiskConnection
        return real(path, *a, **k)

    monkeypatch.setattr(store_mod.sqlite3, "connect", connect)
    yield DISK
    DISK["full"] = False


class Filling(Backend):
    """Answers after ``delay``; when the ``at``-th request is asked, the disk fills for ``outage_s``
    seconds (None: for good). Records the time of every request."""

    fingerprint = "filling"

    def __init__(self, at: int, outage_s: float | None, delay: float = 0.002):
        self.at, self.outage_s, self.delay = at, outage_s, delay
        self.asked: list[float] = []
        self.full_since: float | None = None

    async def generate(self, request: Request) -> Completion:
        self.asked.append(time.monotonic())
        if len(self.asked) == self.at:
            DISK["full"] = True
            self.full_since = time.monotonic()
            if self.outage_s is not None:
                asyncio.get_running_loop().call_later(self.outage_s, DISK.__setitem__, "full", False)
        await asyncio.sleep(self.delay)
        return Completion(text=f"reply {request.id}")


def _reqs(n: int) -> list[Request]:
    return [Request(id=f"r{i}", messages=(Message.user(f"question {i}"),)) for i in range(n)]


def test_a_short_outage_is_retried_and_costs_nothing(tmp_path, flaky_disk):
    backend = Filling(at=30, outage_s=0.3)
    with RunStore(tmp_path) as store:
        engine = Engine({"model": backend}, store, concurrency=4, progress=False)
        got = asyncio.run(engine.run(_reqs(200)))
    assert sum(r.ok for r in got.values()) == 200
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses WHERE status='ok'").fetchone()[0] == 200
    during = [t for t in backend.asked if backend.full_since < t < backend.full_since + 0.25]
    assert len(during) <= 4  # the workers waited for the disk: only requests already on their way were sent


def test_a_lasting_outage_stops_the_run_keeping_every_stored_reply(tmp_path, flaky_disk, monkeypatch):
    monkeypatch.setattr(RunStore, "WRITE_RETRY_S", 0.4)
    backend = Filling(at=30, outage_s=None)
    with pytest.raises(WriteFailed) as ei:
        with RunStore(tmp_path) as store:
            engine = Engine({"model": backend}, store, concurrency=4, progress=False)
            asyncio.run(engine.run(_reqs(200)))
    msg = str(ei.value)
    assert "responses.sqlite" in msg and "disk is full" in msg and "run the same command" in msg
    DISK["full"] = False
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM responses WHERE status='ok'").fetchone()[0]
    assert 25 <= stored < 30
    assert len(backend.asked) - stored <= 4  # lost: only the requests in flight when the disk filled


# ----------------------------------------------------------------------------- a real disk that fills
needs_disk = pytest.mark.skipif(not small_disk_available(), reason="no private tmpfs mount (unshare/nsenter)")


def _answer(body: dict) -> str:
    text = body["messages"][-1]["content"][-1]["text"]
    return "Yes." if zlib.crc32(text.encode()) % 2 else "No."


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_rgbth_release(tmp_path_factory.mktemp("rgbth"), n_scenes=4)


def _run_argv(disk: SmallDisk, data: Path, url: str) -> list[str]:
    return disk.prefix() + [sys.executable, "-m", "lensbench", "run", "rgb-th-bench", "--data-dir", str(data),
                            "--model", "openai:fake", "--base-url", url, "--out", str(disk.path / "run"),
                            "--no-progress", "--concurrency", "4", "--format", "json"]


def _ok_rows(path: Path) -> int:
    """Ok rows of the store at ``path`` (reached through /proc/<pid>/root, which SQLite would resolve to this
    namespace's folder: the store and its WAL are copied out first)."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as td:
        for side in ("", "-wal"):
            if Path(str(path) + side).exists():
                shutil.copyfile(str(path) + side, Path(td) / ("s.sqlite" + side))
        with sqlite3.connect(Path(td) / "s.sqlite") as db:
            return db.execute("SELECT COUNT(*) FROM responses WHERE status='ok'").fetchone()[0]


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert lines and lines[-1].startswith("error: cannot write"), err
    return lines[-1]


@needs_disk
@pytest.mark.parametrize("outage_s", [0.3, None])
def test_run_on_a_disk_that_fills(data, outage_s):
    env = {**os.environ, "LENSBENCH_WRITE_RETRY_S": "1.5"}  # a lasting outage gives up after 1.5 s
    with SmallDisk(8192) as disk, FakeOpenAIServer(_answer, latency=0.01) as srv:
        p = subprocess.Popen(_run_argv(disk, data, srv.url), env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        srv.wait_answered(20, p)
        disk.outage(outage_s)
        _out, err = p.communicate(timeout=120)
        disk.free()
        run = disk.outside("run")
        leftovers = [f.name for f in run.iterdir() if f.name.endswith(".tmp")]
        answered_before = sum(srv.answered.values())
        stored = _ok_rows(run / "responses.sqlite")
        if outage_s is None:
            assert p.returncode == 2, err
            line = _one_line_error(err)
            assert "disk" in line and "responses.sqlite" in line and "run the same command" in line
            assert leftovers == []
            assert 0 <= answered_before - stored <= 4  # the requests in flight when the disk filled
            r = subprocess.run(_run_argv(disk, data, srv.url), env=env, capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr
        else:
            assert p.returncode == 0, err
            assert leftovers == []
        n_unique = len(srv.answered)
        assert sum(srv.answered.values()) - n_unique <= 4  # re-bought: at most the requests in flight
        assert _ok_rows(run / "responses.sqlite") == n_unique


@needs_disk
def test_report_on_a_full_disk_is_one_line(data):
    with SmallDisk(8192) as disk, FakeOpenAIServer(_answer) as srv:
        r = subprocess.run(_run_argv(disk, data, srv.url), capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        (disk.outside("run") / "result.json").unlink()  # report rebuilds it, and must write it
        disk.fill()
        r = subprocess.run(disk.prefix() + [sys.executable, "-m", "lensbench", "report", str(disk.path / "run")],
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "LENSBENCH_WRITE_RETRY_S": "1"})
        names = sorted(f.name for f in disk.outside("run").iterdir())
        disk.free()
    assert r.returncode == 3, r.stderr  # the run folder is listed as not reported
    assert "Traceback" not in r.stderr and "free space" in r.stderr, r.stderr
    assert len([line for line in r.stderr.splitlines() if "cannot" in line]) == 1
    assert not [n for n in names if n.endswith(".tmp")], names


@pytest.fixture()
def refusing_open(monkeypatch):
    """Path.open of a '*.tmp' file fails with ENOSPC until ``state["until"]`` (monotonic seconds)."""
    import errno
    import pathlib

    state = {"until": 0.0, "refused": 0}
    real_open = pathlib.Path.open

    def open_(self, mode="r", *a, **k):
        if "w" in mode and self.name.endswith(".tmp") and time.monotonic() < state["until"]:
            state["refused"] += 1
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_open(self, mode, *a, **k)

    monkeypatch.setattr(pathlib.Path, "open", open_)
    return state


def test_run_folder_files_ride_out_a_short_outage(tmp_path, refusing_open):
    from lensbench.runtime.folder import write_json

    refusing_open["until"] = time.monotonic() + 0.3
    write_json(tmp_path / "run.json", {"benchmark": "x"})
    assert refusing_open["refused"] > 0
    assert (tmp_path / "run.json").read_text().startswith("{") and not list(tmp_path.glob("*.tmp"))


def test_a_lasting_outage_leaves_the_old_file_and_no_temporary(tmp_path, refusing_open, monkeypatch):
    from lensbench.core import writes
    from lensbench.runtime.folder import write_json

    (tmp_path / "run.json").write_text('{"old": true}')
    monkeypatch.setattr(writes, "WRITE_RETRY_S", 0.3)
    refusing_open["until"] = time.monotonic() + 60
    with pytest.raises(writes.WriteFailed, match=r"run\.json.*no space left on device"):
        write_json(tmp_path / "run.json", {"benchmark": "x"})
    assert (tmp_path / "run.json").read_text() == '{"old": true}' and not list(tmp_path.glob("*.tmp"))
