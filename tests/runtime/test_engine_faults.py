"""The engine against a real local HTTP server that injects faults: the run completes, the
report equals a fault-free run, and no failure is scored as an answer."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time


from clirun import run_cli
from lensbench.benchmarks.rgbth.benchmark import RGBThBench
from lensbench.runtime.runner import RunSettings, run_benchmark
from lensbench.testing.server import FakeOpenAIServer

LIMIT = 12  # units -> 48 questions; images sent downscaled to keep bodies small


def oracle(body: dict) -> str:
    """A deterministic 'model': the answer depends only on the question text."""
    text = [c["text"] for c in body["messages"][0]["content"] if c["type"] == "text"][0]
    question = text.splitlines()[-1]
    h = hashlib.sha256(question.encode()).digest()[0]
    return ["Yes", "No", "The answer is no.", "I cannot tell."][h % 4]


def settings(url, out, data, **kw) -> RunSettings:
    return RunSettings(model="openai:fake-vlm", base_url=[url], out=out, data_dir=data, limit=LIMIT,
                       image_max_side=64, progress=False, **kw)


def faulty_plan(key: str, attempt: int):
    """The first attempts of most requests fail, each kind of fault in turn; later ones succeed."""
    kind = int(key[:8], 16) % 6
    if kind == 5 or attempt > 2:
        return None
    return ["500", "429", "timeout", "drop", "malformed"][(kind + attempt - 1) % 5]


def test_faults_do_not_change_the_report(rgbth_gen, tmp_path):
    with FakeOpenAIServer(oracle) as clean:
        ref = run_benchmark(RGBThBench(), settings(clean.url, tmp_path / "clean", rgbth_gen))
    with FakeOpenAIServer(oracle, fault_plan=faulty_plan, stall_s=3.0, retry_after=0.05) as srv:
        res = run_benchmark(RGBThBench(), settings(srv.url, tmp_path / "faulty", rgbth_gen, timeout_s=0.5,
                                                   concurrency=16, max_retries=6))
        assert set(srv.faults) == {"500", "429", "timeout", "drop", "malformed"}
        assert max(srv.answered.values()) == 1
    assert res.counts["n_error"] == 0 and res.extra.get("partial")
    assert res.metrics == ref.metrics and res.counts == ref.counts
    manifest = json.loads((tmp_path / "faulty" / "run.json").read_text())
    assert manifest["engine"]["retries"] >= sum(srv.faults.values())


def test_exhausted_retries_are_errors_not_answers(rgbth_gen, tmp_path):
    always_500 = lambda key, attempt: "500" if int(key[:8], 16) % 4 == 0 else None  # noqa: E731
    with FakeOpenAIServer(oracle, fault_plan=always_500) as srv:
        res = run_benchmark(RGBThBench(), settings(srv.url, tmp_path / "r", rgbth_gen, max_retries=2))
        n_failing = sum(1 for k in srv.received if int(k[:8], 16) % 4 == 0)
    assert n_failing > 0
    assert res.counts["n_error"] >= n_failing and not res.complete
    recs = [json.loads(x) for x in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    errs = [r for r in recs if r.get("outcome", r.get("status")) == "error"]
    assert errs and all("parsed" not in r and "HTTP 500" in r["error"] for r in errs)
    assert res.counts["n"] == len(recs) - len(errs)
    # a re-run with a healthy server retries only the failed requests, and the run completes
    with FakeOpenAIServer(oracle) as srv2:
        res2 = run_benchmark(RGBThBench(), settings(srv2.url, tmp_path / "r", rgbth_gen))
        assert sum(srv2.answered.values()) == n_failing
    assert res2.counts["n_error"] == 0


def test_rerun_sends_nothing_and_dedups(rgbth_gen, tmp_path):
    with FakeOpenAIServer(oracle) as srv:
        a = run_benchmark(RGBThBench(), settings(srv.url, tmp_path / "d", rgbth_gen))
        first = sum(srv.received.values())
        b = run_benchmark(RGBThBench(), settings(srv.url, tmp_path / "d", rgbth_gen))
        assert sum(srv.received.values()) == first
    assert a.metrics == b.metrics
    # images first (RGB, then thermal), then the Sec. 3.3 context and the question
    body = srv.bodies[0]
    kinds = [c["type"] for c in body["messages"][0]["content"]]
    assert kinds[-1] == "text" and set(kinds[:-1]) == {"image_url"}
    assert body["messages"][0]["content"][-1]["text"].startswith("Based on th")


def _cli(*args, **kw):
    return run_cli(*args, **kw)  # in this process; the run killed midway is a real one


def test_sigkill_midway_then_resume(rgbth_gen, tmp_path):
    """Kill the run process with SIGKILL midway; the rerun's report equals an uninterrupted run's and
    the server answered each request at most once."""
    common = ["run", "rgb-th-bench", "--data-dir", str(rgbth_gen), "--model", "openai:fake-vlm",
              "--limit", "20", "--image-max-side", "64", "--no-progress", "--format", "json", "--concurrency", "4"]
    with FakeOpenAIServer(oracle) as ref_srv:
        ref = _cli(*common, "--base-url", ref_srv.url, "--out", str(tmp_path / "ref"), timeout=120)
    assert ref.returncode == 0, ref.stderr
    with FakeOpenAIServer(oracle, latency=0.01, hold_after=30) as srv:
        out = tmp_path / "killed"
        proc = subprocess.Popen([sys.executable, "-m", "lensbench", *common, "--base-url", srv.url, "--out", str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while sum(srv.answered.values()) < 30 and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)  # four requests are held in flight; everything delivered has been handled
        with sqlite3.connect(out / "responses.sqlite") as db:  # each reply was committed as it arrived
            assert db.execute("SELECT COUNT(*) FROM responses WHERE status='ok'").fetchone()[0] == 30
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        srv.release()
        again = _cli(*common, "--base-url", srv.url, "--out", str(out), timeout=120)
        assert again.returncode == 0, again.stderr
        assert max(srv.answered.values()) == 1
        assert sum(srv.answered.values()) == 80
    got, want = json.loads(again.stdout), json.loads(ref.stdout)
    assert got["metrics"] == want["metrics"] and got["counts"] == want["counts"]
