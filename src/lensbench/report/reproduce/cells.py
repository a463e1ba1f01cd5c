"""One computed cell beside the published value: our value, its 95% CI, the verdict.

:func:`judge_cell`: the value and CI are :func:`lensbench.scoring.bootstrap.bootstrap_ci` of the run's
metric table (the interval ``lensbench report`` prints); the verdict comes from
:func:`lensbench.scoring.agreement.agreement`: a test of ``ours = published`` that counts both estimates'
sampling noise (the paper's value is an estimate over the same items with the same design), exact at
small counts and at 0% / 100%, and an equivalence test (TOST) at the stated margin. A tested cell is
``consistent`` when equivalent, else ``inconclusive`` until :func:`decide_family` (Holm over the tested
cells of one table or figure) makes it ``differs`` when its adjusted p < alpha. ``not comparable`` when a
blocker is given (another model, setting, part of the data), fewer than 10 clusters count, the paper
prints no value, or the run computes none. :func:`judge_difference` does the same for a paired
difference of two runs (e.g. a thinking gain) against a published difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from lensbench.report.reproduce.model import CONSISTENT, DIFFERS, INCONCLUSIVE, Cell
from lensbench.report.reproduce.stats import holm
from lensbench.scoring.agreement import (ALPHA, MARGIN_POINTS, MIN_CLUSTERS, Agreement, agreement,
                                         cluster_agreement)
from lensbench.scoring.bootstrap import Design, UnitTable, bootstrap_ci, percentile_interval
from lensbench.scoring.paired import pair_tables, paired_stats

__all__ = ["judge_cell", "judge_difference", "apply_agreement", "decide", "decide_family", "tolerance"]


def tolerance(decimals: int) -> float:
    """Half a unit of the last printed digit: ``0.05`` for values printed with one decimal."""
    return 0.5 * 10.0 ** (-decimals)


def apply_agreement(cell: Cell, result: Agreement | str, caveats: Sequence[str] = ()) -> Cell:
    """Fill ``cell`` from a test (:class:`~lensbench.scoring.agreement.Agreement`: ``p``, margin, TOST
    interval, method; verdict ``consistent`` when equivalent, else ``inconclusive`` until
    :func:`decide_family`) or from a reason no test applies (str: ``not comparable``)."""
    if isinstance(result, str):
        cell.reason = "; ".join([result, *caveats])
        return cell
    cell.p, cell.margin, cell.d_low, cell.d_high = result.p, result.margin, result.low, result.high
    cell.method = result.method
    cell.verdict = CONSISTENT if result.equivalent else INCONCLUSIVE
    cell.reason = "; ".join(caveats)
    return cell


def decide(equivalent: Sequence[bool], pvalues: Sequence[float], alpha: float = ALPHA) -> tuple[list[str], list[float]]:
    """The verdicts of one family of tested cells (the rule of docs/protocol.md, general rules): Holm-adjusted p-values
    over the family; ``consistent`` when equivalent (TOST), else ``differs`` when the adjusted p < alpha,
    else ``inconclusive``. Returns ``(verdicts, adjusted p)`` in the input order."""
    adj = holm(list(pvalues)) if pvalues else []
    out = [CONSISTENT if eq else DIFFERS if a < alpha else INCONCLUSIVE for eq, a in zip(equivalent, adj)]
    return out, adj


def decide_family(cells: Sequence[Cell], alpha: float = ALPHA) -> int:
    """Apply :func:`decide` to the tested cells of one table or figure (those with a ``p`` and a verdict
    ``consistent`` / ``inconclusive``; deterministic cells keep theirs); returns the family size. A
    consistent cell whose difference is also significant keeps ``consistent`` with a note (a real
    difference smaller than the margin)."""
    tested = [c for c in cells if c.p is not None and c.verdict in (CONSISTENT, INCONCLUSIVE)]
    verdicts, adj = decide([c.verdict == CONSISTENT for c in tested], [float(c.p) for c in tested], alpha)
    for c, v, a in zip(tested, verdicts, adj):
        c.verdict, c.p_holm = v, a
        if v == CONSISTENT and a < alpha:
            note = f"a significant difference (Holm p {a:.3g}) smaller than the margin"
            c.reason = f"{c.reason}; {note}" if c.reason else note
    return len(tested)


def judge_cell(row: str, column: str, table: UnitTable | None, category: str, published: float | None,
               design: Design, *, paper_row: str | None = None, blockers: Sequence[str] = (), unpublished: str = "",
               decimals: int = 1, caveats: Sequence[str] = (), margin: float = MARGIN_POINTS) -> Cell:
    """The :class:`~lensbench.report.reproduce.model.Cell` of one category of ``table`` against ``published``
    (module docstring; the verdict is final only after :func:`decide_family`). ``blockers``: reasons the
    run is not the paper's measurement (verdict ``not comparable`` whatever the numbers); ``unpublished``:
    why the paper prints no value; ``margin``: equivalence margin in points of a percentage;
    ``decimals``: kept for the paper's precision (a rounding error of half a unit is far below any margin)."""
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
    return apply_agreement(cell, agreement(table, category, published, margin_points=margin), caveats)


def judge_difference(row: str, column: str, ta: UnitTable | None, tb: UnitTable | None, category: str,
                     published: float | None, design: Design, *, paper_row: str | None = None,
                     blockers: Sequence[str] = (), decimals: int = 1, caveats: Sequence[str] = (),
                     margin: float = MARGIN_POINTS) -> Cell:
    """A paired difference A - B (same clusters, units both scored: :mod:`lensbench.scoring.paired`) against a
    published difference, with its bootstrap CI; the test: the cluster method of
    :mod:`lensbench.scoring.agreement` with the run's variance from the same paired resamples (the paper's
    difference has the same design, so twice that variance)."""
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
    if published is None:
        cell.reason = "the paper prints no value for this cell"
        return cell
    if cell.value is None:
        return apply_agreement(cell, "a run computes no value in this category", caveats)
    if cell.n < MIN_CLUSTERS or stats is None:
        return apply_agreement(cell, f"too few clusters ({cell.n})", caveats)
    se = float(np.std(stats, ddof=1))
    if math.isnan(se):
        return apply_agreement(cell, f"too few clusters ({cell.n})", caveats)
    res = cluster_agreement(cell.value - published, se, cell.n, margin * a.scale / 100.0)
    res = Agreement(res.diff, res.low, res.high, res.p, res.margin, res.equivalent,
                    res.method.replace("2 x jackknife", "2 x paired bootstrap variance"), res.n, res.se)
    return apply_agreement(cell, res, caveats)
