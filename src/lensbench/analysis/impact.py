"""What leaving items out does to the headline and the model ranking, with cluster-bootstrap CIs.

Each run is scored by its benchmark's own headline table (the first of
:meth:`~lensbench.benchmarks.base.Benchmark.unit_tables`: RGB-Th-Bench QAcc, a macro mean over skills)
restricted to the kept units; a unit is left out when it is a left-out item or holds one (its id is a
prefix ``unit/`` of the item's). CIs resample the benchmark's clusters (docs/protocol.md, general rules), ONE draw
shared by every run and both item sets (:func:`lensbench.scoring.bootstrap.cluster_counts` over the union
of the runs' clusters, each run's statistic from :func:`lensbench.scoring.bootstrap.pooled_stat`), so a
run's change (reduced - full) and the rank correlation between the two rankings are paired statistics
with percentile intervals. Ranking agreement: Kendall's tau-b (``scipy.stats.kendalltau``) between the
runs' full-set and reduced-set headlines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lensbench.core.extras import require
from lensbench.report.runs import run_tables
from lensbench.scoring.bootstrap import Design, UnitTable, cluster_counts, percentile_interval, pooled_stat
from lensbench.analysis.matrix import ResponseMatrix

__all__ = ["Shift", "Ranking", "Subset", "headline_tables", "restrict", "compare_sets", "suggest_subset",
           "SUBSET_FRACTIONS", "TAU_TARGET"]

#: fractions of the items tried for a smaller subset, smallest first
SUBSET_FRACTIONS = (0.1, 0.2, 0.3, 0.5, 0.7)
#: the smallest subset whose Kendall tau with the full ranking reaches this is suggested
TAU_TARGET = 0.9


@dataclass
class Shift:
    """One run: headline on the full and the reduced item set, each ``(value, low, high)``, and the paired
    change ``reduced - full`` as ``(value, low, high)`` (metric units, e.g. percent)."""

    label: str
    full: tuple[float, float | None, float | None]
    reduced: tuple[float, float | None, float | None]
    change: tuple[float, float | None, float | None]


@dataclass
class Ranking:
    """Kendall tau-b between the full and reduced rankings with its CI; ``order_full`` / ``order_reduced``:
    run labels best first; ``n_clusters`` resampled."""

    tau: float
    low: float | None
    high: float | None
    order_full: list[str]
    order_reduced: list[str]
    n_clusters: int


@dataclass
class Subset:
    """A named, reproducible item subset: ``name`` (benchmark, rule, size and a hash of the ids), ``rule`` in
    words, ``items`` (sorted ids), ``sha256`` of the ids joined by newlines, ``ranking`` its agreement with
    the full set, and ``tried``: ``[(fraction, n_items, tau, low, high, rule)]`` for every size and rule tried."""

    name: str
    rule: str
    items: list[str]
    sha256: str
    ranking: Ranking
    tried: list[tuple[float, int, float, float | None, float | None, str]]

    def to_json(self) -> dict:
        """The subset file's content."""
        return {"name": self.name, "rule": self.rule, "n_items": len(self.items), "sha256": self.sha256,
                "kendall_tau": [self.ranking.tau, self.ranking.low, self.ranking.high], "items": self.items}


def headline_tables(m: ResponseMatrix) -> list[UnitTable]:
    """Each run's headline table (first of its benchmark's unit tables). Raises ValueError for a run with none."""
    out = []
    for run, lab in zip(m.runs, m.labels):
        tables = run_tables(run)
        if not tables:
            raise ValueError(f"{run.path}: its benchmark gives no metric table for these records")
        out.append(next(iter(tables.values())))
    return out


def restrict(table: UnitTable, keep: Callable[[str], bool]) -> UnitTable:
    """``table`` on the units ``keep`` accepts (order kept)."""
    return table.subset([u for u in table.units if keep(u)])


def _aligned(table: UnitTable, index: dict[str, int]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    ids, n, d = table.cluster_sums()
    cols = table.categories[table.headline]
    big_n, big_d = np.zeros((len(index), len(cols))), np.zeros((len(index), len(cols)))
    rows = [index[c] for c in ids]
    big_n[rows], big_d[rows] = n[:, cols], d[:, cols]
    return big_n, big_d, cols


def _joint(tables: Sequence[UnitTable], design: Design) -> tuple[np.ndarray, np.ndarray, int]:
    """Point values (T,) and resampled values (B, T) of every table's headline, one shared cluster draw."""
    index: dict[str, int] = {}
    for t in tables:
        for c in t.cluster_sums()[0]:
            index.setdefault(c, len(index))
    w = cluster_counts(np.random.default_rng(design.seed), len(index), design.n_resamples)
    point, stats = [], []
    for t in tables:
        n, d, cols = _aligned(t, index)
        point.append(np.nan if t.value() is None else t.value())
        stats.append(pooled_stat(w @ n, w @ d, t.groups[cols], t.pool) * t.scale)
    return np.array(point), np.stack(stats, axis=1), len(index)


def _iv(point: float, stats: np.ndarray, design: Design, n: int) -> tuple[float, float | None, float | None]:
    s = stats[~np.isnan(stats)]
    if n < 2 or len(s) < 2:
        return (float(point), None, None)
    lo, hi = percentile_interval(s, design.level)
    return (float(point), lo, hi)


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    st = require("scipy.stats", "stats", "rank agreement")
    ok = ~(np.isnan(a) | np.isnan(b))
    return float(st.kendalltau(a[ok], b[ok]).statistic) if ok.sum() >= 2 else float("nan")


def _order(labels: list[str], vals: np.ndarray) -> list[str]:
    return [labels[i] for i in sorted(range(len(labels)), key=lambda i: (-vals[i], labels[i]))]


def compare_sets(m: ResponseMatrix, keep: Callable[[str], bool], design: Design) -> tuple[list[Shift], Ranking]:
    """Per run :class:`Shift` and the :class:`Ranking` agreement of the full set vs the units ``keep`` accepts."""
    full = headline_tables(m)
    reduced = [restrict(t, keep) for t in full]
    point, stats, k = _joint(full + reduced, design)
    r = len(full)
    shifts = []
    for i, lab in enumerate(m.labels):
        shifts.append(Shift(lab, _iv(point[i], stats[:, i], design, k), _iv(point[r + i], stats[:, r + i], design, k),
                            _iv(point[r + i] - point[i], stats[:, r + i] - stats[:, i], design, k)))
    taus = np.array([_tau(stats[b, :r], stats[b, r:]) for b in range(len(stats))])
    tau = _iv(_tau(point[:r], point[r:]), taus, design, k)
    return shifts, Ranking(tau[0], tau[1], tau[2], _order(m.labels, point[:r]), _order(m.labels, point[r:]), k)


def _column_of(tables: Sequence[UnitTable]) -> dict[str, int]:
    t = tables[0]
    return {u: int(np.flatnonzero(row > 0)[0]) for u, row in zip(t.units, t.den) if (row > 0).any()}


def _pick(ranked: dict[int, list[tuple[float, str]]], size: dict[int, int], f: float) -> list[str]:
    return sorted(i for c, lst in ranked.items() for _d, i in sorted(lst)[:max(1, int(np.ceil(f * size[c])))])


def suggest_subset(m: ResponseMatrix, discrimination: np.ndarray, exclude: set[str], design: Design,
                   fractions: Sequence[float] = SUBSET_FRACTIONS, target: float = TAU_TARGET) -> Subset:
    """The smallest subset (of ``fractions`` of the items) whose ranking of the runs has Kendall tau >=
    ``target`` with the full set's, else the one of highest tau (the smaller on a tie).

    Two rules are tried at each size, both leaving out ``exclude`` (the flagged items) and both stratified by
    column of the headline table (RGB-Th-Bench: each skill, so the macro mean keeps every skill), keeping
    ``ceil(fraction x column size)`` items per column: ``disc``, the items of highest ``discrimination``
    (NaN = none; ties by id), and ``strat``, a seeded random sample (``numpy.random.default_rng(design.seed)``
    permutation of each column's items in id order); at a size where both reach the target, ``disc`` is
    kept. Selected and judged on the same runs (in-sample): confirm on runs that were not used to pick it.
    """
    col = _column_of(headline_tables(m))
    size = {c: sum(1 for i in m.items if col.get(i) == c) for c in set(col.values())}
    by_disc: dict[int, list[tuple[float, str]]] = {}
    by_draw: dict[int, list[tuple[float, str]]] = {}
    rng = np.random.default_rng(design.seed)
    for c in sorted(size):
        ids = sorted(i for i in m.items if col.get(i) == c and i not in exclude)
        by_draw[c] = list(zip(rng.permutation(len(ids)).astype(float), ids))
    for item, dsc in zip(m.items, discrimination):
        if item not in exclude and not np.isnan(dsc) and item in col:
            by_disc.setdefault(col[item], []).append((-float(dsc), item))
    tried, best = [], None
    for f in fractions:
        for rule, ranked in (("disc", by_disc), ("strat", by_draw)):
            keep_ids = _pick(ranked, size, f)
            _shifts, rk = compare_sets(m, set(keep_ids).__contains__, design)
            tried.append((f, len(keep_ids), rk.tau, rk.low, rk.high, rule))
            if best is None or rk.tau > best[3].tau:
                best = (f, rule, keep_ids, rk)
        if best[3].tau >= target:
            break
    assert best is not None
    f, rule, ids, rk = best
    sha = hashlib.sha256("\n".join(ids).encode()).hexdigest()
    words = ("point-biserial discrimination over {n} runs (ties by id)" if rule == "disc" else
             "a seeded random draw (seed {seed}, each column's ids sorted, then numpy default_rng permutation)")
    text = (f"per headline column, {f:.0%} of the unflagged items, chosen by "
            + words.format(n=len(m.runs), seed=design.seed))
    return Subset(f"{m.benchmark}-{rule}{round(100 * f)}-{sha[:8]}", text, ids, sha, rk, tried)
