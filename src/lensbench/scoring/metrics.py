"""Statistics shared by every benchmark: means over present values, correlations, binomial thresholds.

Pure Python (no scipy: it is the optional ``stats`` extra, and these are on the core report path).
Each function states the scipy call it matches; tests/scoring/test_metrics_pure.py checks them
against scipy when it is installed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["mean", "correlation", "pearson", "binomial_threshold"]


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean of the values that are not None; None when there are none (never 0)."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def correlation(x: Sequence[float], y: Sequence[float]) -> dict[str, float | None]:
    """``{"PLCC": Pearson r, "SRCC": Spearman rho, "n": n}`` of paired values.

    Matches ``scipy.stats.pearsonr(x, y)[0]`` and ``scipy.stats.spearmanr(x, y)[0]`` (Pearson r
    of the average ranks, ties sharing their mean rank) to ~1e-12. Both None when n < 3 or either
    side is constant (undefined). ``x`` and ``y`` have equal length.
    """
    n = len(x)
    if n < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return {"PLCC": None, "SRCC": None, "n": n}
    return {"PLCC": pearson(x, y), "SRCC": pearson(_ranks(x), _ranks(y)), "n": n}


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson r of two non-constant sequences of equal length (n >= 2), clipped to [-1, 1]
    (``scipy.stats.pearsonr(x, y)[0]`` to ~1e-12)."""
    mx, my = math.fsum(x) / len(x), math.fsum(y) / len(y)
    dx, dy = [v - mx for v in x], [v - my for v in y]
    r = math.fsum(a * b for a, b in zip(dx, dy)) / math.sqrt(math.fsum(a * a for a in dx) * math.fsum(b * b for b in dy))
    return max(-1.0, min(1.0, r))


def _ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span (``scipy.stats.rankdata``, "average")."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def binomial_threshold(n: int, p: float, alpha: float = 0.05) -> float:
    """Smallest accuracy (in %) that is significantly above chance ``p`` with ``n`` trials.

    One-sided exact binomial test: the least ``k`` with ``P(X >= k) < alpha`` for
    ``X ~ Binomial(n, p)``, returned as ``100 * k / n``. This is how the "Statistically
    Significant" row of RGB-Th-Bench Table 3 is derived (p < 0.05), computed from the run's
    counts rather than hard-coded. ``n`` >= 1, ``0 < p < 1``; raises ValueError otherwise.
    The tail ``P(X >= k)`` is summed from ``k = n`` down in log-space terms (``math.lgamma``),
    with the same float precision as ``scipy.stats.binom.sf``.
    """
    if n < 1 or not 0 < p < 1:
        raise ValueError(f"binomial_threshold needs n >= 1 and 0 < p < 1, got n={n}, p={p}")
    lp, lq, lnf = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    tail = 0.0  # P(X >= k), summed from the smallest terms up
    for k in range(n, -1, -1):
        tail += math.exp(lnf - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq)
        if tail >= alpha:  # P(X >= k) >= alpha: k is not significant, k + 1 is the least that is
            return 100.0 * (k + 1) / n
    return 0.0  # unreachable: P(X >= 0) = 1 >= alpha for alpha <= 1
