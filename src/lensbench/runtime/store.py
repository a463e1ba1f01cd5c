"""The run store: one SQLite database (WAL) per run folder, one row per response.

The store is the source of truth. Replies are written by *group commit*: :meth:`RunStore.put` queues
a row and the commit runs on the event loop's next turn, so replies that arrive together share one
transaction (a commit per reply cost the event loop ~80 us each, issue 11), and a worker awaits
:meth:`RunStore.durable` before it takes its next request. A reply is therefore in the database
before its worker sends again: a killed run (kill -9 included) loses only the requests in flight,
never a reply its worker had moved past (issue 20). A re-run sends only requests without a stored
``ok`` response (errors are retried). Rows are keyed by the request's content hash, so identical
requests are sent once.

A row that SQLite cannot bind (a reply text that is a list, say) is refused by :meth:`~RunStore.put`
(:class:`BadRow`) and never reaches a transaction, so it cannot cost the rows committed with it. A
failed write (disk full, I/O error) keeps the rows queued and is retried for
:attr:`RunStore.WRITE_RETRY_S` seconds; the workers wait meanwhile (nothing more is bought), and
only then does the run stop with
:class:`~lensbench.core.writes.WriteFailed`.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.types import Request, StoredResponse
from lensbench.core.writes import WRITE_RETRY_S, WriteFailed, is_write_failure, retry_writes, write_reason
from lensbench.runtime.rows import BadRow, count_ok, make_row
from lensbench.runtime.sharing import StoreShared, check_not_shared

__all__ = ["RunStore", "StoreDamaged", "StoreShared", "BadRow", "count_ok"]


class StoreDamaged(ConfigError):
    """The run store cannot be read; ``lensbench repair`` salvages what it can."""


def _usage(raw: str, same: dict[Any, Any]) -> dict[str, Any]:
    """A stored usage JSON object, its top-level key strings shared through ``same``."""
    u = json.loads(raw)
    return {same.setdefault(k, k): v for k, v in u.items()} if type(u) is dict else u


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request_id TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT 'model',
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    text TEXT,
    reasoning TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    latency_s REAL,
    finish_reason TEXT,
    usage TEXT,
    request TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


_INSERT = ("INSERT OR REPLACE INTO responses (key, request_id, role, status, text, reasoning, error, attempts, "
           "latency_s, finish_reason, usage, request, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")
@types.coroutine
def _next_turn():
    """Let the event loop run one turn (what ``asyncio.sleep(0)`` does: the task is scheduled again
    behind the callbacks already queued)."""
    yield


class RunStore:
    """SQLite (WAL) store of responses at ``<run_dir>/responses.sqlite``.

    Not thread-safe: use it from one thread (the engine's event loop). ``check`` runs SQLite's
    quick integrity check on open. ``readonly``: open an existing store ``mode=ro`` for reading
    (export, copy): nothing is created, checkpointed or deleted. Raises :class:`StoreShared` before
    opening for writing a store whose file, WAL or SHM is shared with another folder (a ``cp -al``
    copy: :mod:`lensbench.runtime.sharing`), :class:`StoreDamaged` for a damaged file and
    :class:`WriteFailed` when it cannot be created or written (disk full, read-only).
    """

    FILENAME = "responses.sqlite"
    #: how long a failed write is retried before the run stops (seconds; ``$LENSBENCH_WRITE_RETRY_S``,
    #: default 10): a disk that fills and frees within this time costs nothing
    WRITE_RETRY_S = WRITE_RETRY_S

    def __init__(self, run_dir: str | Path, *, check: bool = True, readonly: bool = False):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / self.FILENAME
        self.readonly = readonly
        if not readonly:
            check_not_shared(self.run_dir, self.FILENAME)
        self._rows: list[tuple] = []  # put() rows not committed yet (one executemany per commit)
        self._soon: asyncio.Handle | None = None  # the scheduled group commit ...
        self._soon_loop: asyncio.AbstractEventLoop | None = None  # ... and its event loop
        self._waiters: list[tuple[int, asyncio.Future]] = []  # durable() callers waiting on a failed commit
        self._n_put = self._n_done = 0  # rows queued so far / committed so far (durable() compares them)
        self._failing_since: float | None = None  # first failed write of the current outage
        self._failed: WriteFailed | None = None  # set once the retries gave up
        self._tries = 0  # failed group commits of the current outage (backoff)
        #: rows SQLite refused inside a transaction (left out alone; their request is re-sent by the next run)
        self.bad_rows: list[str] = []
        self._db: sqlite3.Connection | None = None
        try:
            self._db = retry_writes(lambda: self._connect(check), f"{self.path} (opening it)")
        except (sqlite3.DatabaseError, OSError) as exc:
            if isinstance(exc, OSError):  # not a full disk (retried above): permissions, a file in the way
                raise WriteFailed(f"cannot open {self.path} for writing: {write_reason(exc)}") from None
            raise StoreDamaged(f"{self.path} is damaged ({exc}); run 'lensbench repair {self.run_dir}' to salvage "
                               "every readable reply into a fresh store") from None

    def _connect(self, check: bool) -> sqlite3.Connection:
        if self.readonly:
            db = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None)
        else:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, isolation_level=None)
        try:
            if check:
                bad = [r[0] for r in db.execute("PRAGMA quick_check")]
                if bad != ["ok"]:
                    raise sqlite3.DatabaseError("; ".join(map(str, bad[:3])))
            if self.readonly:
                return db
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        """Commit what is pending and close the database (idempotent).

        Raises :class:`WriteFailed` when rows could not be written (after the retries); the
        database is closed all the same and every earlier commit is kept.
        """
        if self._db is None:
            return
        try:
            self.commit()
        finally:
            lost = len(self._rows)
            self._cancel_soon()
            self._db.close()
            self._db = None
            failure = self._failed or (WriteFailed(f"{self.path}: {lost} replies could not be stored", lost)
                                       if lost else None)
            self._wake(failure)
        if failure is not None:
            raise failure

    def __enter__(self) -> "RunStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get_many(self, keys: Iterable[str] | Mapping[str, Request]) -> dict[str, StoredResponse]:
        """Stored rows for the given keys (missing keys are absent from the result).

        ``keys`` may be a mapping key -> :class:`Request` (the engine's table of first requests by
        key): a row whose ``request_id`` equals that request's id then shares the request's string.
        The rows hold no copies of what the caller already has or of repeated values (issue 11:
        ~0.4 KB less per row at 16k requests): each ``key`` is the caller's string; ``status``,
        ``finish_reason``, ``error`` and short replies (<= 64 characters: letters, Yes/No) one
        string per distinct value; ``usage`` dicts share their key strings.
        """
        self.commit()
        out: dict[str, StoredResponse] = {}
        reqs = keys if isinstance(keys, Mapping) else None
        keys = list(dict.fromkeys(keys))
        same: dict[Any, Any] = {"ok": "ok", "error": "error", None: None}  # one object per distinct value
        for i in range(0, len(keys), 500):
            chunk = keys[i: i + 500]
            mine = dict(zip(chunk, chunk))
            q = (f"SELECT key, request_id, status, text, reasoning, error, attempts, latency_s, finish_reason, usage "
                 f"FROM responses WHERE key IN ({','.join('?' * len(chunk))})")
            for k, rid, status, text, reasoning, error, attempts, latency_s, finish, usage in self._db.execute(q, chunk):
                k = mine[k]
                if reqs is not None and getattr(reqs.get(k), "id", None) == rid:
                    rid = reqs[k].id
                if text is not None and len(text) <= 64:
                    text = same.setdefault(text, text)
                out[k] = StoredResponse(key=k, request_id=rid, status=same.setdefault(status, status), text=text,
                                        reasoning=reasoning, error=same.setdefault(error, error), attempts=attempts,
                                        latency_s=latency_s, finish_reason=same.setdefault(finish, finish),
                                        usage=_usage(usage, same) if usage else {})
        return out

    def put(self, resp: StoredResponse, *, role: str = "model", request_json: str | None = None) -> None:
        """Queue one row for insert-or-replace (an ``ok`` row is never replaced by an error).

        Inside a running event loop the row is committed on the loop's next turn, together with the
        rows queued in the same turn (await :meth:`durable` for it); outside one, at once.

        Raises:
            BadRow: a field SQLite cannot store (reply text not a string, usage not JSON, ...); nothing
                is queued, so the other rows are unaffected.
            WriteFailed: the store gave up writing (see :attr:`WRITE_RETRY_S`).
        """
        if self._failed is not None:
            raise self._failed
        row = make_row(resp, role, request_json)
        if resp.status == "error":
            self.commit()
            cur = self._db.execute("SELECT status FROM responses WHERE key = ?", (resp.key,)).fetchone()
            if cur is not None and cur[0] == "ok":
                return
        self._rows.append(row)
        self._n_put += 1
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: commit at once
            self.commit()
            return
        if self._soon is not None and self._soon_loop is not loop:  # scheduled in a loop that has ended
            self.commit()
        elif self._soon is None and self._failing_since is None:
            self._soon, self._soon_loop = loop.call_soon(self._group_commit), loop

    async def durable(self) -> None:
        """Return once every row queued so far is committed (at once when none is pending).

        Raises :class:`~lensbench.core.writes.WriteFailed` when the store gave up writing them.
        """
        if self._failed is not None:
            raise self._failed
        if not self._rows:
            return
        mine = self._n_put
        await _next_turn()  # the group commit put() scheduled runs before this task resumes (FIFO)
        if self._n_done >= mine:
            return
        if self._failed is not None:
            raise self._failed
        if self._soon is None:  # nothing scheduled (rows queued outside this loop's turns): commit now
            self.commit()
            return
        fut = asyncio.get_running_loop().create_future()  # the commit failed: wait for its retries
        self._waiters.append((mine, fut))
        await fut

    def _group_commit(self) -> None:
        """The scheduled commit (event-loop callback): write the queued rows; on a failed write,
        try again later (backing off) until :attr:`WRITE_RETRY_S` has passed, then fail the waiters."""
        self._soon = None
        if self._db is None:
            return
        try:
            self._write()
        except WriteFailed as exc:
            now = time.monotonic()
            if self._failing_since is None:
                self._failing_since = now
            if now - self._failing_since >= self.WRITE_RETRY_S:
                self._give_up(exc)
                return
            delay = min(1.0, 0.05 * 2 ** self._tries)
            self._tries += 1
            self._soon = self._soon_loop.call_later(delay, self._group_commit)
            return
        self._wake(None)

    def _give_up(self, exc: WriteFailed) -> None:
        n = len(self._rows)
        self._failed = WriteFailed(
            f"cannot write {self.path}: {exc} (retried for {self.WRITE_RETRY_S:g} s); {n} replies received but "
            "not stored; every reply stored before is kept. Free space and run the same command to resume", n)
        self._wake(self._failed)

    def _wake(self, exc: BaseException | None) -> None:
        """Resolve the waiters whose rows are committed (all of them, failed, when ``exc`` is given)."""
        keep = []
        for mine, f in self._waiters:
            if f.done():
                continue
            if exc is not None:
                f.set_exception(exc)
            elif self._n_done >= mine:
                f.set_result(None)
            else:
                keep.append((mine, f))
        self._waiters = keep

    def _cancel_soon(self) -> None:
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None

    def _write(self) -> None:
        """One transaction with the queued rows; raises :class:`WriteFailed` (rows kept queued) when
        the disk refuses it. Should SQLite refuse a row itself (a constraint), the rows are written one
        by one and that row alone is left out, listed in :attr:`bad_rows`."""
        if not self._rows:
            self._failing_since, self._tries = None, 0
            return
        db = self._db
        try:
            db.execute("BEGIN")
            try:
                db.executemany(_INSERT, self._rows)
            except (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError, OverflowError):
                self._one_by_one()
            db.execute("COMMIT")
        except (sqlite3.DatabaseError, OSError) as exc:
            if db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if not is_write_failure(exc):
                raise
            raise WriteFailed(write_reason(exc), len(self._rows)) from None
        self._n_done += len(self._rows)
        self._rows = []
        self._failing_since, self._tries = None, 0

    def _one_by_one(self) -> None:
        """Inside the open transaction: insert the queued rows singly, skipping those SQLite refuses."""
        for row in self._rows:
            try:
                self._db.execute(_INSERT, row)
            except (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError, OverflowError) as exc:
                self.bad_rows.append(f"request {row[1]!r}: not stored ({exc})")

    def commit(self) -> None:
        """Commit the rows queued so far (no-op when none are pending).

        A failed write is retried (blocking, backing off) for :attr:`WRITE_RETRY_S` seconds, then
        raises :class:`WriteFailed`; once the store has given up, one more try is made and the
        rows stay queued when it fails (no exception: :meth:`close` reports them).
        """
        self._cancel_soon()
        if self._db is None or not self._rows:
            self._wake(None)
            return
        start = self._failing_since or time.monotonic()
        delay = 0.05
        while True:
            try:
                self._write()
                break
            except WriteFailed as exc:
                if self._failed is not None:
                    return
                self._failing_since = self._failing_since or start
                if time.monotonic() - start >= self.WRITE_RETRY_S:
                    self._give_up(exc)
                    raise self._failed from None
                time.sleep(delay)
                delay = min(1.0, delay * 2)
        self._wake(None)

    def counts(self) -> dict[str, int]:
        """``{"ok": n, "error": n}`` over all rows."""
        self.commit()
        out = {"ok": 0, "error": 0}
        for status, n in self._db.execute("SELECT status, COUNT(*) FROM responses GROUP BY status"):
            out[status] = n
        return out

    def iter_rows(self) -> Iterable[dict]:
        """All rows as dicts (for export), in insertion order."""
        self.commit()
        cur = self._db.execute("SELECT key, request_id, role, status, text, reasoning, error, attempts, latency_s, "
                               "finish_reason, usage, request FROM responses ORDER BY rowid")
        cols = [d[0] for d in cur.description]
        for row in cur:
            yield dict(zip(cols, row))

    def put_meta(self, key: str, value: str) -> None:
        """Store a named text value (e.g. a copy of the manifest) and commit it; a write the disk refuses
        is retried (see :func:`~lensbench.core.writes.retry_writes`), then raises WriteFailed."""
        self.commit()
        retry_writes(lambda: self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value)),
                     str(self.path))

    def get_meta(self, key: str) -> str | None:
        """The named text value, or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def n_rows(self) -> int:
        """Number of stored responses (ok and error)."""
        self.commit()
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
