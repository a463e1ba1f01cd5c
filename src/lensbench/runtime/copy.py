"""``lensbench copy RUN DEST``: an independent copy of a run folder (issue 30, part 1).

The store is copied with SQLite's online backup API (``sqlite3.Connection.backup``), read through a
read-only connection: replies still in the source's WAL are included, nothing of the source is
checkpointed, changed or deleted, and the copy shares no file with it (unlike ``cp -al``, whose
shared store and WAL lose replies: :mod:`lensbench.runtime.sharing`). The folder's other files
(``run.json``, ``samples.jsonl``, ``result.json``, media ...) are copied byte for byte, never
linked; the lock file and SQLite's side files are not copied. The copy is built in a hidden sibling
folder and renamed to ``DEST`` at the end, so ``DEST`` is either complete or absent.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lensbench.core.errors import ConfigError
from lensbench.runtime.lock import RunLock
from lensbench.runtime.sharing import SIDE_FILES
from lensbench.runtime.store import RunStore, StoreDamaged

__all__ = ["CopyReport", "copy_run"]


@dataclass
class CopyReport:
    """What :func:`copy_run` copied: ``dest`` folder, ``replies`` (``ok`` rows), ``rows`` (all rows), ``files``
    (other files copied, the store not counted)."""

    dest: Path
    replies: int
    rows: int
    files: int


#: a run folder's files ``shutil.copytree`` leaves out: the lock, the store and its side files (copied apart)
_NOT_COPIED = frozenset({RunStore.FILENAME, *(RunStore.FILENAME + s for s in SIDE_FILES), RunLock.FILENAME})


def copy_run(run_dir: str | Path, dest: str | Path) -> CopyReport:
    """Copy the run folder ``run_dir`` to the new folder ``dest``; returns a :class:`CopyReport`.

    Reads ``run_dir`` under its shared lock (a run being written is refused, naming its PID). The
    copy's store is checked (``PRAGMA quick_check``) and must hold as many rows as the source.
    Raises ConfigError (nothing written) when ``run_dir`` is no run folder (no ``responses.sqlite``)
    or ``dest`` exists; :class:`StoreDamaged` when the source store cannot be read (``lensbench
    repair`` it first); :class:`~lensbench.core.writes.WriteFailed`-like OSErrors from the disk.
    """
    src, dest = Path(run_dir), Path(dest)
    if not (src / RunStore.FILENAME).is_file():
        raise ConfigError(f"{src}: no {RunStore.FILENAME} (not a lensbench run folder)")
    if os.path.lexists(dest):
        raise ConfigError(f"{dest} exists; give a new folder to copy {src} into")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.copying-", dir=dest.parent))
    try:
        with RunLock(src, shared=True):
            top = os.path.normpath(src)
            shutil.copytree(src, tmp / "run", copy_function=shutil.copy2,
                            ignore=lambda d, names: set(names) & _NOT_COPIED if os.path.normpath(d) == top else set())
            files = sum(len(f) for _, _, f in os.walk(tmp / "run"))
            rows, replies = _backup(src / RunStore.FILENAME, tmp / "run" / RunStore.FILENAME)
        os.rename(tmp / "run", dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return CopyReport(dest=dest, replies=replies, rows=rows, files=files)


def _counts(db: sqlite3.Connection) -> tuple[int, int]:
    """(all rows, ``ok`` rows) of a store's ``responses`` table."""
    return db.execute("SELECT COUNT(*), COALESCE(SUM(status = 'ok'), 0) FROM responses").fetchone()


def _backup(src: Path, dst: Path) -> tuple[int, int]:
    """SQLite online backup of ``src`` (read-only) into the new file ``dst``; returns ``(rows, replies)``."""
    try:
        s = sqlite3.connect(f"{src.absolute().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StoreDamaged(f"{src} cannot be read ({exc})") from None
    try:
        d = sqlite3.connect(dst)
        try:
            try:
                want = _counts(s)
                s.backup(d)
            except sqlite3.DatabaseError as exc:
                raise StoreDamaged(f"{src} cannot be read ({exc}); run 'lensbench repair {src.parent}' "
                                   "first") from None
            d.execute("PRAGMA journal_mode=WAL")
            ok = [r[0] for r in d.execute("PRAGMA quick_check")]
            got = _counts(d)
        finally:
            d.close()
    finally:
        s.close()
    if ok != ["ok"] or tuple(got) != tuple(want):
        raise StoreDamaged(f"the copy of {src} does not check out ({'; '.join(map(str, ok[:3]))}; {got[0]} of "
                           f"{want[0]} rows); nothing was written to the destination")
    return got[0], got[1]
