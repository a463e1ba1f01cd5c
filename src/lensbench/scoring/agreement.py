"""Does a run agree with a published value? A test of ``run = paper`` that counts both estimates' noise, and
an equivalence test (two one-sided tests, TOST) at a stated margin.

docs/protocol.md, general rules (reproduction verdicts). Under H0 "same model, same items", the paper's printed value is
itself an estimate over the same items with the same design (RGB-Th-Bench: 29 scenes; IF-Bench: images;
IV-Bench: videos; GOBench: images; GroundingME: samples), so the difference ``d = run - paper`` has twice
the run's sampling variance. Two methods, chosen per cell by :func:`agreement`:

* **cluster** (the default): the run's variance from its clusters by the delete-one-cluster jackknife
  (``var = (K-1)/K sum (theta_(i) - theta_bar)^2``, Efron & Stein 1981; deterministic, no resampling
  noise in a verdict), ``se_d = sqrt(2 var)``, Student t with ``K - 1`` degrees of freedom: two-sided p
  of ``d = 0``, and the ``1 - 2 alpha`` interval ``d +- t_{1-alpha, K-1} se_d`` for TOST.
  ``benchmarks/reproduce_verdicts.py`` measures its error rates on the real RGB-Th-Bench shape.
* **exact** (a proportion of independent 0/1 units with few successes or failures: ``min(k, n - k)`` or
  the paper's ``min(k', n - k')`` below :data:`SMALL_COUNT`, which includes 0% and 100%, where the cluster
  variance is zero): the run's ``k / n`` against the paper's ``k' = round(p n)`` of the same ``n``, p from
  Boschloo's exact unconditional test (``scipy.stats.boschloo_exact``; Fisher's exact test,
  ``scipy.stats.fisher_exact``, above :data:`BOSCHLOO_MAX_N` units, where Boschloo's grid takes seconds),
  TOST interval Newcombe's hybrid score interval for a difference of proportions (Newcombe 1998, method
  10, from Wilson intervals): never zero-width, right at 0/n. When the units share clusters and the
  cluster variance is positive, the more conservative of both methods is kept (larger p, wider interval).

Equivalence (TOST, Schuirmann 1987): ``consistent`` iff the ``1 - 2 alpha`` interval of ``d`` lies inside
``[-margin, +margin]``; the size of that test is at most alpha whenever ``|true d| >= margin``.
Margins are in points of a percentage (:data:`MARGIN_POINTS` by default); a table on another scale (a
count over n records) gets ``margin * scale / 100`` (the same share of its units).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lensbench.core.extras import require
from lensbench.scoring.bootstrap import MIN_CLUSTERS, UnitTable, category_clusters, pooled_stat

__all__ = ["Agreement", "agreement", "cluster_agreement", "count_agreement", "newcombe_interval",
           "jackknife_se", "unit_counts", "MARGIN_POINTS", "MIN_CLUSTERS", "ALPHA", "SMALL_COUNT",
           "BOSCHLOO_MAX_N"]

#: default equivalence margin, points of a percentage (``lensbench reproduce --margin``; numpy-free home)
from lensbench.scoring.defaults import MARGIN_POINTS  # noqa: E402
#: level of every test (two-sided difference test; each one-sided test of TOST)
ALPHA = 0.05
#: below this many successes or failures (run or paper) a proportion of units is tested exactly
SMALL_COUNT = 10
#: above this many units Fisher's exact test replaces Boschloo's (whose run time grows with n^2)
BOSCHLOO_MAX_N = 300


def _stats():
    return require("scipy.stats", "stats", "the agreement tests of 'lensbench reproduce'")


@dataclass(frozen=True)
class Agreement:
    """One cell's test. ``diff`` = run - paper (metric units); ``low`` / ``high``: its ``1 - 2 alpha``
    interval (the TOST interval); ``p``: two-sided p of ``diff = 0`` (before any multiplicity correction);
    ``margin`` (metric units); ``equivalent``: the interval lies inside ``[-margin, margin]``; ``method`` in
    words; ``n``: clusters; ``se``: standard error of the difference (None for the exact method)."""

    diff: float
    low: float
    high: float
    p: float
    margin: float
    equivalent: bool
    method: str
    n: int
    se: float | None = None


def jackknife_se(table: UnitTable, category: str) -> tuple[float, int]:
    """``(se, K)``: the delete-one-cluster jackknife standard error of ``table``'s ``category`` (table scale)
    over the K clusters counting in it. ``se`` is NaN with fewer than 2 clusters. Raises KeyError for an
    unknown category."""
    cols = table.categories[category]
    _ids, n_cl, d_cl = table.cluster_sums()
    sel = category_clusters(d_cl, cols)
    k = len(sel)
    if k < 2:
        return math.nan, k
    n, d = n_cl[np.ix_(sel, cols)], d_cl[np.ix_(sel, cols)]
    loo = pooled_stat(n.sum(axis=0) - n, d.sum(axis=0) - d, table.groups[cols], table.pool) * table.scale
    loo = loo[~np.isnan(loo)]
    if len(loo) < 2:
        return math.nan, k
    return float(math.sqrt((len(loo) - 1) / len(loo) * float(((loo - loo.mean()) ** 2).sum()))), k


def unit_counts(table: UnitTable, category: str) -> tuple[int, int] | None:
    """``(k, n)`` when ``category`` of ``table`` is a proportion of 0/1 units (each unit counts once, with a
    0 or 1 numerator) that pools as ``k / n`` (micro pool, one column, or every unit alike), else None."""
    cols = table.categories[category]
    den, num = table.den[:, cols], table.num[:, cols]
    rows = den.sum(axis=1) > 0
    den, num = den[rows], num[rows]
    if not len(den) or not np.all(np.isin(den, (0.0, 1.0))) or not np.all(den.sum(axis=1) == 1):
        return None
    if not np.all(np.isin(num[den > 0], (0.0, 1.0))):
        return None
    k, n = int(num.sum()), len(den)
    if table.pool == "micro" or len(cols) == 1 or k in (0, n):
        return k, n
    return None


def cluster_agreement(diff: float, se_run: float, k: int, margin: float, alpha: float = ALPHA) -> Agreement:
    """The cluster method (module docstring) for ``diff`` = run - paper with the run's standard error
    ``se_run`` over ``k >= 2`` clusters. Raises ValueError for ``k < 2`` or a negative / NaN ``se_run``."""
    if k < 2 or not se_run >= 0:
        raise ValueError(f"the cluster test needs >= 2 clusters and a standard error, got {k} and {se_run}")
    st = _stats()
    se = math.sqrt(2.0) * se_run
    df = k - 1
    if se == 0:
        p = 1.0 if diff == 0 else 0.0
        lo = hi = diff
    else:
        p = float(2 * st.t.sf(abs(diff) / se, df))
        half = float(st.t.ppf(1 - alpha, df)) * se
        lo, hi = diff - half, diff + half
    return Agreement(diff, lo, hi, min(1.0, p), margin, -margin <= lo and hi <= margin,
                     f"t test of the difference, both estimates' cluster variance (2 x jackknife over {k} "
                     f"clusters, {df} df)", k, se)


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def newcombe_interval(k1: int, n1: int, k2: int, n2: int, level: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1998, method 10) for ``k1/n1 - k2/n2`` (fractions), two-sided at
    ``level``. Raises ValueError for ``n1`` or ``n2`` < 1 or a count outside ``[0, n]``."""
    if n1 < 1 or n2 < 1 or not (0 <= k1 <= n1 and 0 <= k2 <= n2):
        raise ValueError(f"counts {k1}/{n1}, {k2}/{n2}")
    z = float(_stats().norm.ppf(0.5 + level / 2))
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, z)
    l2, u2 = _wilson(k2, n2, z)
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def count_agreement(k: int, n: int, published: float, scale: float, margin: float, alpha: float = ALPHA,
                    clusters: int = 0) -> Agreement:
    """The exact method (module docstring): the run's ``k`` of ``n`` units against the paper's value
    ``published`` (table scale: ``scale * k' / n``), margin in table units. ``clusters``: clusters behind the
    cell (recorded). Raises ValueError for ``n < 1``."""
    if n < 1:
        raise ValueError("no units")
    st = _stats()
    kp = min(n, max(0, round(published / scale * n)))
    table = [[k, n - k], [kp, n - kp]]
    if k == kp:
        p, test = 1.0, "identical counts"
    elif n <= BOSCHLOO_MAX_N:
        p, test = float(st.boschloo_exact(table, alternative="two-sided").pvalue), "Boschloo's exact test"
    else:
        p, test = float(st.fisher_exact(table).pvalue), "Fisher's exact test"
    lo, hi = newcombe_interval(k, n, kp, n, 1 - 2 * alpha)
    lo, hi = lo * scale, hi * scale
    return Agreement(scale * k / n - published, lo, hi, min(1.0, p), margin, -margin <= lo and hi <= margin,
                     f"{test} of {k}/{n} vs the paper's {kp}/{n} units; Newcombe's hybrid score interval",
                     clusters or n, None)


def agreement(table: UnitTable, category: str, published: float, *, margin_points: float = MARGIN_POINTS,
              alpha: float = ALPHA) -> Agreement | str:
    """The test of ``table``'s ``category`` against ``published`` (table scale): the exact method for a small
    or boundary proportion of units, else the cluster method (module docstring); the margin is
    ``margin_points * scale / 100`` table units. Returns a reason (str) instead when no test applies:
    "too few clusters (n)" below :data:`MIN_CLUSTERS`, or no value. Raises KeyError for an unknown
    category, MissingExtraError without scipy."""
    value = table.value(category)
    se, k = jackknife_se(table, category)
    if value is None:
        return "the run computes no value here (no scored units in this category)"
    if k < MIN_CLUSTERS:
        return f"too few clusters ({k})"
    margin = margin_points * table.scale / 100.0
    diff = value - published
    counts = unit_counts(table, category)
    if counts is not None:
        kr, n = counts
        kp = min(n, max(0, round(published / table.scale * n)))
        if min(kr, n - kr, kp, n - kp) < SMALL_COUNT:
            exact = count_agreement(kr, n, published, table.scale, margin, alpha, k)
            if n == k or not se > 0:  # independent units, or no cluster variance to add
                return exact
            clus = cluster_agreement(diff, se, k, margin, alpha)
            lo, hi = min(exact.low, clus.low), max(exact.high, clus.high)
            return Agreement(diff, lo, hi, max(exact.p, clus.p), margin, -margin <= lo and hi <= margin,
                             f"the more conservative of {exact.method} and the {clus.method}", k, clus.se)
    if math.isnan(se):
        return f"too few clusters ({k})"
    return cluster_agreement(diff, se, k, margin, alpha)
