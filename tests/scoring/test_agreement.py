"""scoring/agreement.py: the test of ``run = paper`` that counts both estimates' noise, exact at small counts
and at 0% / 100%, and the equivalence test (TOST) behind ``lensbench reproduce``'s verdicts (issue 29).

Expected figures: Newcombe (1998, Stat. Med. 17:873, Table II, method 10) for the hybrid score interval; the
jackknife variance of a mean of equal-size clusters is s^2 / K of the cluster means (an identity); t and
exact p-values from scipy on the stated inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from lensbench.scoring.agreement import (MIN_CLUSTERS, agreement, cluster_agreement, count_agreement, jackknife_se,
                                         newcombe_interval, unit_counts)
from lensbench.scoring.bootstrap import UnitTable


@pytest.mark.parametrize(("k1", "n1", "k2", "n2", "low", "high"), [
    (56, 70, 48, 80, 0.0524, 0.3339), (9, 10, 3, 10, 0.1705, 0.8090), (6, 7, 2, 7, 0.0582, 0.8062),
    (5, 56, 0, 29, -0.0381, 0.1926), (0, 10, 0, 20, -0.1611, 0.2775), (10, 10, 0, 20, 0.6791, 1.0000)])
def test_newcombe_interval_matches_the_published_table(k1, n1, k2, n2, low, high):
    lo, hi = newcombe_interval(k1, n1, k2, n2, 0.95)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


def _table(values: list[list[float]], metric: str = "acc", pool: str = "micro") -> UnitTable:
    """One 0/1 unit per item; ``values[c]`` = the items of cluster c (one column)."""
    items = [(f"c{c}", v) for c, vs in enumerate(values) for v in vs]
    return UnitTable(metric, [str(i) for i in range(len(items))], ["all"], [[v] for _c, v in items],
                     [[1.0]] * len(items), [0], [c for c, _v in items], "scene", pool)


def test_jackknife_of_a_mean_of_equal_clusters_is_the_standard_error_of_the_cluster_means():
    rng = np.random.default_rng(4)
    values = (rng.random((29, 8)) < rng.uniform(0.3, 0.9, (29, 1))).astype(float).tolist()
    se, k = jackknife_se(_table(values), "all")
    means = np.mean(values, axis=1) * 100
    assert k == 29 and se == pytest.approx(np.std(means, ddof=1) / math.sqrt(29))


def test_cluster_test_counts_both_estimates():
    r = cluster_agreement(3.0, 1.5, 29, margin=2.0)
    sd = math.sqrt(2) * 1.5  # the paper's value has the run's variance too
    assert r.p == pytest.approx(2 * st.t.sf(3.0 / sd, 28))
    assert (r.low, r.high) == (pytest.approx(3 - st.t.ppf(0.95, 28) * sd), pytest.approx(3 + st.t.ppf(0.95, 28) * sd))
    assert not r.equivalent and r.se == pytest.approx(sd)
    near = cluster_agreement(0.2, 0.3, 29, margin=2.0)  # 90% interval +-0.72: inside +-2
    assert near.equivalent and near.p > 0.5
    with pytest.raises(ValueError):
        cluster_agreement(1.0, 1.0, 1, margin=2.0)


def test_zero_of_six_is_not_a_difference_from_thirty_percent():
    # issue 29: 0/6 against a published 30.5% was "differs, p < 0.001" (a zero-width bootstrap CI)
    r = count_agreement(0, 6, 30.5, 100.0, 2.0)
    want = st.boschloo_exact([[0, 6], [2, 4]]).pvalue  # the paper's 30.5% of 6 = 2 units
    assert r.p == pytest.approx(want) and r.p > 0.05
    assert r.high - r.low > 30 and r.low < 0 < r.high  # never zero-width; holds no difference
    assert "Boschloo" in r.method


def test_groundingme_rejection_zero_of_201_against_half_a_percent():
    r = count_agreement(0, 201, 0.5, 100.0, 2.0)  # the paper's 0.5% of 201 = 1 sample
    assert r.p == pytest.approx(st.boschloo_exact([[0, 201], [1, 200]]).pvalue) and r.p > 0.5
    lo, hi = newcombe_interval(0, 201, 1, 201, 0.90)
    assert (r.low, r.high) == (pytest.approx(100 * lo), pytest.approx(100 * hi)) and r.low < 0 < r.high


def test_large_counts_use_fisher():
    r = count_agreement(7, 1624, 712, 1624.0, 32.48)  # a count table: scale = the records scored
    assert r.p == pytest.approx(st.fisher_exact([[7, 1617], [712, 912]])[1]) and "Fisher" in r.method
    assert r.diff == pytest.approx(7 - 712)


def test_agreement_picks_the_method_and_refuses_few_clusters():
    few = _table([[1.0, 0.0, 1.0]] * (MIN_CLUSTERS - 1))
    assert agreement(few, "all", 50.0) == f"too few clusters ({MIN_CLUSTERS - 1})"
    rng = np.random.default_rng(1)
    mid = _table((rng.random((29, 4)) < 0.7).astype(float).tolist())
    r = agreement(mid, "all", 70.0)
    assert "t test" in r.method and r.n == 29
    se, _k = jackknife_se(mid, "all")
    assert r.se == pytest.approx(math.sqrt(2) * se)
    zero = _table([[0.0] * 4] * 29)  # 0 of 116, no cluster variance at all: exact, never zero-width
    z = agreement(zero, "all", 30.5)
    assert "Boschloo" in z.method and z.high > z.low and z.p < 1e-6  # 0/116 vs 35/116
    one = agreement(zero, "all", 0.5)  # the paper's 0.5% of 116 = 1 unit
    assert one.p == pytest.approx(st.boschloo_exact([[0, 116], [1, 115]]).pvalue) and one.p > 0.5


def test_clustered_small_counts_keep_the_more_conservative_method():
    values = [[0.0] * 4 for _ in range(29)]
    values[0] = [1.0, 1.0, 1.0, 1.0]  # 4 of 116, all in one scene: the clusters vary more than binomially
    t = _table(values)
    r = agreement(t, "all", 1.0)
    se, k = jackknife_se(t, "all")
    clus = cluster_agreement(t.value("all") - 1.0, se, k, 2.0)
    exact = count_agreement(4, 116, 1.0, 100.0, 2.0)
    assert r.p == pytest.approx(max(clus.p, exact.p))
    assert (r.low, r.high) == (pytest.approx(min(clus.low, exact.low)), pytest.approx(max(clus.high, exact.high)))


def test_unit_counts_only_for_proportions_of_units():
    assert unit_counts(_table([[1.0, 0.0]] * 3), "all") == (3, 6)
    frac = UnitTable("sps", ["a", "b"], ["x"], [[0.5], [1.0]], [[1.0], [1.0]], [0])
    assert unit_counts(frac, "all") is None
    macro = UnitTable("m", ["a", "b", "c"], ["x", "y"], [[1, 0], [0, 0], [0, 1]], [[1, 0], [1, 0], [0, 1]], [0, 0],
                      pool="macro")
    assert unit_counts(macro, "all") is None  # 1/2 and 1/1 averaged is not 2/3
    none = UnitTable("m", ["a", "b", "c"], ["x", "y"], [[0, 0], [0, 0], [0, 0]], [[1, 0], [1, 0], [0, 1]], [0, 0],
                     pool="macro")
    assert unit_counts(none, "all") == (0, 3)  # at 0% macro and micro agree


def test_margin_of_a_count_table_is_the_same_share_of_its_units():
    rng = np.random.default_rng(2)
    vals = (rng.random((29, 20)) < 0.5).astype(float).tolist()
    t = _table(vals)
    t.scale = 580.0  # a count over 580 records
    r = agreement(t, "all", 290.0, margin_points=2.0)
    assert r.margin == pytest.approx(11.6)
