"""Ctrl-C and SIGTERM stop a run the same way: cleanly, and with the one line that resumes it.

SIGTERM is what SLURM, Kubernetes and ``kill`` send. :func:`install_sigterm` makes it act as Ctrl-C
does: inside :func:`run_async` (the event loop of ``run``, ``eval`` and a rebuild) the main task is
cancelled, so every ``finally`` runs — the store commits what it received, a launched server's whole
process group is stopped and its temporary folder removed (``backends/launcher.py``) — and then
:class:`~lensbench.core.errors.Interrupted` carries the line the CLI prints:
``N replies stored in RUN; run the same command to resume: lensbench run ...`` (exit 130 for
SIGINT, 143 for SIGTERM). A second signal stops at once, as a second Ctrl-C does.
"""

from __future__ import annotations

import shlex
import signal
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from lensbench.core.errors import Interrupted
from lensbench.core.urls import redact_url

__all__ = ["install_sigterm", "run_async", "owned_folders", "stop_message"]

T = TypeVar("T")
_state: dict[str, Any] = {"signal": None}
_owned: dict[str, Path] = {}  # run folders this process wrote (RunLock, exclusive): counted in the stop line


def owned_folders() -> dict[str, Path]:
    """The registry of run folders this process has owned (path text -> path); the run lock adds to it."""
    return _owned


def _on_sigterm(signum, frame) -> None:
    _state["signal"] = signal.SIGTERM
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)  # asyncio's runner cancels its main task; the default raises KeyboardInterrupt
    else:
        raise KeyboardInterrupt


def install_sigterm() -> None:
    """Make SIGTERM act as Ctrl-C in this process (main thread only; elsewhere nothing)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is not _on_sigterm:
        signal.signal(signal.SIGTERM, _on_sigterm)


def _command() -> str | None:
    """The command line of this process when it is the ``lensbench`` CLI (URLs redacted), else None."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name != "lensbench" and not argv0.replace("\\", "/").endswith("lensbench/__main__.py"):
        return None
    return shlex.join(["lensbench", *(_redact(a) for a in sys.argv[1:])])


def _redact(arg: str) -> str:
    if "://" not in arg:
        return arg
    flag, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    return flag + eq + redact_url(value)


def stop_message(sig: int = signal.SIGINT) -> str:
    """``SIGTERM: N replies stored in RUN; run the same command to resume: lensbench ...``."""
    from lensbench.runtime.rows import count_ok  # pydantic records: imported when a run stops, not at start-up

    folders = list(_owned.values())
    counts = [count_ok(f) for f in folders]
    n = sum(c for c in counts if c is not None)
    where = (f" in {folders[0]}" if len(folders) == 1 else f" in {len(folders)} run folders") if folders else ""
    cmd = _command()
    return (f"{signal.Signals(sig).name}: {n} replies stored{where}; run the same command to resume"
            + (f": {cmd}" if cmd else ""))


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)`` with SIGTERM acting as Ctrl-C; an interrupt becomes
    :class:`~lensbench.core.errors.Interrupted` (after every ``finally`` of ``coro`` has run)."""
    install_sigterm()
    _state["signal"] = None
    try:
        import asyncio

        return asyncio.run(coro)
    except KeyboardInterrupt:
        sig = _state["signal"] or signal.SIGINT
        raise Interrupted(stop_message(sig), 128 + int(sig)) from None
