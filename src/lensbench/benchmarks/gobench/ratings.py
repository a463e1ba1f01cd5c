"""The rating rows GOBench's human ground truth is made of, and their reading from a ``lensbench gobench rate``
SQLite file (the store itself, which the rating page writes, is :mod:`lensbench.tools.gobench.ratings_db`).

A :class:`RatingRow` is one rater's answers for one image (paper Sec. 2.2: 5 reality questions Yes / No /
Cannot determine, aesthetics and instruction fidelity 1-5).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lensbench.benchmarks.gobench.sps import authenticity_score
from lensbench.core.answers import AnswerStore

__all__ = ["QFIELDS", "FIELDS", "ITEMS_TABLE", "RatingRow", "store_rows", "read_store_rows"]

QFIELDS = ("q1", "q2", "q3", "q4", "q5")
#: Every field a rater fills for one image, in page order.
FIELDS = QFIELDS + ("aesthetics", "fidelity")
#: the items table of a ratings file: which image (and record) each rated item is
ITEMS_TABLE = "CREATE TABLE IF NOT EXISTS items(item TEXT PRIMARY KEY, generator TEXT, image TEXT, record_index TEXT)"


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


def store_rows(store: AnswerStore, complete_only: bool = True) -> list[RatingRow]:
    """One :class:`RatingRow` per (rater, item) of a ratings file ``store``; key = the item, ``record`` its record
    index when known. ``complete_only`` keeps only (rater, item) pairs with all 7 fields (:data:`FIELDS`) given."""
    store.conn.execute(ITEMS_TABLE)
    meta = {i: (g, rec) for i, g, _img, rec in store.conn.execute("SELECT * FROM items")}
    got = {(rater, item): fs for rater, mine in store.all_answers().items() for item, fs in mine.items()}
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


def read_store_rows(path: str | Path) -> list[RatingRow]:
    """The complete ratings of the ``lensbench gobench rate`` SQLite file ``path`` (:func:`store_rows`)."""
    with AnswerStore(path) as store:
        return store_rows(store)
