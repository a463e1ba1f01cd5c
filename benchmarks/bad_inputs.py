"""Bad inputs to the CLI (issue 30, part 6): each must end in a one-line error and a non-zero exit.

Per case it prints the exit code, whether the output holds a traceback, whether the input was
silently accepted (exit 0) and the last line of stderr; then the totals (goal: 0 tracebacks, 0
silently accepted). Inputs: eval configs with wrong types or infinite values, a binary config, a
file where a folder is wanted, a missing or busy run folder, a run with an empty samples.jsonl or a
damaged store, prices that are not finite. Everything is generated in a temporary folder; nothing
is sent to a model.

    python benchmarks/bad_inputs.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lensbench.benchmarks.rgbth.demo import write_release
from lensbench.testing.runs import craft_run

LENSBENCH = [sys.executable, "-m", "lensbench"]


def config(work: Path, name: str, model: str = "", settings: str = "") -> str:
    """An eval config with one model (``model``: extra keys of its table) and RGB-Th-Bench."""
    p = work / f"{name}.toml"
    p.write_text(f'out = "runs"\n{settings}\n[[model]]\nname = "m"\nspec = "random"\n{model}\n'
                 f'[[benchmark]]\nname = "rgb-th-bench"\ndata_dir = "{work / "data" / "Data"}"\n', encoding="utf-8")
    return str(p)


def cases(work: Path) -> list[tuple[str, list[str]]]:
    """``(name, argv)`` of every bad input; writes the files they name under ``work``."""
    data = write_release(work / "data", n_scenes=2)
    run = craft_run(work / "run", "rgb-th-bench", n=24)
    (work / "binary.toml").write_bytes(bytes(range(256)) * 4)
    (work / "a-file").write_text("x", encoding="utf-8")
    empty = craft_run(work / "empty", "rgb-th-bench", n=24)
    (empty / "samples.jsonl").write_bytes(b"")
    damaged = craft_run(work / "damaged", "rgb-th-bench", n=24)
    (damaged / "responses.sqlite").write_bytes(b"not a database" * 100)
    busy = craft_run(work / "busy", "rgb-th-bench", n=24)
    evals = [("eval: binary config", str(work / "binary.toml")),
             ("eval: limit = \"2\"", config(work, "limit-str", settings='[settings]\nlimit = "2"')),
             ("eval: limit = true", config(work, "limit-bool", settings="[settings]\nlimit = true")),
             ("eval: temperature = inf", config(work, "temp-inf", settings="[settings]\ntemperature = inf")),
             ("eval: timeout_s = inf", config(work, "timeout-inf", settings="[settings]\ntimeout_s = inf")),
             ("eval: concurrency = 1e12", config(work, "conc", model="concurrency = 1e12")),
             ("eval: settings concurrency = 1e12", config(work, "conc2", settings="[settings]\nconcurrency = 1e12"))]
    return [*((n, ["eval", c, "--dry-run"]) for n, c in evals),
            ("view --figures-dir <a file>", ["view", str(run), "--out", str(work / "v.html"), "--figures-dir",
                                             str(work / "a-file")]),
            ("data stats --plots <a file>", ["data", "stats", "rgb-th-bench", str(data), "--plots",
                                             str(work / "a-file")]),
            ("view <no such folder>", ["view", str(work / "nowhere"), "--out", str(work / "v2.html")]),
            ("view <a run being written>", ["view", str(busy), "--out", str(work / "v3.html")]),
            ("reproduce: empty samples.jsonl", ["reproduce", "rgb-th-bench", str(empty)]),
            ("reproduce: damaged store", ["reproduce", "rgb-th-bench", str(damaged)]),
            ("reproduce --price R=nan,inf", ["reproduce", "rgb-th-bench", str(run), "--price", f"{run}=nan,inf"]),
            ("reproduce --price R=inf,1", ["reproduce", "rgb-th-bench", str(run), "--price", f"{run}=inf,1"])]


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="lensbench-bad-inputs-"))
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    try:
        todo = cases(work)
        # a run being written: another process holds its lock while `view` reads it
        holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from lensbench.runtime.lock import RunLock; "
                                   f"RunLock({str(work / 'busy')!r}); print('held', flush=True); time.sleep(120)"],
                                  stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "held"
        tracebacks = accepted = 0
        try:
            for name, argv in todo:
                r = subprocess.run([*LENSBENCH, *argv], capture_output=True, text=True, timeout=300, env=env)
                tb = "Traceback" in r.stdout + r.stderr
                lines = [x for x in r.stderr.splitlines() if x.strip()]
                tracebacks += tb
                accepted += r.returncode == 0
                print(f"{name:<36} exit {r.returncode}  traceback {int(tb)}  accepted {int(r.returncode == 0)}  "
                      f"{(lines[-1] if lines else '')[:150]}", flush=True)
        finally:
            holder.kill()
            holder.wait()
        print(f"\n{len(todo)} bad inputs: {tracebacks} tracebacks, {accepted} silently accepted (goal 0 and 0)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
