"""Bootstrap CIs and paired tests, checked against hand computations and independent numpy code."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable, bootstrap_ci
from lensbench.scoring.paired import paired_difference
from lensbench.benchmarks.registry import get_benchmark


def unit_tables(benchmark, records):
    """The benchmark's unit tables of ``records`` (each benchmark states its own)."""
    return get_benchmark(benchmark).unit_tables(records)


def _micro(values, dens=None):
    u = len(values)
    dens = np.ones(u) if dens is None else np.asarray(dens, float)
    return UnitTable("acc", [f"u{i}" for i in range(u)], ["c"], np.asarray(values, float).reshape(u, 1),
                     dens.reshape(u, 1), [0], pool="micro")


def test_two_units_hand_computed():
    # resampled means of {1, 0}: 0 (p=1/4), 50 (p=1/2), 100 (p=1/4) -> 95% percentile CI = [0, 100]
    ci = bootstrap_ci(_micro([1, 0]), n_resamples=4000, seed=3, method="percentile", min_clusters=2)
    assert ci.value == 50.0 and ci.low == 0.0 and ci.high == 100.0 and ci.n == 2
    assert (ci.seed, ci.n_resamples, ci.method, ci.too_few) == (3, 4000, "percentile", False)


def test_below_ten_clusters_no_interval_at_ten_one():
    """SPEC General rules: below 10 clusters no CI ("too few clusters (n)"), from 10 on an interval."""
    from lensbench.scoring.intervals import MIN_CLUSTERS, too_few_text

    assert MIN_CLUSTERS == 10
    nine = bootstrap_ci(_micro([1, 0, 1, 1, 0, 1, 0, 1, 1]), n_resamples=500)
    assert (nine.value, nine.low, nine.high, nine.n, nine.too_few) == (pytest.approx(100 * 6 / 9), None, None, 9,
                                                                       True)
    assert too_few_text(nine.n) == "too few clusters (9)"
    ten = bootstrap_ci(_micro([1, 0, 1, 1, 0, 1, 0, 1, 1, 0]), n_resamples=500)
    assert ten.too_few is False and ten.low < ten.value == 60.0 < ten.high
    # a category without any value is not "too few": there is nothing to print a CI for
    empty = UnitTable("acc", ["u0"], ["a", "b"], [[1, 0]], [[1, 0]], [0, 0], pool="micro",
                      categories={"all": [0, 1], "b": [1]})
    assert bootstrap_ci(empty, "b").too_few is False


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
                        labels={"scene": scene, "skill": skill, "abbrev": skill, "group": "G", "extra": False})


def test_rgbth_scene_is_the_cluster_of_qacc_and_sacc():
    """Both RGB-Th-Bench CIs resample scenes, all their units and questions together (SPEC General
    rules): checked against a scene bootstrap written here, which rebuilds each resample's records
    (a scene drawn twice enters twice) and scores them with the benchmark's own aggregation."""
    from lensbench.benchmarks.rgbth.aggregate import aggregate_records

    rng = np.random.default_rng(4)
    recs = []
    for s in range(5):
        for sk in ("A", "B", "C"):
            p = 0.9 if s % 2 else 0.4
            recs += [_rgb(f"S{s}", sk, j, "correct" if rng.random() < p else "wrong") for j in range(4)]
    tables = unit_tables("rgb-th-bench", recs)
    for metric in ("QAcc", "SAcc"):
        t = tables[metric]
        assert t.cluster == "scene" and set(t.clusters) == {f"S{s}" for s in range(5)}
    scenes = list(dict.fromkeys(r.labels["scene"] for r in recs))
    draws = np.random.default_rng(11).integers(0, len(scenes), (400, len(scenes)))
    by_scene = {s: [r for r in recs if r.labels["scene"] == s] for s in scenes}
    stats = {"QAcc": [], "SAcc": []}
    for row in draws:
        resample = [r.model_copy(update={"labels": {**r.labels, "scene": f"{r.labels['scene']}#{k}"}})
                    for k, i in enumerate(row) for r in by_scene[scenes[i]]]
        metrics, _counts = aggregate_records(resample)
        for m in stats:
            stats[m].append(metrics[m]["Overall"])
    for metric in ("QAcc", "SAcc"):
        ci = bootstrap_ci(tables[metric], n_resamples=400, seed=11, method="percentile", min_clusters=2)
        assert ci.value == pytest.approx(aggregate_records(recs)[0][metric]["Overall"])
        lo, hi = np.quantile(stats[metric], [0.025, 0.975])
        assert (ci.low, ci.high) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9)), metric
        assert ci.n == 5 and ci.cluster == "scene"


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_same_draw_and_interval_as_scipy_bootstrap(method):
    """The hand-vectorised cluster bootstrap equals scipy.stats.bootstrap (percentile and BCa, batch=None)
    on the same clusters with the same seed, for micro and macro tables and every category; the
    statistic given to scipy is written here from the per-cluster sums (for BCa scipy's jackknife
    calls it on every leave-one-cluster-out sample)."""
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    units, clusters, num, den = [], [], [], []
    for k in range(40):
        for j in range(int(rng.integers(1, 5))):
            c = int(rng.integers(0, 4))
            row_n, row_d = np.zeros(4), np.zeros(4)
            row_d[c] = rng.integers(1, 3)
            # continuous scores: no resample ties the estimate to the last bit (scipy and we differ only there)
            row_n[c] = row_d[c] * rng.random() if method == "BCa" else rng.binomial(int(row_d[c]), 0.3 + 0.1 * c)
            units.append(f"k{k}/{j}"), clusters.append(f"k{k}"), num.append(row_n), den.append(row_d)
    for pool, groups in (("micro", [0, 0, 0, 0]), ("macro", [0, 0, 1, 1])):
        t = UnitTable("m", units, ["a", "b", "c", "d"], num, den, groups, clusters, "image", pool,
                      {"all": [0, 1, 2, 3], "ab": [0, 1], "d": [3]})
        n_cl = {c: np.zeros(4) for c in dict.fromkeys(clusters)}
        d_cl = {c: np.zeros(4) for c in dict.fromkeys(clusters)}
        for c, n_, d_ in zip(clusters, num, den):
            n_cl[c] += n_
            d_cl[c] += d_
        for cat, cols in t.categories.items():
            keep = [c for c in n_cl if d_cl[c][cols].sum() > 0]
            N = np.array([n_cl[c][cols] for c in keep])
            D = np.array([d_cl[c][cols] for c in keep])
            g = np.array(groups)[cols]

            def stat(idx, axis=-1):
                n_, d_ = N[idx].sum(axis=-2), D[idx].sum(axis=-2)
                if pool == "micro":
                    return 100 * n_.sum(-1) / d_.sum(-1)
                with np.errstate(invalid="ignore"):
                    r = n_ / d_
                return 100 * np.nanmean(np.stack([np.nanmean(r[..., g == gv], axis=-1) for gv in np.unique(g)],
                                                 -1), -1)

            ref = stats.bootstrap((np.arange(len(keep)),), stat, n_resamples=999, vectorized=True,
                                  method=method, rng=np.random.default_rng(8))
            ci = bootstrap_ci(t, cat, n_resamples=999, seed=8, method=method.lower(), min_clusters=2)
            assert ci.n == len(keep)
            assert ci.low == pytest.approx(ref.confidence_interval.low, rel=1e-9), (pool, cat)
            assert ci.high == pytest.approx(ref.confidence_interval.high, rel=1e-9), (pool, cat)


def test_a_rare_category_gets_a_ci_from_its_own_clusters():
    """A category held by 2 of 500 clusters is in every resample of its own clusters (it used to
    be missing from many resamples of all units, and got no CI)."""
    n = 500
    num = np.zeros((n, 2))
    den = np.zeros((n, 2))
    den[:-2, 0] = 1
    num[:-2:2, 0] = 1
    den[-2:, 1] = 1
    num[-1, 1] = 1
    t = UnitTable("acc", [f"u{i}" for i in range(n)], ["common", "rare"], num, den, [0, 0], pool="micro",
                  categories={"Total": [0, 1], "common": [0], "rare": [1]})
    assert bootstrap_ci(t, "rare").too_few  # 2 clusters: no interval by default
    ci = bootstrap_ci(t, "rare", n_resamples=2000, seed=0, method="percentile", min_clusters=2)
    # two clusters, one right: resampled means 0, 50, 100 with P 1/4, 1/2, 1/4
    assert (ci.value, ci.low, ci.high, ci.n) == (50.0, 0.0, 100.0, 2)


def test_groundingme_l2_categories_get_cis():
    recs = [SampleRecord(benchmark="groundingme", sample_id=f"s{i}", outcome="correct" if i % 3 else "wrong",
                         labels={"L-1": "Spatial" if i % 2 else "Limited", "L-2": f"sub{i % 4}"},
                         scores={"hit@0.5": int(bool(i % 3))}) for i in range(60)]
    t = unit_tables("groundingme", recs)["Acc@0.5"]
    assert {"Total", "Spatial", "Limited", "Spatial/sub1", "Spatial/sub3", "Limited/sub0", "Limited/sub2"} <= set(
        t.categories)
    for cat in ("Spatial/sub1", "Limited/sub2"):
        want = [r for r in recs if f"{r.labels['L-1']}/{r.labels['L-2']}" == cat]
        ci = bootstrap_ci(t, cat, n_resamples=300)
        assert ci.value == pytest.approx(100 * sum(r.outcome == "correct" for r in want) / len(want))
        assert ci.low is not None and ci.low <= ci.value <= ci.high and ci.n == len(want)


def test_ifbench_image_is_the_cluster():
    recs = []
    for q, img in (("q1", "a.png"), ("q2", "a.png"), ("q3", "b.png")):
        for lang in ("en", "zh"):
            for rot in range(4):
                recs.append(SampleRecord(benchmark="if-bench", sample_id=f"{q}/{lang}/{rot}", outcome="correct",
                                         labels={"qid": q, "dimension": "OCR", "language": lang, "rotation": rot},
                                         extra={"image": img}))
    t = unit_tables("if-bench", recs)["Score"]
    assert t.cluster == "image" and t.cluster_sums()[0] == ["a.png", "b.png"]
    assert sorted(t.units) == ["q1/en", "q1/zh", "q2/en", "q2/zh", "q3/en", "q3/zh"]


def test_ifbench_avg_is_mean_of_language_means():
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
    # no image named: each question is its own cluster, its (question, language) cells its units
    assert sorted(t.cluster_sums()[0]) == ["q1", "q2", "q3"] and len(t.units) == 6
    en = ((0.75 + 0.0) / 2 + 0.5) / 2  # OCR mean over q1,q2; Shape q3; Avg = mean of dims
    zh = ((0.25 + 1.0) / 2 + 1.0) / 2
    assert t.value() == pytest.approx(100 * (en + zh) / 2)
    assert t.value("OCR") == pytest.approx(100 * ((0.75 + 0.0) / 2 + (0.25 + 1.0) / 2) / 2)


def test_paired_identical_runs():
    t = _micro([1, 0, 1, 1, 0, 1, 0, 1, 1, 0])
    r = paired_difference(t, t, n_resamples=500)
    assert r.diff == 0 and r.low == 0 and r.high == 0 and r.p_value == pytest.approx(1.0)


def test_paired_permutation_p_value_exact_enumeration():
    a = np.array([1, 1, 1, 0, 1, 1, 0])
    b = np.array([0, 1, 0, 0, 0, 1, 1])
    r = paired_difference(_micro(a), _micro(b), n_resamples=10_000, seed=0, min_clusters=2)
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


def test_bca_edge_cases():
    """BCa (scoring/bca.py): a constant bootstrap gives the point; ties with the estimate count half, also when
    rounding moved the estimate by an ulp; a bootstrap entirely on one side keeps a finite bias; with no bias
    and no acceleration BCa is the percentile interval."""
    from lensbench.scoring.bca import acceleration, bca_interval, bias_z0, percentile_interval

    assert bca_interval(np.full(100, 5.0), 5.0, np.full(10, 5.0), 0.95) == (5.0, 5.0)
    stats = np.array([1.0, 2.0, 2.0, 3.0])
    assert bias_z0(stats, 2.0) == 0.0 and bias_z0(stats, 2.0 + 4e-16) == 0.0  # (1 + 3) / 8 = 1/2
    assert bias_z0(stats, 2.5) == pytest.approx(0.6744897501960817)   # Phi^-1(3/4)
    assert np.isfinite(bias_z0(stats, 0.5)) and bias_z0(stats, 0.5) < -1  # share 0, kept at 1/(2B)
    assert acceleration(np.array([1.0, 1.0, 1.0])) == 0.0
    jack = np.array([0.0, 1.0, 5.0])  # skewed: mean 2, deviations 2, 1, -3 -> a = (8 + 1 - 27) / (6 * 14 ** 1.5)
    assert acceleration(jack) == pytest.approx(-18 / (6 * 14 ** 1.5))
    sym = np.random.default_rng(0).normal(size=4001)
    sym = np.concatenate([sym, -sym])  # symmetric around 0: z0 = 0
    assert bca_interval(sym, 0.0, np.array([-1.0, 0.0, 1.0]), 0.9) == pytest.approx(percentile_interval(sym, 0.9))
