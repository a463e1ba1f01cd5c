"""The SQLite store of the ``lensbench gobench rate`` page: every click of every rater.

:class:`RatingsDB` keeps every click (the shared answer tables of :mod:`lensbench.core.answers`: a rating and
its event in one transaction) and exports complete ratings as the CSV that
:func:`lensbench.benchmarks.gobench.humans.read_rating_rows` reads (spreadsheet formulas escaped,
:mod:`lensbench.core.csvsafe`); the benchmark reads the file itself through
:func:`lensbench.benchmarks.gobench.ratings.read_store_rows`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lensbench.benchmarks.gobench.parse_paper import normalize_answer
from lensbench.benchmarks.gobench.ratings import FIELDS, ITEMS_TABLE, QFIELDS, RatingRow, store_rows
from lensbench.benchmarks.gobench.records import ANSWERS
from lensbench.core.answers import AnswerStore
from lensbench.core.csvsafe import write_csv

__all__ = ["QFIELDS", "FIELDS", "RatingRow", "RatingsDB"]


class RatingsDB(AnswerStore):
    """SQLite store of ratings given on the rating page (WAL; every click committed at once).

    Tables: ``items(item, generator, image, record_index)``, ``ratings(rater, item, field,
    value, ts)`` (latest value per (rater, item, field)) and ``events`` (append-only log of
    every click). ``field`` is one of :data:`FIELDS`; values: an answer of :data:`ANSWERS` for
    ``q1``-``q5``, ``"1"``-``"5"`` for the ratings.
    """

    def __init__(self, path: str | Path):
        super().__init__(path)
        self.conn.execute(ITEMS_TABLE)

    def add_items(self, items: Iterable[tuple[str, str, str, str]]) -> None:
        """Register ``(item, generator, image path, record index)`` rows (existing ones are updated)."""
        with self.transaction() as c:
            c.executemany("INSERT INTO items VALUES(?,?,?,?) ON CONFLICT(item) DO UPDATE SET generator=excluded.generator,"
                          " image=excluded.image, record_index=excluded.record_index", list(items))

    def set(self, rater: str, item: str, field: str, value: str) -> None:
        """Store one answer now, with its event, in one transaction. Raises ValueError for a bad
        rater name (:func:`~lensbench.core.answers.validate_reviewer`), an unknown field or a value
        outside its range (nothing stored)."""
        if field in QFIELDS:
            v = normalize_answer(value)
            if v is None:
                raise ValueError(f"{field} must be one of {ANSWERS}, got {value!r}")
        elif field in ("aesthetics", "fidelity"):
            if str(value) not in ("1", "2", "3", "4", "5"):
                raise ValueError(f"{field} must be 1-5, got {value!r}")
            v = str(value)
        else:
            raise ValueError(f"unknown field {field!r} (one of {FIELDS})")
        self.write(rater, item, {field: v})

    def of_rater(self, rater: str) -> dict[str, dict[str, str]]:
        """``{item: {field: value}}`` given so far by ``rater``."""
        return self.answers(rater)

    def raters(self) -> list[str]:
        """Names of everyone who rated, sorted."""
        return self.reviewers()

    def rows(self, complete_only: bool = True) -> list[RatingRow]:
        """One :class:`RatingRow` per (rater, item); key = the item's record index when known.

        ``complete_only`` keeps only (rater, item) pairs with all 7 fields given.
        """
        return store_rows(self, complete_only)

    def export_csv(self, path: str | Path) -> int:
        """Write complete per-rater ratings as a CSV (the format :func:`read_rating_rows` reads); returns rows written."""
        rows = self.rows()
        return write_csv(path, ["index", "item", "generator", "rater", *QFIELDS, "authenticity", "aesthetics", "fidelity"],
                         ([r.record or r.key, r.key, r.generator or "", r.rater, *r.answers, r.authenticity,
                           int(r.aesthetics or 0), int(r.fidelity or 0)] for r in rows))
