"""GOBench's unit table: SPS per dimension over the images, each image its own cluster.

Paper Eq. 1 and Table 3: a dimension's SPS is the mean, over the scored images with a human score
in it, of the image's SPS term, in percent; VLMEvalKit's ``Overall`` (and the leaderboard's
``mean``) is the mean of the three dimensions. Rows: the scored images with at least one SPS term
(``unparseable`` and ``error`` records have none); cluster: the image.

Scores read (:meth:`GOBench.score_one <lensbench.benchmarks.gobench.benchmark.GOBench.score_one>`
writes them): ``sps_authenticity``, ``sps_aesthetics``, ``sps_fidelity``; label ``image``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lensbench.benchmarks.gobench.records import DIM_TITLES, DIMENSIONS
from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline, scored

__all__ = ["CLUSTER", "HEADLINES", "sps_table", "has_sps"]

CLUSTER = "image"
HEADLINES = (Headline("SPS", "mean", "mean"),)


def has_sps(r: SampleRecord) -> bool:
    """True when the record carries an SPS term (a scored image with human ground truth)."""
    return any(f"sps_{d}" in r.scores for d in DIMENSIONS)


def sps_table(records: Sequence[SampleRecord]) -> UnitTable:
    """The SPS table (module docstring): columns ``Authenticity``, ``Aesthetics``, ``Fidelity`` (those with
    a term in some record); categories ``mean`` (over the dimensions) and each dimension."""
    recs = [r for r in scored(records) if has_sps(r)]
    dims = [d for d in DIMENSIONS if any(f"sps_{d}" in r.scores for r in recs)]
    num = np.zeros((len(recs), len(dims)))
    den = np.zeros_like(num)
    for i, r in enumerate(recs):
        for j, d in enumerate(dims):
            v = r.scores.get(f"sps_{d}")
            if v is not None:
                num[i, j], den[i, j] = float(v), 1.0
    titles = [DIM_TITLES[d] for d in dims]
    cats = {"mean": list(range(len(dims))), **{t: [i] for i, t in enumerate(titles)}}
    return UnitTable("SPS", [r.sample_id for r in recs], titles, num, den, np.zeros(len(dims), int),
                     [str(r.labels.get("image", r.sample_id)) for r in recs], CLUSTER, "macro", cats,
                     scale_first=False)
