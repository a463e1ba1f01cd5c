"""One process owns a run folder at a time: an OS file lock that dies with its process.

``fcntl.flock`` on ``<run_dir>/.lock``: the kernel releases it when the process exits, however it
exits (kill -9 included), so a stale lock never blocks a resume. Commands that change a folder
(``run``, ``repair``, ``merge --out``, a rebuild by ``report``) take it exclusively; commands that only
read one (``report``, ``export``, a shard read by ``merge``) take it shared, so several readers may
read a finished run at once while none can read a run that is being written (issue 20). The file
holds the exclusive owner's PID for the error message of a second process.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from lensbench.core.errors import ConfigError
from lensbench.runtime.interrupt import owned_folders

__all__ = ["RunLock"]


class RunLock:
    """Lock of ``run_dir``: exclusive (created, with the folder) or, with ``shared``, a reader's lock.

    Use as a context manager or call :meth:`release`.
    Raises ConfigError naming the owner's PID when another process writes the folder, or saying
    that other commands are reading it (exclusive only). A shared lock of a folder whose lock file
    cannot be created (a read-only folder) is skipped: nothing can write such a folder.
    """

    FILENAME = ".lock"

    #: locks this process holds: lock-file path -> [fd, shared?, holders] (a nested lock of the same folder
    #: in one process shares the first one's file descriptor: flock would refuse a second one)
    _held: dict[str, list] = {}

    def __init__(self, run_dir: str | Path, *, shared: bool = False):
        self.path = Path(run_dir) / self.FILENAME
        self.shared = shared
        self._fd: int | None = None
        self._key = os.path.realpath(self.path)
        held = self._held.get(self._key)
        if held is not None:  # this process holds it already (merge -> rebuild, report -> rebuild)
            if held[1] and not shared:  # upgrade this process's shared lock
                self._flock(held[0], fcntl.LOCK_EX, run_dir, probe=False)
                held[1] = False
            held[2] += 1
            self._fd = held[0]
            return
        try:
            fd = self._open()
        except OSError as exc:
            if shared and exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
                return  # a folder nobody can write: nothing to wait for
            raise ConfigError(f"{run_dir}: cannot open its lock file {self.path} ({exc.strerror})") from None
        try:
            self._flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, run_dir)
        except ConfigError:
            os.close(fd)
            raise
        self._fd = fd
        self._held[self._key] = [fd, shared, 1]
        if not shared:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
            owned_folders().setdefault(str(run_dir), Path(run_dir))  # counted in the Ctrl-C / SIGTERM line

    def _flock(self, fd: int, mode: int, run_dir, probe: bool = True) -> None:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(self._busy_message(fd, run_dir, probe)) from None

    def _open(self) -> int:
        if self.shared:
            if self.path.exists():
                return os.open(self.path, os.O_RDONLY)
            if not self.path.parent.is_dir():
                raise ConfigError(f"{self.path.parent}: no such run folder")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    def _busy_message(self, fd: int, run_dir, probe: bool) -> str:
        """Who holds the folder: a writer (its PID) or, when ``probe`` finds a shared lock free, readers."""
        readers = False
        if probe and not self.shared:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                readers = True
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                pass
        if readers:
            return (f"{run_dir} is being read by another lensbench command (report, export or merge); "
                    "try again when it has finished")
        owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
        return (f"{run_dir} is in use by another lensbench process (PID {owner}); wait for it to finish "
                "or use another --out")

    def release(self) -> None:
        """Release the lock (idempotent); the file is closed when the last holder in this process releases it."""
        if self._fd is None:
            return
        self._fd = None
        held = self._held.get(self._key)
        if held is None:
            return
        held[2] -= 1
        if held[2] == 0:
            del self._held[self._key]
            os.close(held[0])

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()
