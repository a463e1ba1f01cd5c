"""The review store: one SQLite file of answers, each action one transaction.

Tables (WAL): ``review_items(item, data)`` (each :class:`ReviewItem` as JSON), ``ratings(rater,
item, field, value, ts)`` (the latest value per reviewer, item and field) and ``events`` (the same
columns, append-only: every answer ever given). The ``ratings`` / ``events`` names and columns are
those of the first rating page's databases, so those load as they are. Several reviewers may
share one file (the ``rater`` column) or each keep their own; :func:`merged_answers` reads many.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lensbench.tools.review.form import Form, ReviewItem, validate_reviewer

__all__ = ["ReviewDB", "Answers", "merged_answers"]

#: ``{reviewer: {item: {field: value}}}``
Answers = dict[str, dict[str, dict[str, str]]]


class ReviewDB:
    """Answers of reviewers in the SQLite file ``path`` (created with its folder).

    ``form`` validates what :meth:`record` stores (needed for writing, not for reading). A file
    that is not a review database raises ``sqlite3.DatabaseError``. Use as a context manager or
    call :meth:`close`.
    """

    def __init__(self, path: str | Path, form: Form | None = None):
        self.path = Path(path)
        self.form = form
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.executescript(
            "CREATE TABLE IF NOT EXISTS review_items(item TEXT PRIMARY KEY, data TEXT NOT NULL);"
            "CREATE TABLE IF NOT EXISTS ratings(rater TEXT, item TEXT, field TEXT, value TEXT, ts REAL,"
            " PRIMARY KEY(rater, item, field));"
            "CREATE TABLE IF NOT EXISTS events(rater TEXT, item TEXT, field TEXT, value TEXT, ts REAL);")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> "ReviewDB":
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

    # ------------------------------------------------------------------ items
    def add_items(self, items: Iterable[ReviewItem]) -> None:
        """Register ``items`` (an item already stored under the same key is replaced)."""
        rows = [(it.key, json.dumps(it.to_json(), ensure_ascii=False)) for it in items]
        with self.transaction() as c:
            c.executemany("INSERT INTO review_items VALUES(?,?) ON CONFLICT(item) DO UPDATE SET data=excluded.data", rows)

    def items(self) -> dict[str, ReviewItem]:
        """``{key: ReviewItem}`` of every registered item, in key order."""
        return {k: ReviewItem.from_json(json.loads(d))
                for k, d in self.conn.execute("SELECT item, data FROM review_items ORDER BY item")}

    # ------------------------------------------------------------------ answers
    def record(self, reviewer: Any, item: str, values: Mapping[str, Any],
               size: tuple[int, int] | None = None) -> dict[str, str]:
        """Store one action of ``reviewer`` on ``item``: every value of ``values`` and one event per
        value, in ONE transaction (all or nothing). Values are validated by the form first
        (``size`` = (W, H) of the item's first image bounds boxes). Returns the stored values.

        Raises ValueError for a bad reviewer name, an unknown field or a bad value (nothing
        stored); RuntimeError when the store was opened without a form.
        """
        if self.form is None:
            raise RuntimeError(f"{self.path}: opened without a form; cannot validate answers")
        name = validate_reviewer(reviewer)
        clean = self.form.clean(values, size)
        ts = time.time()
        rows = [(name, item, f, v, ts) for f, v in clean.items()]
        with self.transaction() as c:
            c.executemany("INSERT INTO ratings VALUES(?,?,?,?,?) ON CONFLICT(rater, item, field) DO UPDATE SET"
                          " value=excluded.value, ts=excluded.ts", rows)
            c.executemany("INSERT INTO events VALUES(?,?,?,?,?)", rows)
        return clean

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

    def done(self, reviewer: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` ``reviewer`` has answered every required field of (needs the form)."""
        req = self.form.required if self.form is not None else ()
        mine = self.answers(reviewer)
        return sum(1 for k in keys if k in mine and all(f in mine[k] for f in req))


def merged_answers(paths: Sequence[str | Path]) -> Answers:
    """Answers of several review files (e.g. one per reviewer) as one ``{reviewer: {item: {field:
    value}}}``. Raises ValueError when the same reviewer answered the same item in two files."""
    out: Answers = {}
    for p in paths:
        if not Path(p).is_file():
            raise FileNotFoundError(f"{p}: review database not found")
        with ReviewDB(p) as db:
            for r, items in db.all_answers().items():
                mine = out.setdefault(r, {})
                clash = sorted(set(mine) & set(items))
                if clash:
                    raise ValueError(f"{p}: reviewer {r!r} also answered {clash[0]!r} in another file")
                mine.update(items)
    return out
