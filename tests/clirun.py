"""Run the ``lensbench`` command from a test: in this process (the default, ~50x cheaper than a new
interpreter) or as a real ``python -m lensbench`` process (for what only a process has: signals,
kill -9, locks held by another process, the exit status of the real entry point, start-up time).

Both return a :class:`subprocess.CompletedProcess` (``args``, ``returncode``, ``stdout``,
``stderr``, text), so a test switches between them by name only. The in-process run behaves as the
process would (issue 35, part 6):

* argv: ``sys.argv`` is the process's (``.../lensbench/__main__.py ARGS``), so the stop line's
  "run the same command" reads the same; the program name in usage lines is ``lensbench``;
* streams: stdout and stderr captured apart (text, UTF-8), stdin empty or ``input``; no colour
  (the captured streams are not terminals, as a pipe is not); the width is ``COLUMNS`` when given
  (``columns=`` sets it), else 80, as for a pipe;
* environment and folder: ``env`` (when given) REPLACES ``os.environ`` for the call, as
  ``subprocess.run(env=...)`` does; ``cwd`` is entered and left; ``PYDANTIC_DISABLE_PLUGINS`` is
  set as :func:`lensbench.cli.entry.main` sets it;
* exit: ``typer.Exit(n)`` / ``sys.exit(n)`` give ``returncode`` n (None 0; a message: printed to
  stderr, 1); an exception nothing caught prints its traceback on stderr and gives 1, as Python does;
* state: what a command leaves in the process is put back (``os.environ``, the folder,
  ``sys.argv``, ``sys.excepthook``, the SIGINT/SIGTERM handlers the run installs, the registry of
  run folders the stop line counts (:mod:`lensbench.runtime.interrupt`)).

``timeout`` is accepted for the real process's signature; in this process pytest-timeout bounds a test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

__all__ = ["run_cli", "real_cli", "clean_env"]

_MAIN = str(Path(__import__("lensbench").__file__).with_name("__main__.py"))


def clean_env(*drop: str, **extra: str) -> dict[str, str]:
    """A copy of ``os.environ`` without the variables ``drop`` (default: ``OPENAI_API_KEY``), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in (drop or ("OPENAI_API_KEY",))}
    env.update(extra)
    return env


def _env_for(env: Mapping[str, str] | None, columns: int | None) -> dict[str, str]:
    e = dict(os.environ if env is None else env)
    if columns:
        e["COLUMNS"] = str(columns)
    return e


def real_cli(*args: str, env: Mapping[str, str] | None = None, columns: int | None = None, timeout: float = 300,
             **kw) -> subprocess.CompletedProcess:
    """``python -m lensbench ARGS`` as a child process (text output captured); ``kw`` go to :func:`subprocess.run`
    (``cwd``, ``input``, ...). Raises subprocess.TimeoutExpired after ``timeout`` seconds."""
    return subprocess.run([sys.executable, "-m", "lensbench", *map(str, args)], capture_output=True, text=True,
                          env=_env_for(env, columns), timeout=timeout, **kw)


@contextmanager
def _kept_state(argv: list[str]) -> Iterator[None]:
    """Put back, on leaving, the process state a command may change (see the module docstring)."""
    from lensbench.runtime import interrupt

    environ, cwd, old_argv, hook = dict(os.environ), os.getcwd(), sys.argv, sys.excepthook
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    owned, state = dict(interrupt._owned), dict(interrupt._state)
    interrupt._owned.clear()  # a new process has owned no run folder yet
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv, sys.excepthook = old_argv, hook
        os.chdir(cwd)
        if dict(os.environ) != environ:
            os.environ.clear()
            os.environ.update(environ)
        for s, h in handlers.items():
            if h is not None and signal.getsignal(s) is not h:
                signal.signal(s, h)
        interrupt._owned.clear()
        interrupt._owned.update(owned)
        interrupt._state.clear()
        interrupt._state.update(state)


def run_cli(*args: str, env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None,
            input: str | None = None, columns: int | None = None, timeout: float | None = None
            ) -> subprocess.CompletedProcess:
    """Run ``lensbench ARGS`` in this process, as :func:`real_cli` runs it in a child (see the module docstring)."""
    from typer.testing import CliRunner

    from lensbench.cli.main import app

    argv = [str(a) for a in args]
    runner = CliRunner()
    with _kept_state([_MAIN, *argv]):
        new_env = _env_for(env, columns)
        new_env.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
        if new_env != dict(os.environ):
            os.environ.clear()
            os.environ.update(new_env)
        if cwd is not None:
            os.chdir(cwd)
        with runner.isolation(input=input, color=False) as (out, err, _mixed):
            code: object = 0
            try:
                app(args=argv, prog_name="lensbench")
            except SystemExit as exc:
                code = exc.code
            except Exception:  # what Python prints for an exception nothing caught, then exit status 1
                sys.stderr.write(traceback.format_exc())
                code = 1
            if code is None:
                code = 0
            elif not isinstance(code, int):
                sys.stderr.write(f"{code}\n")
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
            stdout, stderr = out.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(["lensbench", *argv], code, stdout.decode("utf-8", "replace"),
                                       stderr.decode("utf-8", "backslashreplace"))


def walk_commands(cmd, path: tuple[str, ...] = ()):
    """``(path, command)`` for ``cmd`` (a click command or group) and every subcommand below it, depth first
    (``path``: the subcommand names from ``cmd`` down)."""
    yield path, cmd
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(None):
            sub = cmd.get_command(None, name)
            if sub is not None:
                yield from walk_commands(sub, path + (name,))
