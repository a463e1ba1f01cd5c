"""vllm:/sglang: backends with a stand-in engine (lensbench.testing.standin_engine): command lines,
fingerprints, start + health wait, failure with the log's tail, clean stop, no orphan after kill -9,
and a cached re-run that never starts the server."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from lensbench.backends.engines import EngineBackend
from lensbench.backends.providers import make_backend
from lensbench.core.errors import ConfigError, TransportError
from lensbench.core.types import GenParams, Message, Request, TextPart
from lensbench.runtime.rows import count_ok
from lensbench.backends.reaper import pid_alive as alive

STANDIN = f"{sys.executable} -m lensbench.testing.standin_engine serve"
EXE = "exe=" + quote(STANDIN)


def req(text: str = "Is it warm?", rid: str = "r0") -> Request:
    return Request(id=rid, messages=[Message(role="user", parts=[TextPart(text=text)])], params=GenParams(temperature=0))


# ------------------------------------------------------------------ command lines and fingerprints
def test_vllm_command_line_has_the_documented_flags():
    b = make_backend(f"vllm:Qwen/Qwen2.5-VL-7B-Instruct?tp=2&dp=4&max_len=32768&dtype=bfloat16&gpu_mem=0.85"
                     f"&revision=abc&args={quote('--limit-mm-per-prompt image=2 --trust-remote-code')}&{EXE}")
    argv = b.server_args(8123)
    assert argv[:len(shlex.split(STANDIN))] == shlex.split(STANDIN)
    rest = argv[len(shlex.split(STANDIN)):]
    assert rest == ["Qwen/Qwen2.5-VL-7B-Instruct", "--host", "127.0.0.1", "--port", "8123",
                    "--tensor-parallel-size", "2", "--data-parallel-size", "4", "--max-model-len", "32768",
                    "--dtype", "bfloat16", "--gpu-memory-utilization", "0.85", "--revision", "abc",
                    "--limit-mm-per-prompt", "image=2", "--trust-remote-code"]


def test_sglang_command_line_has_the_documented_flags():
    b = make_backend(f"sglang:org/m?tp=2&dp=2&max_len=4096&gpu_mem=0.7&{EXE}")
    rest = b.server_args(9000)[len(shlex.split(STANDIN)):]
    assert rest == ["--model-path", "org/m", "--host", "127.0.0.1", "--port", "9000", "--tp-size", "2",
                    "--dp-size", "2", "--context-length", "4096", "--mem-fraction-static", "0.7"]


def test_fingerprint_covers_what_changes_replies_only(tmp_path):
    base = f"vllm:org/m?{EXE}"
    fp = make_backend(base).fingerprint
    assert fp.startswith("vllm:org/m@default|dtype=auto|max_len=model|img=")
    assert make_backend(base + "&tp=4&dp=2&gpu_mem=0.5&startup_timeout_s=9").fingerprint == fp
    for change in ("&dtype=float16", "&max_len=2048", "&revision=v2", "&args=--seed%201"):
        assert make_backend(base + change).fingerprint != fp, change
    assert make_backend(f"sglang:org/m?{EXE}").fingerprint != fp
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text('{"a": 1}')
    (model / "w.safetensors").write_bytes(b"x" * 10)
    fp1 = make_backend(f"vllm:{model}?{EXE}").fingerprint
    assert fp1.startswith("vllm:ckpt|files=")
    (model / "config.json").write_text('{"a": 2}')
    assert make_backend(f"vllm:{model}?{EXE}").fingerprint != fp1


@pytest.mark.parametrize("spec, needle", [
    ("vllm:", "needs a hub model id"), ("vllm:m?tp=0", "tp"), ("vllm:m?gpu_mem=1.5", "gpu_mem"),
    ("vllm:m?bogus=1", "known keys"), ("sglang:m?args=%22unclosed", "shell-quoted"),
    ("vllm:m?exe=/nonexistent/vllm", "cannot find"),
])
def test_bad_specs_are_config_errors(spec, needle):
    with pytest.raises(ConfigError, match=needle):
        make_backend(spec)


def test_env_variable_points_at_another_executable(monkeypatch):
    monkeypatch.setenv("LENSBENCH_VLLM_CMD", STANDIN)
    assert make_backend("vllm:org/m").server_args(1)[:3] == shlex.split(STANDIN)[:3]


# ------------------------------------------------------------------ lifecycle
def test_lazy_start_health_wait_requests_and_clean_stop(tmp_path, monkeypatch):
    rec = tmp_path / "rec.json"
    monkeypatch.setenv("LENSBENCH_STANDIN_RECORD", str(rec))
    b = make_backend(f"vllm:org/m?{EXE}&args={quote('--standin-delay 1 --standin-reply Nope')}")
    assert b.base_url is None and not rec.exists()  # nothing started before the first request

    async def main():
        outs = await asyncio.gather(*(b.generate(req(rid=f"r{i}")) for i in range(5)))
        info = json.loads(rec.read_text())
        url, proc = b.base_url, b._proc
        await b.aclose()
        return outs, info, url, proc

    t0 = time.monotonic()
    outs, info, url, proc = asyncio.run(main())
    assert time.monotonic() - t0 >= 1.0  # waited for the delayed load
    assert [o.text for o in outs] == ["Nope"] * 5
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert info["pgid"] == info["pid"] == proc.pid  # its own process group
    assert "--port" in info["argv"] and info["argv"][0] == "org/m"
    assert proc.returncode is not None and proc.returncode != -signal.SIGKILL  # SIGTERM was enough
    assert not alive(info["pid"])


def test_start_failure_quotes_the_log_and_is_not_retried(tmp_path):
    b = make_backend(f"sglang:org/m?{EXE}&args=--standin-fail")

    async def main():
        errs = []
        for _ in range(2):
            with pytest.raises(TransportError) as ei:
                await b.generate(req())
            errs.append(ei.value)
        await b.aclose()
        return errs

    e1, e2 = asyncio.run(main())
    assert not e1.retryable and "code 3" in str(e1) and "CUDA out of memory (stand-in failure)" in str(e1)
    assert str(e2) == str(e1)


def test_startup_timeout_is_clear_and_stops_the_child(tmp_path, monkeypatch):
    rec = tmp_path / "rec.json"
    monkeypatch.setenv("LENSBENCH_STANDIN_RECORD", str(rec))
    b = make_backend(f"vllm:org/m?{EXE}&args={quote('--standin-delay 30')}&startup_timeout_s=5")

    async def main():
        with pytest.raises(TransportError, match=r"not ready after 5 s") as ei:
            await b.generate(req())
        await b.aclose()
        return ei.value

    asyncio.run(main())
    assert not alive(json.loads(rec.read_text())["pid"])


# ------------------------------------------------------------------ through lensbench run
@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
    return make_rgbth_release(tmp_path_factory.mktemp("d"), n_scenes=1, questions_per_unit=2)


def _run_cmd(data: Path, out: Path, args: str = "") -> list[str]:
    spec = f"vllm:org/m?{EXE}" + (f"&args={quote(args)}" if args else "")
    return [sys.executable, "-m", "lensbench", "run", "rgb-th-bench", "--data-dir", str(data), "--model", spec,
            "--out", str(out), "--no-progress", "--max-retries", "0"]


def test_cached_rerun_never_starts_the_server(tmp_path, data):
    rec = tmp_path / "rec.json"
    env = {**os.environ, "LENSBENCH_STANDIN_RECORD": str(rec)}
    r = subprocess.run(_run_cmd(data, tmp_path / "run"), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pid = json.loads(rec.read_text())["pid"]
    assert not alive(pid)
    rec.unlink()
    r = subprocess.run(_run_cmd(data, tmp_path / "run"), env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert not rec.exists()  # everything was stored: no server was started


def test_no_orphan_server_after_kill_9_of_lensbench(tmp_path, data):
    rec = tmp_path / "rec.json"
    env = {**os.environ, "LENSBENCH_STANDIN_RECORD": str(rec)}
    p = subprocess.Popen(_run_cmd(data, tmp_path / "run", "--standin-latency 60"), env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not rec.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert rec.exists(), "the stand-in server never started"
        time.sleep(1.5)  # requests are in flight (each reply takes 60 s)
        pid = json.loads(rec.read_text())["pid"]
        assert alive(pid) and p.poll() is None
        p.kill()  # SIGKILL: no cleanup code of lensbench runs
        p.wait(10)
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), "the server outlived lensbench"
    finally:
        if p.poll() is None:
            p.kill()


def test_ctrl_c_stops_the_server(tmp_path, data):
    rec = tmp_path / "rec.json"
    env = {**os.environ, "LENSBENCH_STANDIN_RECORD": str(rec)}
    p = subprocess.Popen(_run_cmd(data, tmp_path / "run", "--standin-latency 60"), env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not rec.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)
        pid = json.loads(rec.read_text())["pid"]
        assert alive(pid)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        assert p.returncode != 0
        assert not alive(pid), "the server outlived an interrupted run"
    finally:
        if p.poll() is None:
            p.kill()


def _stored_ok(out: Path) -> int:
    return count_ok(out) or 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_ctrl_c_stop_the_server_group_and_say_how_to_resume(tmp_path, data, sig):
    """Issue 20 item 6: SIGTERM (SLURM, Kubernetes, kill) behaves as Ctrl-C: the launched engine's whole
    process group (its forked workers too) is stopped, its lensbench-vllm-* folder removed, and one line
    says how many replies are stored and which command resumes."""
    rec, tmp, out = tmp_path / "rec.json", tmp_path / "tmp", tmp_path / "run"
    tmp.mkdir()
    env = {**os.environ, "LENSBENCH_STANDIN_RECORD": str(rec), "TMPDIR": str(tmp)}
    p = subprocess.Popen(_run_cmd(data, out, "--standin-latency 0.3 --standin-workers 2") + ["--concurrency", "2"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while (not rec.exists() or _stored_ok(out) < 2) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        info = json.loads(rec.read_text())
        assert alive(info["pid"]) and all(alive(w) for w in info["workers"])
        assert list(tmp.glob("lensbench-vllm-*"))
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + sig, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "replies stored" in line]
    assert len(lines) == 1, err
    assert (f"{sig.name}: {_stored_ok(out)} replies stored in {out}; run the same command to resume: "
            "lensbench run rgb-th-bench") in lines[0]
    deadline = time.monotonic() + 5
    while any(map(alive, [info["pid"], *info["workers"]])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in [info["pid"], *info["workers"]] if alive(pid)], "the engine or a worker outlived lensbench"
    assert not list(tmp.glob("lensbench-vllm-*"))


def test_a_killed_runs_scratch_folder_is_removed_by_the_next_launch(tmp_path, monkeypatch):
    """kill -9 leaves lensbench-vllm-<PID>-* behind (the server dies with lensbench, its folder does not):
    the next launch removes the folders of dead PIDs only."""
    import tempfile

    from lensbench.backends.launcher import sweep_stale_tmpdirs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"lensbench-vllm-{dead.pid}-abc"
    mine = tmp_path / f"lensbench-vllm-{os.getpid()}-def"
    other = tmp_path / "lensbench-vllm-notapid"
    for d in (gone, mine, other):
        d.mkdir()
    assert sweep_stale_tmpdirs("lensbench-vllm-") == 1
    assert not gone.exists() and mine.exists() and other.exists()
