"""Chaos around a run (issues 20, 30): kill -9 at random points, SIGTERM with a launched stand-in engine, a
disk that fills, a ``cp -al`` copy of a killed run; after each incident the run is resumed with the same
command until it completes.

Per incident it prints the replies re-bought (answered by the server but not in the store when the
process stopped: bought again by the resume; goal <= the requests in flight, i.e. --concurrency),
the processes left behind (the stand-in engine and its forked workers; goal 0), temporary folders
left (lensbench-vllm-*; goal 0) and tracebacks in any output (goal 0); a resumed run must give the
clean run's metrics. Data: a generated RGB-Th-Bench release (960 questions); the server is the
local fake OpenAI server (or the stand-in engine, for SIGTERM); the full disk is a small tmpfs in a
private mount namespace (:mod:`lensbench.testing.small_disk`; skipped where not allowed).

kill -9 with a launched engine (issue 30): the engine and its forked workers must die with lensbench
(orphans goal 0) and the engine's temporary folder go (tmp left goal 0).

Hard links (issue 30): a run killed while its WAL holds replies is copied with hard links (``cp -al``),
then the copy is resumed, then the original: per incident it prints the replies in the original
before and after (goal: equal), whether the resume in the copy was refused (goal 1, exit 2) and the
tracebacks (goal 0).

Training (issue 30.3, :func:`train_kill9`, ``--train-kills N``): a LoRA SFT of a tiny random
Qwen2.5-VL through ``lensbench train groundingme train`` is killed with SIGKILL while it writes a
checkpoint (the moment its ``tmp-checkpoint-N`` folder appears, plus 0-20 ms), then re-run with the
same command; per incident: whether the kill landed mid-write, the checkpoint resumed from, the
warnings, tracebacks, and whether the final adapter equals the uninterrupted run's bit for bit.

    python benchmarks/chaos.py [--kills 10] [--terms 4] [--disks 4] [--links 3] [--concurrency 32] [--seed 0]
    python benchmarks/chaos.py --train-kills 5 --train-only      # the training case alone (needs torch)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from urllib.parse import quote

from lensbench.runtime.rows import count_ok
from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release
from lensbench.testing.server import FakeOpenAIServer
from lensbench.testing.small_disk import SmallDisk, small_disk_available
from lensbench.backends.reaper import pid_alive as alive

LENSBENCH = [sys.executable, "-m", "lensbench"]


def answer(body: dict) -> str:
    text = body["messages"][-1]["content"][-1]["text"]
    return "Yes." if zlib.crc32(text.encode()) % 3 else "No."


def run_argv(data: Path, out: Path, model: str, url: str | None, c: int) -> list[str]:
    argv = [*LENSBENCH, "run", "rgb-th-bench", "--data-dir", str(data), "--model", model, "--out", str(out),
            "--no-progress", "--concurrency", str(c), "--format", "json"]
    return argv + (["--base-url", url] if url else [])


def metrics(stdout: str) -> dict:
    return json.loads(stdout)["metrics"]


def resume(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``argv`` until it completes (a disk outage may need more than one go)."""
    for _ in range(3):
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
        if r.returncode == 0:
            return r
    return r


class Tally:
    def __init__(self, name: str):
        self.name, self.rows = name, []

    def add(self, **row) -> None:
        self.rows.append(row)
        print(f"  {self.name} #{len(self.rows)}: " + ", ".join(f"{k} {v}" for k, v in row.items()), flush=True)

    def summary(self, c: int) -> str:
        if not self.rows:
            return f"{self.name:<28} (not run)"
        rb = [r["rebought"] for r in self.rows if isinstance(r["rebought"], int)] or [0]  # "?": not counted
        return (f"{self.name:<28} {len(self.rows):>3} incidents  re-bought per incident max {max(rb):>3} "
                f"mean {sum(rb) / len(rb):5.1f} (goal <= {c})  orphans {sum(r.get('orphans', 0) for r in self.rows)}"
                f"  tmp left {sum(r.get('tmp_left', 0) for r in self.rows)}  tracebacks "
                f"{sum(r['tracebacks'] for r in self.rows)}  same result {sum(r['same'] for r in self.rows)}/"
                f"{len(self.rows)}")


def kill9(data: Path, work: Path, n: int, c: int, rng: random.Random, clean: dict, total: int) -> Tally:
    t = Tally("kill -9")
    with FakeOpenAIServer(answer, latency=0.02) as srv:
        for i in range(n):
            out = work / f"kill{i}"
            argv = run_argv(data, out, "openai:fake", srv.url, c)
            srv.answered.clear()
            at = rng.randrange(c, total - c)
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            srv.wait_answered(at, p)
            time.sleep(rng.random() * 0.05)
            p.kill()
            _, err = p.communicate()
            time.sleep(0.1)
            lost = sum(srv.answered.values()) - (count_ok(out) or 0)
            r = resume(argv)
            rebought = sum(srv.answered.values()) - len(srv.answered)
            t.add(killed_after=at, lost=lost, rebought=rebought, tracebacks=(err + r.stderr).count("Traceback"),
                  same=int(r.returncode == 0 and metrics(r.stdout) == clean))
    return t


def sigterm(data: Path, work: Path, n: int, c: int, rng: random.Random, sig: int = signal.SIGTERM) -> Tally:
    """SIGTERM (or, with ``sig``, SIGKILL: no lensbench code runs; issue 30) of a run with a launched engine."""
    name = signal.Signals(sig).name
    t = Tally(f"{name}, launched engine")
    exe = quote(f"{sys.executable} -m lensbench.testing.standin_engine serve")
    model = f"vllm:org/m?exe={exe}&args={quote('--standin-latency 0.2 --standin-workers 2')}"
    r = subprocess.run(run_argv(data, work / "term-clean", model, None, c), capture_output=True, text=True,
                       timeout=600, env={**os.environ, "TMPDIR": str(work)})
    assert r.returncode == 0, r.stderr
    clean = metrics(r.stdout)  # the stand-in answers every question alike: its own reference
    for i in range(n):
        out, tmp, rec = work / f"{name}{i}", work / f"{name}{i}.tmp", work / f"{name}{i}.rec"
        tmp.mkdir()
        env = {**os.environ, "TMPDIR": str(tmp), "LENSBENCH_STANDIN_RECORD": str(rec)}
        argv = run_argv(data, out, model, None, c)
        p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not rec.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.random() * 6.0)  # a whole run takes ~6 s: stop it anywhere, the end included
        info = json.loads(rec.read_text())
        p.send_signal(sig)
        _, err = p.communicate(timeout=120)
        deadline = time.monotonic() + (15 if sig == signal.SIGKILL else 0.5)  # the watcher's grace: 10 s
        while time.monotonic() < deadline and (any(map(alive, [info["pid"], *info["workers"]]))
                                               or list(tmp.glob("lensbench-vllm-*"))):
            time.sleep(0.05)
        time.sleep(0.5 if sig != signal.SIGKILL else 0)
        pids = [info["pid"], *info["workers"]]
        orphans = [x for x in pids if alive(x)]
        for x in orphans:
            os.kill(x, signal.SIGKILL)
        answered = int(Path(str(rec) + ".answered").read_text()) if Path(str(rec) + ".answered").exists() else -1
        stored = count_ok(out) or 0
        line = [x for x in err.splitlines() if "replies stored" in x]
        tmp_left = len(list(tmp.glob("lensbench-vllm-*")))
        rec.unlink()
        r = resume(argv, env)
        t.add(stored_at_stop=stored, rebought=answered - stored if answered >= 0 else "?",  # ?: engine killed
              exit=p.returncode,
              line=int(len(line) == 1 or sig == signal.SIGKILL), orphans=len(orphans), tmp_left=tmp_left,
              tracebacks=(err + r.stderr).count("Traceback"), same=int(r.returncode == 0 and metrics(r.stdout) == clean))
        if len(orphans):
            print(f"    orphans killed: {orphans}")
    return t


def full_disk(data: Path, n: int, c: int, rng: random.Random, clean: dict, total: int) -> Tally:
    t = Tally("disk fills")
    if not small_disk_available():
        print("  (no private tmpfs mount here: skipped)")
        return t
    env = {**os.environ, "LENSBENCH_WRITE_RETRY_S": "2"}
    with FakeOpenAIServer(answer, latency=0.02) as srv:
        for i in range(n):
            outage = 0.3 if i % 2 == 0 else None
            with SmallDisk(16384) as disk:
                argv = disk.prefix() + run_argv(data, disk.path / "run", "openai:fake", srv.url, c)
                srv.answered.clear()
                at = rng.randrange(c, total - c)
                p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                srv.wait_answered(at, p)
                disk.outage(outage)
                _, err = p.communicate(timeout=300)
                disk.free()
                leftovers = [f.name for f in disk.outside("run").iterdir() if f.name.endswith(".tmp")]
                one_line = p.returncode == 0 or [x for x in err.splitlines() if x.strip()][-1].startswith("error: ")
                r = resume(argv, env)
                rebought = sum(srv.answered.values()) - len(srv.answered)
                t.add(outage="0.3 s" if outage else "lasting", filled_after=at, exit=p.returncode,
                      one_line=int(bool(one_line)), tmp_left=len(leftovers), rebought=rebought,
                      tracebacks=(err + r.stderr).count("Traceback"),
                      same=int(r.returncode == 0 and metrics(r.stdout) == clean))
    return t


def hard_links(data: Path, work: Path, n: int, c: int, rng: random.Random, total: int) -> Tally:
    t = Tally("cp -al of a killed run")
    with FakeOpenAIServer(answer, latency=0.02) as srv:
        for i in range(n):
            out, copy = work / f"link{i}", work / f"link{i}.copy"
            argv = run_argv(data, out, "openai:fake", srv.url, c)
            srv.answered.clear()
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            srv.wait_answered(rng.randrange(c, total - c), p)
            p.kill()
            _, err = p.communicate()
            before = count_ok(out) or 0
            wal = out / "responses.sqlite-wal"
            wal_bytes = wal.stat().st_size if wal.exists() else 0
            subprocess.run(["cp", "-al", str(out), str(copy)], check=True)
            # the original is resumed, then the copy is opened: without the check this rolls the original back
            r2 = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            mid = count_ok(out) or 0
            dead = run_argv(data, copy, "openai:fake", "http://127.0.0.1:9/v1", c) + ["--max-retries", "0"]
            r1 = subprocess.run(dead, capture_output=True, text=True, timeout=600)  # opened; nothing answers
            after = count_ok(out) or 0
            shutil.rmtree(copy)
            t.add(rebought=0, wal_bytes=wal_bytes, before=before, after_resume=mid, after_copy_opened=after,
                  copy_refused=int(r1.returncode == 2 and "shares its store" in r1.stderr),
                  original_refused=int(r2.returncode == 2 and "shares its store" in r2.stderr),
                  tracebacks=(err + r1.stderr + r2.stderr).count("Traceback"), same=int(after >= mid >= before))
    return t
def _adapter(out: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(out / "adapter" / "adapter_model.safetensors"))


def train_kill9(work: Path, n: int, rng: random.Random) -> str:
    """SIGKILL during a checkpoint write of a tiny LoRA SFT, ``n`` times, each resumed (module docstring);
    returns the summary line."""
    import torch

    from lensbench.tools.training.tiny_vlm import save_tiny_vlm
    from lensbench.tools.training.sft_data import make_example, write_examples

    from PIL import Image

    base = save_tiny_vlm("qwen2.5-vl", work / "tiny-vlm")
    img = work / "sft" / "a.png"
    img.parent.mkdir(parents=True)
    Image.new("RGB", (32, 32), (200, 30, 30)).save(img)
    data = work / "sft" / "sft.jsonl"
    write_examples(data, [make_example(f"e{i}", [img, f"is there a w{i} ?"], '{"bbox_2d": null}' if i % 2 else
                                       '{"bbox_2d": [1, 2, 30, 31]}') for i in range(8)])
    steps = 6

    def argv(out: Path) -> list[str]:
        sets = [f"max_steps={steps}", "save_steps=1", "batch_size=2", "device=cpu", "learning_rate=5e-3",
                "warmup_ratio=0", "logging_steps=1", "lora_r=8", "lora_alpha=16"]
        return [*LENSBENCH, "train", "groundingme", "train", "--data", str(data), "--model", str(base),
                "--out", str(out), *[x for kv in sets for x in ("--set", kv)]]

    r = subprocess.run(argv(work / "train-clean"), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    clean = _adapter(work / "train-clean")
    t = Tally("kill -9 while checkpointing")
    for i in range(n):
        out = work / f"train-kill{i}"
        at = rng.randrange(2, steps)
        staging = out / "checkpoints" / f"tmp-checkpoint-{at}"
        p = subprocess.Popen(argv(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while not staging.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(rng.random() * 0.02)
        p.kill()
        _, err = p.communicate()
        mid = staging.exists()
        left = sorted(d.name for d in (out / "checkpoints").iterdir()) if (out / "checkpoints").is_dir() else []
        r = subprocess.run(argv(out), capture_output=True, text=True, timeout=600)
        got = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {}
        same = r.returncode == 0 and all(torch.equal(clean[k], v) for k, v in _adapter(out).items())
        t.add(killed_at_checkpoint=at, mid_write=int(mid), left=" ".join(left) or "-",
              resumed_from=Path(got.get("resumed_from") or "-").name,
              warnings=sum(1 for x in r.stderr.splitlines() if x.startswith("warning: ")),
              tracebacks=(err + r.stderr).count("Traceback"), same=int(same))
    rows = t.rows
    return (f"{t.name:<28} {len(rows):>3} incidents  killed mid-write {sum(x['mid_write'] for x in rows)}  "
            f"tracebacks {sum(x['tracebacks'] for x in rows)}  adapter identical to the uninterrupted run "
            f"{sum(x['same'] for x in rows)}/{len(rows)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--terms", type=int, default=4)
    ap.add_argument("--disks", type=int, default=4)
    ap.add_argument("--links", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-kills", type=int, default=0, help="kill -9 during a training checkpoint, N times")
    ap.add_argument("--train-only", action="store_true", help="only the training case")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = Path(tempfile.mkdtemp(prefix="lensbench-chaos-"))
    try:
        train = train_kill9(work, a.train_kills, rng) if a.train_kills else None
        if a.train_only:
            print(f"\nsummary\n{train or '(no --train-kills)'}")
            return
        data = make_rgbth_release(work / "data", n_scenes=30)
        total = 960
        with FakeOpenAIServer(answer) as srv:
            r = subprocess.run(run_argv(data, work / "clean", "openai:fake", srv.url, a.concurrency),
                               capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        clean = metrics(r.stdout)
        print(f"{total} requests per run, concurrency {a.concurrency}; clean run done")
        tallies = [kill9(data, work, a.kills, a.concurrency, rng, clean, total),
                   sigterm(data, work, a.terms, a.concurrency, rng),
                   sigterm(data, work, a.terms, a.concurrency, rng, signal.SIGKILL),
                   full_disk(data, a.disks, a.concurrency, rng, clean, total),
                   hard_links(data, work, a.links, a.concurrency, rng, total)]
        print("\nsummary")
        for t in tallies:
            print(t.summary(a.concurrency))
        if train:
            print(train)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
