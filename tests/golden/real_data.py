"""Real-data figures before / after the restructure (not a pytest: run it by hand).

    # record the pre-restructure figures (frozen worktree /work/base):
    python tests/golden/real_data.py --pythonpath /work/base/src --write
    # compare the installed code with them (prints differences; exit 1 if any):
    python tests/golden/real_data.py

Runs (data from ``--data`` = ``$LENSBENCH_SHARED_DATA`` or ``../shared/data`` beside the checkout):

* RGB-Th-Bench: ``--model replay:FILE`` for every ``benchmark_results_*.json`` (every model of a
  multi-model file via ``--replay-model``), default options (the ``*_thermal_only`` files are
  replayed under the default input mode: the pre-restructure code has no ``--input`` option),
  plus one ``--include-extra-skills`` run.
* IF-Bench (680 questions; images are not in the release): ``constant:A`` and ``random`` with
  ``--blind`` (no image needed), and ``constant:A`` with synthetic placeholder images named as
  ``dst_thermal_path`` (made in a temp dir; a constant answer does not look at them).
* IV-Bench (1,686 queries; videos and query images are not in the release): ``constant:a`` and
  ``random`` with ``--frames 8`` on synthetic placeholder media (one tiny video per video id,
  one tiny image per ``image_name``, made in a temp dir).
* GOBench (999 records, 45 images in the release): a constant critic reply and ``random``.

Per run the document holds the exit code, ``result.json``'s metrics and counts (paths
normalised), the number of store keys and a SHA-256 over them, and a SHA-256 over the samples
reduced by ``harness.sample_view``. Placeholder media are made with PyAV / Pillow, so keys of
the IF (non-blind) and IV runs are only comparable on the same machine / environment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

OUT = harness.GOLDEN_DIR / "REAL_DATA_BEFORE.json"
GO_CONST = ('{"realityAnswers_Eval": ["Yes", "Yes", "No", "Cannot Determine", "Yes"], '
            '"aestheticsRating_Eval": 4, "consistencyRating_Eval": 4}')


def default_data() -> Path:
    env = os.environ.get("LENSBENCH_SHARED_DATA")
    return Path(env) if env else harness.GOLDEN_DIR.parents[2] / "shared" / "data"


def placeholder_media(data: Path, tmp: Path) -> dict[str, Path]:
    """Placeholder IF-Bench images and IV-Bench videos / images in ``tmp`` (deterministic)."""
    import numpy as np
    from PIL import Image

    out = {}
    # IF-Bench: one 32x24 gray image per dst_thermal_path
    doc = json.loads((data / "IF-Bench/evaluate/if_bench/if_bench.json").read_text(encoding="utf-8"))
    ifd = tmp / "if_images"
    for name in sorted({r["dst_thermal_path"] for v in doc.values() for r in v}):
        p = ifd / name
        p.parent.mkdir(parents=True, exist_ok=True)
        v = int(hashlib.sha256(name.encode()).hexdigest()[:2], 16)
        Image.new("RGB", (32, 24), (v, v, v)).save(p, "JPEG" if name.lower().endswith((".jpg", ".jpeg")) else "PNG")
    out["if_images"] = ifd
    # IV-Bench: a 16-frame 32x32 video per id, a 24x24 image per image_name
    import av

    vd, idir = tmp / "iv_videos", tmp / "iv_images"
    vd.mkdir(parents=True, exist_ok=True)
    idir.mkdir(parents=True, exist_ok=True)
    for line in (data / "IV-Bench/dataset/test_data.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        for vid, qs in json.loads(line).items():
            c = av.open(str(vd / f"{vid}.mp4"), "w")
            s = c.add_stream("libx264", rate=8)
            s.width = s.height = 32
            s.pix_fmt = "yuv420p"
            s.options = {"preset": "ultrafast", "threads": "1"}
            for i in range(16):
                arr = np.full((32, 32, 3), (i * 15) % 256, np.uint8)
                f = av.VideoFrame.from_ndarray(arr, format="rgb24").reformat(format="yuv420p")
                f.pts = i
                for pkt in s.encode(f):
                    c.mux(pkt)
            for pkt in s.encode():
                c.mux(pkt)
            c.close()
            for q in qs:
                p = idir / q["image_name"]
                p.parent.mkdir(parents=True, exist_ok=True)
                if not p.exists():
                    Image.new("RGB", (24, 24), (10, 20, 30)).save(p, "PNG")
    out["iv_videos"], out["iv_images"] = vd, idir
    return out


def plan(data: Path, media: dict[str, Path] | None) -> list[tuple[str, str, list[str]]]:
    """(name, benchmark, run args) of every real-data run."""
    runs: list[tuple[str, str, list[str]]] = []
    rgb = data / "RGB-Th-Bench"
    rdata = ["--data-dir", str(rgb / "RGB-Th-Bench" / "Data")]
    for f in sorted(rgb.glob("benchmark_results_*.json")):
        recs = json.loads(f.read_text(encoding="utf-8"))
        models = sorted({r.get("model") for r in recs if r.get("model")})
        for m in models:
            extra = ["--replay-model", m] if len(models) > 1 else []
            runs.append((f"rgbth/{f.stem}/{m}", "rgb-th-bench", [*rdata, "--model", f"replay:{f}", *extra]))
    glm = rgb / "benchmark_results_GLM.json"
    runs.append(("rgbth/benchmark_results_GLM/extra-skills", "rgb-th-bench",
                 [*rdata, "--model", f"replay:{glm}", "--include-extra-skills"]))
    ifd = ["--data-dir", str(data / "IF-Bench" / "evaluate" / "if_bench")]
    runs.append(("ifbench/constant-A/blind", "if-bench", [*ifd, "--model", "constant:A", "--blind"]))
    runs.append(("ifbench/random/blind", "if-bench", [*ifd, "--model", "random", "--blind"]))
    if media:
        runs.append(("ifbench/constant-A/placeholder-images", "if-bench",
                     [*ifd, "--model", "constant:A", "--image-dir", str(media["if_images"])]))
        ivd = ["--data-dir", str(data / "IV-Bench"), "--questions", str(data / "IV-Bench/dataset/test_data.jsonl"),
               "--videos-dir", str(media["iv_videos"]), "--images-dir", str(media["iv_images"]), "--frames", "8"]
        runs.append(("ivbench/constant-a/placeholder-media", "iv-bench", [*ivd, "--model", "constant:a"]))
        runs.append(("ivbench/random/placeholder-media", "iv-bench", [*ivd, "--model", "random"]))
    god = ["--data-dir", str(data / "GOBench" / "data")]
    runs.append(("gobench/constant", "gobench", [*god, "--model", "constant:" + GO_CONST]))
    runs.append(("gobench/random", "gobench", [*god, "--model", "random"]))
    return runs


def build(data: Path, python: str, env: dict[str, str], work: Path) -> dict:
    media = placeholder_media(data, work / "media")
    runs = plan(data, media)
    harness.probe_flags([b for _n, b, _a in runs], python=python, env=env, cwd=work / "_probe")
    steps, dirs = [], []
    for i, (name, bench, args) in enumerate(runs):
        d = work / f"run{i:02d}"
        dirs.append(d)
        full = ["--out", str(d), "--no-progress", *args]
        argv = harness.translate_args(bench, full)
        steps.append([*harness.COMMANDS["run"], harness.BENCH_NAMES[bench], *argv])
    t0 = time.time()
    res = harness.run_steps(steps, python=python, env=env, cwd=work)
    paths = harness._Paths([(str(data), "<DATA>"), (str(work), "<WORK>")])
    doc = {"about": "pre-restructure figures on the real data (tests/golden/real_data.py)", "runs": {}}
    for (name, bench, args), d, r in zip(runs, dirs, res):
        entry: dict = {"benchmark": bench, "argv": paths.obj(args), "exit_code": r["rc"]}
        rj = d / "result.json"
        if rj.is_file():
            rr = json.loads(rj.read_text(encoding="utf-8"))
            entry["model"] = rr.get("model")
            entry["complete"] = rr.get("complete")
            entry["metrics"] = paths.obj(rr.get("metrics"))
            entry["counts"] = paths.obj(rr.get("counts"))
        else:
            entry["error"] = paths.text(r["stderr"][-1500:])
        keys = harness.store_keys(d)
        entry["n_request_keys"] = len(keys)
        entry["request_keys_sha256"] = hashlib.sha256("".join(k + "\n" for k in keys).encode()).hexdigest()
        sj = d / "samples.jsonl"
        if sj.is_file():
            views = {}
            for line in sj.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    sid, v = harness.sample_view(bench, json.loads(line))
                    views[sid] = paths.obj(v)
            entry["n_samples"] = len(views)
            entry["samples_sha256"] = hashlib.sha256(json.dumps(views, sort_keys=True, ensure_ascii=False)
                                                     .encode()).hexdigest()
        doc["runs"][name] = entry
    doc["wall_s"] = round(time.time() - t0, 1)
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=default_data())
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--pythonpath", default=None, help="PYTHONPATH of the code to run (default: inherited)")
    ap.add_argument("--write", action="store_true", help=f"write {OUT.name} instead of comparing with it")
    ap.add_argument("--out", type=Path, default=None, help="also write the recomputed document here")
    ap.add_argument("--keep", type=Path, default=None, help="work folder to keep (default: a temp dir, removed)")
    a = ap.parse_args(argv)
    if not a.data.is_dir():
        ap.error(f"real data not found at {a.data} (give --data or LENSBENCH_SHARED_DATA)")
    work = a.keep or Path(tempfile.mkdtemp(prefix="golden-real-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        doc = build(a.data, a.python, harness.driver_env(a.pythonpath), work)
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    wall = doc.pop("wall_s")
    if a.out:
        a.out.write_text(harness.dump(doc), encoding="utf-8")
    if a.write:
        OUT.write_text(harness.dump(doc), encoding="utf-8")
        for name, e in doc["runs"].items():
            print(f"{name}: exit {e['exit_code']}, n={e.get('counts', {}).get('n')}")
        print(f"wrote {OUT} ({len(doc['runs'])} runs, {wall}s)")
        return 0
    before = json.loads(OUT.read_text(encoding="utf-8"))
    diffs = harness.diff(before, doc)
    for line in diffs:
        print(line)
    print(f"{len(doc['runs'])} runs in {wall}s: " + ("identical to REAL_DATA_BEFORE.json" if not diffs
                                                     else f"{len(diffs)} difference(s) from REAL_DATA_BEFORE.json"))
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
