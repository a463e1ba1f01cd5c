"""One computed cell beside the published value: our value, its 95% CI, the verdict.

:func:`judge_cell`: the value and CI are :func:`lensbench.scoring.bootstrap.bootstrap_ci` of the run's
metric table (the interval ``lensbench report`` prints), the p-value :func:`.stats.inversion_p` of the
same resamples (:func:`lensbench.scoring.bootstrap.bootstrap_stats`). ``consistent`` when the published
value lies in the CI widened by half a unit of the paper's last printed digit (a value printed as 71.1
may be 71.14), ``differs`` otherwise; ``not comparable`` when a blocker is given (another model,
setting, part of the data), the paper prints no value, or the run computes none.
:func:`judge_difference` does the same for a paired difference of two runs (e.g. a thinking gain).
"""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.report.reproduce.model import CONSISTENT, DIFFERS, Cell
from lensbench.report.reproduce.stats import inversion_p
from lensbench.scoring.bootstrap import Design, UnitTable, bootstrap_ci, bootstrap_stats, percentile_interval
from lensbench.scoring.paired import pair_tables, paired_stats

__all__ = ["judge_cell", "judge_difference", "verdict_of", "tolerance"]


def tolerance(decimals: int) -> float:
    """Half a unit of the last printed digit: ``0.05`` for values printed with one decimal."""
    return 0.5 * 10.0 ** (-decimals)


def verdict_of(cell: Cell, stats, decimals: int, caveats: Sequence[str] = ()) -> Cell:
    """Fill ``cell.verdict`` / ``p`` / ``reason`` from its value, CI and published value (no blocker known)."""
    if cell.published is None:
        cell.reason = cell.reason or "the paper prints no value for this cell"
        return cell
    if cell.value is None:
        cell.reason = "the run computes no value here (no scored units in this category)"
        return cell
    if cell.low is None or cell.high is None or stats is None:
        cell.reason = f"a CI needs at least 2 resampled clusters ({cell.n} here)"
        return cell
    tol = tolerance(decimals)
    inside = cell.low - tol <= cell.published <= cell.high + tol
    cell.verdict = CONSISTENT if inside else DIFFERS
    cell.p = inversion_p(stats, cell.published)
    cell.reason = "; ".join(caveats)
    return cell


def judge_cell(row: str, column: str, table: UnitTable | None, category: str, published: float | None,
               design: Design, *, paper_row: str | None = None, blockers: Sequence[str] = (), unpublished: str = "",
               decimals: int = 1, caveats: Sequence[str] = ()) -> Cell:
    """The :class:`~lensbench.report.reproduce.model.Cell` of one category of ``table`` against ``published``
    (module docstring). ``blockers``: reasons the run is not the paper's measurement (verdict ``not
    comparable`` whatever the numbers); ``unpublished``: why the paper prints no value."""
    cell = Cell(row, column, None, published=published, paper_row=paper_row)
    if table is None or category not in table.categories:
        cell.reason = "; ".join([*blockers, "the run computes no value here (no such category in its records)"])
        return cell
    iv = bootstrap_ci(table, category, n_resamples=design.n_resamples, seed=design.seed, level=design.level)
    cell.value, cell.low, cell.high, cell.n = iv.value, iv.low, iv.high, iv.n
    if blockers:
        cell.reason = "; ".join(blockers)
        return cell
    if published is None:
        cell.reason = unpublished or "the paper prints no value for this cell"
        return cell
    stats = bootstrap_stats(table, category, n_resamples=design.n_resamples, seed=design.seed)
    return verdict_of(cell, stats, decimals, caveats)


def judge_difference(row: str, column: str, ta: UnitTable | None, tb: UnitTable | None, category: str,
                     published: float | None, design: Design, *, paper_row: str | None = None,
                     blockers: Sequence[str] = (), decimals: int = 1, caveats: Sequence[str] = ()) -> Cell:
    """A paired difference A - B (same clusters, units both scored: :mod:`lensbench.scoring.paired`) against a
    published difference, with its bootstrap CI and the inversion p of the same resamples."""
    cell = Cell(row, column, None, published=published, paper_row=paper_row)
    if ta is None or tb is None or category not in ta.categories or category not in tb.categories:
        cell.reason = "; ".join([*blockers, "a run computes no value in this category"])
        return cell
    a, b = pair_tables(ta, tb)
    va, vb = a.value(category), b.value(category)
    cell.value = None if va is None or vb is None else va - vb
    stats = paired_stats(ta, tb, category, n_resamples=design.n_resamples, seed=design.seed, paired=(a, b))
    _ids, _n, d = a.cluster_sums()
    cell.n = int((d[:, a.categories[category]].sum(axis=1) > 0).sum())
    if stats is not None:
        cell.low, cell.high = percentile_interval(stats, design.level)
    if blockers:
        cell.reason = "; ".join(blockers)
        return cell
    return verdict_of(cell, stats, decimals, caveats)
