"""Bootstrap CIs and paired tests, checked against hand computations and independent numpy code."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable, bootstrap_ci, paired_difference
from lensbench.scoring.units import unit_tables


def _micro(values, dens=None):
    u = len(values)
    dens = np.ones(u) if dens is None else np.asarray(dens, float)
    return UnitTable("acc", [f"u{i}" for i in range(u)], ["c"], np.asarray(values, float).reshape(u, 1),
                     dens.reshape(u, 1), [0], pool="micro")


def test_two_units_hand_computed():
    # resampled means of {1, 0}: 0 (p=1/4), 50 (p=1/2), 100 (p=1/4) -> 95% percentile CI = [0, 100]
    ci = bootstrap_ci(_micro([1, 0]), n_resamples=4000, seed=3)
    assert ci.value == 50.0 and ci.low == 0.0 and ci.high == 100.0 and ci.n == 2
    assert (ci.seed, ci.n_resamples, ci.method) == (3, 4000, "percentile")


def test_ratio_of_sums_matches_independent_numpy_bootstrap():
    rng = np.random.default_rng(7)
    dens = rng.integers(1, 5, 300)
    nums = np.array([rng.binomial(d, 0.6) for d in dens])
    ci = bootstrap_ci(_micro(nums, dens), n_resamples=5000, seed=0)
    assert ci.value == pytest.approx(100 * nums.sum() / dens.sum())
    # independent cluster bootstrap written here
    r2 = np.random.default_rng(99)
    idx = r2.integers(0, len(dens), (5000, len(dens)))
    stats = 100 * nums[idx].sum(1) / dens[idx].sum(1)
    lo, hi = np.percentile(stats, [2.5, 97.5])
    assert ci.low == pytest.approx(lo, abs=0.6) and ci.high == pytest.approx(hi, abs=0.6)
    assert ci.low < ci.value < ci.high


def test_seeded_and_recorded():
    t = _micro(np.random.default_rng(1).random(80))
    a, b = bootstrap_ci(t, seed=5, n_resamples=500), bootstrap_ci(t, seed=5, n_resamples=500)
    assert (a.low, a.high) == (b.low, b.high)
    c = bootstrap_ci(t, seed=6, n_resamples=500)
    assert (c.low, c.high) != (a.low, a.high)


def _rgb(scene, skill, j, outcome):
    return SampleRecord(benchmark="rgb-th-bench", sample_id=f"{scene}/{skill}/{j}", outcome=outcome,
                        labels={"scene": scene, "skill": skill})


def test_rgbth_units_and_strata():
    recs = []
    # unit outcomes constant within each unit: resampling questions within units changes nothing
    for s, (sk, ok) in itertools.product(range(3), [("A", True), ("B", False)]):
        recs += [_rgb(f"S{s}", sk, j, "correct" if (ok or s == 0) else "wrong") for j in range(4)]
    t = unit_tables("rgb-th-bench", recs)
    q, sa = t["QAcc"], t["SAcc"]
    # QAcc Overall = mean over skills: A = 100, B = 4/12 -> (100 + 33.33) / 2
    assert q.value() == pytest.approx((100 + 100 * 4 / 12) / 2)
    ci = bootstrap_ci(q, n_resamples=300)
    assert ci.low == pytest.approx(q.value()) and ci.high == pytest.approx(q.value())
    # SAcc: units resampled within skills; skill B has one of 3 units right
    assert sa.value() == pytest.approx((100 + 100 / 3) / 2) and len(sa.units) == 6
    ci = bootstrap_ci(sa, n_resamples=2000, seed=1)
    # A is constant (100); B resamples 3 units with 1 right -> B in {0, 33, 67, 100}
    assert ci.low == pytest.approx(50.0) and ci.high == pytest.approx(100.0)


def test_ifbench_question_is_the_unit_and_avg_is_mean_of_language_means():
    recs = []
    outcomes = {("q1", "en"): [1, 1, 1, 0], ("q1", "zh"): [1, 0, 0, 0], ("q2", "en"): [0, 0, 0, 0],
                ("q2", "zh"): [1, 1, 1, 1], ("q3", "en"): [1, 1, 0, 0], ("q3", "zh"): [1, 1, 1, 1]}
    dims = {"q1": "OCR", "q2": "OCR", "q3": "Shape"}
    for (q, lang), oks in outcomes.items():
        for rot, ok in enumerate(oks):
            recs.append(SampleRecord(benchmark="if-bench", sample_id=f"{q}/{lang}/{rot}",
                                     outcome="correct" if ok else "wrong",
                                     labels={"qid": q, "dimension": dims[q], "language": lang, "rotation": rot}))
    t = unit_tables("if-bench", recs)["Score"]
    assert sorted(t.units) == ["q1", "q2", "q3"]
    en = ((0.75 + 0.0) / 2 + 0.5) / 2  # OCR mean over q1,q2; Shape q3; Avg = mean of dims
    zh = ((0.25 + 1.0) / 2 + 1.0) / 2
    assert t.value() == pytest.approx(100 * (en + zh) / 2)
    assert t.value("OCR") == pytest.approx(100 * ((0.75 + 0.0) / 2 + (0.25 + 1.0) / 2) / 2)


def test_paired_identical_runs():
    t = _micro([1, 0, 1, 1, 0, 1, 0, 1])
    r = paired_difference(t, t, n_resamples=500)
    assert r.diff == 0 and r.low == 0 and r.high == 0 and r.p_value == pytest.approx(1.0)


def test_paired_permutation_p_value_exact_enumeration():
    a = np.array([1, 1, 1, 0, 1, 1, 0])
    b = np.array([0, 1, 0, 0, 0, 1, 1])
    r = paired_difference(_micro(a), _micro(b), n_resamples=10_000, seed=0)
    obs = (a.mean() - b.mean()) * 100
    assert r.diff == pytest.approx(obs)
    # exact: every way of swapping A and B within units
    hits = 0
    flips = list(itertools.product([0, 1], repeat=len(a)))
    for f in flips:
        f = np.array(f, bool)
        x, y = np.where(f, b, a), np.where(f, a, b)
        hits += abs(x.mean() - y.mean()) * 100 >= abs(obs) - 1e-9
    assert r.p_value == pytest.approx(hits / len(flips))
    assert r.low <= r.diff <= r.high
