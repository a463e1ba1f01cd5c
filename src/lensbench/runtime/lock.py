"""One process owns a run folder at a time: an OS file lock that dies with its process.

``fcntl.flock`` on ``<run_dir>/.lock``: the kernel releases it when the process exits, however it
exits (kill -9 included), so a stale lock never blocks a resume. The file holds the owner's PID
for the error message of a second process.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from lensbench.core.errors import ConfigError

__all__ = ["RunLock"]


class RunLock:
    """Exclusive lock of ``run_dir`` (created); use as a context manager or call :meth:`release`.

    Raises ConfigError naming the owner's PID when another process holds it.
    """

    FILENAME = ".lock"

    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / self.FILENAME
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(self._fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(self._fd)
            self._fd = None
            raise ConfigError(f"{run_dir} is in use by another lensbench process (PID {owner}); wait for it to "
                              "finish or use another --out") from None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, str(os.getpid()).encode("ascii"), 0)

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
