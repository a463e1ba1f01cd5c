"""Bootstrap interval rules from resampled statistics: percentile and BCa (bias-corrected and accelerated).

Both take the ``(B,)`` resampled values of a statistic (the cluster bootstrap of
:mod:`lensbench.scoring.bootstrap`); BCa also takes the point estimate and the ``(K,)`` leave-one-cluster-out
(jackknife) values. Formulas: Efron & Tibshirani, *An Introduction to the Bootstrap* (1993), Sec. 14.3
(eq. 14.10-14.15), as ``scipy.stats.bootstrap(method="BCa")`` computes them (bias ``z0`` from the share of
resamples below the estimate, ties counted half; acceleration from the jackknife's skewness; the interval
is the linear quantiles of the resamples at the adjusted levels). tests/scoring/test_bootstrap.py checks it
equal to scipy on the same draw. Why BCa: benchmarks/ci_coverage.py measures its coverage against the
percentile interval's on RGB-Th-Bench's shape (README "How far to trust a CI").

The normal distribution comes from :class:`statistics.NormalDist` (standard library): no scipy import
on the report path (see :mod:`lensbench.scoring.bootstrap`).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

__all__ = ["percentile_interval", "bca_interval", "acceleration", "bias_z0"]

_N = NormalDist()
_TIE = 1e-9


def percentile_interval(stats: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of bootstrap statistics ``stats`` (B,): their ``(1 - level) / 2`` and
    ``(1 + level) / 2`` linear quantiles (as ``scipy.stats.bootstrap(method="percentile")``)."""
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(stats, [a, 1.0 - a])
    return float(lo), float(hi)


def bias_z0(stats: np.ndarray, estimate: float) -> float:
    """The bias correction ``z0 = Phi^-1(share of resamples below the estimate)``, ties counted half (scipy's
    rule). A resample within ``1e-9`` of the estimate, relative to the largest ``|value|``, is a tie: counts
    make many resamples equal the estimate up to rounding (a difference of two runs near 0 most of all), and
    scipy counts those by their last bit. The share is kept within ``[1/(2B), 1 - 1/(2B)]`` so that a skewed
    but finite bootstrap never gives an infinite ``z0``."""
    b = len(stats)
    tol = _TIE * max(abs(estimate), float(np.max(np.abs(stats))))
    share = (np.count_nonzero(stats < estimate - tol) + np.count_nonzero(stats <= estimate + tol)) / (2.0 * b)
    share = min(max(share, 0.5 / b), 1.0 - 0.5 / b)
    return _N.inv_cdf(share)


def acceleration(jack: np.ndarray) -> float:
    """The acceleration ``a = sum((m - t_i)^3) / (6 * sum((m - t_i)^2)^1.5)`` of the jackknife values ``jack``
    (K,), ``m`` their mean; 0 when they are all equal."""
    dev = float(np.mean(jack)) - np.asarray(jack, float)
    den = 6.0 * float((dev ** 2).sum()) ** 1.5
    return float((dev ** 3).sum()) / den if den > 0 else 0.0


def bca_interval(stats: np.ndarray, estimate: float, jack: np.ndarray, level: float) -> tuple[float, float]:
    """The BCa interval (module docstring) of bootstrap values ``stats`` (B,) around ``estimate``, with the
    leave-one-cluster-out values ``jack`` (K,). ``level`` in (0, 1). When every resample equals the estimate
    the interval is that point; an adjusted level outside (0, 1) is clipped to the extreme resample."""
    if not np.isfinite(estimate) or float(np.ptp(stats)) == 0.0:
        return percentile_interval(stats, level)
    z0, acc = bias_z0(stats, estimate), acceleration(jack)
    alphas = []
    for q in ((1.0 - level) / 2.0, (1.0 + level) / 2.0):
        z = z0 + _N.inv_cdf(q)
        denom = 1.0 - acc * z
        alphas.append(_N.cdf(z0 + z / denom) if denom > 0 else (0.0 if q < 0.5 else 1.0))
    lo, hi = np.quantile(stats, [min(max(a, 0.0), 1.0) for a in alphas])
    return float(lo), float(hi)

