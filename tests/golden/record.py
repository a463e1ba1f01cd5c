"""Record the golden documents: run every scenario with a given interpreter / PYTHONPATH and write
``expected/<scenario>.json``.

    # the pre-restructure code (frozen worktree /work/base):
    python tests/golden/record.py --pythonpath /work/base/src
    # a subset, keeping the run folders for inspection:
    python tests/golden/record.py --pythonpath /work/base/src --only if_blind_openai --keep /tmp/golden-runs

Refuses to write a document when a command crashed (exit code other than 0, or 3 = incomplete
run) or a fake-server reply script failed, unless ``--allow-failures``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs python -m lensbench")
    ap.add_argument("--pythonpath", default=None, help="PYTHONPATH for it (e.g. /work/base/src); default: inherited")
    ap.add_argument("--only", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--workers", type=int, default=max(2, min(4, os.cpu_count() or 2)))
    ap.add_argument("--keep", type=Path, default=None, help="folder for fixtures copy and run folders (kept)")
    ap.add_argument("--allow-failures", action="store_true")
    ap.add_argument("--check", action="store_true", help="compare with expected/ instead of writing")
    ap.add_argument("--to", type=Path, default=None, help="folder to write (or --check against) instead of expected/")
    a = ap.parse_args(argv)
    scs = [s for s in SCENARIOS if not a.only or s.name in a.only]
    unknown = set(a.only or []) - {s.name for s in SCENARIOS}
    if unknown:
        ap.error(f"unknown scenarios: {sorted(unknown)}")
    env = harness.driver_env(a.pythonpath)
    root = a.keep or Path(tempfile.mkdtemp(prefix="golden-record-"))
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    res = harness.run_many(scs, python=a.python, env=env, root=root, workers=a.workers)
    dest = a.to or harness.EXPECTED
    dest.mkdir(parents=True, exist_ok=True)
    bad = 0
    for sc in scs:
        doc, err = res[sc.name]
        if doc is None or (err and not a.allow_failures):
            bad += 1
            print(f"FAILED {sc.name}:\n{err}", file=sys.stderr)
            continue
        text = json.dumps(doc)
        if "unknown:" in text:
            print(f"warning: {sc.name}: an image payload matched no fixture image", file=sys.stderr)
        path = dest / f"{sc.name}.json"
        if a.check:
            exp = json.loads(path.read_text(encoding="utf-8"))
            d = harness.diff(exp, doc)
            print(f"{'same' if not d else 'DIFFERENT'} {sc.name}")
            for line in d[:30]:
                print("   ", line)
            bad += bool(d)
        else:
            path.write_text(harness.dump(doc), encoding="utf-8")
            runs = doc["runs"]
            print(f"wrote {path.name}: exit {[r['exit_code'] for r in runs]}, "
                  f"{sum(len(r['samples']) for r in runs)} samples, "
                  f"{sum(len(r['request_keys']) for r in runs)} keys, {doc.get('server', {}).get('n_requests', 0)} bodies")
    print(f"lensbench package run: {sorted(harness.LAST_RUN_INFO.get('lensbench_files', []))}")
    print(f"{len(scs) - bad}/{len(scs)} scenarios ok in {time.time() - t0:.1f}s (runs under {root})")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
