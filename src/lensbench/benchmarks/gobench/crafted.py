"""Crafted GOBench records (:mod:`lensbench.benchmarks.crafting`): critiques of 30 generated images with human
scores and SPS terms; labels and scores as :meth:`GOBench.score` writes."""

from __future__ import annotations

from lensbench.benchmarks.crafting import Crafter
from lensbench.benchmarks.gobench.records import CATEGORIES, DIMENSIONS
from lensbench.core.records import SampleRecord

__all__ = ["craft_records"]


def craft_records(c: Crafter) -> list[SampleRecord]:
    """``c.n`` records: ``scored`` (an SPS term per dimension near ``c.accuracy``) or ``error``."""
    out = []
    cats = list(CATEGORIES)
    for i in range(c.n):
        img = c.image(f"go{i % 30}.png", 700 + i % 30)
        o = "error" if c.rng.random() < c.p_error else "scored"
        human = {d: c.rng.randint(1, 5) for d in DIMENSIONS}
        scores: dict[str, float | int] = {} if o == "error" else {
            f"sps_{d}": round(min(1.0, max(0.0, c.rng.gauss(c.accuracy, 0.2))), 3) for d in DIMENSIONS}
        if o != "error":
            scores.update({d: min(5, max(1, human[d] + c.rng.choice([-1, 0, 0, 1]))) for d in DIMENSIONS})
        out.append(c.record(f"img{i}", [img, {"type": "text", "text": "Rate this image."}], o,
                            answer={d: scores.get(d) for d in DIMENSIONS}, target=human, scores=scores,
                            reply="Q1: Yes ...", labels={"image": f"img{i}", "category": cats[i % 3]}))
    return out
