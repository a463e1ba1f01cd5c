"""The statistics of a reproduction beyond CIs and paired tests: a p-value for "equals the published
value", within-run contrasts, Holm's correction and a trend test.

* :func:`inversion_p`: two-sided bootstrap p of ``H0: metric = v`` from the same resamples as the 95%
  CI (percentile-interval inversion, as ``scipy.stats.bootstrap`` intervals are inverted): ``p = min(1,
  2 min(P*(T <= v), P*(T >= v)))`` with the ``+1`` correction of Davison & Hinkley (1997, eq. 4.11), so a
  published value outside the 95% percentile interval has p < 0.05 up to resampling noise, and p >= 1 /
  (B + 1).
* :func:`contrast_stats`: a within-run contrast (category A minus category B of one metric table, e.g.
  RGB-Txt minus RGB-Th-Txt), both sides from the same resampled clusters.
* :func:`holm`: Holm's step-down adjusted p-values (Holm 1979). Ten lines written here rather than a
  dependency: ``statsmodels.stats.multitest.multipletests`` is the library implementation but pulls
  statsmodels, pandas and patsy (~60 MB) into an install that otherwise needs numpy only, and scipy has
  no Holm (``scipy.stats.false_discovery_control`` is Benjamini-Hochberg/Yekutieli).
  tests/report/test_reproduce_stats.py checks it against hand-computed values and an enumeration
  definition.
* :func:`trend`: Page's L test (``scipy.stats.page_trend_test``) over clusters x ordered settings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lensbench.core.extras import require
from lensbench.scoring.bootstrap import UnitTable, category_clusters, cluster_counts, pooled_stat

__all__ = ["inversion_p", "contrast_stats", "with_category", "holm", "trend", "cluster_rates"]


def inversion_p(stats: np.ndarray, value: float) -> float:
    """Two-sided bootstrap p of ``H0: metric == value`` from resampled values ``stats`` (module docstring)."""
    b = len(stats)
    lo = (np.count_nonzero(stats <= value) + 1) / (b + 1)
    hi = (np.count_nonzero(stats >= value) + 1) / (b + 1)
    return float(min(1.0, 2 * min(lo, hi)))


def with_category(table: UnitTable, name: str, categories: Sequence[str]) -> UnitTable:
    """``table`` with one more category ``name`` pooling the columns of ``categories`` (as the table pools:
    micro over units, or macro within then across column groups). Raises KeyError for an unknown category."""
    cols = sorted({c for cat in categories for c in table.categories[cat]})
    return UnitTable(table.metric, table.units, table.columns, table.num, table.den, table.groups, table.clusters,
                     table.cluster, table.pool, {**table.categories, name: cols}, table.scale, table.setting)


def contrast_stats(table: UnitTable, cat_a: str, cat_b: str, *, n_resamples: int,
                   seed: int) -> tuple[float | None, np.ndarray | None, int]:
    """``(A - B, resampled A - B, clusters)`` for two categories of one table: the clusters counting in
    either are drawn with replacement (:func:`lensbench.scoring.bootstrap.cluster_counts`, seeded) and
    both categories are pooled from the same draw. Resamples are None with < 2 clusters or no value."""
    va, vb = table.value(cat_a), table.value(cat_b)
    ca, cb = table.categories[cat_a], table.categories[cat_b]
    _ids, n_cl, d_cl = table.cluster_sums()
    sel = category_clusters(d_cl, sorted(set(ca) | set(cb)))
    if va is None or vb is None:
        return None, None, len(sel)
    if len(sel) < 2:
        return va - vb, None, len(sel)
    w = cluster_counts(np.random.default_rng(seed), len(sel), n_resamples)
    n, d = n_cl[sel], d_cl[sel]
    sa = pooled_stat(w @ n[:, ca], w @ d[:, ca], table.groups[ca], table.pool)
    sb = pooled_stat(w @ n[:, cb], w @ d[:, cb], table.groups[cb], table.pool)
    return va - vb, (sa - sb) * table.scale, len(sel)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order: sorted ascending, the i-th (0-based) of m
    is ``max over j <= i of min(1, (m - j) p_(j))``. Family-wise error <= alpha when adjusted p < alpha."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))
        out[i] = running
    return out


def cluster_rates(tables: Sequence[UnitTable], category: str) -> tuple[list[str], np.ndarray]:
    """``(clusters, rates)``: the clusters counting in ``category`` in every table, and a (K, T) array of
    each cluster's pooled metric (table scale) in each table, tables in the given order."""
    per: list[dict[str, float]] = []
    for t in tables:
        ids, n, d = t.cluster_sums()
        cols = t.categories[category]
        vals = pooled_stat(n[:, cols], d[:, cols], t.groups[cols], t.pool) * t.scale
        per.append({c: float(v) for c, v in zip(ids, vals) if not np.isnan(v)})
    shared = [c for c in per[0] if all(c in p for p in per[1:])] if per else []
    return shared, np.array([[p[c] for p in per] for c in shared], dtype=float).reshape(len(shared), len(per))


def trend(rates: np.ndarray, increasing: bool = True) -> tuple[float, float, str]:
    """Page's L test of a monotone trend across the columns of ``rates`` (K clusters x T >= 3 ordered
    settings; ``scipy.stats.page_trend_test``, one-sided). ``increasing=False`` tests a decrease (columns
    reversed). Returns ``(L, p, method)``; ties within a cluster (common with few items per cluster) get
    average ranks and the normal approximation (``method="asymptotic"``). Raises ValueError with fewer
    than 3 settings or 2 clusters; MissingExtraError without scipy (``lensbench[stats]``)."""
    if rates.ndim != 2 or rates.shape[1] < 3 or rates.shape[0] < 2:
        raise ValueError(f"a trend test needs >= 3 settings and >= 2 clusters, got {rates.shape}")
    stats = require("scipy.stats", "stats", "the trend test of 'lensbench reproduce'")
    data = rates if increasing else rates[:, ::-1]
    ties = any(len(set(row)) < len(row) for row in data.tolist())
    res = stats.page_trend_test(data, method="asymptotic" if ties else "auto")
    return float(res.statistic), float(res.pvalue), str(res.method)
