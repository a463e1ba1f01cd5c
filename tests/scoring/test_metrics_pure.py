"""scoring.metrics without scipy: the binomial threshold against exact rational tail sums, and
PLCC/SRCC against hand-computed values and (when installed) scipy.stats."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from lensbench.scoring.metrics import binomial_threshold, correlation


def _exact_threshold(n: int, p: Fraction, alpha: Fraction = Fraction(1, 20)) -> float:
    """Least k with P(X >= k) < alpha, by exact rational arithmetic (independent of the code). The tail is summed
    from k = n down (it only grows as k falls), each term once: O(n) fractions instead of O(n^2)."""
    least, tail = n + 1, Fraction(0)  # P(X >= n + 1) = 0
    for k in range(n, -1, -1):
        tail += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if tail >= alpha:
            break
        least = k
    return 100.0 * least / n


@pytest.mark.parametrize("n,p", [(1, Fraction(1, 2)), (10, Fraction(1, 2)), (58, Fraction(1, 2)),
                                 (203, Fraction(1, 16)), (406, Fraction(1, 16)), (812, Fraction(1, 2)),
                                 (97, Fraction(1, 4))])
def test_binomial_threshold_matches_exact_tail(n, p):
    assert binomial_threshold(n, float(p)) == _exact_threshold(n, p)


def test_binomial_threshold_known_values():
    # RGB-Th-Bench: 406 four-question units at chance 1/16 -> 35 units (8.62 %), 1624 questions at 1/2 -> 7.33 % ...
    assert binomial_threshold(406, 1 / 16) == pytest.approx(100 * 35 / 406)
    # ... and 10 coin flips: P(X >= 9) = 11/1024 < 0.05 <= P(X >= 8) = 56/1024
    assert binomial_threshold(10, 0.5) == 90.0
    with pytest.raises(ValueError):
        binomial_threshold(0, 0.5)
    with pytest.raises(ValueError):
        binomial_threshold(5, 1.0)


def test_correlation_hand_values():
    c = correlation([1, 2, 3, 4], [2, 4, 6, 8])
    assert c["PLCC"] == pytest.approx(1.0) and c["SRCC"] == pytest.approx(1.0) and c["n"] == 4
    # ties: x ranks 1, 2.5, 2.5, 4; y ranks 1..4 -> Pearson of ranks = 4.5 / sqrt(4.5 * 5)
    c = correlation([1, 2, 2, 3], [1, 2, 3, 4])
    assert c["SRCC"] == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    assert correlation([1, 1, 1], [1, 2, 3]) == {"PLCC": None, "SRCC": None, "n": 3}
    assert correlation([1, 2], [1, 2])["PLCC"] is None


def test_correlation_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(7)
    for _ in range(100):
        n = rng.randint(3, 40)
        x = [rng.choice([1, 2, 3, 4.5, 5]) for _ in range(n)]
        y = [round(rng.random(), 1) for _ in range(n)]
        c = correlation(x, y)
        if c["PLCC"] is None:
            continue
        assert c["PLCC"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
        assert c["SRCC"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
