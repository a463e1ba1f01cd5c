"""Flags of suspect items, from a :class:`~lensbench.analysis.matrix.ResponseMatrix` and its statistics.

Each flag is a named rule with its threshold as a module constant (issue 34, part 1):

* ``contradictory-duplicate``: two or more items ask the same question of the same media
  (:func:`~lensbench.analysis.matrix.question_key`) with different keys: no model can answer all
  of them (RGB-Th-Bench: ``Source 1/Fuse panel 2``, Temp2Col; RGB-Th-Bench README, Protocol).
* ``no-capable-model``: at least :data:`MIN_CAPABLE` *capable* runs scored the item (capable = proportion
  correct at or above the median of the runs) and none of them got it right.
* ``falls-with-ability``: negative point-biserial with the rest-score whose p-value survives
  Benjamini-Hochberg at false discovery rate :data:`FDR` over all items with a p-value
  (``scipy.stats.false_discovery_control``): the better a model, the likelier it fails the item.
* ``key-suspect``: at least :data:`MIN_CAPABLE` capable runs gave a parsed answer, and a share of at least
  :data:`KEY_SHARE` of them gave the same answer, which is not the key.
* ``blind-answerable``: every blind run (no image) that scored the item got it right.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from lensbench.core.extras import require
from lensbench.analysis.classical import ItemStats
from lensbench.analysis.matrix import ResponseMatrix

__all__ = ["FLAGS", "FDR", "KEY_SHARE", "MIN_CAPABLE", "ItemFlags", "flag_items", "capable_runs"]

FLAGS = ("contradictory-duplicate", "no-capable-model", "falls-with-ability", "key-suspect", "blind-answerable")
#: false discovery rate of the falls-with-ability test
FDR = 0.10
#: share of capable runs agreeing on one wrong answer that makes a key suspect
KEY_SHARE = 0.8
#: capable runs that must have scored an item before it can be flagged as unanswered or mis-keyed
MIN_CAPABLE = 3


@dataclass
class ItemFlags:
    """``flags``: item -> names of the flags it raised (in :data:`FLAGS` order); ``why``: item -> one
    sentence per flag; ``q_value``: (I,) Benjamini-Hochberg adjusted p of the point-biserial (NaN where
    none); ``capable``: labels of the capable runs."""

    flags: dict[str, list[str]]
    why: dict[str, list[str]]
    q_value: np.ndarray
    capable: list[str]

    def flagged(self, names: tuple[str, ...] | None = None) -> list[str]:
        """Items raising any flag (or any of ``names``), in matrix order."""
        return [i for i, fs in self.flags.items() if fs and (names is None or set(fs) & set(names))]


def capable_runs(m: ResponseMatrix) -> np.ndarray:
    """(R,) bool: runs whose proportion correct is at or above the median over runs."""
    ab = m.ability
    return ab >= np.nanmedian(ab)


def flag_items(m: ResponseMatrix, stats: ItemStats) -> ItemFlags:
    """Apply the rules of the module docstring. Raises MissingExtraError without scipy."""
    st = require("scipy.stats", "stats", "item analysis")
    flags: dict[str, list[str]] = {i: [] for i in m.items}
    why: dict[str, list[str]] = {i: [] for i in m.items}

    def add(item: str, name: str, sentence: str) -> None:
        flags[item].append(name)
        why[item].append(sentence)

    by_q: dict[str, list[str]] = defaultdict(list)
    for i in m.items:
        by_q[m.qkeys[i]].append(i)
    dup = {i: g for g in by_q.values() if len({m.targets[j] for j in g}) > 1 for i in g}

    cap = capable_runs(m)
    q = np.full(len(m.items), np.nan)
    has = ~np.isnan(stats.p_value)
    if has.any():
        q[has] = st.false_discovery_control(stats.p_value[has], method="bh")
    for k, item in enumerate(m.items):
        if item in dup:
            others = ", ".join(f"{j} (key {m.targets[j]})" for j in dup[item] if j != item)
            add(item, "contradictory-duplicate", f"same question and media as {others}; key here {m.targets[item]}")
        row, seen = m.x[k], ~np.isnan(m.x[k])
        n_cap = int((seen & cap).sum())
        if n_cap >= MIN_CAPABLE and np.nansum(row[cap]) == 0:
            add(item, "no-capable-model", f"none of the {n_cap} capable runs that scored it is right")
        if stats.r_pb[k] < 0 and q[k] < FDR:
            add(item, "falls-with-ability", f"point-biserial {stats.r_pb[k]:.2f} with the rest-score "
                                            f"(BH q = {q[k]:.3f})")
        given = [str(a) for a, c, s in zip(m.answers[k], cap, seen) if c and s and str(a)]
        if len(given) >= MIN_CAPABLE:
            top, n_top = max(((a, given.count(a)) for a in sorted(set(given))), key=lambda t: t[1])
            if top != m.targets[item] and n_top / len(given) >= KEY_SHARE:
                add(item, "key-suspect", f"{n_top} of {len(given)} capable runs answer {top!r}; key "
                                         f"{m.targets[item]!r}")
        blind = m.blind.get(item)
        if blind and all(v == 1.0 for v in blind):
            add(item, "blind-answerable", f"right in all {len(blind)} blind run(s)")
    return ItemFlags(flags, why, q, [lab for lab, c in zip(m.labels, cap) if c])
