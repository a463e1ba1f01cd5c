"""Reliability of a run against faults, damaged folders and bad input (issue: nothing scored that the model
did not say, nothing paid twice, no tracebacks). The command runs in-process (tests/clirun.py), in real processes
where one is killed or holds a folder; a real local HTTP server; no network;
inputs generated in the official RGB-Th-Bench layout (no ../shared/data needed)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from clirun import run_cli
from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
from lensbench.core.errors import ConfigError
from lensbench.runtime.folder import RUN_FILES, check_out_file
from lensbench.runtime.rows import count_ok
from lensbench.testing.server import FakeOpenAIServer


def cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    e = {**os.environ, **(env or {})}
    e.pop("OPENAI_API_KEY", None) if env is None or "OPENAI_API_KEY" not in env else None
    return run_cli(*args, env=e)  # in this process; the kill and lock tests start real ones


def answer_by_hash(body: dict) -> str:
    """A deterministic 'model': Yes/No from the question text (so faulty and clean runs can be compared)."""
    text = body["messages"][-1]["content"][-1]["text"]
    return "Yes, it is." if zlib.crc32(text.encode()) % 3 else "No."


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_rgbth_release(tmp_path_factory.mktemp("rgbth"), n_scenes=3)


def run_args(data: Path, out: Path, url: str, *extra: str) -> list[str]:
    return ["run", "rgb-th-bench", "--data-dir", str(data), "--model", "openai:fake", "--base-url", url,
            "--out", str(out), "--no-progress", "--format", "json", *extra]


def metrics_of(proc: subprocess.CompletedProcess) -> dict:
    doc = json.loads(proc.stdout)
    return {"metrics": doc["metrics"], "n": doc["counts"]["n"], "n_error": doc["counts"]["n_error"]}


@pytest.fixture(scope="module")
def clean_run(data, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """One clean run (its folder is never changed: tests that change a run copy it)."""
    out = tmp_path_factory.mktemp("clean") / "run"
    with FakeOpenAIServer(answer_by_hash) as srv:
        r = cli(*run_args(data, out, srv.url))
    assert r.returncode == 0, r.stderr
    return out, r


@pytest.fixture(scope="module")
def clean(clean_run) -> dict:
    return metrics_of(clean_run[1])


@pytest.mark.parametrize("rate", [0.10, 0.30])
@pytest.mark.parametrize("kind", ["null_content", "no_choices", "error_object"])
def test_empty_replies_are_retried_never_scored(data, tmp_path, clean, kind, rate):
    rnd = random.Random(f"{kind}{rate}")
    planned = {}

    def plan(key, attempt):  # each request faults on its first arrival with probability `rate`
        if attempt == 1:
            planned.setdefault(key, rnd.random() < rate)
            return kind if planned[key] else None
        return None

    with FakeOpenAIServer(answer_by_hash, fault_plan=plan) as srv:
        r = cli(*run_args(data, tmp_path / "run", srv.url))
        assert r.returncode == 0, r.stderr
        assert srv.faults[kind] > 0
    assert metrics_of(r) == clean
    with sqlite3.connect(tmp_path / "run" / "responses.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses WHERE status='ok' AND (text IS NULL OR text='')"
                          ).fetchone()[0] == 0


def test_empty_reply_that_never_recovers_is_an_error_and_resent(data, tmp_path, clean):
    always = FakeOpenAIServer(answer_by_hash, fault_plan=lambda k, a: "null_content")
    with always as srv:
        r = cli(*run_args(data, tmp_path / "run", srv.url, "--max-retries", "1", "--limit", "1"))
    assert r.returncode == 3, r.stderr  # incomplete: errors, not answers
    doc = json.loads(r.stdout)
    assert doc["counts"]["n"] == 0 and doc["counts"]["n_error"] > 0
    with FakeOpenAIServer(answer_by_hash) as srv:  # the next run sends them again
        r2 = cli(*run_args(data, tmp_path / "run", srv.url, "--limit", "1"))
        assert r2.returncode == 0, r2.stderr
        assert sum(srv.answered.values()) == doc["counts"]["n_error"]


def test_length_cut_reply_is_an_answer(tmp_path):
    from lensbench.backends.openai_compat import parse_chat_reply
    from lensbench.core.errors import TransportError

    body = {"choices": [{"message": {"content": None}, "finish_reason": "length"}]}
    assert parse_chat_reply(200, json.dumps(body), None, "u").text == ""
    body = {"choices": [{"message": {"content": None, "reasoning_content": "hmm"}, "finish_reason": "stop"}]}
    c = parse_chat_reply(200, json.dumps(body), None, "u")
    assert c.text == "" and c.reasoning == "hmm"
    for bad in ({"choices": []}, {"choices": [{"message": {"content": None}, "finish_reason": "stop"}]},
                {"error": {"message": "x"}}):
        with pytest.raises(TransportError) as ei:
            parse_chat_reply(200, json.dumps(bad), None, "u")
        assert ei.value.retryable


def _stored_rows(out: Path) -> int:
    """Replies in the run folder's store (0 while it does not exist yet or is being created)."""
    return count_ok(out) or 0


def test_one_process_owns_a_run_folder(data, tmp_path):
    out = tmp_path / "run"
    with FakeOpenAIServer(answer_by_hash, latency=0.5) as srv:
        first = subprocess.Popen([sys.executable, "-m", "lensbench", *run_args(data, out, srv.url, "--concurrency", "1")],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 30
            while sum(srv.received.values()) == 0 and time.time() < deadline:
                time.sleep(0.05)
            second = cli(*run_args(data, out, srv.url))
            assert second.returncode == 2
            assert f"PID {first.pid}" in second.stderr and "Traceback" not in second.stderr
            # kill only once a reply is stored: a folder with none is refused on resume without --yes (another
            # rule), and a fast second process can finish before the first reply arrives
            while _stored_rows(out) == 0 and time.time() < deadline and first.poll() is None:
                time.sleep(0.05)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
    # kill -9 leaves no stale lock: the folder resumes at once
    with FakeOpenAIServer(answer_by_hash) as srv:
        r = cli(*run_args(data, out, srv.url))
    assert r.returncode == 0, r.stderr


@pytest.fixture()
def finished(data, tmp_path) -> tuple[Path, dict]:
    out = tmp_path / "run"
    with FakeOpenAIServer(answer_by_hash) as srv:
        r = cli(*run_args(data, out, srv.url))
    assert r.returncode == 0, r.stderr
    return out, metrics_of(r)


def test_damaged_store_is_a_clear_error_and_repair_salvages(finished, data):
    out, before = finished
    db = out / "responses.sqlite"
    with sqlite3.connect(db) as c:
        n_rows = c.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(db.read_bytes())
    page = 4096
    raw[page * 2: page * 2 + 64] = b"\xff" * 64  # damage one b-tree page
    db.write_bytes(bytes(raw))
    for args in (run_args(data, out, "http://127.0.0.1:9/v1"), ["export", str(out)]):
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "lensbench repair" in r.stderr and "Traceback" not in r.stderr
    r = cli("repair", str(out))
    assert r.returncode == 0, r.stderr
    salvaged = int(r.stdout.split("salvaged ")[1].split()[0])
    assert 0 < salvaged <= n_rows
    assert list(out.glob("responses.sqlite.damaged-*"))
    with FakeOpenAIServer(answer_by_hash) as srv:  # only what was lost is bought again
        r = cli(*run_args(data, out, srv.url))
        assert r.returncode == 0, r.stderr
        assert sum(srv.answered.values()) == n_rows - salvaged
    assert metrics_of(r) == before


def test_missing_store_asks_before_rebuying(finished, data):
    out, before = finished
    (out / "responses.sqlite").unlink()
    for side in out.glob("responses.sqlite-*"):
        side.unlink()
    with FakeOpenAIServer(answer_by_hash) as srv:
        r = cli(*run_args(data, out, srv.url))
        assert r.returncode == 2 and "--yes" in r.stderr
        assert sum(srv.received.values()) == 0
        r = cli(*run_args(data, out, srv.url, "--yes"))
        assert r.returncode == 0, r.stderr
    assert metrics_of(r) == before


def test_truncated_manifest_is_rebuilt_from_the_store(finished, data):
    out, before = finished
    text = (out / "run.json").read_text()
    (out / "run.json").write_text(text[: len(text) // 2])
    assert cli("export", str(out)).returncode == 0
    with FakeOpenAIServer(answer_by_hash) as srv:
        r = cli(*run_args(data, out, srv.url))
        assert r.returncode == 0, r.stderr
        assert sum(srv.received.values()) == 0  # every reply was kept
    assert metrics_of(r) == before
    json.loads((out / "run.json").read_text())


def test_missing_result_is_rebuilt_by_report(finished):
    out, before = finished
    (out / "result.json").unlink()
    r = cli("report", str(out), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert metrics_of(r) == before
    assert (out / "result.json").is_file()


def _png_header_only(path: Path, w: int, h: int) -> None:
    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 16))
                     + chunk(b"IEND", b""))


@pytest.mark.parametrize("damage", ["truncated", "bomb", "not_an_image"])
def test_bad_media_is_found_before_any_request(tmp_path, damage):
    data = make_rgbth_release(tmp_path / "d", n_scenes=2)
    victim = data / "Source 1" / "Scene 1" / "thermal.jpg"
    if damage == "truncated":
        victim.write_bytes(victim.read_bytes()[: len(victim.read_bytes()) // 2])
    elif damage == "bomb":
        victim.unlink()
        victim = victim.with_suffix(".png")
        _png_header_only(victim, 30000, 30000)
        qf = data / "Source 1" / "Scene 1" / "questions.json"
        qf.write_text(qf.read_text().replace("thermal.jpg", "thermal.png"))
    else:
        victim.write_bytes(b"this is not an image")
    with FakeOpenAIServer(answer_by_hash) as srv:
        r = cli(*run_args(data, tmp_path / "run", srv.url))
        assert sum(srv.received.values()) == 0
    assert r.returncode == 2, r.stderr
    assert victim.name in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("url", ["not a url", "http://127.0.0.1:99999/v1", "ftp://127.0.0.1/v1"])
def test_malformed_base_url_is_reported_at_once(data, tmp_path, url):
    t0 = time.time()
    r = cli(*run_args(data, tmp_path / "run", url))
    assert r.returncode == 2 and "--base-url" in r.stderr and "Traceback" not in r.stderr
    assert time.time() - t0 < 15


def test_closed_port_fails_fast(data, tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    t0 = time.time()
    r = cli(*run_args(data, tmp_path / "run", f"http://127.0.0.1:{port}/v1"))
    elapsed = time.time() - t0
    assert r.returncode != 0 and "cannot be reached" in r.stderr
    assert elapsed < 15, elapsed


def test_bad_flags_are_rejected_before_the_run(data, tmp_path):
    with FakeOpenAIServer(answer_by_hash) as srv:
        r = cli(*run_args(data, tmp_path / "a", srv.url)[:-2], "--format", "xml")
        assert r.returncode == 2 and "--format" in r.stderr
        r = cli(*run_args(data, tmp_path / "b", srv.url), "--image-format", "gif")
        assert r.returncode == 2 and "--image-format" in r.stderr and "Traceback" not in r.stderr
        (tmp_path / "afile").write_text("x")
        r = cli(*run_args(data, tmp_path / "afile", srv.url))
        assert r.returncode == 2 and "is a file" in r.stderr
        r = cli(*run_args(data, tmp_path / "afile" / "sub", srv.url))
        assert r.returncode == 2 and "is a file" in r.stderr
        assert sum(srv.received.values()) == 0


def test_credentials_in_the_url_are_never_written(data, tmp_path):
    with FakeOpenAIServer(answer_by_hash) as srv:
        url = srv.url.replace("http://", "http://user:sk-secret123@")
        r = cli(*run_args(data, tmp_path / "run", url, "--limit", "1"), env={"OPENAI_API_KEY": "sk-env456"})
        assert r.returncode == 0, r.stderr
    for f in (tmp_path / "run").iterdir():
        if f.is_file():
            blob = f.read_bytes()
            assert b"sk-secret123" not in blob and b"sk-env456" not in blob, f
    assert "sk-secret123" not in r.stderr + r.stdout


def test_retry_after_is_capped(data, tmp_path):
    with FakeOpenAIServer(answer_by_hash, fault_plan=lambda k, a: "429" if a == 1 else None, retry_after=3600) as srv:
        t0 = time.time()
        r = cli(*run_args(data, tmp_path / "run", srv.url, "--limit", "1", "--max-retry-after", "0.2"))
        assert r.returncode == 0, r.stderr
    assert time.time() - t0 < 30


def test_no_key_and_no_base_url_does_not_target_a_public_api(data, tmp_path):
    r = cli("run", "rgb-th-bench", "--data-dir", str(data), "--model", "openai:gpt-4o", "--out", str(tmp_path / "r"))
    assert r.returncode == 2
    assert "OPENAI_API_KEY" in r.stderr and "api.openai.com" in r.stderr


# ------------------------------------------------------------------------------------------------------
# Issue 20 items 1, 2 and 12: no command writes over a run folder's own files; repair, export and report
# take the run lock (report and export shared: readers together, never beside a writer); repair leaves a
# healthy store alone; report says when the store behind a result.json is damaged or gone; a killed run's
# unsent requests are "not sent".
@pytest.fixture(scope="module")
def finished_once(clean_run) -> Path:
    """The clean run's folder (never changed: :func:`run_copy` copies it for each test that changes it)."""
    return clean_run[0]


@pytest.fixture()
def run_copy(finished_once, tmp_path) -> Path:
    import shutil

    return Path(shutil.copytree(finished_once, tmp_path / "run"))


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


def test_export_into_another_run_is_refused_and_a_plain_file_works(run_copy, finished_once, tmp_path):
    before = _digest(finished_once)
    r = cli("export", str(run_copy), "--out", str(finished_once / "result.json"))
    assert r.returncode == 2 and "result.json" in r.stderr
    assert _digest(finished_once) == before
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
    with FakeOpenAIServer(answer_by_hash, hold_after=20) as srv:
        p = subprocess.Popen([sys.executable, "-m", "lensbench", *run_args(data, out, srv.url)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        srv.wait_answered(20, p)
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
