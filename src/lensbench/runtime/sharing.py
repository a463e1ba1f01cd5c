"""A run store is never opened for writing when another folder shares its files (issue 30, part 1).

``cp -al RUN COPY`` (or ``cp -l``, ``rsync --link-dest`` ...) gives the copy hard links to the very
same ``responses.sqlite`` and, after a killed run, the same ``-wal`` / ``-shm`` files. SQLite then sees
two databases where there is one file: opening the copy for writing checkpoints and deletes *its*
WAL name while the other name keeps stale frames, and the next open of either folder replays them
over newer pages (the attack pass saw 1,624 stored replies fall to 104, with ``PRAGMA
integrity_check`` still "ok"). A symbolic link to another folder's store, WAL or SHM is the same
sharing. :func:`check_not_shared` refuses all of these before SQLite touches the file; readers open
the store read-only (``mode=ro``), which never checkpoints nor deletes a WAL.

How to copy a run safely: ``lensbench copy RUN DEST`` (SQLite's online backup API:
:mod:`lensbench.runtime.copy`), ``cp -a`` / ``cp -r`` without ``-l`` of a run that is not running, or
``lensbench export`` (replayable JSONL).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from lensbench.core.errors import ConfigError

__all__ = ["StoreShared", "check_not_shared", "SAFE_COPY_HINT", "SIDE_FILES"]

#: SQLite's side files of a database ``X``: ``X-wal``, ``X-shm``, ``X-journal``
SIDE_FILES = ("-wal", "-shm", "-journal")

#: the advice every refusal ends with
SAFE_COPY_HINT = ("copy a run with 'lensbench copy RUN DEST' (SQLite's backup API), 'cp -a' without -l, or "
                  "'lensbench export'")


class StoreShared(ConfigError):
    """A run store (or its WAL / SHM / journal) is a hard link or a symbolic link shared with another folder."""


def check_not_shared(run_dir: str | Path, filename: str = "responses.sqlite") -> None:
    """Refuse to write ``run_dir/filename`` when any of its files is shared with another folder.

    Checked (``lstat``, nothing opened): the database and its ``-wal``, ``-shm`` and ``-journal``
    files, each where present: a symbolic link is refused; a file with more than one name
    (``st_nlink > 1``: a hard link, as ``cp -al`` makes) is refused; a side file on another
    device than the database is refused (it cannot belong with it). Missing files are fine (a new
    store). Raises :class:`StoreShared` (a ConfigError: exit 2) naming the file and how to copy a
    run safely; nothing is changed.
    """
    db = Path(run_dir) / filename
    db_dev = None
    for suffix in ("", *SIDE_FILES):
        path = db.with_name(db.name + suffix)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError:  # unreadable: SQLite's own open names the problem
            continue
        what = None
        if stat.S_ISLNK(st.st_mode):
            what = f"is a symbolic link to {os.path.realpath(path)}"
        elif st.st_nlink > 1:
            what = f"has {st.st_nlink} names (hard links: a 'cp -al' copy shares it)"
        elif db_dev is not None and st.st_dev != db_dev:
            what = "lies on another device than its database"
        if suffix == "":
            db_dev = st.st_dev
        if what:
            raise StoreShared(
                f"{path} {what}: this run folder shares its store with another folder, and writing either one "
                f"would destroy replies of both. Remove the other name (the copy) before resuming here; "
                f"{SAFE_COPY_HINT}")
