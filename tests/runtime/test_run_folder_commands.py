"""Issue 20 items 1, 2 and 12: no command writes over a run folder's own files; repair, export and report
take the run lock (report and export shared: readers together, never beside a writer); repair leaves a
healthy store alone; report says when the store behind a result.json is damaged or gone; a killed run's
unsent requests are "not sent". Real processes, a real local server, generated RGB-Th-Bench data."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from lensbench.core.errors import ConfigError
from lensbench.runtime.folder import RUN_FILES, check_out_file
from lensbench.testing.data import make_rgbth_release
from lensbench.testing.server import FakeOpenAIServer


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lensbench", *args], capture_output=True, text=True, timeout=timeout)


def _answer(body: dict) -> str:
    text = body["messages"][-1]["content"][-1]["text"]
    return "Yes." if zlib.crc32(text.encode()) % 2 else "No."


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_rgbth_release(tmp_path_factory.mktemp("rgbth"), n_scenes=3)


def _run_args(data: Path, out: Path, url: str, *extra: str) -> list[str]:
    return ["run", "rgb-th-bench", "--data-dir", str(data), "--model", "openai:fake", "--base-url", url,
            "--out", str(out), "--no-progress", "--format", "json", *extra]


@pytest.fixture(scope="module")
def finished(data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "run"
    with FakeOpenAIServer(_answer) as srv:
        r = cli(*_run_args(data, out, srv.url))
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture()
def run_copy(finished, tmp_path) -> Path:
    import shutil

    return Path(shutil.copytree(finished, tmp_path / "run"))


def _rows(run: Path) -> int:
    with sqlite3.connect(run / "responses.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def _digest(run: Path) -> dict[str, str]:
    """The run folder's files by content; the store by its rows (SQLite's side files come and go)."""
    out = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.iterdir())
           if p.is_file() and not p.name.startswith("responses.sqlite") and p.name != ".lock"}
    if (run / "responses.sqlite").exists():
        with sqlite3.connect(run / "responses.sqlite") as db:
            out["responses.sqlite"] = repr(db.execute("SELECT * FROM responses ORDER BY key").fetchall())
    return out


# ------------------------------------------------------------------------------------- item 1: --out
@pytest.mark.parametrize("name", sorted(RUN_FILES) + ["responses.sqlite.damaged-20250101-000000"])
def test_every_run_file_is_refused_as_an_output(run_copy, name):
    with pytest.raises(ConfigError, match="file of the run folder"):
        check_out_file(run_copy / name)


def test_guard_follows_symlinks_and_guards_any_run_folder(run_copy, tmp_path):
    link = tmp_path / "innocent.jsonl"
    link.symlink_to(run_copy / "responses.sqlite")
    with pytest.raises(ConfigError, match="innocent.jsonl"):
        check_out_file(link)
    check_out_file(tmp_path / "elsewhere" / "run.json")  # no run there: a plain new file
    check_out_file(run_copy / "replies.jsonl")  # a new file beside the run's own ones


@pytest.mark.parametrize("cmd", [["export"], ["view", "--no-figures"]])
@pytest.mark.parametrize("target", ["responses.sqlite", "run.json", "samples.jsonl"])
def test_export_and_view_never_write_over_the_run(run_copy, tmp_path, cmd, target):
    before, n = _digest(run_copy), _rows(run_copy)
    r = cli(cmd[0], str(run_copy), *cmd[1:], "--out", str(run_copy / target))
    assert r.returncode == 2, r.stderr
    assert str(run_copy / target) in r.stderr and "Traceback" not in r.stderr
    assert _digest(run_copy) == before and _rows(run_copy) == n


def test_export_into_another_run_is_refused_and_a_plain_file_works(run_copy, finished, tmp_path):
    before = _digest(finished)
    r = cli("export", str(run_copy), "--out", str(finished / "result.json"))
    assert r.returncode == 2 and "result.json" in r.stderr
    assert _digest(finished) == before
    r = cli("export", str(run_copy), "--out", str(tmp_path / "replay.jsonl"))
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "replay.jsonl").read_text().splitlines()) == _rows(run_copy)
    assert not list(tmp_path.glob("*.tmp"))


# ----------------------------------------------------------------------------------- item 2: the lock
HOLD = ("import sys, time\nfrom lensbench.runtime.lock import RunLock\n"
        "lock = RunLock(sys.argv[1], shared=sys.argv[2] == 'shared')\nprint('held', flush=True)\ntime.sleep(60)\n")


@pytest.fixture()
def holder():
    procs = []

    def hold(run: Path, mode: str) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-c", HOLD, str(run), mode], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "held"
        procs.append(p)
        return p

    yield hold
    for p in procs:
        p.kill()
        p.wait()


def test_repair_export_and_report_refuse_a_folder_being_written(run_copy, holder):
    writer = holder(run_copy, "exclusive")  # what a live 'lensbench run' holds
    before = _digest(run_copy)
    for args, code in ((["repair"], 2), (["export"], 2), (["report"], 3)):
        r = cli(*args, str(run_copy))
        assert r.returncode == code, (args, r.stderr)
        assert f"PID {writer.pid}" in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    assert _digest(run_copy) == before
    assert not list(run_copy.glob("responses.sqlite.damaged-*"))


def test_readers_read_together_and_keep_repair_out(run_copy, holder):
    holder(run_copy, "shared")  # another report or export reading the run
    r = cli("report", str(run_copy), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["n_error"] == 0
    assert cli("export", str(run_copy)).returncode == 0
    r = cli("repair", str(run_copy))
    assert r.returncode == 2 and "being read" in r.stderr


def test_repair_leaves_a_healthy_store_alone(run_copy):
    before, n = _digest(run_copy), _rows(run_copy)
    r = cli("repair", str(run_copy))
    assert r.returncode == 0, r.stderr
    assert "healthy" in r.stdout and f"{n} replies" in r.stdout
    assert not list(run_copy.glob("responses.sqlite.damaged-*"))
    assert _digest(run_copy) == before


# ------------------------------------------------------------------------- item 12: report tells the truth
def _damage(run: Path) -> None:
    with sqlite3.connect(run / "responses.sqlite") as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray((run / "responses.sqlite").read_bytes())
    raw[4096 * 2: 4096 * 2 + 64] = b"\xff" * 64
    (run / "responses.sqlite").write_bytes(bytes(raw))


def test_report_of_a_damaged_store_says_so_and_points_to_repair(run_copy):
    _damage(run_copy)
    r = cli("report", str(run_copy))
    assert r.returncode == 3, r.stderr
    assert "damaged" in r.stderr and f"lensbench repair {run_copy}" in r.stderr and "Traceback" not in r.stderr
    assert "RGB-Th-Bench" in r.stdout  # the last written numbers are still shown, marked


def test_report_of_a_deleted_store_says_so(run_copy):
    for p in run_copy.glob("responses.sqlite*"):
        p.unlink()
    r = cli("report", str(run_copy))
    assert r.returncode == 3, r.stderr
    assert "missing" in r.stderr and "responses.sqlite" in r.stderr


def test_a_killed_run_reports_unsent_requests_as_not_sent(data, tmp_path):
    out = tmp_path / "run"
    with FakeOpenAIServer(_answer, hold_after=20) as srv:
        p = subprocess.Popen([sys.executable, "-m", "lensbench", *_run_args(data, out, srv.url)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sum(srv.answered.values()) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # the 20 replies are stored; every other request is held unanswered
        p.kill()
        p.wait()
        srv.release()
    assert not (out / "result.json").exists()
    r = cli("report", str(out))
    assert r.returncode == 0, r.stderr
    assert "not sent" in r.stdout and "failed in transport" not in r.stdout, r.stdout
    doc = json.loads((out / "result.json").read_text())
    assert doc["extra"]["not_sent"] == doc["counts"]["n_error"] > 0
    assert os.path.exists(out / "samples.jsonl")
