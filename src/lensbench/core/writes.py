"""A write the disk refuses (full, quota, I/O error, file too large, read-only): one error, one sentence.

Every run-folder writer goes through here (the store, ``run.json``/``result.json``/``samples.jsonl``,
``--out`` files), so a full disk ends a command in one line naming the file, never a traceback, and
never leaves a half-written or temporary file behind (issue 20).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from lensbench.core.errors import LensbenchError

__all__ = ["WRITE_RETRY_S", "WriteFailed", "is_write_failure", "write_reason", "retry_writes", "write_atomically"]

T = TypeVar("T")
#: how long a write the disk refuses is retried before the command stops (seconds;
#: ``$LENSBENCH_WRITE_RETRY_S``, default 10)
WRITE_RETRY_S = float(os.environ.get("LENSBENCH_WRITE_RETRY_S") or 10.0)
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EROFS}


class WriteFailed(LensbenchError):
    """A file of a run folder (or an ``--out`` file) could not be written.

    The message names the file and says what was kept; ``unstored`` counts replies received but
    not stored (the store's group commit gave up).
    """

    def __init__(self, message: str, unstored: int = 0):
        super().__init__(message)
        self.unstored = unstored


def is_write_failure(exc: BaseException) -> bool:
    """True when ``exc`` is a write the disk refused: SQLite's SQLITE_FULL / SQLITE_IOERR /
    SQLITE_READONLY, or an OSError ENOSPC / EDQUOT / EIO / EFBIG / EROFS."""
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
        if code is not None and code & 0xFF in (8, 10, 13):  # READONLY, IOERR, FULL
            return True
        msg = str(exc).lower()
        return "disk is full" in msg or "disk i/o error" in msg or "readonly" in msg
    return isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS


def write_reason(exc: BaseException) -> str:
    """What a failed write says, for one line (``[Errno 28] No space left on device`` -> its text)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() + (" (disk full)" if exc.errno == errno.ENOSPC else "")
    return str(exc)


def retry_writes(write: Callable[[], T], what: str) -> T:
    """``write()``, tried again (backing off 0.05 s .. 1 s) while the disk refuses it, for up to
    :data:`WRITE_RETRY_S` seconds: a disk that fills and frees meanwhile costs nothing. Then raises
    :class:`WriteFailed` naming ``what``. Any other error propagates at once."""
    start, delay = time.monotonic(), 0.05
    while True:
        try:
            return write()
        except (OSError, sqlite3.OperationalError) as exc:
            if not is_write_failure(exc):
                raise
            if time.monotonic() - start >= WRITE_RETRY_S:
                raise WriteFailed(f"cannot write {what}: {write_reason(exc)} (retried for {WRITE_RETRY_S:g} s); "
                                  "free space and run the same command again") from None
            time.sleep(delay)
            delay = min(1.0, delay * 2)


def write_atomically(path: Path, write: Callable[[IO[str]], None]) -> None:
    """Write ``path`` through ``write(fh)`` on a temporary file beside it, then rename (never a
    half-written file), retried as :func:`retry_writes` does. On a failed write the temporary file
    is removed and :class:`WriteFailed` names ``path``; the old ``path`` is left as it was."""
    tmp = path.with_name(path.name + ".tmp")

    def attempt() -> None:
        try:
            with tmp.open("w", encoding="utf-8") as fh:
                write(fh)
            os.replace(tmp, path)
        except BaseException:
            try:
                tmp.unlink()
            except OSError:
                pass
            raise

    retry_writes(attempt, f"{path} (it is left as it was)")
