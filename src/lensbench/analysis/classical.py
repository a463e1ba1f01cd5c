"""Classical test theory per item: difficulty and discrimination (point-biserial with the rest-score).

For item j and run i with a score ``x_ij`` in {0, 1} (NaN = not scored):

* difficulty ``p_j`` = mean of ``x_ij`` over the runs that scored j (proportion correct, 0-1; a high
  value is an easy item);
* rest-score ``R_ij`` = run i's proportion correct over the items it scored *other than j* (the
  "corrected" item-total correlation: j is left out of the total so it does not correlate with itself;
  a proportion rather than a sum because runs score different numbers of items);
* discrimination ``r_j`` = point-biserial correlation of ``x_.j`` with ``R_.j`` over the runs that
  scored j (``scipy.stats.pointbiserialr``: Pearson r of a 0/1 variable with a continuous one), with its
  two-sided p-value; NaN when fewer than 3 runs scored j or every one scored it alike.

Source: Lord & Novick (1968), ch. 15 (item difficulty, item-test correlations); Henrysson (1963) for the
corrected item-total correlation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lensbench.core.extras import require

__all__ = ["ItemStats", "classical_stats"]


@dataclass(frozen=True)
class ItemStats:
    """Per-item classical statistics, arrays of shape (I,): ``p`` difficulty (0-1), ``n`` runs that scored
    the item, ``r_pb`` point-biserial with the rest-score (-1..1, NaN when undefined) and ``p_value``
    (two-sided, NaN when undefined)."""

    p: np.ndarray
    n: np.ndarray
    r_pb: np.ndarray
    p_value: np.ndarray


def classical_stats(x: np.ndarray) -> ItemStats:
    """:class:`ItemStats` of an (I, R) score matrix (1.0 / 0.0 / NaN). Raises MissingExtraError without scipy."""
    st = require("scipy.stats", "stats", "item analysis")
    x = np.asarray(x, float)
    seen = ~np.isnan(x)
    xs = np.where(seen, x, 0.0)
    n_item = seen.sum(axis=1)
    p = np.divide(xs.sum(axis=1), n_item, out=np.full(len(x), np.nan), where=n_item > 0)
    tot, cnt = xs.sum(axis=0), seen.sum(axis=0)  # per run
    r_pb = np.full(len(x), np.nan)
    pv = np.full(len(x), np.nan)
    for j in range(len(x)):
        cols = np.flatnonzero(seen[j])
        if len(cols) < 3:
            continue
        rest_n = cnt[cols] - 1
        ok = rest_n > 0
        cols, rest = cols[ok], (tot[cols] - xs[j, cols])[ok] / rest_n[ok]
        xj = x[j, cols]
        if len(cols) < 3 or np.all(xj == xj[0]) or np.all(rest == rest[0]):
            continue
        res = st.pointbiserialr(xj, rest)
        r_pb[j], pv[j] = float(res.statistic), float(res.pvalue)
    return ItemStats(p, n_item, r_pb, pv)
