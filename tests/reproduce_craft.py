"""Helpers of the ``lensbench reproduce`` tests: run folders written from records in each benchmark's real
record shape, and an independent cluster bootstrap to compute expected values, CIs and verdicts.

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


def expected_verdict(published: float, low: float | None, high: float | None, decimals: int) -> str:
    """The documented verdict: consistent when ``published`` lies in [low, high] widened by half a unit of the
    last printed digit; not comparable without a CI (too few clusters)."""
    if low is None or high is None:
        return "not comparable"
    tol = 0.5 * 10.0 ** (-decimals)
    return "consistent" if low - tol <= published <= high + tol else "differs"


def cells_of(rep, section_id: str) -> list:
    """The cells of the report's section ``section_id``."""
    return next(s for s in rep.sections if s.id == section_id).cells


def claim(rep, cid: str):
    """The report's claim ``cid``."""
    return next(c for c in rep.claims if c.id == cid)
