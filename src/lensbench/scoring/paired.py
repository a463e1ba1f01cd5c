"""Paired comparison of two runs on the same clusters: CI of A - B and a permutation p-value.

Both runs are scored exactly as their own results score them (their own :class:`UnitTable`),
on the units both scored (docs/protocol.md, general rules): a unit one run failed is left out of both; a cell
(unit, column) counts only when both runs scored it. The resampled unit is the cluster
(:mod:`lensbench.scoring.bootstrap`).

* CI: bootstrap of A - B (BCa by default, :data:`lensbench.scoring.bootstrap.DEFAULT_METHOD`; the
  jackknife leaves one cluster out of both runs), the same resampled clusters for both runs (the draw of
  :func:`lensbench.scoring.bootstrap.cluster_counts`), over the clusters counting in the category.
* p-value: two-sided paired permutation test, A and B swapped within each cluster (all its units
  together); null: the two runs are exchangeable on every cluster. Swapping a cluster whose swap
  changes nothing changes no permutation's statistic, so only the *discordant* clusters (m of them)
  are permuted: those where A and B differ and, when both runs have the same denominators everywhere
  (always, once paired: :func:`pair_tables`; then A - B is linear in the swaps), whose swap alone moves
  A - B (a scene where A gains a question in one skill and B one in another of the same size moves
  nothing in a mean over skills). Then: all ``2**m`` swaps when ``2**m <= n_resamples`` (an exact test), else
  ``n_resamples`` random swaps drawn as ``scipy.stats.permutation_test(permutation_type="samples")``
  draws them (``rng.permuted`` of each cluster's pair). p = ``2 * min(P(T <= t), P(T >= t))``
  capped at 1, with scipy's relative tolerance for ties and its ``+1`` correction for random swaps.
  tests/scoring/test_paired.py checks it against ``scipy.stats.permutation_test`` on the same data
  and against exact enumeration of crafted runs; tests/report/test_compare_recorded.py against an
  independent scene-swap test on real recorded RGB-Th-Bench replies.

Below :data:`lensbench.scoring.bootstrap.MIN_CLUSTERS` clusters there is neither CI nor p
(``PairedResult.too_few``; docs/protocol.md, general rules).

Why hand-vectorised rather than ``scipy.stats.permutation_test``: see
:mod:`lensbench.scoring.bootstrap` (import cost; one matrix product per category).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from lensbench.scoring.bca import bca_interval, percentile_interval
from lensbench.scoring.bootstrap import (DEFAULT_METHOD, DEFAULT_RESAMPLES, MIN_CLUSTERS, UnitTable, category_clusters,
                                         cluster_counts, jackknife, method_key, pooled_stat)

__all__ = ["PairedResult", "pair_tables", "paired_difference", "paired_stats", "paired_all", "permutation_pvalue"]

_EPS = float(np.finfo(float).eps) * 100  # scipy.stats.permutation_test's relative tolerance for ties


@dataclass
class PairedResult:
    """Run A minus run B on the same clusters: ``diff`` with its bootstrap CI and permutation p-value.

    ``a``/``b``: each run's value on the shared units; ``p_value``: two-sided (None, as ``low``/``high``,
    with fewer than ``min_clusters`` clusters: :attr:`too_few`); ``exact``: whether every swap was
    enumerated; ``n``: clusters counting in the category; ``n_discordant``: clusters whose swap moves
    A - B (the ones permuted); ``n_units``: shared units; ``method``: the CI's (a key of
    :data:`lensbench.scoring.bootstrap.METHODS`).
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
    cluster: str = "unit"
    exact: bool = False
    n_discordant: int = 0
    n_units: int = 0
    method: str = DEFAULT_METHOD
    min_clusters: int = MIN_CLUSTERS

    @property
    def too_few(self) -> bool:
        """True when both runs have a value but too few clusters for a CI and p."""
        return self.diff is not None and self.n < max(self.min_clusters, 2)


def pair_tables(ta: UnitTable, tb: UnitTable) -> tuple[UnitTable, UnitTable]:
    """``ta`` and ``tb`` on the units both hold (A's order), B's columns aligned to A's by name, and
    every cell that only one of them scored zeroed in both. Raises ValueError when a shared unit
    lies in different clusters in the two tables."""
    in_b = set(tb.units)
    shared = [u for u in ta.units if u in in_b]
    a, b = ta.subset(shared), tb.subset(shared)
    if a.clusters != b.clusters:
        raise ValueError(f"{ta.metric}: the runs put a unit in different {ta.cluster}s")
    pos = {c: i for i, c in enumerate(b.columns)}
    nb, db = np.zeros_like(a.num), np.zeros_like(a.den)
    for j, c in enumerate(a.columns):
        if c in pos:
            nb[:, j], db[:, j] = b.num[:, pos[c]], b.den[:, pos[c]]
    both = (a.den > 0) & (db > 0)
    mk = lambda t, n, d: UnitTable(t.metric, shared, a.columns, np.where(both, n, 0.0), np.where(both, d, 0.0),
                                   a.groups, a.clusters, a.cluster, a.pool, a.categories, a.scale, t.setting,
                                   a.scale_first)
    return mk(a, a.num, a.den), mk(b, nb, db)


def _flip_stat(na, da, nb, db, f, groups, pool, scale):
    """A - B for swap patterns ``f`` (P, m) over the m discordant clusters' sums ``na..db`` (m, C)."""
    return _moved_stat(na, da, nb, db, f @ (nb - na), f @ (db - da), groups, pool, scale)


def _moved_stat(na, da, nb, db, dn, dd, groups, pool, scale):
    """A - B when the sums ``dn``/``dd`` (P, C) move from A to B (and B's to A) on top of the totals."""
    ta, tb = na.sum(0), nb.sum(0)
    da_, db_ = da.sum(0), db.sum(0)
    return (pooled_stat(ta + dn, da_ + dd, groups, pool) - pooled_stat(tb - dn, db_ - dd, groups, pool)) * scale


def permutation_pvalue(na: np.ndarray, da: np.ndarray, nb: np.ndarray, db: np.ndarray, groups: np.ndarray,
                       pool: str, scale: float, *, n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = 0) -> tuple[float, bool, int]:
    """``(p, exact, m)``: the two-sided paired permutation p-value of A - B over clusters.

    ``na``/``da``/``nb``/``db``: (K, C) per-cluster sums of each run over the category's columns;
    ``m``: discordant clusters. See the module docstring for the method.
    """
    disc = np.flatnonzero((na != nb).any(axis=1) | (da != db).any(axis=1))
    if len(disc) and np.array_equal(da, db):
        # A - B is linear in the swaps: a cluster matters only when its swap alone moves it
        zero = _flip_stat(na, da, nb, db, np.zeros(len(na)), groups, pool, scale)
        alone = _moved_stat(na, da, nb, db, (nb - na)[disc], (db - da)[disc], groups, pool, scale)
        disc = disc[np.abs(alone - zero) > 1e-9 * max(abs(scale), 1.0)]
    m = len(disc)
    fixed_a, fixed_b = np.delete(na, disc, 0).sum(0), np.delete(nb, disc, 0).sum(0)
    fixed_da, fixed_db = np.delete(da, disc, 0).sum(0), np.delete(db, disc, 0).sum(0)
    if m == 0:
        return 1.0, True, 0
    # the other clusters' sums ride along as one extra row that no pattern swaps (swapping it moves nothing)
    xa, xb = np.vstack([na[disc], fixed_a]), np.vstack([nb[disc], fixed_b])
    xda, xdb = np.vstack([da[disc], fixed_da]), np.vstack([db[disc], fixed_db])
    obs = float(_flip_stat(xa, xda, xb, xdb, np.zeros(m + 1), groups, pool, scale))
    exact = 2 ** m <= n_resamples
    if exact:
        flips = np.array(list(itertools.product((0.0, 1.0), repeat=m)))
    else:
        rng = np.random.default_rng(seed)
        pairs = rng.permuted(np.tile(np.arange(2), (n_resamples, m, 1)), axis=-1)
        flips = pairs[..., 0].astype(float)
    flips = np.hstack([flips, np.zeros((len(flips), 1))])
    null = _flip_stat(xa, xda, xb, xdb, flips, groups, pool, scale)
    gamma = abs(_EPS * obs)
    adj = 0 if exact else 1
    less = (np.count_nonzero(null <= obs + gamma) + adj) / (len(null) + adj)
    greater = (np.count_nonzero(null >= obs - gamma) + adj) / (len(null) + adj)
    return float(min(1.0, 2 * min(less, greater))), exact, m


def paired_difference(ta: UnitTable, tb: UnitTable, category: str | None = None, *,
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95,
                      paired: tuple[UnitTable, UnitTable] | None = None, method: str = DEFAULT_METHOD,
                      min_clusters: int = MIN_CLUSTERS) -> PairedResult:
    """Paired difference A - B of a metric (``category``, default A's headline) over shared clusters.

    ``paired``: :func:`pair_tables` of ``ta``/``tb`` when already made; ``method``: the CI's (``"bca"``,
    ``"percentile"``). Returns diff/CI/p None where a side has no value; CI and p None with fewer than
    ``min_clusters`` (default :data:`~lensbench.scoring.bootstrap.MIN_CLUSTERS`, at least 2) clusters.
    Raises ValueError for an unknown method.
    """
    a, b = paired or pair_tables(ta, tb)
    cat = category or a.headline
    cols = a.categories[cat]
    va, vb = a.value(cat), b.value(cat)
    _ids, na, da = a.cluster_sums()
    _ids, nb, db = b.cluster_sums()
    sel = category_clusters(da, cols)
    n_units = a.n_units(cat)
    diff = None if va is None or vb is None else va - vb
    res = PairedResult(cat, va, vb, diff, None, None, None, len(sel), seed, n_resamples, a.cluster, n_units=n_units,
                       method=method_key(method), min_clusters=min_clusters)
    if diff is None or len(sel) < max(min_clusters, 2):
        return res
    g = a.groups[cols]
    sa, sda = na[np.ix_(sel, cols)], da[np.ix_(sel, cols)]
    sb, sdb = nb[np.ix_(sel, cols)], db[np.ix_(sel, cols)]
    boot = _boot(sa, sda, sb, sdb, g, a, n_resamples, seed)
    if res.method == "percentile":
        res.low, res.high = percentile_interval(boot, level)
    else:
        est = (pooled_stat(sa.sum(0), sda.sum(0), g, a.pool) - pooled_stat(sb.sum(0), sdb.sum(0), g, a.pool)) * a.scale
        jack = (jackknife(sa, sda, g, a.pool) - jackknife(sb, sdb, g, a.pool)) * a.scale
        res.low, res.high = bca_interval(boot, float(est), jack, level)
    res.p_value, res.exact, res.n_discordant = permutation_pvalue(sa, sda, sb, sdb, g, a.pool, a.scale,
                                                                  n_resamples=n_resamples, seed=seed)
    return res


def _boot(sa, sda, sb, sdb, g, a: UnitTable, n_resamples: int, seed: int) -> np.ndarray:
    """Bootstrap A - B over the selected clusters' sums (the same clusters drawn for both runs)."""
    w = cluster_counts(np.random.default_rng(seed), len(sa), n_resamples)
    return (pooled_stat(w @ sa, w @ sda, g, a.pool) - pooled_stat(w @ sb, w @ sdb, g, a.pool)) * a.scale


def paired_stats(ta: UnitTable, tb: UnitTable, category: str | None = None, *, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0, paired: tuple[UnitTable, UnitTable] | None = None) -> np.ndarray | None:
    """The (n_resamples,) bootstrap values of A - B drawn exactly as :func:`paired_difference` draws its CI
    (on the units both scored); None where a side has no value or fewer than 2 clusters count."""
    a, b = paired or pair_tables(ta, tb)
    cat = category or a.headline
    cols = a.categories[cat]
    if a.value(cat) is None or b.value(cat) is None:
        return None
    _ids, na, da = a.cluster_sums()
    _ids, nb, db = b.cluster_sums()
    sel = category_clusters(da, cols)
    if len(sel) < 2:
        return None
    ix = np.ix_(sel, cols)
    return _boot(na[ix], da[ix], nb[ix], db[ix], a.groups[cols], a, n_resamples, seed)


def paired_all(ta: UnitTable, tb: UnitTable, categories: list[str] | None = None, *,
               n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95,
               method: str = DEFAULT_METHOD, min_clusters: int = MIN_CLUSTERS) -> list[PairedResult]:
    """:func:`paired_difference` for each of ``categories`` (default: all of A's, table order)."""
    pair = pair_tables(ta, tb)
    return [paired_difference(ta, tb, c, n_resamples=n_resamples, seed=seed, level=level, paired=pair,
                              method=method, min_clusters=min_clusters)
            for c in (categories or list(pair[0].categories))]
