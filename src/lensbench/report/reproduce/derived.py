"""Metric tables a paper computes beyond a benchmark's unit tables, built from sample records with the
same cluster resampling (:class:`lensbench.scoring.bootstrap.UnitTable`).

* :func:`record_table`: a per-record 0/1 (or fractional) quantity pooled over records, as a percentage
  (``scale=100``) or as a count (``count=True``: the scale is the number of records scored, so the value
  is how many records have it, and its CI resamples clusters at a fixed number of records);
  columns and categories from a label (e.g. one column per L-1 category).
* :func:`revalue`: a unit table with each unit's value replaced (e.g. the mean over best-of-N samples
  instead of the selected sample's hit): same units, columns, clusters and categories, so it pairs with
  the original (:func:`lensbench.scoring.paired.pair_tables`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["record_table", "revalue"]


def record_table(metric: str, records: Sequence[SampleRecord], value: Callable[[SampleRecord], float | None],
                 cluster: Callable[[SampleRecord], str], cluster_name: str, *,
                 column: Callable[[SampleRecord], str] | None = None, total: str = "all",
                 count: bool = False) -> UnitTable | None:
    """A micro-pooled table of ``value(record)`` over the records not ``error`` (``value`` None = the record
    does not count). ``column``: the record's column (one category per column, plus ``total`` over all);
    None: one column, the category ``total``. ``count``: the value is a count (see the module docstring;
    one column only: ValueError with ``column``). None when no record counts."""
    if count and column is not None:
        raise ValueError("a count table has one column")
    rows = [(r, v) for r in records if r.outcome != "error" for v in [value(r)] if v is not None]
    if not rows:
        return None
    cols = list(dict.fromkeys(column(r) for r, _v in rows)) if column else [total]
    ci = {c: i for i, c in enumerate(cols)}
    num = np.zeros((len(rows), len(cols)))
    den = np.zeros_like(num)
    for i, (r, v) in enumerate(rows):
        j = ci[column(r)] if column else 0
        num[i, j], den[i, j] = float(v), 1.0
    cats = {total: list(range(len(cols)))}
    if column:
        cats.update({c: [i] for c, i in ci.items() if c != total})
    return UnitTable(metric, [r.sample_id for r, _v in rows], cols, num, den, np.zeros(len(cols), int),
                     [cluster(r) for r, _v in rows], cluster_name, "micro", cats,
                     float(len(rows)) if count else 100.0)


def revalue(table: UnitTable, metric: str, values: dict[str, float | None]) -> UnitTable | None:
    """``table`` with unit ``u``'s numerator ``values[u] * den`` (units without a value dropped); None when no
    unit has one."""
    keep = [u for u in table.units if values.get(u) is not None]
    if not keep:
        return None
    t = table.subset(keep)
    num = t.den * np.array([float(values[u]) for u in keep]).reshape(-1, 1)
    return UnitTable(metric, t.units, t.columns, num, t.den, t.groups, t.clusters, t.cluster, t.pool, t.categories,
                     t.scale, t.setting)
