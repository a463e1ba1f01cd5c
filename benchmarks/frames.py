"""Frame sampling speed: 32 frames from a long 720p H.264 video, three ways.

Methods (each in a fresh subprocess, so peak memory is its own):

* ``seek``      — :func:`lensbench.ivbench.frames.read_frames`: seek to the keyframe before each
  target, decode forward to it, convert only the 32 targets to RGB.
* ``decode-all`` — decode every frame and convert each to an RGB array (what "load the video,
  then index it" readers do), keeping only the 32 targets (keeping all frames would need
  ``n_frames * 1280 * 720 * 3`` bytes; printed, not run).
* ``linspace-loop`` — decode every frame in order, convert only the frames whose index is in
  the linspace/centres set (a plain loop over all frames).

All use the official ``centers`` indices (:func:`~lensbench.ivbench.frames.centers_indices`)
and PyAV's automatic threading. Reported: ms per video (median of ``--repeats`` runs after one
warm-up run, page cache warm) and peak resident memory of the worker (``ru_maxrss``) minus its
resident memory before the work.

Usage::

    python benchmarks/frames.py [--minutes 10] [--fps 10] [--gop-seconds 2] [--frames 32] [--video PATH]

The test video (1280x720, H.264 ultrafast, simple moving content, keyframe every
``--gop-seconds``) is generated with PyAV into ``--workdir`` and reused when present.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _worker(method: str, path: str, num: int, repeats: int) -> dict:
    import av
    import numpy as np

    from lensbench.media.video import centers_indices, probe, read_frames

    info = probe(path)
    idx = centers_indices(info.n_frames, num)
    targets = set(idx)

    def seek():
        got = read_frames(path, idx, info=info)
        return len(got)

    def decode_all():
        kept = {}
        with av.open(path) as c:
            s = c.streams.video[0]
            s.thread_type = "AUTO"
            for i, f in enumerate(c.decode(s)):
                a = f.to_ndarray(format="rgb24")
                if i in targets:
                    kept[i] = a
        return len(kept)

    def linspace_loop():
        kept = {}
        with av.open(path) as c:
            s = c.streams.video[0]
            s.thread_type = "AUTO"
            for i, f in enumerate(c.decode(s)):
                if i in targets:
                    kept[i] = f.to_ndarray(format="rgb24")
        return len(kept)

    fn = {"seek": seek, "decode-all": decode_all, "linspace-loop": linspace_loop}[method]
    base = _rss_kb()
    n = fn()  # warm-up (and correctness: every target found)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del np
    return {"method": method, "frames_found": n, "unique_targets": len(targets), "ms": statistics.median(times),
            "ms_all": [round(t, 1) for t in times], "peak_rss_mb": peak / 1024, "peak_minus_base_mb": (peak - base) / 1024,
            "n_frames": info.n_frames}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="video length (min)")
    ap.add_argument("--fps", type=int, default=10, help="video frame rate (low keeps generation fast)")
    ap.add_argument("--gop-seconds", type=float, default=2.0, help="keyframe interval (s)")
    ap.add_argument("--frames", type=int, default=32, help="frames to sample")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per method (after one warm-up)")
    ap.add_argument("--workdir", default="/tmp/lensbench-frames-bench", help="where the test video is written")
    ap.add_argument("--video", default=None, help="use this video instead of generating one")
    ap.add_argument("--methods", default="seek,linspace-loop,decode-all")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "PATH"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(_worker(a.worker[0], a.worker[1], a.frames, a.repeats)))
        return

    from lensbench.media.video import probe
    from lensbench.media.synth_video import write_test_video

    if a.video:
        path = Path(a.video)
    else:
        wd = Path(a.workdir)
        wd.mkdir(parents=True, exist_ok=True)
        gop = max(1, round(a.gop_seconds * a.fps))
        path = wd / f"test_{a.minutes:g}min_720p_{a.fps}fps_gop{gop}.mp4"
        if not path.is_file():
            t0 = time.perf_counter()
            tmp = path.with_suffix(".part.mp4")
            write_test_video(tmp, n_frames=round(a.minutes * 60 * a.fps), fps=a.fps, size=(1280, 720), gop=gop)
            os.replace(tmp, path)
            print(f"generated {path} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    info = probe(path)
    print(f"video: {path.name}: {info.width}x{info.height}, {info.n_frames} frames, {info.fps:g} fps, "
          f"{info.duration:.1f} s, {path.stat().st_size / 1e6:.1f} MB; sampling {a.frames} frames (centers)")
    results = []
    for m in a.methods.split(","):
        r = subprocess.run([sys.executable, __file__, "--worker", m, str(path), "--frames", str(a.frames),
                            "--repeats", str(a.repeats)], capture_output=True, text=True, check=True)
        results.append(json.loads(r.stdout.strip().splitlines()[-1]))
    ref = next((r["ms"] for r in results if r["method"] == "decode-all"), None)
    print("\n| method | ms per video | x faster than decode-all | peak RSS (MB) | peak - baseline (MB) |")
    print("|---|---|---|---|---|")
    for r in results:
        speed = f"{ref / r['ms']:.1f}" if ref else "-"
        print(f"| {r['method']} | {r['ms']:.0f} | {speed} | {r['peak_rss_mb']:.0f} | {r['peak_minus_base_mb']:.0f} |")
    print(f"\nkeeping every decoded frame in memory would take {info.n_frames * info.width * info.height * 3 / 2**30:.1f} "
          "GiB (not run)")
    if a.json:
        Path(a.json).write_text(json.dumps({"video": str(path), "info": info.__dict__, "results": results}, indent=1))


if __name__ == "__main__":
    main()
