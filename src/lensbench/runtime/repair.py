"""``lensbench repair RUN``: salvage every readable reply of a damaged run store into a fresh one.

Rows are read from the damaged file table-wide first; where SQLite fails mid-way, row by row
(by rowid), skipping unreadable pages. The damaged file is kept beside the new one
(``responses.sqlite.damaged-<time>``), so nothing paid for is thrown away. A store that passes
SQLite's integrity check is left exactly as it is. Repair owns the folder while it works (the run
lock): it refuses a folder a run is writing, and no run can start on it meanwhile (issue 20).
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from lensbench.core.errors import ConfigError
from lensbench.core.writes import is_write_failure
from lensbench.runtime.lock import RunLock
from lensbench.runtime.sharing import StoreShared, check_not_shared
from lensbench.runtime.store import RunStore

__all__ = ["RepairReport", "repair_store", "store_problem"]

_COLS = ("key", "request_id", "role", "status", "text", "reasoning", "error", "attempts", "latency_s",
         "finish_reason", "usage", "request", "created")


@dataclass
class RepairReport:
    """What :func:`repair_store` did: rows salvaged, rows lost (unreadable), where the old file went."""

    salvaged: int
    unreadable: int
    meta: int
    damaged_copy: Path | None  # None: the store was healthy and left as it was


def _read_rows(db: sqlite3.Connection, table: str, cols: tuple[str, ...]) -> tuple[list[tuple], int]:
    q = f"SELECT {', '.join(cols)} FROM {table}"
    try:
        return list(db.execute(q)), 0
    except sqlite3.DatabaseError:
        pass
    rows, lost = [], 0
    try:
        hi = db.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        hi = 1_000_000
    misses = 0
    for rowid in range(1, hi + 1):
        try:
            row = db.execute(q + " WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            lost += 1
            continue
        if row is None:
            misses += 1
            if hi == 1_000_000 and misses > 10_000:
                break
            continue
        misses = 0
        rows.append(row)
    return rows, lost


def store_problem(path: Path) -> str | None:
    """What is wrong with the SQLite file ``path`` (SQLite's integrity check, every row read), or None when
    it is whole. A disk that refuses the check's side files (full, read-only) is not a damaged store: None.
    A store shared with another folder (a ``cp -al`` copy: :mod:`lensbench.runtime.sharing`) is read through a
    read-only connection, which never checkpoints or deletes the WAL the two folders share."""
    try:
        check_not_shared(path.parent, path.name)
        shared = False
    except StoreShared:
        shared = True
    try:
        db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True) if shared else sqlite3.connect(path)
        try:
            bad = [r[0] for r in db.execute("PRAGMA integrity_check(20)")]
            if bad != ["ok"]:
                return "; ".join(map(str, bad[:3]))
            for table, cols in (("responses", _COLS), ("meta", ("key", "value"))):
                for _row in db.execute(f"SELECT {', '.join(cols)} FROM {table}"):
                    pass
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return None if is_write_failure(exc) else str(exc)
    return None


def repair_store(run_dir: str | Path) -> RepairReport:
    """Rebuild ``run_dir/responses.sqlite`` from its readable rows (also its WAL, if present), holding the
    run lock. A healthy store is left untouched (``damaged_copy`` None, ``salvaged`` its row count).

    Raises ConfigError when the folder has no store or another process holds the folder.
    """
    run_dir = Path(run_dir)
    path = run_dir / RunStore.FILENAME
    if not path.is_file():
        raise ConfigError(f"{run_dir}: no {RunStore.FILENAME} to repair")
    with RunLock(run_dir):
        if store_problem(path) is None:
            with RunStore(run_dir, check=False) as store:
                return RepairReport(salvaged=store.n_rows(), unreadable=0, meta=0, damaged_copy=None)
        return _salvage(run_dir, path)


def _salvage(run_dir: Path, path: Path) -> RepairReport:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    damaged = run_dir / f"{RunStore.FILENAME}.damaged-{stamp}"
    shutil.move(str(path), damaged)
    for ext in ("-wal", "-shm"):
        side = run_dir / (RunStore.FILENAME + ext)
        if side.exists():
            shutil.move(str(side), run_dir / (damaged.name + ext))
    rows: list[tuple] = []
    meta: list[tuple] = []
    lost = 0
    try:
        db = sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)
        rows, lost = _read_rows(db, "responses", _COLS)
        try:
            meta, _ = _read_rows(db, "meta", ("key", "value"))
        except sqlite3.DatabaseError:
            meta = []
        db.close()
    except sqlite3.DatabaseError:
        pass  # not even the header is readable: nothing to salvage
    # an ok row wins over an error row for the same key
    best: dict[str, tuple] = {}
    for r in rows:
        if r[0] not in best or (r[3] == "ok" and best[r[0]][3] != "ok"):
            best[r[0]] = r
    with RunStore(run_dir, check=False) as store:
        db = store._db
        db.execute("BEGIN")
        db.executemany(f"INSERT OR REPLACE INTO responses ({', '.join(_COLS)}) VALUES ({','.join('?' * len(_COLS))})",
                       list(best.values()))
        db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", meta)
        db.execute("COMMIT")
    return RepairReport(salvaged=len(best), unreadable=lost, meta=len(meta), damaged_copy=damaged)
