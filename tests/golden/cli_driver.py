"""Run several ``python -m lensbench ...`` invocations in ONE interpreter (saves ~1 s of imports
per call), each exactly as the command line would: ``sys.argv`` set, ``lensbench.__main__`` run
with :func:`runpy.run_module`, stdout/stderr captured, ``SystemExit`` turned into the exit code.

Usage: ``python cli_driver.py PLAN.json RESULT.json [--isolated]``; PLAN = list of argv lists
(after ``lensbench``); RESULT = list of ``{"argv", "rc", "stdout", "stderr"}``. ``--isolated``
runs each as its own ``python -m lensbench`` process instead (slower; for checking that the
in-process driver changes nothing). Independent of lensbench internals.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
import traceback


def run_inprocess(argv: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    rc = 0
    old_argv = sys.argv
    sys.argv = ["lensbench", *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_module("lensbench", run_name="__main__", alter_sys=True)
            except SystemExit as exc:
                code = exc.code
                rc = code if isinstance(code, int) else (0 if code is None else 1)
                if not isinstance(code, (int, type(None))):
                    print(code, file=sys.stderr)
            except BaseException:  # noqa: BLE001 - a crash is a result too
                rc = 1
                traceback.print_exc()
    finally:
        sys.argv = old_argv
    mod = sys.modules.get("lensbench")
    return {"argv": argv, "rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue(),
            "lensbench_file": getattr(mod, "__file__", None)}


def run_isolated(argv: list[str]) -> dict:
    p = subprocess.run([sys.executable, "-m", "lensbench", *argv], capture_output=True, text=True,
                       encoding="utf-8")
    return {"argv": argv, "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


def main() -> None:
    plan_path, result_path = sys.argv[1], sys.argv[2]
    isolated = "--isolated" in sys.argv[3:]
    if not isolated:  # the command must end in SystemExit, not os._exit (lensbench.cli.entry.exit_now)
        os.environ["LENSBENCH_SLOW_EXIT"] = "1"
    with open(plan_path, encoding="utf-8") as fh:
        plan = json.load(fh)
    results = [(run_isolated if isolated else run_inprocess)(argv) for argv in plan]
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(results, fh, ensure_ascii=False)


if __name__ == "__main__":
    main()
