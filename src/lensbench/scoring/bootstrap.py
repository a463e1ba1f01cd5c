"""Cluster bootstrap confidence intervals over a benchmark's scored units.

Every headline metric of the five benchmarks is a ratio of sums over *scored units* (an RGB-Th-Bench
question or (scene, skill) unit, an IF-Bench (question, language) cell, an IV-Bench question, a
GroundingME sample, a GOBench image), pooled over *columns* (skills, dimensions, tasks, ...):

* ``micro``: ``sum_c N_c / sum_c D_c`` (a sample-weighted accuracy, e.g. IV-Bench Overall);
* ``macro``: ``r_c = N_c / D_c`` per column, averaged within each column *group*, then over
  groups (e.g. IF-Bench Avg = mean over languages of the mean over dimensions).

Units are not independent: they share an image, a scene, a video. docs/protocol.md, general rules: a CI
resamples the largest independent *cluster* of each benchmark (RGB-Th-Bench the scene, IF-Bench
the image, IV-Bench the video, GOBench the image, GroundingME the sample), all its units together.
A :class:`UnitTable` holds per-unit numerators/denominators and each unit's cluster; the bootstrap
sums them per cluster once, then draws clusters with replacement.

Method (:data:`DEFAULT_METHOD`): for a category (a set of columns) the clusters that count in it are
resampled, ``n_resamples`` times, with ``numpy.random.default_rng(seed).integers(0, K, (B, K))``
(exactly the draw of ``scipy.stats.bootstrap`` with ``batch=None``); the interval is read from the
resampled metric by :func:`lensbench.scoring.bca.bca_interval` (BCa: bias-corrected and accelerated,
the acceleration from the leave-one-cluster-out jackknife) or, with ``method="percentile"``, its
``(1 - level) / 2`` and ``(1 + level) / 2`` linear quantiles. Both equal ``scipy.stats.bootstrap``
on the same data and seed (tests/scoring/test_bootstrap.py, test_paired.py). BCa is the default because
it covers closer to 95% on RGB-Th-Bench's shape with a strong scene effect (benchmarks/ci_coverage.py;
the figures are in the README). Below :data:`MIN_CLUSTERS` clusters there is no interval at all.

Why not call ``scipy.stats.bootstrap`` here: importing ``scipy.stats`` alone takes ~0.6 s of the
~1 s a ``lensbench report`` or ``compare`` may take (issue 25), and a resample is a matrix product
of cluster counts with the per-cluster sums (``(B, K) @ (K, C)``): the whole computation is a few
lines of numpy, with no per-call validation or per-resample Python work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from lensbench.scoring.bca import bca_interval, percentile_interval

__all__ = ["UnitTable", "Interval", "Design", "bootstrap_ci", "bootstrap_stats", "bootstrap_all", "DEFAULT_RESAMPLES",
           "METHOD", "pooled_stat", "cluster_counts", "category_clusters", "percentile_interval", "plural",
           "MIN_CLUSTERS", "interval_of", "too_few_clusters", "too_few_text", "METHODS", "DEFAULT_METHOD", "method_key",
           "jackknife"]

#: resamples of every CI, p-value and paired CI unless the user asks for another count
from lensbench.scoring.defaults import DEFAULT_RESAMPLES  # noqa: E402 - one definition, numpy-free
#: fewest clusters a CI or p-value needs to be printed (docs/protocol.md: "below 10 clusters print 'too few
#: clusters (n)' instead"); the one place every CI and paired p of the reports, the viewer and reproduce reads it
MIN_CLUSTERS = 10


def too_few_clusters(n: int | None) -> bool:
    """Whether ``n`` clusters (None = none) are too few for a CI or p-value (``n < MIN_CLUSTERS``)."""
    return n is None or n < MIN_CLUSTERS


def too_few_text(n: int | None) -> str:
    """What text and HTML print instead of a CI or p from ``n`` clusters: ``"too few clusters (n)"``."""
    return f"too few clusters ({n or 0})"


#: interval methods: key -> words recorded beside every CI (:mod:`lensbench.scoring.bca`)
METHODS = {"bca": "BCa bootstrap", "percentile": "percentile bootstrap"}
#: the interval method of every CI unless asked otherwise (benchmarks/ci_coverage.py measured it closer to 95%)
DEFAULT_METHOD = "bca"
#: the default interval method, in words (recorded beside every CI)
METHOD = METHODS[DEFAULT_METHOD]


def method_key(method: str) -> str:
    """The key (``"bca"``, ``"percentile"``) of an interval method given by key or in words; ValueError else."""
    for k, words in METHODS.items():
        if method in (k, words):
            return k
    raise ValueError(f"unknown interval method {method!r}; one of {', '.join(METHODS)}")


@dataclass(frozen=True)
class Design:
    """How every interval of a report was drawn: recorded beside each CI (docs/protocol.md, general rules).

    ``cluster``: what one resampled cluster is (``"scene"``); ``n_resamples`` >= 1; ``seed``; ``level``
    in (0, 1); ``method``: the words of :data:`METHODS` (default :data:`METHOD`); ``min_clusters``: no CI
    below it (:data:`MIN_CLUSTERS`).
    """

    cluster: str = "unit"
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    level: float = 0.95
    method: str = METHOD
    min_clusters: int = MIN_CLUSTERS

    def describe(self) -> str:
        """One sentence, e.g. ``95% CI: BCa bootstrap over scenes (clusters resampled), 2000 resamples, seed 0``."""
        return (f"{round(100 * self.level)}% CI: {self.method} over {plural(self.cluster)} (clusters resampled), "
                f"{self.n_resamples} resamples, seed {self.seed}")

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict (``cluster``, ``method``, ``n_resamples``, ``seed``, ``level``, ``min_clusters``)."""
        return {"cluster": self.cluster, "method": self.method, "n_resamples": self.n_resamples, "seed": self.seed,
                "level": self.level, "min_clusters": self.min_clusters}


def plural(noun: str) -> str:
    """``"scene"`` -> ``"scenes"``; a noun with a parenthesis pluralises its first word."""
    head, sep, tail = noun.partition(" (")
    return head + ("es" if head.endswith(("s", "x", "ch")) else "s") + (sep + tail if sep else "")


@dataclass
class UnitTable:
    """Per-unit contributions to one metric, with each unit's cluster.

    Attributes:
        metric: the metric's name (``"QAcc"``, ``"Score"``, ...).
        units: U unit ids (strings), one per row; ids are unique.
        columns: C column names (skills, ``language/dimension``, tasks, ...).
        num / den: float arrays of shape (U, C); ``den == 0`` = the unit does not count in that column.
        groups: (C,) int group of each column (``macro`` averages within groups, then over them).
        clusters: (U,) the cluster id of each unit (e.g. its scene); None = every unit is its own cluster.
        cluster: what a cluster is, in words (``"scene"``, ``"image"``, ``"video"``, ``"sample"``).
        pool: ``"micro"`` or ``"macro"`` (see the module docstring).
        categories: category name -> column indices; the first entry is the headline (all
            columns), e.g. ``{"Overall": [0..13], "Scene": [0], ...}``.
        scale: multiplier of the ratio (100 = percent).
        setting: the protocol setting this table covers when a run holds several (IV-Bench sweep:
            ``{"frames": 8, "resolution": None}``), else None.
        scale_first: how :meth:`value` scales a column's ratio, to match the paper's arithmetic to the
            last bit: ``scale * N / D`` (a percentage of counts) or, when False, ``scale * (N / D)`` (a
            percentage of a mean score, e.g. GOBench SPS).
    """

    metric: str
    units: list[str]
    columns: list[str]
    num: np.ndarray
    den: np.ndarray
    groups: np.ndarray
    clusters: list[str] | None = None
    cluster: str = "unit"
    pool: Literal["micro", "macro"] = "macro"
    categories: dict[str, list[int]] = field(default_factory=dict)
    scale: float = 100.0
    setting: dict[str, Any] | None = None
    scale_first: bool = True

    def __post_init__(self) -> None:
        self.num = np.asarray(self.num, dtype=float).reshape(len(self.units), len(self.columns))
        self.den = np.asarray(self.den, dtype=float).reshape(len(self.units), len(self.columns))
        self.groups = np.asarray(self.groups, dtype=int)
        if self.clusters is None:
            self.clusters = list(self.units)
        if len(self.clusters) != len(self.units):
            raise ValueError(f"{self.metric}: {len(self.clusters)} cluster ids for {len(self.units)} units")
        if not self.categories:
            self.categories = {"all": list(range(len(self.columns)))}
        self._sums: tuple[list[str], np.ndarray, np.ndarray] | None = None
        self._totals: tuple[list[float], list[float]] | None = None

    @property
    def headline(self) -> str:
        """The name of the all-columns category."""
        return next(iter(self.categories))

    def value(self, category: str | None = None) -> float | None:
        """The metric of ``category`` (default the headline) on all units, no resampling; None when no unit counts.

        The benchmark's result and its CIs both take their point value from here. Computed in plain
        Python floats in a fixed order (column sums in unit order; a column's ratio, see
        ``scale_first``; means in category order): the arithmetic of the papers' scripts, so a
        percentage is the same float they print. Raises KeyError for an unknown category.
        """
        cols = self.categories[category or self.headline]
        n_col, d_col = self._column_totals()
        if self.pool == "micro":
            d = sum(d_col[c] for c in cols)
            return self._ratio(sum(n_col[c] for c in cols), d) if d > 0 else None
        by_group: dict[int, list[float]] = {}
        for c in cols:
            if d_col[c] > 0:
                by_group.setdefault(int(self.groups[c]), []).append(self._ratio(n_col[c], d_col[c]))
        if not by_group:
            return None
        means = [sum(v) / len(v) for v in by_group.values()]
        return sum(means) / len(means)

    def column_value(self, column: str) -> float | None:
        """The metric of one column (by name) on all units; None when the table has no such column or no
        unit counts there."""
        if column not in self.columns:
            return None
        n_col, d_col = self._column_totals()
        j = self.columns.index(column)
        return self._ratio(n_col[j], d_col[j]) if d_col[j] > 0 else None

    def n_units(self, category: str | None = None) -> int:
        """How many units count in ``category`` (default the headline): rows with a cell there."""
        cols = self.categories[category or self.headline]
        return int((self.den[:, cols].sum(axis=1) > 0).sum())

    def _ratio(self, n: float, d: float) -> float:
        return self.scale * n / d if self.scale_first else self.scale * (n / d)

    def _column_totals(self) -> tuple[list[float], list[float]]:
        """Per column, the sums of ``num`` and ``den`` over the units that count there (unit order, Python floats)."""
        if self._totals is None:
            n_col, d_col = [], []
            for j in range(len(self.columns)):
                rows = np.flatnonzero(self.den[:, j] > 0)
                n_col.append(sum(self.num[rows, j].tolist()))
                d_col.append(sum(self.den[rows, j].tolist()))
            self._totals = (n_col, d_col)
        return self._totals

    def cluster_sums(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """``(cluster ids, N, D)``: K clusters in order of first appearance, (K, C) sums of ``num``/``den``."""
        if self._sums is None:
            index: dict[str, int] = {}
            inv = np.fromiter((index.setdefault(c, len(index)) for c in self.clusters), dtype=np.intp,
                              count=len(self.units))
            k = len(index)
            n = np.stack([np.bincount(inv, weights=self.num[:, j], minlength=k) for j in range(len(self.columns))],
                         axis=1) if self.columns else np.zeros((k, 0))
            d = np.stack([np.bincount(inv, weights=self.den[:, j], minlength=k) for j in range(len(self.columns))],
                         axis=1) if self.columns else np.zeros((k, 0))
            self._sums = (list(index), n.reshape(k, len(self.columns)), d.reshape(k, len(self.columns)))
        return self._sums

    def subset(self, unit_ids: Sequence[str]) -> "UnitTable":
        """The table restricted to (and ordered as) ``unit_ids`` (each must be present)."""
        pos = {u: i for i, u in enumerate(self.units)}
        idx = np.array([pos[u] for u in unit_ids], dtype=int)
        assert self.clusters is not None
        return UnitTable(self.metric, list(unit_ids), self.columns, self.num[idx], self.den[idx], self.groups,
                         [self.clusters[i] for i in idx], self.cluster, self.pool, self.categories, self.scale,
                         self.setting, self.scale_first)


def pooled_stat(n: np.ndarray, d: np.ndarray, groups: np.ndarray, pool: str) -> np.ndarray:
    """The metric (unscaled) from column sums: ``n``/``d`` of shape (..., C) -> (...,); NaN when nothing counts.

    ``micro``: ``sum n / sum d``. ``macro``: per column ``n / d`` (columns with ``d == 0`` absent),
    mean within each group of ``groups`` over the present columns, then mean over the present groups.
    """
    n, d = np.asarray(n, float), np.asarray(d, float)
    if pool == "micro":
        tot = d.sum(axis=-1)
        return np.where(tot > 0, n.sum(axis=-1) / np.where(tot > 0, tot, 1.0), np.nan)
    present = d > 0
    r = np.where(present, n / np.where(present, d, 1.0), 0.0)
    means, has = [], []
    for g in np.unique(groups):
        sel = groups == g
        cnt = present[..., sel].sum(axis=-1)
        means.append(np.where(cnt > 0, r[..., sel].sum(axis=-1) / np.maximum(cnt, 1), 0.0))
        has.append(cnt > 0)
    if not means:
        return np.full(n.shape[:-1], np.nan)
    m, h = np.stack(means, axis=-1), np.stack(has, axis=-1)
    cnt = h.sum(axis=-1)
    return np.where(cnt > 0, (m * h).sum(axis=-1) / np.maximum(cnt, 1), np.nan)


@dataclass
class Interval:
    """A point estimate with its bootstrap confidence interval (metric units, e.g. percent).

    ``low``/``high`` are None when fewer than ``min_clusters`` clusters count (see :attr:`too_few`) or
    there is no value; ``n``: clusters counting in the category; ``n_units``: units counting;
    ``cluster``, ``seed``, ``n_resamples``, ``method`` (a key of :data:`METHODS`) and ``level`` record
    how the interval was drawn.
    """

    value: float | None
    low: float | None
    high: float | None
    n: int
    seed: int
    n_resamples: int
    method: str = "percentile"
    level: float = 0.95
    cluster: str = "unit"
    n_units: int = 0
    min_clusters: int = MIN_CLUSTERS

    @property
    def too_few(self) -> bool:
        """True when the metric has a value but too few clusters for a CI (text prints :func:`too_few_text`)."""
        return self.value is not None and self.n < max(self.min_clusters, 2)


def cluster_counts(rng: np.random.Generator, k: int, n_resamples: int) -> np.ndarray:
    """(n_resamples, k) float counts of each of ``k`` clusters in each bootstrap resample.

    The indices are ``rng.integers(0, k, (n_resamples, k))``, the draw ``scipy.stats.bootstrap``
    makes for one data sample of length ``k`` (``batch=None``); row ``b`` counts how often each
    cluster was drawn in resample ``b``.
    """
    idx = rng.integers(0, k, (n_resamples, k))
    flat = idx + (np.arange(n_resamples, dtype=np.int64) * k)[:, None]
    return np.bincount(flat.ravel(), minlength=n_resamples * k).reshape(n_resamples, k).astype(float)


def category_clusters(d: np.ndarray, cols: Sequence[int]) -> np.ndarray:
    """Indices of the clusters (rows of the (K, C) sums ``d``) that count in the columns ``cols``."""
    return np.flatnonzero(d[:, list(cols)].sum(axis=1) > 0)


def jackknife(n: np.ndarray, d: np.ndarray, groups: np.ndarray, pool: str) -> np.ndarray:
    """The (K,) leave-one-cluster-out values (unscaled) of the metric of the per-cluster sums ``n``/``d`` (K, C)."""
    return pooled_stat(n.sum(0) - n, d.sum(0) - d, groups, pool)


def interval_of(stats: np.ndarray, n: np.ndarray, d: np.ndarray, groups: np.ndarray, pool: str, level: float,
                method: str) -> tuple[float, float]:
    """The interval (unscaled) of resampled values ``stats`` of the metric of cluster sums ``n``/``d`` (K, C):
    :func:`~lensbench.scoring.bca.bca_interval` (``method`` ``"bca"``) or the percentile interval."""
    if method_key(method) == "percentile":
        return percentile_interval(stats, level)
    est = float(pooled_stat(n.sum(0), d.sum(0), groups, pool))
    return bca_interval(stats, est, jackknife(n, d, groups, pool), level)


def bootstrap_ci(table: UnitTable, category: str | None = None, *, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0, level: float = 0.95, method: str = DEFAULT_METHOD,
                 min_clusters: int = MIN_CLUSTERS) -> Interval:
    """The metric (category ``category``, default the headline) with its cluster-bootstrap CI.

    The clusters counting in the category are resampled with replacement (see the module
    docstring); every resample holds at least one of them, so no resample lacks the category.
    ``method``: a key or the words of :data:`METHODS`. Returns the interval in the table's scale;
    low/high None with fewer than ``min_clusters`` (default :data:`MIN_CLUSTERS`, at least 2) clusters,
    :attr:`Interval.too_few` then true. Raises KeyError for an unknown category, ValueError for an
    unknown method.
    """
    cat = category or table.headline
    cols = table.categories[cat]
    _ids, n_cl, d_cl = table.cluster_sums()
    sel = category_clusters(d_cl, cols)
    value = table.value(cat)
    iv = Interval(value, None, None, len(sel), seed, n_resamples, method_key(method), level, table.cluster,
                  table.n_units(cat), min_clusters)
    stats = _raw_stats(table, cat, n_resamples, seed) if len(sel) >= min_clusters else None
    if stats is not None:
        ix = np.ix_(sel, cols)
        iv.low, iv.high = (x * table.scale for x in interval_of(stats, n_cl[ix], d_cl[ix], table.groups[cols],
                                                                table.pool, level, method))
    return iv


def bootstrap_stats(table: UnitTable, category: str | None = None, *, n_resamples: int = DEFAULT_RESAMPLES,
                    seed: int = 0) -> np.ndarray | None:
    """The (n_resamples,) resampled values of a category's metric (the table's scale), drawn exactly as
    :func:`bootstrap_ci` draws them (its interval is their percentile interval); None when the category
    has no value or fewer than 2 clusters. Raises KeyError for an unknown category."""
    stats = _raw_stats(table, category or table.headline, n_resamples, seed)
    return None if stats is None else stats * table.scale


def _raw_stats(table: UnitTable, cat: str, n_resamples: int, seed: int) -> np.ndarray | None:
    cols = table.categories[cat]
    _ids, n_cl, d_cl = table.cluster_sums()
    sel = category_clusters(d_cl, cols)
    if table.value(cat) is None or len(sel) < 2:
        return None
    w = cluster_counts(np.random.default_rng(seed), len(sel), n_resamples)
    return pooled_stat(w @ n_cl[np.ix_(sel, cols)], w @ d_cl[np.ix_(sel, cols)], table.groups[cols], table.pool)


def bootstrap_all(table: UnitTable, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                  level: float = 0.95, method: str = DEFAULT_METHOD) -> dict[str, Interval]:
    """:func:`bootstrap_ci` of every category of ``table`` (``{category: Interval}``, table order)."""
    return {c: bootstrap_ci(table, c, n_resamples=n_resamples, seed=seed, level=level, method=method)
            for c in table.categories}
