"""The ``lensbench`` console entry point: run the command, then leave without the interpreter's teardown.

A finished ``lensbench run`` holds the imported libraries (typer, rich, pydantic, aiohttp, Pillow)
and the run's objects; letting CPython free them one by one at exit took ~0.15 s of the command's
wall time on the 2-core CI machine (issue 11: the whole command is measured, not only its busy
window). :func:`exit_now` does what a normal exit does that matters — the ``atexit`` handlers
(temporary folders, logging, ``weakref.finalize``), flushing stdout/stderr — and then ends the
process with ``os._exit``. It falls back to a normal exit while other threads still run (they
would be cut off) or when ``LENSBENCH_SLOW_EXIT=1`` is set.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

__all__ = ["main", "exit_now"]


def main(argv: list[str] | None = None) -> None:
    """Run ``lensbench`` with ``argv`` (default: ``sys.argv[1:]``) and exit with its status (0 ok, 2 bad input).

    pydantic plugins are not looked up (``PYDANTIC_DISABLE_PLUGINS=__all__`` unless the variable is
    set): the command uses none, and the lookup scans the entry points of every installed
    distribution on the first model built (~25 ms here, more in a large environment). Set
    ``PYDANTIC_DISABLE_PLUGINS=`` (empty) to have them loaded.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from lensbench.runtime.interrupt import install_sigterm

    install_sigterm()  # SIGTERM (SLURM, Kubernetes, kill) stops every command as Ctrl-C does
    from lensbench.cli.main import app

    try:
        app(args=argv, prog_name="lensbench")
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    exit_now(code)


def exit_now(code: object = 0) -> None:
    """End the process with ``code`` as ``sys.exit`` would (None -> 0, int as is, anything else printed
    to stderr -> 1), after the ``atexit`` handlers and a flush of stdout/stderr, skipping the
    interpreter's teardown. Raises SystemExit instead (normal exit) while other threads are alive or
    when ``LENSBENCH_SLOW_EXIT=1``."""
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if threading.active_count() > 1 or os.environ.get("LENSBENCH_SLOW_EXIT") == "1" or run_exitfuncs is None:
        raise SystemExit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed pipe (``lensbench report | head``) or closed stream
            pass
    os._exit(status)
