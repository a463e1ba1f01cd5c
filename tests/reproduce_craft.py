"""Helpers of the ``lensbench reproduce`` tests: run folders written from records in each benchmark's real
record shape, an independent cluster bootstrap to compute expected values and CIs, and the verdict rule
(two-estimate test, TOST, Holm) written again from its documentation.

The bootstrap here is written from the documented method (SPEC General rules; scoring/bootstrap.py): the
clusters counting in a category, in order of first appearance, drawn with
``numpy.random.default_rng(seed).integers(0, K, (B, K))``; the metric recomputed per resample in a plain
loop from per-cluster sums; the interval read from them as the library's default method (BCa: bias from
the share of resamples below the estimate, acceleration from the leave-one-cluster-out jackknife, Efron &
Tibshirani 1993 Sec. 14.3; ``method="percentile"``: the 2.5 / 97.5% linear quantiles).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lensbench.core.records import SampleRecord
from lensbench.testing.runs import write_run

B = 400  # resamples in these tests (fast; the CLI default is 2000)


def write(run_dir: Path, benchmark: str, model: str, records: list[SampleRecord], options: dict | None = None,
          judge: str | None = None, manifest: dict | None = None, counts: dict | None = None) -> Path:
    """A finished run folder of ``records`` with ``options`` (run.json and result.json, as a run writes them) and,
    when given, the judge and more ``counts`` in result.json."""
    write_run(run_dir, benchmark, model, records, {}, manifest={"options": options or {}, **(manifest or {})})
    p = run_dir / "result.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    doc["options"] = options or {}
    doc["counts"].update(counts or {})
    if judge:
        doc["extra"]["judge"] = judge
    p.write_text(json.dumps(doc), encoding="utf-8")
    return run_dir


def rec(bench: str, sid: str, outcome: str, **kw: Any) -> SampleRecord:
    """One record (reply "x" unless given)."""
    kw.setdefault("reply", "x")
    return SampleRecord(benchmark=bench, sample_id=sid, request_id=sid, outcome=outcome, **kw)


def pick(rng: np.random.Generator, p: float) -> str:
    """``correct`` with probability ``p``, else ``wrong``."""
    return "correct" if rng.random() < p else "wrong"


def cluster_ci(items: Sequence[tuple[str, str, float, float]], stat: Callable[[dict[str, tuple[float, float]]],
               float | None], *, b: int = B, seed: int = 0, level: float = 0.95,
               method: str = "bca") -> tuple[float, float | None, float | None]:
    """``(value, low, high)`` of ``stat`` over ``items`` = ``(cluster, column, numerator, denominator)``; low
    and high None below 10 clusters (SPEC General rules: "too few clusters (n)").

    ``stat`` maps ``{column: (sum numerator, sum denominator)}`` to the metric (None when undefined);
    clusters are resampled in order of first appearance (module docstring)."""
    order: list[str] = []
    sums: dict[str, dict[str, list[float]]] = {}
    for c, col, n, d in items:
        if c not in sums:
            order.append(c)
            sums[c] = {}
        s = sums[c].setdefault(col, [0.0, 0.0])
        s[0] += n
        s[1] += d

    def total(ix: Sequence[int]) -> dict[str, tuple[float, float]]:
        out: dict[str, list[float]] = {}
        for i in ix:
            for col, (n, d) in sums[order[i]].items():
                t = out.setdefault(col, [0.0, 0.0])
                t[0] += n
                t[1] += d
        return {k: (v[0], v[1]) for k, v in out.items()}

    value = stat(total(range(len(order))))
    if len(order) < 10:
        return value, None, None
    idx = np.random.default_rng(seed).integers(0, len(order), (b, len(order)))
    stats = np.array([stat(total(row)) for row in idx], dtype=float)
    qs = [(1 - level) / 2, (1 + level) / 2]
    if method == "bca" and np.ptp(stats) > 0:
        from statistics import NormalDist

        nd = NormalDist()
        tol = 1e-9 * max(abs(value), float(np.abs(stats).max()))
        share = (np.sum(stats < value - tol) + np.sum(stats <= value + tol)) / (2 * b)
        z0 = nd.inv_cdf(min(max(share, 0.5 / b), 1 - 0.5 / b))
        jack = np.array([stat(total([j for j in range(len(order)) if j != i])) for i in range(len(order))], float)
        dev = jack.mean() - jack
        acc = (dev ** 3).sum() / (6 * ((dev ** 2).sum()) ** 1.5) if (dev ** 2).sum() > 0 else 0.0
        qs = [nd.cdf(z0 + (z0 + nd.inv_cdf(q)) / (1 - acc * (z0 + nd.inv_cdf(q)))) for q in qs]
    lo, hi = np.quantile(stats, qs)
    return value, float(lo), float(hi)


def macro(cols: Sequence[str], scale: float = 100.0):
    """A ``stat`` for :func:`cluster_ci`: mean over ``cols`` present of numerator / denominator."""
    def f(t):
        r = [t[c][0] / t[c][1] for c in cols if c in t and t[c][1] > 0]
        return scale * sum(r) / len(r) if r else None
    return f


def micro(cols: Sequence[str], scale: float = 100.0):
    """A ``stat`` for :func:`cluster_ci`: pooled numerator / denominator over ``cols``."""
    def f(t):
        n = sum(t[c][0] for c in cols if c in t)
        d = sum(t[c][1] for c in cols if c in t)
        return scale * n / d if d else None
    return f


def expected_test(items: Sequence[tuple[str, str, float, float]], stat: Callable, published: float, *,
                  margin: float = 2.0, alpha: float = 0.05, scale: float = 100.0, pooled: bool = False) -> dict:
    """The documented test of ``ours = published`` (SPEC General rules; scoring/agreement.py), written again
    here: ``{"p", "low", "high", "equivalent", "exact"}``, or ``{"reason"}`` below 10 clusters.

    Cluster method: the delete-one-cluster jackknife SE of ``stat`` (a plain loop over the clusters), the
    difference's SE sqrt(2) times it, Student t with K - 1 df, two-sided p and the 90% interval. Exact method
    (``pooled``: the category pools as k / n; or at 0 / 100%) when every item is one 0/1 unit and fewer than
    10 successes or failures (ours or the paper's round(p n)): Boschloo (Fisher above 300 units) and
    Newcombe's hybrid score interval from scipy's Wilson intervals; with clusters of several units and a
    positive jackknife SE, the wider interval and the larger p of both."""
    from scipy import stats as st

    clusters = list(dict.fromkeys(c for c, *_x in items))
    k = len(clusters)
    if k < 10:
        return {"reason": f"too few clusters ({k})"}

    def total(keep):
        out: dict[str, list[float]] = {}
        for c, col, n, d in items:
            if c in keep:
                t = out.setdefault(col, [0.0, 0.0])
                t[0] += n
                t[1] += d
        return {key: (v[0], v[1]) for key, v in out.items()}

    value = stat(total(set(clusters)))
    loo = [stat(total(set(clusters) - {c})) for c in clusters]
    mean = sum(loo) / k
    se = (sum((x - mean) ** 2 for x in loo) * (k - 1) / k) ** 0.5
    diff = value - published
    res = None
    if se > 0:
        sd = 2 ** 0.5 * se
        half = st.t.ppf(1 - alpha, k - 1) * sd
        res = {"p": 2 * st.t.sf(abs(diff) / sd, k - 1), "low": diff - half, "high": diff + half, "exact": False}
    units = all(d == 1.0 and n in (0.0, 1.0) for _c, _col, n, d in items)
    kr, nu = int(sum(n for _c, _col, n, _d in items)), len(items)
    kp = min(nu, max(0, round(published / scale * nu)))
    if units and (pooled or kr in (0, nu)) and min(kr, nu - kr, kp, nu - kp) < 10:
        tab = [[kr, nu - kr], [kp, nu - kp]]
        p = 1.0 if kr == kp else (st.boschloo_exact(tab).pvalue if nu <= 300 else st.fisher_exact(tab)[1])
        w1 = st.binomtest(kr, nu).proportion_ci(1 - 2 * alpha, method="wilson")
        w2 = st.binomtest(kp, nu).proportion_ci(1 - 2 * alpha, method="wilson")
        p1, p2 = kr / nu, kp / nu
        lo = (p1 - p2 - ((p1 - w1.low) ** 2 + (w2.high - p2) ** 2) ** 0.5) * scale
        hi = (p1 - p2 + ((w1.high - p1) ** 2 + (p2 - w2.low) ** 2) ** 0.5) * scale
        exact = {"p": p, "low": lo, "high": hi, "exact": True}
        if res is None or k == nu:
            res = exact
        else:
            res = {"p": max(p, res["p"]), "low": min(lo, res["low"]), "high": max(hi, res["high"]), "exact": True}
    assert res is not None, "no variance and no exact branch"
    res["equivalent"] = -margin * scale / 100 <= res["low"] and res["high"] <= margin * scale / 100
    return res


def check_cell(cell, want: dict) -> None:
    """``cell``'s p, 90% interval of the difference and provisional equivalence are ``want``'s
    (:func:`expected_test`); its final verdict is checked by :func:`check_family`."""
    import pytest

    if "reason" in want:
        assert cell.verdict == "not comparable" and want["reason"] in cell.reason, cell
        return
    assert cell.p == pytest.approx(want["p"], rel=1e-6, abs=1e-12), cell
    assert (cell.d_low, cell.d_high) == (pytest.approx(want["low"], abs=1e-6), pytest.approx(want["high"], abs=1e-6))
    assert (cell.verdict == "consistent") == want["equivalent"], cell


def check_family(cells: Sequence, alpha: float = 0.05) -> int:
    """The verdict rule over one table or figure: Holm's adjusted p (written as its definition: the largest
    ``min(1, (m - j) p_(j))`` over the ranks j up to the cell's) over every cell with a p, then consistent
    when equivalent, differs when the adjusted p < alpha, else inconclusive. Returns the family size."""
    import pytest

    tested = [c for c in cells if c.p is not None and c.verdict != "not comparable"]
    ps = sorted(c.p for c in tested)
    m = len(ps)
    for c in tested:
        rank = max(j for j, p in enumerate(ps) if p <= c.p)
        adj = max(min(1.0, (m - j) * ps[j]) for j in range(rank + 1))
        assert c.p_holm == pytest.approx(adj), c
        if c.verdict != "consistent":
            assert c.verdict == ("differs" if adj < alpha else "inconclusive"), c
    return m


def cells_of(rep, section_id: str) -> list:
    """The cells of the report's section ``section_id``."""
    return next(s for s in rep.sections if s.id == section_id).cells


def claim(rep, cid: str):
    """The report's claim ``cid``."""
    return next(c for c in rep.claims if c.id == cid)
