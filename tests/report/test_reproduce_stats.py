"""The statistics of ``lensbench reproduce`` against hand computations, definitions and scipy: Holm's
adjustment, the bootstrap-inversion p, within-run contrasts, Page's trend test, derived tables, matching."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from reproduce_craft import cluster_ci, micro, rec

from lensbench.core.errors import ConfigError
from lensbench.report.reproduce.derived import record_table, revalue
from lensbench.report.reproduce.match import auto_names, parse_match
from lensbench.report.reproduce.stats import cluster_rates, contrast_stats, holm, inversion_p, trend, with_category
from lensbench.scoring.bootstrap import UnitTable, bootstrap_ci, bootstrap_stats


def test_holm_hand_computed():
    # sorted 0.01 < 0.02 < 0.03 < 0.5 with m = 4: 0.04, max(0.04, 0.06), max(.06, .06), max(.06, .5)
    assert holm([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])
    assert holm([0.2, 0.04]) == pytest.approx([0.2, 0.08])  # 2 x 0.04, then 1 x 0.2
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # 2 x 0.8 capped at 1; never below an earlier step
    assert holm([]) == []


def test_holm_matches_its_definition_as_closed_testing_of_bonferroni():
    """Holm = reject H_i iff every intersection hypothesis containing i is rejected by Bonferroni: the
    adjusted p of i is the max over subsets S containing i of min(1, |S| min_{j in S} p_j)."""
    rng = np.random.default_rng(0)
    for _ in range(30):
        p = list(rng.random(5) ** 3)
        want = [max(min(1.0, len(s) * min(p[j] for j in s)) for k in range(1, 6)
                    for s in itertools.combinations(range(5), k) if i in s) for i in range(5)]
        assert holm(p) == pytest.approx(want)


def test_inversion_p():
    stats = np.arange(1, 1000, dtype=float)  # 999 resamples, 1 .. 999
    assert inversion_p(stats, 500.0) == pytest.approx(1.0)
    assert inversion_p(stats, 0.0) == pytest.approx(2 / 1000)  # the floor 2 / (B + 1)
    assert inversion_p(stats, 25.0) == pytest.approx(2 * 26 / 1000)


def _table(rows, cols, pool="micro", groups=None):
    """UnitTable from (unit, cluster, column, num, den) rows."""
    num = np.zeros((len(rows), len(cols)))
    den = np.zeros_like(num)
    for i, (_u, _c, col, n, d) in enumerate(rows):
        num[i, cols.index(col)], den[i, cols.index(col)] = n, d
    cats = {"all": list(range(len(cols))), **{c: [i] for i, c in enumerate(cols)}}
    return UnitTable("m", [r[0] for r in rows], cols, num, den, groups or [0] * len(cols), [r[1] for r in rows],
                     "scene", pool, cats)


def test_contrast_against_independent_bootstrap():
    rng = np.random.default_rng(4)
    rows = [(f"u{i}", f"s{i // 6}", "AB"[i % 2], float(rng.random() < (0.8 if i % 2 == 0 else 0.5)), 1.0)
            for i in range(120)]
    t = _table(rows, ["A", "B"])
    est, stats, n = contrast_stats(t, "A", "B", n_resamples=300, seed=2)
    items = [(c, col, x, d) for _u, c, col, x, d in rows]
    diff = lambda tt: micro(["A"])(tt) - micro(["B"])(tt)  # noqa: E731
    val, lo, hi = cluster_ci(items, diff, b=300, seed=2)
    assert n == 20 and est == pytest.approx(val)
    assert np.quantile(stats, [0.025, 0.975]) == pytest.approx([lo, hi])
    assert inversion_p(stats, 0.0) < 0.05 < 0.5 < inversion_p(stats, est)  # 80% vs 50%: away from 0


def test_with_category_pools_as_the_table_pools():
    rows = [("u1", "s1", "A", 1, 1), ("u2", "s1", "B", 0, 1), ("u3", "s2", "B", 0, 1), ("u4", "s2", "C", 1, 1)]
    t = with_category(_table(rows, ["A", "B", "C"], pool="macro"), "AB", ["A", "B"])
    assert t.value("AB") == pytest.approx(50.0)  # macro: mean of A (100) and B (0)
    assert with_category(_table(rows, ["A", "B", "C"]), "AB", ["A", "B"]).value("AB") == pytest.approx(100 / 3)


def test_trend_is_scipy_page_test_on_cluster_rates():
    from scipy.stats import page_trend_test

    rng = np.random.default_rng(1)
    tables = []
    for k, p in enumerate((0.3, 0.45, 0.6, 0.75)):
        rows = [(f"u{i}", f"v{i // 3}", "A", float(rng.random() < p), 1.0) for i in range(90)]
        tables.append(_table(rows, ["A"]))
    clusters, rates = cluster_rates(tables, "all")
    assert len(clusters) == 30 and rates.shape == (30, 4)
    stat, p, method = trend(rates)
    ref = page_trend_test(rates, method="asymptotic")
    assert (stat, p, method) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue), "asymptotic")
    assert p < 0.001 and trend(rates, increasing=False)[1] > 0.9
    with pytest.raises(ValueError):
        trend(rates[:, :2])


def test_record_table_counts_and_bootstrap_stats_match_the_ci():
    recs = [rec("b", f"q{i}", "unparseable" if i % 7 == 0 else "correct", labels={"scene": f"s{i // 10}"})
            for i in range(100)] + [rec("b", "err", "error")]
    t = record_table("Fails", recs, lambda r: float(r.outcome == "unparseable"), lambda r: r.labels["scene"], "scene",
                     count=True)
    assert t.value("all") == pytest.approx(sum(i % 7 == 0 for i in range(100)))  # 15 Fails of 100 scored
    iv = bootstrap_ci(t, "all", n_resamples=200, seed=1)
    st = bootstrap_stats(t, "all", n_resamples=200, seed=1)
    assert np.quantile(st, [0.025, 0.975]) == pytest.approx([iv.low, iv.high])
    with pytest.raises(ValueError):
        record_table("x", recs, lambda r: 1.0, str, "c", column=str, count=True)


def test_revalue_keeps_units_and_pairs():
    rows = [("u1", "u1", "A", 1, 1), ("u2", "u2", "B", 0, 1), ("u3", "u3", "B", 1, 1)]
    t = _table(rows, ["A", "B"])
    r = revalue(t, "avg", {"u1": 0.5, "u2": 0.25})
    assert r.units == ["u1", "u2"] and r.value("all") == pytest.approx(100 * 0.75 / 2)
    assert revalue(t, "avg", {}) is None


def test_matching_is_exact():
    names = ["Qwen2.5-VL-7B-Instruct", "SmolVLM-2.3B", "GPT4o-20241120"]
    assert auto_names("Qwen/Qwen2.5-VL-7B-Instruct", names) == ["Qwen2.5-VL-7B-Instruct"]
    assert auto_names("qwen2.5-vl-7b-instruct", names) == []  # case counts
    assert auto_names("SmolVLM2-2.2B-Instruct", names) == []  # never guessed
    assert parse_match("runs/a=b=c") == ("runs/a", "b=c")
    with pytest.raises(ConfigError, match="expected RUN=ROW"):
        parse_match("runs/a")
