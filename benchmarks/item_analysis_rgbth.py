"""Item analysis of the recorded RGB-Th-Bench replies: replay every ``benchmark_results_*.json`` of the shared data
(the ``*_thermal_only`` files under ``--input thermal-only``) and run ``lensbench analyze items`` over the runs.

    python benchmarks/item_analysis_rgbth.py [--runs DIR] [--out DIR] [--resamples 2000]

``--runs`` keeps the replayed run folders (default: a temporary folder); runs that score nothing (a file of
recorded errors only) are left out by the analysis. Prints the markdown report; ``--out`` also writes
items.md / items.csv / items.json and the suggested subset. docs/analysis.md quotes its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

DATA = Path(os.environ.get("LENSBENCH_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
RGBTH = DATA / "RGB-Th-Bench"


def replay_all(root: Path) -> list[Path]:
    """One run folder per (file, model) under ``root`` (kept when already finished)."""
    from lensbench.benchmarks.rgbth.benchmark import RGBThBench
    from lensbench.core.errors import LensbenchError
    from lensbench.runtime.runner import RunSettings, run_benchmark

    out = []
    for f in sorted(RGBTH.glob("benchmark_results_*.json")):
        models = sorted({r["model"] for r in json.loads(f.read_text(encoding="utf-8"))})
        for m in models:
            d = root / (f.stem.removeprefix("benchmark_results_") + ("" if len(models) == 1 else "-" + m))
            if not (d / "result.json").is_file():
                opts = {"input": "thermal-only"} if f.stem.endswith("_thermal_only") else {}
                try:
                    run_benchmark(RGBThBench(RGBThBench.Options(**opts)),
                                  RunSettings(model=f"replay:{f}", replay_model=m, out=d,
                                              data_dir=RGBTH / "RGB-Th-Bench" / "Data", progress=False))
                except LensbenchError as exc:  # an incomplete replay (recorded errors) still leaves its folder
                    print(f"{d.name}: {str(exc).splitlines()[0][:160]}", file=sys.stderr)
            out.append(d)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--resamples", type=int, default=2000)
    a = ap.parse_args()
    from lensbench.analysis.items import analyze_items, to_markdown, write_outputs

    with tempfile.TemporaryDirectory() as tmp:
        dirs = replay_all(a.runs or Path(tmp))
        usable = [d for d in dirs if (d / "samples.jsonl").is_file()
                  and any('"outcome":"correct"' in ln or '"outcome":"wrong"' in ln
                          for ln in (d / "samples.jsonl").read_text(encoding="utf-8").splitlines())]
        rep = analyze_items(usable, n_resamples=a.resamples)
        if a.out:
            write_outputs(rep, a.out)
        print(to_markdown(rep), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
