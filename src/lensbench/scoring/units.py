"""Building blocks of a benchmark's unit tables: what every benchmark's ``units`` module shares.

A benchmark states its headline metrics and builds them once, as
:class:`~lensbench.scoring.bootstrap.UnitTable` s from its own sample records (``benchmarks/<name>/units.py``):
its aggregate reads the values from them and its CIs resample them (docs/protocol.md, general rules: the
largest independent cluster). This module holds only what those builders share: :class:`Headline`
(a leaderboard cell), the row helpers and :func:`make_table`. Records with outcome ``error``
never count.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["Headline", "Row", "scored", "hit", "first_seen", "make_table", "label_categories", "nonempty"]

#: one unit of a table: ``(unit id, cluster id, column index, numerator, denominator)``
Row = tuple[str, str, int, float, float]


@dataclass(frozen=True)
class Headline:
    """One leaderboard cell of a benchmark: ``metric`` (the key of the metrics block in ``result.json``
    and of the unit table), ``column`` (the block's key shown) and ``category`` (the table category whose
    CI goes with it), e.g. ``Headline("SAcc", "Overall", "Overall")``. ``named``: whether column headers
    name the metric (``"SAcc Overall"``) or only the column (``"Avg"``, a benchmark's one score)."""

    metric: str
    column: str
    category: str
    named: bool = True


def scored(records: Iterable[SampleRecord]) -> list[SampleRecord]:
    """The records that count (outcome not ``error``)."""
    return [r for r in records if r.outcome != "error"]


def hit(rec: SampleRecord) -> float:
    """1.0 for a ``correct`` record, else 0.0."""
    return 1.0 if rec.outcome == "correct" else 0.0


def first_seen(values: Iterable[Hashable], order: Sequence[Hashable] = ()) -> list[Any]:
    """The distinct ``values``: those in ``order`` first (in that order), then the others as first seen."""
    seen = list(dict.fromkeys(values))
    known = [v for v in order if v in set(seen)]
    return known + [v for v in seen if v not in set(known)]


def make_table(metric: str, rows: Sequence[Row], columns: list[str], *, cluster: str, pool: str,
               categories: dict[str, list[int]], groups: Sequence[int] | None = None,
               setting: dict[str, Any] | None = None, scale_first: bool = True) -> UnitTable:
    """A :class:`UnitTable` with one cell per unit (``rows``; see :data:`Row`); ``groups`` default to one
    group. ``cluster``: what a cluster is, in words; ``pool``/``categories``/``setting``/``scale_first``: as
    :class:`UnitTable`."""
    num = np.zeros((len(rows), len(columns)))
    den = np.zeros_like(num)
    for i, (_u, _c, col, n, d) in enumerate(rows):
        num[i, col], den[i, col] = n, d
    return UnitTable(metric, [r[0] for r in rows], columns, num, den,
                     np.asarray(groups if groups is not None else [0] * len(columns), int), [r[1] for r in rows],
                     cluster, pool, categories, setting=setting, scale_first=scale_first)  # type: ignore[arg-type]


def label_categories(records: Iterable[SampleRecord], column_of: Callable[[SampleRecord], str], label: str,
                     columns: list[str], name: Callable[[Any], str] = str) -> dict[str, list[int]]:
    """Categories pooling columns by a record label: ``name(labels[label]) -> [column indices]``, in first-seen
    order (e.g. RGB-Th-Bench's prompt groups RGB-Txt / RGB-Th-Txt, IV-Bench's P-Avg / R-Avg)."""
    col = {c: i for i, c in enumerate(columns)}
    out: dict[str, list[int]] = {}
    for r in records:
        g = r.labels.get(label)
        c = column_of(r)
        if g is not None and c in col and col[c] not in out.setdefault(name(g), []):
            out[name(g)].append(col[c])
    return out


def nonempty(tables: dict[str, UnitTable]) -> dict[str, UnitTable]:
    """The tables that hold at least one unit."""
    return {k: t for k, t in tables.items() if t.units}
