"""IV-Bench: frame decoding overlapped with requests (issue 11).

Synthetic IV-Bench data (``--videos`` one-minute 1280x720 H.264 videos, ``--queries`` questions
per video, generated once into ``--workdir``) is run against a local OpenAI-compatible server
with a fixed latency (``lensbench.testing.server --latency``). Three figures, each the median
of ``--repeats`` runs:

* decoding alone: the benchmark's frame extraction for all videos (32 frames each, the run's
  ``decode_workers`` threads, an empty frame cache), no requests;
* requests alone: ``lensbench.run('iv-bench', ...)`` with every frame already in the frame cache;
* both: the same run with an empty frame cache (what a first run does).

Run times are the run manifest's ``wall_s`` (the benchmark's evaluate: decoding, requests and
scoring; process start-up excluded). Goal: both <= 1.2 x max(decoding alone, requests alone).

    python benchmarks/ivbench_overlap.py [--videos 20] [--queries 8] [--concurrency 8] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import lensbench
from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.benchmarks.ivbench.data import TASKS
from lensbench.media.frame_cache import FrameCache
from lensbench.media.synth_video import write_test_video
from lensbench.testing.server import serve_in_subprocess
from PIL import Image


def make_data(root: Path, n_videos: int, n_queries: int, fps: int) -> Path:
    """IV-Bench layout (videos/, images/, test_data.jsonl) under ``root``; reused when present."""
    if (root / "test_data.jsonl").is_file():
        return root
    (root / "videos").mkdir(parents=True, exist_ok=True)
    (root / "images").mkdir(exist_ok=True)
    lines = []
    for v in range(n_videos):
        vid = f"vid{v:02d}"
        write_test_video(root / "videos" / f"{vid}.mp4", n_frames=60 * fps, fps=fps, size=(1280, 720), gop=2 * fps)
        qs = []
        for d in range(n_queries):
            name = f"{vid}_{d}.jpg"
            Image.new("RGB", (640, 360), ((v * 40) % 256, (d * 30) % 256, 128)).save(root / "images" / name)
            qs.append({"data_id": d, "image_name": name, "question": f"What happens in clip {d} of {vid}?",
                       "question_type": TASKS[d % len(TASKS)], "granularity": "Clip", "answer": "a box moves",
                       "answer_location": "middle", "distractors": ["a ball", "a cup", "nothing"]})
        lines.append(json.dumps({vid: qs}))
    (root / "test_data.jsonl").write_text("\n".join(lines) + "\n")
    return root




def decode_alone(data: Path, cache_dir: Path) -> float:
    bench = IVBench()
    queries = bench.load(data)
    t0 = time.perf_counter()
    bench.extract_frames(queries, FrameCache(cache_dir))
    return time.perf_counter() - t0


def run_wall(data: Path, url: str, out: Path, cache_dir: Path, concurrency: int) -> float:
    res = lensbench.run("iv-bench", model="openai:fixed", out=out, data_dir=data, base_url=[url],
                        concurrency=concurrency, frame_cache=str(cache_dir))
    assert res.counts["n_error"] == 0, res.counts
    return json.loads((out / "run.json").read_text())["wall_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--videos", type=int, default=20)
    ap.add_argument("--queries", type=int, default=8, help="questions per video")
    ap.add_argument("--fps", type=int, default=10, help="fps of the one-minute test videos")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "lensbench-ivbench-overlap")
    a = ap.parse_args()
    data = make_data(a.workdir / f"data-{a.videos}x{a.queries}-{a.fps}fps", a.videos, a.queries, a.fps)
    import os

    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    proc, url = serve_in_subprocess(a.latency)
    dec, req, both = [], [], []
    try:
        for i in range(a.repeats):
            tmp = Path(tempfile.mkdtemp(prefix="ivov-"))
            try:
                dec.append(decode_alone(data, tmp / "cache-dec"))
                warm = tmp / "cache-warm"
                decode_alone(data, warm)
                req.append(run_wall(data, url, tmp / "run-warm", warm, a.concurrency))
                both.append(run_wall(data, url, tmp / "run-cold", tmp / "cache-cold", a.concurrency))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        proc.terminate()
        proc.wait()
    d, r, b = (statistics.median(x) for x in (dec, req, both))
    print(f"IV-Bench {a.videos} videos x {a.queries} questions (1280x720, 60 s, 32 frames), C={a.concurrency}, "
          f"L={a.latency * 1000:.0f} ms; medians of {a.repeats}")
    print(f"decoding alone {d:.2f} s; requests alone {r:.2f} s; both {b:.2f} s = {b / max(d, r):.2f} x max "
          f"(sum would be {d + r:.2f} s)")
    print("runs:", json.dumps({"decode": [round(x, 2) for x in dec], "requests": [round(x, 2) for x in req],
                               "both": [round(x, 2) for x in both]}))


if __name__ == "__main__":
    main()
