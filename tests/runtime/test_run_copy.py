"""A run folder copied with hard links (``cp -al``) shares its store: writing it is refused, and
``lensbench copy`` makes an independent copy (issue 30, part 1). Real processes, a real kill -9 and a
local HTTP server; data generated in the official RGB-Th-Bench layout."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
from lensbench.runtime.rows import count_ok
from lensbench.runtime.sharing import StoreShared
from lensbench.runtime.store import RunStore
from lensbench.testing.server import FakeOpenAIServer


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.run([sys.executable, "-m", "lensbench", *args], capture_output=True, text=True, env=env,
                          timeout=180)


def answer(body: dict) -> str:
    text = body["messages"][-1]["content"][-1]["text"]
    return "Yes." if zlib.crc32(text.encode()) % 3 else "No."


def run_args(data: Path, out: Path, url: str) -> list[str]:
    return ["run", "rgb-th-bench", "--data-dir", str(data), "--model", "openai:fake", "--base-url", url,
            "--out", str(out), "--no-progress", "--format", "json", "--concurrency", "2"]


def cp_al(src: Path, dst: Path) -> None:
    """What ``cp -al src dst`` does: the same folders, every file a hard link."""
    for root, dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            os.link(Path(root) / f, dst / rel / f)


def ok_keys(run: Path) -> set[str]:
    con = sqlite3.connect(f"file:{run / 'responses.sqlite'}?mode=ro", uri=True)
    try:
        return {k for (k,) in con.execute("SELECT key FROM responses WHERE status = 'ok'")}
    finally:
        con.close()


def test_store_refuses_hard_and_symbolic_links(tmp_path):
    RunStore(tmp_path / "a").close()
    os.link(tmp_path / "a" / "responses.sqlite", tmp_path / "twin.sqlite")
    with pytest.raises(StoreShared, match=r"responses.sqlite has 2 names .*lensbench copy"):
        RunStore(tmp_path / "a")
    RunStore(tmp_path / "a", readonly=True).close()  # a reader may open it: mode=ro changes nothing
    os.unlink(tmp_path / "twin.sqlite")
    RunStore(tmp_path / "a").close()  # one name again: writable
    (tmp_path / "b").mkdir()
    os.symlink(tmp_path / "a" / "responses.sqlite", tmp_path / "b" / "responses.sqlite")
    with pytest.raises(StoreShared, match="symbolic link"):
        RunStore(tmp_path / "b")
    (tmp_path / "c").mkdir()
    RunStore(tmp_path / "c").close()
    (tmp_path / "c" / "responses.sqlite-wal").write_bytes(b"")
    os.link(tmp_path / "c" / "responses.sqlite-wal", tmp_path / "other-wal")
    with pytest.raises(StoreShared, match=r"responses.sqlite-wal has 2 names"):
        RunStore(tmp_path / "c")


def test_readers_of_a_shared_store_leave_its_wal_alone(tmp_path):
    """report's integrity check and export read a hard-linked store read-only: the WAL the two folders share
    (replies of a killed run, not yet in the database file) keeps every byte."""
    from lensbench.runtime.export import export_records
    from lensbench.runtime.repair import store_problem

    code = ("import os, sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA wal_autocheckpoint=0'); "
            "db.executescript(open(sys.argv[2]).read()); "
            "[db.execute(\"INSERT INTO responses (key, request_id, status, text, created) VALUES (?, ?, 'ok', 'Yes', 0)\", "
            "(f'k{i}', f'r{i}')) for i in range(50)]; os._exit(0)")  # killed: never closed, never checkpointed
    run = tmp_path / "run"
    run.mkdir()
    schema = tmp_path / "schema.sql"
    from lensbench.runtime.store import _SCHEMA
    schema.write_text(_SCHEMA)
    subprocess.run([sys.executable, "-c", code, str(run / "responses.sqlite"), str(schema)], check=True)
    wal = run / "responses.sqlite-wal"
    before = wal.read_bytes()
    assert len(before) > 0
    cp_al(run, tmp_path / "copy")
    copy_wal = tmp_path / "copy" / "responses.sqlite-wal"

    def untouched() -> bool:  # the copy's WAL is still the original's file, every byte as it was
        return copy_wal.exists() and os.path.samefile(copy_wal, wal) and wal.read_bytes() == before

    assert store_problem(tmp_path / "copy" / "responses.sqlite") is None
    assert untouched()
    assert len(list(export_records(tmp_path / "copy"))) == 50
    assert untouched()
    assert len(ok_keys(run)) == 50


def test_hard_linked_copy_is_refused_and_lensbench_copy_is_independent(tmp_path):
    data = make_rgbth_release(tmp_path / "data", n_scenes=3)
    orig, linked, safe, done_copy = (tmp_path / n for n in ("orig", "linked", "safe", "done-copy"))
    with FakeOpenAIServer(answer, latency=0.03) as srv:
        p = subprocess.Popen([sys.executable, "-m", "lensbench", *run_args(data, orig, srv.url)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        srv.wait_answered(30, p)
        p.kill()  # kill -9: the replies stay in the WAL, never checkpointed
        p.wait()
        time.sleep(0.1)
        wal = orig / "responses.sqlite-wal"
        assert wal.is_file() and wal.stat().st_size > 0
        before = ok_keys(orig)
        assert len(before) >= 20
        cp_al(orig, linked)

        r = cli("report", str(linked))  # a reader of the copy: reads, never checkpoints the shared WAL away
        assert "Traceback" not in r.stderr
        assert ok_keys(orig) == before and wal.stat().st_size > 0
        r = cli(*run_args(data, linked, srv.url))  # resume in the copy: refused before anything is sent
        assert r.returncode == 2, r.stderr
        assert "shares its store with another folder" in r.stderr and "lensbench copy" in r.stderr
        assert "Traceback" not in r.stderr and r.stderr.count("\n") <= 3
        r = cli(*run_args(data, orig, srv.url))  # the original is shared too: refused alike
        assert r.returncode == 2 and "responses.sqlite" in r.stderr
        assert ok_keys(orig) == before  # nothing rolled back

        r = cli("copy", str(orig), str(safe))  # a safe copy of the killed run: WAL replies included
        assert r.returncode == 0, r.stderr
        assert f"{len(before)} replies" in r.stdout
        assert ok_keys(safe) == before and os.stat(safe / "responses.sqlite").st_nlink == 1
        assert cli("copy", str(orig), str(safe)).returncode == 2  # an existing DEST is refused

        for f in sorted(linked.rglob("*"), reverse=True):  # remove the hard-linked copy: the original resumes
            f.unlink() if f.is_file() else f.rmdir()
        srv.answered.clear()
        r = cli(*run_args(data, orig, srv.url))
        assert r.returncode == 0, r.stderr
        assert before <= ok_keys(orig)
        total = len(ok_keys(orig))
        assert sum(srv.answered.values()) == total - len(before)  # only what was missing was bought
        metrics = json.loads(r.stdout)["metrics"]

        r = cli("copy", str(orig), str(done_copy))
        assert r.returncode == 0, r.stderr
        srv.answered.clear()
        r = cli(*run_args(data, done_copy, srv.url))  # the copy resumes with nothing to send
        assert r.returncode == 0, r.stderr
        assert sum(srv.answered.values()) == 0
        assert json.loads(r.stdout)["metrics"] == metrics
        srv.answered.clear()
        r = cli(*run_args(data, safe, srv.url))  # the copy of the killed run finishes independently
        assert r.returncode == 0, r.stderr
        assert sum(srv.answered.values()) == total - len(before)
    assert count_ok(orig) == total == count_ok(safe)
