"""Statistics shared by every benchmark: means over present values, correlations, binomial thresholds.

scipy.stats is imported inside the functions that need it (it costs ~0.8 s at start-up), so a
run that never reports pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["mean", "correlation", "binomial_threshold"]


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean of the values that are not None; None when there are none (never 0)."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def correlation(x: Sequence[float], y: Sequence[float]) -> dict[str, float | None]:
    """``{"PLCC": Pearson r, "SRCC": Spearman rho, "n": n}`` of paired values (scipy.stats).

    Both None when n < 3 or either side is constant (undefined). ``x`` and ``y`` have equal length.
    """
    from scipy import stats

    n = len(x)
    if n < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return {"PLCC": None, "SRCC": None, "n": n}
    return {"PLCC": float(stats.pearsonr(x, y)[0]), "SRCC": float(stats.spearmanr(x, y)[0]), "n": n}


def binomial_threshold(n: int, p: float, alpha: float = 0.05) -> float:
    """Smallest accuracy (in %) that is significantly above chance ``p`` with ``n`` trials.

    One-sided exact binomial test: the least ``k`` with ``P(X >= k) < alpha`` for
    ``X ~ Binomial(n, p)``, returned as ``100 * k / n``. This is how the "Statistically
    Significant" row of RGB-Th-Bench Table 3 is derived (p < 0.05), computed from the run's
    counts rather than hard-coded. ``n`` >= 1, ``0 < p < 1``; raises ValueError otherwise.
    """
    from scipy import stats

    if n < 1 or not 0 < p < 1:
        raise ValueError(f"binomial_threshold needs n >= 1 and 0 < p < 1, got n={n}, p={p}")
    k = int(stats.binom.isf(alpha, n, p))  # P(X > k) <= alpha
    while k > 0 and stats.binom.sf(k - 1, n, p) < alpha:
        k -= 1
    while stats.binom.sf(k - 1, n, p) >= alpha:
        k += 1
    return 100.0 * k / n
