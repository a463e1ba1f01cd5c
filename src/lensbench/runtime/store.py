"""The run store: one SQLite database (WAL) per run folder, one row per response.

The store is the source of truth: each response is committed within :attr:`RunStore.COMMIT_EVERY_S`
(50 ms) of its arrival (replies arriving together share one commit: a commit per reply cost the
event loop ~80 us each, issue 11), so a killed run loses at most the requests in flight and the
replies of the last 50 ms; a re-run sends only requests without a stored
``ok`` response (errors are retried). Rows are keyed by the request's content hash, so identical
requests are sent once.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.types import Request, StoredResponse

__all__ = ["RunStore", "StoreDamaged"]


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


class RunStore:
    """SQLite (WAL) store of responses at ``<run_dir>/responses.sqlite``.

    Not thread-safe: use it from one thread (the engine's event loop). ``check`` runs SQLite's
    quick integrity check on open. Raises :class:`StoreDamaged` for a damaged file.
    """

    FILENAME = "responses.sqlite"
    #: longest time a stored row waits for its commit (seconds)
    COMMIT_EVERY_S = 0.05

    def __init__(self, run_dir: str | Path, *, check: bool = True):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.run_dir / self.FILENAME
        self._timer: asyncio.TimerHandle | None = None
        self._rows: list[tuple] = []  # put() rows not written yet (one executemany per commit)
        self._last_commit = 0.0
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            if check:
                bad = [r[0] for r in self._db.execute("PRAGMA quick_check")]
                if bad != ["ok"]:
                    raise sqlite3.DatabaseError("; ".join(map(str, bad[:3])))
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            self._db = None
            raise StoreDamaged(f"{self.path} is damaged ({exc}); run 'lensbench repair {self.run_dir}' to salvage "
                               "every readable reply into a fresh store") from None

    def close(self) -> None:
        """Commit what is pending and close the database (idempotent)."""
        if self._db is not None:
            self.commit()
            self._db.close()
            self._db = None

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
        """Insert or replace one row (an ``ok`` row is never replaced by an error); committed within
        :attr:`COMMIT_EVERY_S` when called inside a running event loop (by a timer on it), else at once."""
        if resp.status == "error":
            self.commit()
            cur = self._db.execute("SELECT status FROM responses WHERE key = ?", (resp.key,)).fetchone()
            if cur is not None and cur[0] == "ok":
                return
        self._rows.append((resp.key, resp.request_id, role, resp.status, resp.text, resp.reasoning, resp.error,
                           resp.attempts, resp.latency_s, resp.finish_reason,
                           json.dumps(resp.usage) if resp.usage else None, request_json, time.time()))
        self._commit_soon()

    def _commit_soon(self) -> None:
        if time.monotonic() - self._last_commit >= self.COMMIT_EVERY_S:
            self.commit()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.commit()
                return
            self._timer = loop.call_later(self.COMMIT_EVERY_S, self.commit)

    def commit(self) -> None:
        """Commit the rows written so far (no-op when none are pending)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._db is not None and self._rows:
            rows, self._rows = self._rows, []
            self._db.execute("BEGIN")
            self._db.executemany(_INSERT, rows)
            self._db.execute("COMMIT")
        self._last_commit = time.monotonic()

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
        """Store a named text value (e.g. a copy of the manifest) and commit it."""
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
        self.commit()

    def get_meta(self, key: str) -> str | None:
        """The named text value, or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def n_rows(self) -> int:
        """Number of stored responses (ok and error)."""
        self.commit()
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
