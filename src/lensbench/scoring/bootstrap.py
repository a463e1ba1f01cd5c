"""Bootstrap confidence intervals and paired tests over a benchmark's independent units.

Every headline metric of the five benchmarks is a ratio of sums over *units* (the things that
are independent of one another: an IF-Bench question with all its rotations and languages, an
RGB-Th-Bench (scene, skill) unit, an IV-Bench video, a GroundingME sample, a GOBench image),
pooled over *columns* (skills, dimensions, tasks, ...):

* ``micro``: ``sum_c N_c / sum_c D_c`` (a sample-weighted accuracy, e.g. IV-Bench Overall);
* ``macro``: ``r_c = N_c / D_c`` per column, averaged within each column *group*, then over
  groups (e.g. IF-Bench Avg = mean over languages of the mean over dimensions).

``N_c`` / ``D_c`` are the sums of the per-unit numerators / denominators of column ``c``. A
:class:`UnitTable` holds these per-unit arrays; a bootstrap resamples units with replacement
(within *strata* when given: each stratum keeps its size) and recomputes the metric, via
``scipy.stats.bootstrap`` (one data sample per stratum, so scipy resamples each stratum on its
own: a stratified bootstrap). Paired comparisons of two runs on the same units use the same
resampled indices for both runs (CI of the difference) and ``scipy.stats.permutation_test``
with ``permutation_type="samples"`` (A/B swapped within each unit) for the p-value.

scipy is the ``stats`` extra: without it these functions raise
:class:`lensbench.core.extras.MissingExtraError` (one line with the install hint).

Seeds: ``numpy.random.default_rng(seed)`` is passed to scipy as ``rng``; the seed, the number of
resamples and the method are returned with every interval so a report can record them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from lensbench.core.extras import require

__all__ = ["UnitTable", "Interval", "PairedResult", "bootstrap_ci", "paired_difference", "DEFAULT_RESAMPLES"]

DEFAULT_RESAMPLES = 2000


@dataclass
class UnitTable:
    """Per-unit contributions to one metric.

    Attributes:
        metric: the metric's name (``"QAcc"``, ``"Score"``, ...).
        units: U unit ids (strings), one per row.
        columns: C column names (skills, (language, dimension) pairs rendered as text, ...).
        num / den: float arrays of shape (U, C); ``den == 0`` = the unit does not count in
            that column.
        groups: (C,) int group of each column (``macro`` averages within groups, then over them).
        strata: (U,) int stratum of each unit (resampled within strata), or None (one stratum).
        pool: ``"micro"`` or ``"macro"`` (see the module docstring).
        categories: category name -> column indices; the first entry is the headline (all
            columns), e.g. ``{"Overall": [0..13], "Scene": [0], ...}``.
        scale: multiplier of the ratio (100 = percent).
    """

    metric: str
    units: list[str]
    columns: list[str]
    num: np.ndarray
    den: np.ndarray
    groups: np.ndarray
    strata: np.ndarray | None = None
    pool: Literal["micro", "macro"] = "macro"
    categories: dict[str, list[int]] = field(default_factory=dict)
    scale: float = 100.0

    def __post_init__(self) -> None:
        self.num = np.asarray(self.num, dtype=float).reshape(len(self.units), len(self.columns))
        self.den = np.asarray(self.den, dtype=float).reshape(len(self.units), len(self.columns))
        self.groups = np.asarray(self.groups, dtype=int)
        if not self.categories:
            self.categories = {"all": list(range(len(self.columns)))}

    @property
    def headline(self) -> str:
        """The name of the all-columns category."""
        return next(iter(self.categories))

    def value(self, category: str | None = None) -> float | None:
        """The metric on all units (no resampling); None when no unit counts."""
        v = float(_stat(self.num[None], self.den[None], self.groups, self.categories[category or self.headline],
                        self.pool)[0]) * self.scale
        return None if np.isnan(v) else v

    def subset(self, unit_ids: Sequence[str]) -> "UnitTable":
        """The table restricted to (and ordered as) ``unit_ids`` (each must be present)."""
        pos = {u: i for i, u in enumerate(self.units)}
        idx = np.array([pos[u] for u in unit_ids], dtype=int)
        return UnitTable(self.metric, list(unit_ids), self.columns, self.num[idx], self.den[idx], self.groups,
                         None if self.strata is None else self.strata[idx], self.pool, self.categories, self.scale)


def _stat(num: np.ndarray, den: np.ndarray, groups: np.ndarray, cols: Sequence[int], pool: str) -> np.ndarray:
    """The metric (unscaled) for each row of ``num``/``den`` summed over units: (B, U, C) -> (B,)."""
    cols = np.asarray(cols, dtype=int)
    n = num[..., cols].sum(axis=-2)
    d = den[..., cols].sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        if pool == "micro":
            return n.sum(axis=-1) / np.where(d.sum(axis=-1) > 0, d.sum(axis=-1), np.nan)
        r = n / np.where(d > 0, d, np.nan)
        g = groups[cols]
        means = []
        for gv in np.unique(g):
            sel = r[..., g == gv]
            present = ~np.isnan(sel)
            cnt = present.sum(axis=-1)
            means.append(np.where(cnt > 0, np.nansum(sel, axis=-1) / np.maximum(cnt, 1), np.nan))
        m = np.stack(means, axis=-1)
        cnt = (~np.isnan(m)).sum(axis=-1)
        return np.where(cnt > 0, np.nansum(m, axis=-1) / np.maximum(cnt, 1), np.nan)


@dataclass
class Interval:
    """A point estimate with its bootstrap confidence interval (metric units, e.g. percent).

    ``low``/``high`` are None when fewer than 2 units count; ``n`` = units counting in the
    category; ``seed``,
    ``n_resamples``, ``method`` and ``level`` record how the interval was drawn.
    """

    value: float | None
    low: float | None
    high: float | None
    n: int
    seed: int
    n_resamples: int
    method: str = "percentile"
    level: float = 0.95


def _strata_indices(table: UnitTable) -> list[np.ndarray]:
    if table.strata is None:
        return [np.arange(len(table.units))]
    return [np.flatnonzero(table.strata == s) for s in np.unique(table.strata)]


def _resample_stat(num: np.ndarray, den: np.ndarray, groups, cols, pool, fixed: np.ndarray | None = None):
    """A vectorized scipy statistic: unit-index samples (..., n_s) -> metric (...,); ``fixed``
    units (strata of one unit, which resampling cannot change) are appended to every resample."""
    def statistic(*samples, axis=-1):
        parts = [np.asarray(s) for s in samples]
        if fixed is not None and len(fixed):
            parts.append(np.broadcast_to(fixed, parts[0].shape[:-1] + fixed.shape))
        idx = np.concatenate(parts, axis=-1)
        return _stat(num[idx], den[idx], groups, cols, pool)
    return statistic


def _split_strata(table: UnitTable) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """(strata with >= 2 units, as scipy data samples; the units of one-unit strata)."""
    strata = [s for s in _strata_indices(table) if len(s)]
    data = tuple(s for s in strata if len(s) >= 2)
    fixed = np.concatenate([s for s in strata if len(s) < 2] or [np.zeros(0, int)])
    return data, fixed


def _batch(n_units: int, n_cols: int) -> int:
    return int(max(1, min(1000, 4_000_000 // max(1, n_units * n_cols))))


def bootstrap_ci(table: UnitTable, category: str | None = None, *, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0, level: float = 0.95, method: str = "percentile") -> Interval:
    """The metric (category ``category``, default the headline) with a bootstrap CI over units.

    Units are resampled with replacement within each stratum (``scipy.stats.bootstrap`` with one
    data sample per stratum and ``rng=numpy.random.default_rng(seed)``); the statistic is the
    metric on the resampled units. ``method``: ``"percentile"`` (default), ``"basic"`` or
    ``"BCa"``. Returns the interval in the table's scale; low/high None with < 2 units.
    """
    stats = require("scipy.stats", "stats", "bootstrap confidence intervals")

    cols = table.categories[category or table.headline]
    value = table.value(category)
    n = int((table.den[:, cols].sum(axis=1) > 0).sum())  # units that count in this category
    if value is None or n < 2:
        return Interval(value, None, None, n, seed, n_resamples, method, level)
    data, fixed = _split_strata(table)
    if not data:  # nothing to resample
        return Interval(value, value, value, n, seed, n_resamples, method, level)
    stat = _resample_stat(table.num, table.den, table.groups, cols, table.pool, fixed)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # all resamples equal: a valid CI
        res = stats.bootstrap(data, stat, n_resamples=n_resamples, vectorized=True, paired=False,
                              confidence_level=level, method=method, rng=np.random.default_rng(seed),
                              batch=_batch(n, len(cols)))
    lo, hi = float(res.confidence_interval.low) * table.scale, float(res.confidence_interval.high) * table.scale
    return Interval(value, None if np.isnan(lo) else lo, None if np.isnan(hi) else hi, n, seed, n_resamples,
                    method, level)


@dataclass
class PairedResult:
    """Run A minus run B on the same units: ``diff`` with its bootstrap CI and permutation p-value.

    ``a``/``b``: each run's value on the shared units; ``p_value``: two-sided, A/B swapped
    within units (exact when 2**n <= n_resamples); ``n``: shared units counting in the category.
    """

    category: str
    a: float | None
    b: float | None
    diff: float | None
    low: float | None
    high: float | None
    p_value: float | None
    n: int
    seed: int
    n_resamples: int


def paired_difference(ta: UnitTable, tb: UnitTable, category: str | None = None, *,
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95) -> PairedResult:
    """Paired difference A - B of a metric over the units both tables hold.

    CI: percentile bootstrap of the difference, the same resampled units for both runs
    (``scipy.stats.bootstrap``, stratified as in :func:`bootstrap_ci`). p-value:
    ``scipy.stats.permutation_test(permutation_type="samples")`` swapping A and B within each
    unit (null: the two runs are exchangeable on every unit). Columns are matched by name
    (a column missing from one table has no contribution there).
    """
    stats = require("scipy.stats", "stats", "bootstrap confidence intervals")

    shared = [u for u in ta.units if u in set(tb.units)]
    cat = category or ta.headline
    a, b = ta.subset(shared), _align_columns(tb.subset(shared), ta.columns)
    va, vb = a.value(cat), b.value(cat)
    cols_ = a.categories[cat]
    n = int(((a.den[:, cols_].sum(axis=1) > 0) | (b.den[:, cols_].sum(axis=1) > 0)).sum())
    diff = None if va is None or vb is None else va - vb
    if diff is None or n < 2:
        return PairedResult(cat, va, vb, diff, None, None, None, n, seed, n_resamples)
    cols = a.categories[cat]
    num = np.concatenate([a.num, b.num])
    den = np.concatenate([a.den, b.den])
    data, fixed = _split_strata(a)
    if not data:
        return PairedResult(cat, va, vb, diff, diff, diff, None, n, seed, n_resamples)
    sa = _resample_stat(a.num, a.den, a.groups, cols, a.pool, fixed)
    sb = _resample_stat(b.num, b.den, a.groups, cols, a.pool, fixed)

    def dstat(*samples, axis=-1):
        return sa(*samples) - sb(*samples)

    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)  # all resamples equal: a valid CI
        res = stats.bootstrap(data, dstat, n_resamples=n_resamples, vectorized=True, paired=False,
                              confidence_level=level, method="percentile", rng=np.random.default_rng(seed),
                              batch=_batch(n, len(cols)))
    lo, hi = float(res.confidence_interval.low) * a.scale, float(res.confidence_interval.high) * a.scale
    whole = _resample_stat(num, den, a.groups, cols, a.pool)

    def pstat(x, y, axis=-1):
        return whole(x) - whole(y)

    perm = stats.permutation_test((np.arange(n), np.arange(n) + n), pstat, permutation_type="samples",
                                  vectorized=True, n_resamples=n_resamples, rng=np.random.default_rng(seed),
                                  batch=_batch(n, len(cols)))
    p = float(perm.pvalue)
    return PairedResult(cat, va, vb, diff, None if np.isnan(lo) else lo, None if np.isnan(hi) else hi,
                        None if np.isnan(p) else min(1.0, p), n, seed, n_resamples)


def _align_columns(t: UnitTable, columns: list[str]) -> UnitTable:
    """``t`` with its columns reordered to ``columns`` (absent ones zero)."""
    if t.columns == columns:
        return t
    pos = {c: i for i, c in enumerate(t.columns)}
    num = np.zeros((len(t.units), len(columns)))
    den = np.zeros_like(num)
    for j, c in enumerate(columns):
        if c in pos:
            num[:, j] = t.num[:, pos[c]]
            den[:, j] = t.den[:, pos[c]]
    return UnitTable(t.metric, t.units, list(columns), num, den, np.zeros(len(columns), int), t.strata, t.pool,
                     {}, t.scale)
