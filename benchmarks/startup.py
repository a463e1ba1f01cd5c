"""Start-up cost of the command line (issue 32.11): ``lensbench --help`` and a whole ``run`` beyond its busy window.

1. ``help``: ``python -m lensbench --help`` in a fresh process, ``--repeats`` times; medians of the
   child's CPU time (user + sys, from ``wait4``: the machine is shared, so CPU is the figure to
   compare) and of its wall time; then ``-X importtime``'s slowest lensbench modules (cumulative).
   Goal: <= 0.4 s.
2. ``run``: ``lensbench run rgb-th-bench --concurrency 64`` (default settings, all 1,624 questions)
   against the yardstick's fixed-latency server (``--server``, 200 ms per request; it records the
   busy window, first -> last request); prints the whole command's wall time beyond that window, and,
   from inside the process (the command run through a wrapper that notes its CPU time when the first
   request is posted), the CPU time before the first request and in all: wall figures on a loaded
   machine measure the other processes, CPU figures do not. Goal: <= 1.0 s beyond the window.

    python benchmarks/startup.py [--only help|run] [--repeats 5] [--data DATA_DIR] [--server PATH]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SERVER = HERE.parent.parent / "shared/tools/engine-yardstick/fixed_latency_server.py"
DEFAULT_DATA = HERE.parent.parent / "shared/data/RGB-Th-Bench/RGB-Th-Bench/Data"


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, int, str]:
    """(wall s, CPU s = user + sys of the child, exit code, stderr) of one command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = proc.stderr.read().decode(errors="replace")
    _pid, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, proc.returncode, err


def help_cost(repeats: int) -> None:
    cmd = [sys.executable, "-m", "lensbench", "--help"]
    timed(cmd)  # warm the file cache and the bytecode
    rows = []
    for _ in range(repeats):
        wall, cpu, rc, err = timed(cmd)
        assert rc == 0, err
        rows.append((wall, cpu))
    print(f"lensbench --help, medians of {repeats}: CPU {statistics.median(c for _, c in rows):.3f} s "
          f"(user+sys), wall {statistics.median(w for w, _ in rows):.3f} s")
    _w, _c, _rc, err = timed([sys.executable, "-X", "importtime", "-m", "lensbench", "--help"])
    cum = []
    for line in err.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m and (m.group(4).startswith("lensbench") or len(m.group(3)) <= 1):
            cum.append((int(m.group(2)), m.group(4)))
    print("  slowest imports (cumulative ms, one run): " + ", ".join(f"{n} {us / 1000:.0f}" for us, n in
                                                                       sorted(cum, reverse=True)[:8]))


#: ``python -c CHILD run ...``: lensbench's entry point with the CPU time of the first POST noted (stderr CPU_FIRST)
CHILD = r"""
import resource, sys
from lensbench.backends import http_lean
seen = {}
orig = http_lean.LeanClient.post
def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime
async def post(self, *a, **k):
    seen.setdefault("first", cpu())
    return await orig(self, *a, **k)
http_lean.LeanClient.post = post
import atexit
atexit.register(lambda: sys.stderr.write(f"CPU_FIRST {seen.get('first', -1):.3f}\n"))
sys.argv = ["lensbench", *sys.argv[1:]]
from lensbench.cli.entry import main
main()
"""


def run_cost(repeats: int, data: Path, server: Path) -> None:
    sys.path.insert(0, str(HERE))
    from yardstick_passthrough import Server

    rows = []
    for _ in range(repeats):
        srv = Server(server, 0.2)
        with tempfile.TemporaryDirectory() as tmp:
            t_start = time.time()
            wall, cpu, rc, err = timed([sys.executable, "-c", CHILD, "run", "rgb-th-bench", "--data-dir",
                                        str(data), "--model", "openai:fixed", "--base-url", srv.url, "--concurrency",
                                        "64", "--out", f"{tmp}/run", "--no-progress"],
                                       env={**os.environ, "OPENAI_API_KEY": "dummy"})
            t_end = time.time()
        st = srv.stop()
        assert rc == 0, err[-2000:]
        win = st["last"] - st["first"]
        first = float(re.search(r"CPU_FIRST (\S+)", err).group(1))
        rows.append((wall - win, cpu, first))
        print(f"  run: {st['requests']} requests, window {win:.2f} s, whole command = window + {wall - win:.2f} s "
              f"({st['first'] - t_start:.2f} s to the first request, {t_end - st['last']:.2f} s after the last); "
              f"CPU {first:.2f} s before the first request, {cpu:.2f} s in all", flush=True)
    print(f"lensbench run (C=64, L=200 ms), medians of {repeats}: whole command = busy window + "
          f"{statistics.median(r[0] for r in rows):.2f} s; CPU before the first request "
          f"{statistics.median(r[2] for r in rows):.2f} s, in all {statistics.median(r[1] for r in rows):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("help", "run"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--server", type=Path, default=DEFAULT_SERVER)
    a = ap.parse_args()
    if a.only in (None, "help"):
        help_cost(a.repeats)
    if a.only in (None, "run"):
        run_cost(max(1, a.repeats // 2 + 1), a.data, a.server)


if __name__ == "__main__":
    main()
