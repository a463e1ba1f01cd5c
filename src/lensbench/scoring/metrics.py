"""Statistics shared by reports (scipy.stats underneath)."""

from __future__ import annotations

__all__ = ["binomial_threshold"]


def binomial_threshold(n: int, p: float, alpha: float = 0.05) -> float:
    """Smallest accuracy (in %) that is significantly above chance ``p`` with ``n`` trials.

    One-sided exact binomial test: the least ``k`` with ``P(X >= k) < alpha`` for
    ``X ~ Binomial(n, p)``, returned as ``100 * k / n``. This is how the "Statistically
    Significant" row of RGB-Th-Bench Table 3 is derived (p < 0.05), computed from the run's
    counts rather than hard-coded. ``n`` >= 1, ``0 < p < 1``; raises ValueError otherwise.
    """
    from scipy import stats  # imported here: scipy.stats costs ~0.8 s at CLI start-up

    if n < 1 or not 0 < p < 1:
        raise ValueError(f"binomial_threshold needs n >= 1 and 0 < p < 1, got n={n}, p={p}")
    k = int(stats.binom.isf(alpha, n, p))  # P(X > k) <= alpha
    while k > 0 and stats.binom.sf(k - 1, n, p) < alpha:
        k -= 1
    while stats.binom.sf(k - 1, n, p) >= alpha:
        k += 1
    return 100.0 * k / n
