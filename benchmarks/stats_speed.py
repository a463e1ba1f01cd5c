"""How long the statistics take on the command line (issue 25 "Faster statistics": goal about 1 s).

Times, as a user runs them (each command a fresh process, wall clock, best of ``--repeats``):

* ``lensbench report RUNS...`` over 8 small crafted runs of the five benchmarks (the leaderboard
  with a 95% CI for every headline cell, ``--format csv`` for every category too);
* ``lensbench compare A B`` of two RGB-Th-Bench runs made from the real recorded replies
  (GLM-4.5V and Gemini-2.5-Pro, ``../shared/data/RGB-Th-Bench``; skipped when absent);
* ``lensbench view`` of the same two RGB-Th-Bench runs (leaderboard + comparison + tables; no plots).

Prints one line per command: seconds, and the first CI note it printed (so the resample count and
the resampled cluster are on record beside the time), after ``lensbench --version`` (the start-up
every command pays: on a loaded machine all figures grow with it). ``--pythonpath SRC`` runs the
commands with another source tree (e.g. the code before a change) on the same run folders.

    python benchmarks/stats_speed.py [--repeats 3] [--keep DIR] [--pythonpath /work/main/src]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lensbench.testing.runs import craft_run

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("LENSBENCH_SHARED_DATA", HERE.parent.parent / "shared" / "data")) / "RGB-Th-Bench"
LENSBENCH = str(Path(sys.executable).with_name("lensbench"))
SMALL = [("rgb-th-bench", "model-a", 336), ("rgb-th-bench", "model-b", 336), ("if-bench", "model-a", 320),
         ("if-bench", "model-b", 320), ("iv-bench", "model-a", 200), ("groundingme", "model-a", 300),
         ("groundingme", "model-b", 300), ("gobench", "model-a", 120)]


ENV = dict(os.environ)


def _timed(argv: list[str], repeats: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(repeats):
        t = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True, env=ENV)
        dt = time.perf_counter() - t
        if p.returncode not in (0, 3):
            raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        if dt < best:
            best, out = dt, p.stdout
    note = next((ln.strip() for ln in out.splitlines() if "resample" in ln), "(no CI note printed)")
    return best, note


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="build the runs here and keep them")
    ap.add_argument("--pythonpath", help="run the lensbench commands with this source tree first on the path")
    a = ap.parse_args()
    if a.pythonpath:
        ENV["PYTHONPATH"] = a.pythonpath
    root = a.keep or Path(tempfile.mkdtemp(prefix="stats-speed-"))
    try:
        small = [craft_run(root / f"{i}-{b}-{m}", b, m, n=n, seed=i, accuracy=0.55 + 0.05 * (i % 3))
                 for i, (b, m, n) in enumerate(SMALL)]
        t, _ = _timed([LENSBENCH, "--version"], a.repeats)
        print(f"start-up (lensbench --version): {t:.2f} s")
        t, note = _timed([LENSBENCH, "report", *map(str, small)], a.repeats)
        print(f"report, 8 small runs (leaderboard md): {t:.2f} s   [{note}]")
        t, _ = _timed([LENSBENCH, "report", *map(str, small), "--format", "csv"], a.repeats)
        print(f"report, 8 small runs (tidy csv, every category): {t:.2f} s")
        if not (DATA / "benchmark_results_GLM.json").is_file():
            print(f"no recorded RGB-Th-Bench replies under {DATA}: compare/view skipped")
            return 0
        pair = []
        for name, file, model in (("glm", "GLM", None), ("gemini", "google", "gemini-2.5-pro")):
            out = root / f"rgbth-{name}"
            if not (out / "result.json").is_file():
                argv = [LENSBENCH, "run", "rgb-th-bench", "--data-dir", str(DATA / "RGB-Th-Bench" / "Data"),
                        "--model", f"replay:{DATA / f'benchmark_results_{file}.json'}", "--out", str(out),
                        "--no-progress"] + (["--replay-model", model] if model else [])
                subprocess.run(argv, capture_output=True, text=True)  # the runs are made with this checkout
            pair.append(str(out))
        t, note = _timed([LENSBENCH, "compare", *pair], a.repeats)
        print(f"compare, two RGB-Th-Bench runs (1,624 questions each): {t:.2f} s   [{note}]")
        t, _ = _timed([LENSBENCH, "report", *pair, "--leaderboard"], a.repeats)
        print(f"report --leaderboard, the same two runs: {t:.2f} s")
        html = root / "view.html"
        t, _ = _timed([LENSBENCH, "view", *pair, "--out", str(html), "--no-figures"], a.repeats)
        print(f"view, the same two runs (no plots): {t:.2f} s")
    finally:
        if a.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
