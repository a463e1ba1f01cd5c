"""Ratings given on the ``lensbench gobench rate`` page: one rating row type and the SQLite store.

A :class:`RatingRow` is one rater's answers for one image (paper Sec. 2.2: 5 reality questions
Yes / No / Cannot determine, aesthetics and instruction fidelity 1-5); :class:`RatingsDB` keeps
every click (the shared answer tables of :mod:`lensbench.core.answers`: a rating and its event in
one transaction) and exports complete ratings as the CSV that
:func:`lensbench.benchmarks.gobench.humans.read_rating_rows` reads (spreadsheet formulas escaped,
:mod:`lensbench.core.csvsafe`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lensbench.core.answers import AnswerStore
from lensbench.core.csvsafe import write_csv
from lensbench.benchmarks.gobench.parse_paper import normalize_answer
from lensbench.benchmarks.gobench.records import ANSWERS
from lensbench.benchmarks.gobench.sps import authenticity_score

__all__ = ["QFIELDS", "FIELDS", "RatingRow", "RatingsDB"]

QFIELDS = ("q1", "q2", "q3", "q4", "q5")
#: Every field a rater fills for one image, in page order.
FIELDS = QFIELDS + ("aesthetics", "fidelity")


@dataclass(frozen=True)
class RatingRow:
    """One rating of one image (one rater, or a precomputed mean when ``rater`` is None).

    ``key`` identifies the image (record index or release image path); ``answers`` 5 labels of
    :data:`ANSWERS` (None where not given; empty tuple when no per-question labels);
    ``authenticity`` 0-5 (from the answers when all five exist, else as given); ``aesthetics``,
    ``fidelity`` 1-5; ``generator`` the image source when known.
    """

    key: str
    rater: str | None
    answers: tuple[str | None, ...]
    authenticity: float | None
    aesthetics: float | None
    fidelity: float | None
    generator: str | None = None
    record: str | None = None


class RatingsDB(AnswerStore):
    """SQLite store of ratings given on the rating page (WAL; every click committed at once).

    Tables: ``items(item, generator, image, record_index)``, ``ratings(rater, item, field,
    value, ts)`` (latest value per (rater, item, field)) and ``events`` (append-only log of
    every click). ``field`` is one of :data:`FIELDS`; values: an answer of :data:`ANSWERS` for
    ``q1``-``q5``, ``"1"``-``"5"`` for the ratings.
    """

    def __init__(self, path: str | Path):
        super().__init__(path)
        self.conn.execute("CREATE TABLE IF NOT EXISTS items(item TEXT PRIMARY KEY, generator TEXT, image TEXT,"
                          " record_index TEXT)")

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
        meta = {i: (g, rec) for i, g, _img, rec in self.conn.execute("SELECT * FROM items")}
        got = {(rater, item): fs for rater, mine in self.all_answers().items() for item, fs in mine.items()}
        out = []
        for (rater, item), fs in got.items():
            if complete_only and any(f not in fs for f in FIELDS):
                continue
            gen, rec = meta.get(item, (None, None))
            answers = tuple(fs.get(q) for q in QFIELDS)
            auth = authenticity_score(answers) if all(a is not None for a in answers) else None  # type: ignore[arg-type]
            out.append(RatingRow(key=item, record=rec, rater=rater, answers=answers, authenticity=auth,
                                 aesthetics=float(fs["aesthetics"]) if "aesthetics" in fs else None,
                                 fidelity=float(fs["fidelity"]) if "fidelity" in fs else None, generator=gen))
        return out

    def export_csv(self, path: str | Path) -> int:
        """Write complete per-rater ratings as a CSV (the format :func:`read_rating_rows` reads); returns rows written."""
        rows = self.rows()
        return write_csv(path, ["index", "item", "generator", "rater", *QFIELDS, "authenticity", "aesthetics", "fidelity"],
                         ([r.record or r.key, r.key, r.generator or "", r.rater, *r.answers, r.authenticity,
                           int(r.aesthetics or 0), int(r.fidelity or 0)] for r in rows))
