"""A write the disk refuses (full, quota, I/O error, file too large, read-only): one error, one sentence.

Every run-folder writer goes through here (the store, ``run.json``/``result.json``/``samples.jsonl``,
``--out`` files), so a full disk ends a command in one line naming the file, never a traceback, and
never leaves a half-written or temporary file behind (issue 20).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import IO

from lensbench.core.errors import LensbenchError

__all__ = ["WriteFailed", "is_write_failure", "write_reason", "write_atomically"]

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


def write_atomically(path: Path, write: Callable[[IO[str]], None]) -> None:
    """Write ``path`` through ``write(fh)`` on a temporary file beside it, then rename (never a
    half-written file). On a failed write the temporary file is removed and :class:`WriteFailed`
    names ``path``; the old ``path`` is left as it was."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        if isinstance(exc, OSError) and is_write_failure(exc):
            raise WriteFailed(f"cannot write {path}: {write_reason(exc)}; it is left as it was (free space and "
                              "run the same command again)") from None
        raise
