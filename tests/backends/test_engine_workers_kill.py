"""After kill -9 of ``lensbench run``, the launched engine's forked workers die too and its scratch folder
goes (issue 30, part 8): the watcher beside the server (lensbench.backends.reaper) stops the group; a
later run removes scratch folders of dead lensbench processes. Real processes: the stand-in engine forks
real workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from lensbench.backends.reaper import pid_alive as alive
from lensbench.backends.reaper import stop_group

STANDIN = f"{sys.executable} -m lensbench.testing.standin_engine serve"


def wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    from lensbench.benchmarks.rgbth.demo import write_release
    return write_release(tmp_path_factory.mktemp("d"), n_scenes=1, questions_per_unit=2)


def run_cmd(data: Path, out: Path, model: str) -> list[str]:
    return [sys.executable, "-m", "lensbench", "run", "rgb-th-bench", "--data-dir", str(data), "--model", model,
            "--out", str(out), "--no-progress", "--max-retries", "0", "--concurrency", "2"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and /proc: Linux")
def test_kill_9_of_run_leaves_no_worker_and_no_scratch_folder(tmp_path, data):
    rec, tmp = tmp_path / "rec.json", tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "LENSBENCH_STANDIN_RECORD": str(rec), "TMPDIR": str(tmp)}
    model = f"vllm:org/m?exe={quote(STANDIN)}&args={quote('--standin-latency 60 --standin-workers 2')}"
    p = subprocess.Popen(run_cmd(data, tmp_path / "run", model), env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not rec.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        info = json.loads(rec.read_text())
        pids = [info["pid"], *info["workers"]]
        time.sleep(1.0)  # the server answers health checks; requests are in flight (60 s each)
        assert all(map(alive, pids)) and len(list(tmp.glob("lensbench-vllm-*"))) == 1
        p.send_signal(signal.SIGKILL)  # no cleanup code of lensbench runs
        p.wait(10)
        left = wait_gone(pids, 15)
        assert not left, f"outlived lensbench: {left} (engine {info['pid']}, workers {info['workers']})"
        deadline = time.monotonic() + 5
        while list(tmp.glob("lensbench-vllm-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not list(tmp.glob("lensbench-vllm-*"))
    finally:
        if p.poll() is None:
            p.kill()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_later_run_removes_scratch_folders_of_dead_processes(tmp_path, data):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    gone = [tmp / f"lensbench-{e}-{dead.pid}-x1" for e in ("vllm", "sglang", "llama.cpp")]
    kept = [tmp / f"lensbench-vllm-{os.getpid()}-x2", tmp / "lensbench-chaos-12345678"]
    for d in gone + kept:
        d.mkdir()
        (d / "server.log").write_text("x")
    env = {**os.environ, "TMPDIR": str(tmp)}
    r = subprocess.run(run_cmd(data, tmp_path / "run", "random"), env=env, capture_output=True, text=True,
                       timeout=120)  # a run with no server at all
    assert r.returncode == 0, r.stderr
    assert not any(d.exists() for d in gone) and all(d.exists() for d in kept)


def test_stop_group_sigkills_what_ignores_sigterm(tmp_path):
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    p = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "up"
    t0 = time.monotonic()
    stop_group(p.pid, 0.5)
    assert p.wait(5) == -signal.SIGKILL and time.monotonic() - t0 < 4
