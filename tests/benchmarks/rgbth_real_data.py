"""Replay every recorded RGB-Th-Bench file of ../shared/data with one code version; print its figures.

Not a test (no ``test_`` prefix): a before/after check of a restructure on real replies.
Run it once with the frozen old code and once with the new code and compare the JSON:

    PYTHONPATH=/work/base/src .venv/bin/python tests/benchmarks/rgbth_real_data.py --out /tmp/old.json
    .venv/bin/python tests/benchmarks/rgbth_real_data.py --out /tmp/new.json [--thermal-mode]
    .venv/bin/python tests/benchmarks/rgbth_real_data.py --compare /tmp/old.json /tmp/new.json

``--thermal-mode`` replays the ``*_thermal_only`` files under ``--input thermal-only`` (new code
only; the old code had no input modes). Output: ``{"<file>|<model>": {"metrics", "counts"}}``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

DATA = Path(os.environ.get("LENSBENCH_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data"))
RGBTH = DATA / "RGB-Th-Bench"


def _models(f: Path) -> list[str]:
    return sorted({r["model"] for r in json.loads(f.read_text(encoding="utf-8"))})


def replay_all(thermal_mode: bool) -> dict:
    try:
        from lensbench.benchmarks.rgbth.benchmark import RGBThBench
    except ImportError:  # the pre-restructure layout
        from lensbench.benchmarks.rgbth import RGBThBench
    try:
        from lensbench.runtime.runner import RunSettings, run_benchmark
    except ImportError:
        from lensbench.runner import RunSettings, run_benchmark
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, f in enumerate(sorted(RGBTH.glob("benchmark_results_*.json"))):
            opts = {}
            if thermal_mode and f.stem.endswith("_thermal_only"):
                opts = {"input": "thermal-only"}
            for m in _models(f):
                bench = RGBThBench(RGBThBench.Options(**opts))
                s = RunSettings(model=f"replay:{f}", replay_model=m, out=Path(tmp) / f"r{i}_{len(out)}",
                                data_dir=RGBTH / "RGB-Th-Bench" / "Data", progress=False)
                try:
                    res = run_benchmark(bench, s)
                except Exception as exc:  # e.g. the engine gives up on a file starting with recorded errors
                    out[f"{f.name}|{m}"] = {"exception": f"{type(exc).__name__}: {str(exc)[:200]}"}
                    continue
                out[f"{f.name}|{m}"] = {"metrics": res.metrics, "counts": res.counts}
    return out


def _diff(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from _diff(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, float) and isinstance(b, float):
        if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
            yield f"{path}: {a} -> {b}"
    elif a != b:
        yield f"{path}: {a!r} -> {b!r}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--thermal-mode", action="store_true")
    ap.add_argument("--compare", nargs=2)
    a = ap.parse_args()
    if a.compare:
        old, new = (json.loads(Path(p).read_text()) for p in a.compare)
        n = 0
        for key in sorted(set(old) | set(new)):
            d = list(_diff(old.get(key), new.get(key)))
            n += bool(d)
            print(f"{'SAME' if not d else 'DIFF'} {key}")
            for line in d:
                print("    " + line)
        return 1 if n else 0
    res = replay_all(a.thermal_mode)
    Path(a.out).write_text(json.dumps(res, indent=1))
    for k, v in res.items():
        if "exception" in v:
            print(f"{k}: {v['exception']}")
            continue
        q, s = v["metrics"]["QAcc"], v["metrics"]["SAcc"]
        print(f"{k}: QAcc {q['Overall']:.2f} SAcc {s['Overall']:.2f} n={v['counts']['n']} "
              f"err={v['counts']['n_error']} unparseable={v['counts']['n_unparseable']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
