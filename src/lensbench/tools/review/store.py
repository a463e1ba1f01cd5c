"""The review store: answers (:class:`~lensbench.core.answers.AnswerStore`) plus the items reviewed.

Besides the answer tables (``ratings``, ``events``; one transaction per action) the file keeps
``review_items(item, data)``: each :class:`ReviewItem` as JSON, so an export or a resolve needs
only the file. Several reviewers may share one file (the ``rater`` column) or each keep their
own; :func:`merged_answers` reads many.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lensbench.core.answers import AnswerStore, Answers
from lensbench.tools.review.form import Form, ReviewItem

__all__ = ["ReviewDB", "Answers", "merged_answers"]


class ReviewDB(AnswerStore):
    """Answers of reviewers and the items they review, in the SQLite file ``path`` (created).

    ``form`` validates what :meth:`record` stores (needed for writing, not for reading). Inherits
    :meth:`answers`, :meth:`all_answers`, :meth:`reviewers`, :meth:`events`, :meth:`transaction`
    and :meth:`close`; a context manager. A file that is not SQLite raises
    ``sqlite3.DatabaseError``.
    """

    def __init__(self, path: str | Path, form: Form | None = None):
        super().__init__(path)
        self.form = form
        self.conn.execute("CREATE TABLE IF NOT EXISTS review_items(item TEXT PRIMARY KEY, data TEXT NOT NULL)")

    def __enter__(self) -> "ReviewDB":
        return self

    def add_items(self, items: Iterable[ReviewItem]) -> None:
        """Register ``items`` (an item already stored under the same key is replaced)."""
        rows = [(it.key, json.dumps(it.to_json(), ensure_ascii=False)) for it in items]
        with self.transaction() as c:
            c.executemany("INSERT INTO review_items VALUES(?,?) ON CONFLICT(item) DO UPDATE SET data=excluded.data", rows)

    def items(self) -> dict[str, ReviewItem]:
        """``{key: ReviewItem}`` of every registered item, in key order."""
        return {k: ReviewItem.from_json(json.loads(d))
                for k, d in self.conn.execute("SELECT item, data FROM review_items ORDER BY item")}

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
        clean = self.form.clean(values, size)
        self.write(reviewer, item, clean)
        return clean

    def done(self, reviewer: str, keys: Sequence[str]) -> int:
        """How many of ``keys`` ``reviewer`` has answered every required field of (needs the form)."""
        req = self.form.required if self.form is not None else ()
        mine = self.answers(reviewer)
        return sum(1 for k in keys if k in mine and all(f in mine[k] for f in req))


def merged_answers(paths: Sequence[str | Path]) -> Answers:
    """Answers of several review files (e.g. one per reviewer) as one ``{reviewer: {item: {field:
    value}}}``. Raises FileNotFoundError for a missing file, ValueError when the same reviewer
    answered the same item in two files."""
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
