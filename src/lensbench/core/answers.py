"""People's answers in one SQLite file: the table layer under every review / rating page.

Tables (WAL): ``ratings(rater, item, field, value, ts)`` (the latest value per reviewer, item and
field) and ``events`` (same columns, append-only: every answer ever given). One action (one or
several field values of one item) is written with its events in ONE transaction: all or nothing.
The schema is that of the first GOBench rating databases, so those load as they are.

Kept in ``core`` so that a benchmark's reader of such a file (e.g. GOBench human ratings) and the
review page (``lensbench.tools.review``) share it.
"""

from __future__ import annotations

import sqlite3
import time
import unicodedata
from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["AnswerStore", "Answers", "validate_reviewer", "MAX_NAME"]

#: ``{reviewer: {item: {field: value}}}``
Answers = dict[str, dict[str, dict[str, str]]]

#: Longest reviewer name accepted (characters).
MAX_NAME = 64
_BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def validate_reviewer(name: Any) -> str:
    """The reviewer name, stripped; raises ValueError unless it is a string of 1-:data:`MAX_NAME`
    characters without control / format / line-separator characters that does not start with a
    spreadsheet formula character (``= + - @``)."""
    if not isinstance(name, str):
        raise ValueError(f"reviewer name must be a string, got {type(name).__name__}")
    s = name.strip()
    if not s:
        raise ValueError("reviewer name is empty")
    if len(s) > MAX_NAME:
        raise ValueError(f"reviewer name longer than {MAX_NAME} characters ({len(s)})")
    bad = next((c for c in s if unicodedata.category(c) in _BAD_CATEGORIES), None)
    if bad is not None:
        raise ValueError(f"reviewer name contains the control character U+{ord(bad):04X}")
    if s[0] in "=+-@":
        raise ValueError(f"reviewer name may not start with {s[0]!r}")
    return s


class AnswerStore:
    """The answers SQLite file ``path`` (created with its folder); a context manager.

    A file that is not SQLite raises ``sqlite3.DatabaseError``.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(
            "CREATE TABLE IF NOT EXISTS ratings(rater TEXT, item TEXT, field TEXT, value TEXT, ts REAL,"
            " PRIMARY KEY(rater, item, field));"
            "CREATE TABLE IF NOT EXISTS events(rater TEXT, item TEXT, field TEXT, value TEXT, ts REAL);")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any exception): all or nothing."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def write(self, reviewer: Any, item: str, values: Mapping[str, str]) -> str:
        """Store ``values`` (field -> value, already validated) of ``reviewer`` on ``item`` and one
        event per value in one transaction; returns the stripped reviewer name. Raises ValueError
        for a bad reviewer name or no values (nothing stored)."""
        name = validate_reviewer(reviewer)
        if not values:
            raise ValueError("no value to store")
        ts = time.time()
        rows = [(name, item, f, v, ts) for f, v in values.items()]
        with self.transaction() as c:
            c.executemany("INSERT INTO ratings VALUES(?,?,?,?,?) ON CONFLICT(rater, item, field) DO UPDATE SET"
                          " value=excluded.value, ts=excluded.ts", rows)
            c.executemany("INSERT INTO events VALUES(?,?,?,?,?)", rows)
        return name

    def answers(self, reviewer: str) -> dict[str, dict[str, str]]:
        """``{item: {field: value}}`` given so far by ``reviewer`` (name stripped)."""
        out: dict[str, dict[str, str]] = defaultdict(dict)
        for item, f, v in self.conn.execute("SELECT item, field, value FROM ratings WHERE rater=?",
                                            (str(reviewer).strip(),)):
            out[item][f] = v
        return dict(out)

    def all_answers(self) -> Answers:
        """``{reviewer: {item: {field: value}}}`` of everyone."""
        out: Answers = defaultdict(lambda: defaultdict(dict))
        for r, item, f, v in self.conn.execute("SELECT rater, item, field, value FROM ratings ORDER BY rater, item"):
            out[r][item][f] = v
        return {r: dict(d) for r, d in out.items()}

    def reviewers(self) -> list[str]:
        """Names of everyone who answered, sorted."""
        return [r for (r,) in self.conn.execute("SELECT DISTINCT rater FROM ratings ORDER BY rater")]

    def events(self) -> list[tuple[str, str, str, str, float]]:
        """Every answer ever given, in order: ``(reviewer, item, field, value, unix time)``."""
        return list(self.conn.execute("SELECT rater, item, field, value, ts FROM events ORDER BY rowid"))
