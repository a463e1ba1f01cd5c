"""The watcher beside a launched server: stops its whole process group when lensbench dies (issue 30, part 8).

A launched engine gets ``PR_SET_PDEATHSIG`` (SIGTERM) and so dies with lensbench, even after
``kill -9``; the workers the engine forked do not: they are the engine's children, not lensbench's,
and an engine killed abruptly (or one that does not pass SIGTERM on) leaves them running with the
GPU. This watcher is started by :mod:`lensbench.backends.launcher` next to each server, in its own
session, holding the read end of a pipe whose write end only lensbench holds. When lensbench stops
the server itself it writes ``done`` and the watcher exits doing nothing. When lensbench dies the
kernel closes the pipe (end of file); the watcher gives the engine the grace period to stop by itself
(it received SIGTERM through ``PR_SET_PDEATHSIG``, and a second signal could cut its own shutdown
short), then sends SIGTERM to what is left of the server's process group (its workers), waits up to
the grace period again for the group to empty, sends SIGKILL to what is still there, and removes the
server's scratch folder.

:func:`sweep_server_tmpdirs` removes the scratch folders of lensbench processes that are gone (a
watcher that could not run, a machine that rebooted): every run calls it when it opens its session.

The watcher is run as a plain script (``python -I reaper.py PGID TMPDIR GRACE_S``): standard library only, no
lensbench import, so it starts in tens of milliseconds and reads nothing from the environment.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main", "stop_group", "pid_alive", "sweep_stale_tmpdirs", "sweep_server_tmpdirs", "SERVER_TMP_PREFIXES"]

#: scratch-folder name prefixes of the launched servers (``lensbench-<engine>-<PID>-*``)
SERVER_TMP_PREFIXES = ("lensbench-vllm-", "lensbench-sglang-", "lensbench-llama.cpp-")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # a member under another user: nothing this watcher may stop
        return False


def pid_alive(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie (Linux ``/proc``; elsewhere: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:  # it exited between the two checks
        return False
    except (OSError, IndexError):
        return True


def wait_for_exit(pid: int, seconds: float) -> bool:
    """Wait up to ``seconds`` for process ``pid`` to be gone; True when it is."""
    deadline = time.monotonic() + seconds
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def stop_group(pgid: int, grace_s: float) -> None:
    """SIGTERM the process group ``pgid``, wait up to ``grace_s`` seconds for it to empty, then SIGKILL it."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 2.0)):
        if not _group_alive(pgid):
            return
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _group_alive(pgid):
            time.sleep(0.05)


def sweep_stale_tmpdirs(prefix: str) -> int:
    """Remove this user's ``<tmp>/<prefix><PID>-*`` folders whose lensbench process is gone (a kill -9
    leaves its server's scratch folder behind: the server dies with it, its folder does not).
    Returns how many were removed."""
    n = 0
    for d in Path(tempfile.gettempdir()).glob(prefix + "*"):
        pid = d.name[len(prefix):].split("-", 1)[0]
        try:
            if not pid.isdigit() or d.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
            n += 1
        except OSError:  # alive under another user (EPERM), or gone meanwhile
            continue
    return n


def sweep_server_tmpdirs() -> int:
    """:func:`sweep_stale_tmpdirs` for every launched server's prefix (:data:`SERVER_TMP_PREFIXES`): the
    scratch folders of lensbench processes that are gone. Returns how many were removed."""
    return sum(sweep_stale_tmpdirs(p) for p in SERVER_TMP_PREFIXES)


def main(argv: list[str]) -> int:
    """``PGID TMPDIR GRACE_S``: wait for ``done`` (exit) or end of file on stdin (stop the group, remove TMPDIR)."""
    pgid, tmpdir, grace_s = int(argv[0]), argv[1], float(argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is lensbench's to handle; the pipe says the rest
    try:
        line = sys.stdin.readline()
    except OSError:
        line = ""
    if line.strip() == "done":
        return 0
    wait_for_exit(pgid, grace_s)  # the leader (the engine) first, stopping on its own SIGTERM
    stop_group(pgid, grace_s)
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
