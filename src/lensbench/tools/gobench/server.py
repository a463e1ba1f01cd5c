"""The GOBench rating page (``lensbench gobench rate``) on the shared review component.

One image at a time with its prompt, the five Optical Authenticity questions (Yes / No / Cannot
determine) and the two 1-5 ratings (Sec. 2.2), as the authors' rating tool (``code/human_rate.py``)
asks them: :data:`RATING_FORM` on :mod:`lensbench.tools.review` (its token, Host / Origin /
Content-Type checks, one transaction per click). Every answer is stored in the SQLite
:class:`~lensbench.tools.gobench.ratings_db.RatingsDB` file the moment it is given; several
raters share one database (``?rater=NAME`` or ``--rater``); a rater who comes back resumes at the
first image not fully rated. Keyboard: Y / N / C answer the highlighted question, 1-5 the
highlighted rating, Up / Down move the highlight, Left / Right (or P / Enter) change image.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lensbench.core.errors import ConfigError
from lensbench.benchmarks.gobench.parse_paper import normalize_answer
from lensbench.tools.gobench.ratings_db import QFIELDS, RatingsDB
from lensbench.benchmarks.gobench.records import ANSWERS, GORecord
from lensbench.tools.review import Field, Form, ReviewDB, ReviewItem, ReviewServer, Section, serve_review
from lensbench.tools.review.server import check_media

__all__ = ["RateItem", "collect_items", "RATING_FORM", "review_items", "RatingServer", "serve_ratings"]

_EXTS = {".png", ".jpg", ".jpeg", ".webp"}


def _normalize(f: Field, value):
    return (normalize_answer(value) or value) if f.name in QFIELDS else value


#: The rating form: Sec. 2.2's questions in the page order of the authors' tool.
RATING_FORM = Form(
    fields=(*(Field.choice(q, ANSWERS, keys=("y", "n", "c")) for q in QFIELDS),
            Field.scale("aesthetics", "Aesthetic Quality: please rate the aesthetics of the image on a scale of 1-5 "
                                      "(1 = Poor, 5 = Excellent)."),
            Field.scale("fidelity", "Instruction Fidelity: based on the image and the provided prompt, please rate the "
                                    "instruction fidelity of the generated image on a scale of 1-5.")),
    title="GOBench rating", info=("prompt",), done_word="rated", item_word="Image",
    sections=(Section("questions", "Optical Authenticity", QFIELDS), Section("ratings", "Ratings", ("aesthetics", "fidelity"))),
    normalize=_normalize)


@dataclass(frozen=True)
class RateItem:
    """One image to rate: ``item`` = ``<generator>/<category>/<file>`` (the database key),
    ``record`` = the record index (release layout) or scenario id (``<category>_<N>``)."""

    item: str
    generator: str
    image: str
    record: str
    category: str
    title: str
    prompt: str
    questions: tuple[str, ...]


def collect_items(images: Path, records: list[GORecord], generator: str) -> tuple[list[RateItem], list[str]]:
    """Items for the images under ``images`` (``<category>/<N.M>.png`` as released, or
    ``<category>/<N>.png`` one per scenario); returns ``(items sorted by key, unknown files)``.

    Raises ConfigError when ``images`` is not a folder or holds no GOBench image; DataError naming the
    file when one leads outside ``images`` (a symlink out: docs/protocol.md, media resolve inside the data folder).
    """
    images = Path(images)
    if not images.is_dir():
        raise ConfigError(f"--images {images}: not a folder")
    by_image = {r.image: r for r in records}
    by_scen: dict[str, GORecord] = {}
    for r in records:
        by_scen.setdefault(r.scenario, r)
    items, unknown = [], []
    for p in sorted(images.glob("*/*")):
        if p.suffix.lower() not in _EXTS or not p.is_file():
            continue
        rel = f"{p.parent.name}/{p.name}"
        check_media(p, [images], p, "image")
        stem = rel.rsplit(".", 1)[0]
        rec = by_image.get(stem + ".png")
        rid = rec.index if rec else None
        if rec is None and stem in by_scen:
            rec, rid = by_scen[stem], stem.replace("/", "_")
        if rec is None:
            unknown.append(rel)
            continue
        items.append(RateItem(item=f"{generator}/{rel}", generator=generator, image=str(p), record=rid or "",
                              category=rec.category, title=rec.title, prompt=rec.prompt, questions=rec.questions))
    if not items:
        raise ConfigError(f"--images {images}: no GOBench images (<category>/<N.M>.png or <category>/<N>.png) found")
    return items, unknown


def review_items(items: list[RateItem]) -> list[ReviewItem]:
    """The review items of ``items``: the image, its title and prompt, its own five questions."""
    return [ReviewItem(key=it.item, images=(it.image,), title=it.title, info={"prompt": it.prompt},
                       labels={f"q{i + 1}": f"{i + 1}. {q}" for i, q in enumerate(it.questions)},
                       meta={"generator": it.generator, "record": it.record, "category": it.category}) for it in items]


def _register(items: list[RateItem], db: RatingsDB) -> ReviewDB:
    db.add_items((it.item, it.generator, it.image, it.record) for it in items)
    return ReviewDB(db.path, RATING_FORM)


class RatingServer(ReviewServer):
    """The rating page for ``items`` on 127.0.0.1 in a background thread, answers into ``db``'s
    file (for tests and notebooks); a context manager. ``url`` is ``http://127.0.0.1:PORT/t/TOKEN/``;
    ``port=0`` picks a free port; ``roots``: the folders images are served from (the ``--images`` folder)."""

    def __init__(self, items: list[RateItem], db: RatingsDB, *, roots: list[Path], rater: str | None = None,
                 host: str = "127.0.0.1", port: int = 0):
        self._review_db = _register(items, db)
        super().__init__(review_items(items), self._review_db, roots=roots, reviewer=rater, host=host, port=port)

    def __exit__(self, *exc) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self._review_db.close()


def serve_ratings(items: list[RateItem], db: RatingsDB, *, roots: list[Path], host: str, port: int,
                  rater: str | None, log: Callable[[str], None]) -> None:
    """Serve the rating page until Ctrl-C (``lensbench gobench rate``); prints the URL with its token.
    ``roots``: the folders images are served from (the ``--images`` folder)."""
    review_db = _register(items, db)
    try:
        serve_review(review_items(items), review_db, roots=roots, host=host, port=port, reviewer=rater, log=log)
    finally:
        review_db.close()
