"""Paired comparisons (scoring/paired.py): every category's p-value and CI against independent code.

* crafted RGB-Th-Bench runs whose differences sit in skills that are not the table's first rows
  (where permuting the wrong rows shows): every category's p against the exact enumeration of all
  scene swaps, each swap scored by the benchmark's own aggregation, and every CI against a scene
  bootstrap written here with the same draws;
* scipy.stats.permutation_test / scipy.stats.bootstrap on the same clusters and seed (exact and
  random-swap cases, micro and macro pooling);
* a run against itself: p = 1 everywhere; A and B swapped: the same p, the CI mirrored.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lensbench.benchmarks.rgbth.aggregate import aggregate_records
from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.paired import pair_tables, paired_all, paired_difference
from lensbench.benchmarks.registry import get_benchmark


def unit_tables(benchmark, records):
    """The benchmark's unit tables of ``records`` (each benchmark states its own)."""
    return get_benchmark(benchmark).unit_tables(records)


SKILLS = [("Scene", "RGB-Txt"), ("ObjPr", "RGB-Txt"), ("Temp2Col", "RGB-Th-Txt"), ("Warmest", "RGB-Th-Txt")]


def _runs(n_scenes=6, seed=0):
    """Two crafted RGB-Th-Bench runs: B differs from A only in the RGB-Th-Txt skills (the last rows)."""
    rng = np.random.default_rng(seed)
    a, b = [], []
    for s in range(n_scenes):
        for sk, group in SKILLS:
            for j in range(4):
                ok_a = rng.random() < 0.6
                ok_b = ok_a if group == "RGB-Txt" else (ok_a or rng.random() < 0.8)
                for recs, ok in ((a, ok_a), (b, ok_b)):
                    recs.append(SampleRecord(benchmark="rgb-th-bench", sample_id=f"S{s}/{sk}/{j}",
                                             outcome="correct" if ok else "wrong",
                                             labels={"scene": f"S{s}", "skill": sk, "abbrev": sk, "group": group,
                                                     "extra": False}))
    return a, b


def _metric(records, metric, cat):
    return aggregate_records(records)[0][metric][cat]


def test_every_category_p_and_ci_against_exact_scene_swaps():
    a, b = _runs()
    scenes = list(dict.fromkeys(r.labels["scene"] for r in a))
    ta, tb = unit_tables("rgb-th-bench", a), unit_tables("rgb-th-bench", b)
    draws = np.random.default_rng(5).integers(0, len(scenes), (300, len(scenes)))
    # every way of swapping A and B within scenes, scored by the benchmark's own aggregation (once per swap: the
    # aggregation gives every metric and category at once)
    swaps = []
    for flip in itertools.product((False, True), repeat=len(scenes)):
        sw = {s for s, f in zip(scenes, flip) if f}
        xa = [rb if rb.labels["scene"] in sw else ra for ra, rb in zip(a, b)]
        xb = [ra if ra.labels["scene"] in sw else rb for ra, rb in zip(a, b)]
        swaps.append((aggregate_records(xa)[0], aggregate_records(xb)[0]))
    # a scene bootstrap of A - B with the same draws, resamples scored by the aggregation
    boots = []
    for row in draws:
        ra = [r.model_copy(update={"labels": {**r.labels, "scene": f"{r.labels['scene']}#{k}"}})
              for k, i in enumerate(row) for r in a if r.labels["scene"] == scenes[i]]
        rb = [r.model_copy(update={"labels": {**r.labels, "scene": f"{r.labels['scene']}#{k}"}})
              for k, i in enumerate(row) for r in b if r.labels["scene"] == scenes[i]]
        boots.append((aggregate_records(ra)[0], aggregate_records(rb)[0]))
    for metric in ("QAcc", "SAcc"):
        results = {r.category: r for r in paired_all(ta[metric], tb[metric], n_resamples=2000, seed=5,
                                                     min_clusters=2)}
        assert set(results) == {"Overall", "RGB-Txt", "RGB-Th-Txt"} | {s for s, _g in SKILLS}
        for cat, res in results.items():
            obs = _metric(a, metric, cat) - _metric(b, metric, cat)
            assert res.diff == pytest.approx(obs, abs=1e-9), (metric, cat)
            t = [ma[metric][cat] - mb[metric][cat] for ma, mb in swaps]
            p = np.mean(np.abs(t) >= abs(obs) - 1e-9)
            assert res.p_value == pytest.approx(p, abs=1e-12), (metric, cat, res.p_value, p)
            if cat.startswith("RGB-Txt") or cat in ("Scene", "ObjPr"):  # B = A there
                assert res.p_value == 1.0 and res.diff == 0
            boot = [ma[metric][cat] - mb[metric][cat] for ma, mb in boots]
            ci = paired_difference(ta[metric], tb[metric], cat, n_resamples=300, seed=5, method="percentile",
                                   min_clusters=2)
            lo, hi = np.quantile(boot, [0.025, 0.975])
            assert (ci.low, ci.high) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9)), (metric, cat)
    # the differences are real in the thermal skills: some category is significant
    assert min(r.p_value for r in paired_all(ta["QAcc"], tb["QAcc"], min_clusters=2)) < 0.1
    # by default 6 scenes are too few for any CI or p (SPEC General rules: below 10 clusters)
    for r in paired_all(ta["QAcc"], tb["QAcc"]):
        assert (r.low, r.high, r.p_value, r.n, r.too_few) == (None, None, None, 6, True)


def _cluster_tables(n_clusters, n_diff, pool, seed, continuous=False):
    """Two tables over ``n_clusters`` clusters (1-3 units each, 3 columns in 2 groups) differing in ``n_diff``."""
    rng = np.random.default_rng(seed)
    units, clusters, na, nb, den = [], [], [], [], []
    for k in range(n_clusters):
        for j in range(int(rng.integers(1, 4))):
            c = int(rng.integers(0, 3))
            d = np.zeros(3)
            d[c] = rng.integers(1, 4)
            x = np.zeros(3)
            x[c] = rng.binomial(int(d[c]), 0.5)
            y = x.copy()
            if k < n_diff:
                y[c] = rng.binomial(int(d[c]), 0.7)
            if continuous:  # scores, not counts: no resample ties the estimate (scipy counts ties by the last bit)
                x[c], y[c] = x[c] + rng.random(), (y[c] + rng.random()) if k < n_diff else x[c] + 0.0
            units.append(f"c{k}/{j}"), clusters.append(f"c{k}"), na.append(x), nb.append(y), den.append(d)
    cats = {"all": [0, 1, 2], "first two": [0, 1], "last": [2]}
    mk = lambda n: UnitTable("m", units, ["x", "y", "z"], n, den, [0, 0, 1], clusters, "video", pool, cats)
    return mk(na), mk(nb)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
@pytest.mark.parametrize("pool", ["micro", "macro"])
@pytest.mark.parametrize("n_diff", [6, 25])  # 2**6 <= 2000: exact; 2**25: random swaps
def test_same_p_and_ci_as_scipy(pool, n_diff, method):
    stats = pytest.importorskip("scipy.stats")
    ta, tb = _cluster_tables(40, n_diff, pool, seed=n_diff, continuous=method == "BCa")
    for res in paired_all(ta, tb, n_resamples=2000, seed=3, method=method.lower()):
        cols = ta.categories[res.category]
        _ids, n_a, d_a = ta.cluster_sums()
        _ids, n_b, d_b = tb.cluster_sums()
        keep = np.flatnonzero(d_a[:, cols].sum(1) > 0)
        A, B, DA, DB = n_a[keep][:, cols], n_b[keep][:, cols], d_a[keep][:, cols], d_b[keep][:, cols]
        g = ta.groups[cols]

        def metric(n, d):
            if pool == "micro":
                return 100 * n.sum(-1) / d.sum(-1)
            with np.errstate(invalid="ignore"):
                r = n / d
            return 100 * np.nanmean(np.stack([np.nanmean(r[..., g == gv], -1) for gv in np.unique(g)], -1), -1)

        # the clusters whose swap alone moves A - B (written here: each swapped by itself and re-scored)
        obs = metric(A.sum(0), DA.sum(0)) - metric(B.sum(0), DB.sum(0))
        disc = np.array([k for k in range(len(keep)) if abs(
            metric(A.sum(0) - A[k] + B[k], DA.sum(0)) - metric(B.sum(0) - B[k] + A[k], DB.sum(0)) - obs) > 1e-7],
            dtype=int)
        fixed = np.setdiff1d(np.arange(len(keep)), disc)
        S_n, S_d = np.vstack([A[disc], B[disc]]), np.vstack([DA[disc], DB[disc]])
        fa, fb = A[fixed].sum(0), B[fixed].sum(0)
        fda, fdb = DA[fixed].sum(0), DB[fixed].sum(0)

        def pstat(x, y, axis=-1):  # x, y: indices into the stacked discordant clusters (A rows, then B rows)
            return (metric(fa + S_n[x].sum(-2), fda + S_d[x].sum(-2)) -
                    metric(fb + S_n[y].sum(-2), fdb + S_d[y].sum(-2)))

        m = len(disc)
        ref = stats.permutation_test((np.arange(m), np.arange(m) + m), pstat, permutation_type="samples",
                                     vectorized=True, n_resamples=2000, rng=np.random.default_rng(3))
        assert res.p_value == pytest.approx(ref.pvalue, abs=1e-12), (res.category, res.p_value, ref.pvalue)
        assert res.exact == (2 ** m <= 2000) and res.n_discordant == m

        def dstat(idx, axis=-1):
            return metric(A[idx].sum(-2), DA[idx].sum(-2)) - metric(B[idx].sum(-2), DB[idx].sum(-2))

        ci = stats.bootstrap((np.arange(len(keep)),), dstat, n_resamples=2000, vectorized=True,
                             method=method, rng=np.random.default_rng(3)).confidence_interval
        assert (res.low, res.high) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))


def test_discordant_counts_only_clusters_whose_swap_moves_the_difference():
    """Issue 29: a scene where A gains a question in one skill and B in another skill of the same size moves
    nothing in a mean over skills; it is not counted and not permuted (the exact p is the same: each such
    scene doubles every count)."""
    n_sc, cols = 12, ["x", "y"]
    na, nb = np.zeros((n_sc, 2)), np.zeros((n_sc, 2))
    na[:, 0] = nb[:, 0] = 2
    na[:, 1] = nb[:, 1] = 1
    na[:4, 0] += 1          # scenes 0-3: A better in x (they matter)
    na[4:7, 0] += 1         # scenes 4-6: A better in x, B in y by as much: they cancel
    nb[4:7, 1] += 1
    den = np.full((n_sc, 2), 4.0)
    mk = lambda n: UnitTable("m", [f"s{i}" for i in range(n_sc)], cols, n, den, [0, 0], None, "scene", "macro",
                             {"all": [0, 1]})
    r = paired_difference(mk(na), mk(nb), n_resamples=2000)
    assert r.n == 12 and r.n_discordant == 4 and r.exact
    obs = r.diff
    assert obs == pytest.approx(100 * (4 / 48) / 2)
    # exact over all 7 differing scenes, written here
    contrib = (na - nb) / 48 * 100 / 2     # each scene's share of A - B (column totals 48)
    t = [float(((1 - 2 * np.array(f))[:, None] * contrib[:7]).sum()) for f in itertools.product((0, 1), repeat=7)]
    assert r.p_value == pytest.approx(np.mean(np.abs(t) >= abs(obs) - 1e-9))


def test_itself_gives_p_one_and_swapping_a_and_b_the_same_p():
    a, b = _runs(n_scenes=12, seed=2)
    ta, tb = unit_tables("rgb-th-bench", a), unit_tables("rgb-th-bench", b)
    for metric in ("QAcc", "SAcc"):
        for r in paired_all(ta[metric], ta[metric]):
            assert (r.p_value, r.diff, r.low, r.high) == (1.0, 0.0, 0.0, 0.0), r.category
        ab = paired_all(ta[metric], tb[metric], n_resamples=500, seed=1)
        ba = paired_all(tb[metric], ta[metric], n_resamples=500, seed=1)
        for x, y in zip(ab, ba):
            assert x.p_value == y.p_value and x.diff == pytest.approx(-y.diff)
            assert x.low == pytest.approx(-y.high) and x.high == pytest.approx(-y.low)


def test_only_units_both_scored_count_each_scored_as_its_own_run():
    a, b = _runs(n_scenes=10, seed=1)
    # B failed one question: its unit leaves SAcc for both runs, the question leaves QAcc for both
    b[5] = b[5].model_copy(update={"outcome": "error"})
    ta, tb = unit_tables("rgb-th-bench", a), unit_tables("rgb-th-bench", b)
    pa, pb = pair_tables(ta["SAcc"], tb["SAcc"])
    gone = f"{b[5].labels['scene']}/{b[5].labels['skill']}"
    assert gone in ta["SAcc"].units and gone not in pa.units and pa.units == pb.units
    q = {r.category: r for r in paired_all(ta["QAcc"], tb["QAcc"])}
    keep_a = [r for r in a if r.sample_id != b[5].sample_id]
    assert q["Overall"].a == pytest.approx(_metric(keep_a, "QAcc", "Overall"))
    assert q["Overall"].n_units == len(keep_a)
