"""Agreement between reviewers, and a reviewer's judgments against known labels.

* percent agreement: per item answered by >= 2 reviewers, the share of reviewer pairs giving
  the same value; averaged over those items (0-100).
* Cohen's kappa (Cohen 1960), exactly two reviewers, over the items both answered:
  ``(p_o - p_e) / (1 - p_e)`` with ``p_e = sum_c p1(c) p2(c)``.
* Fleiss' kappa (Fleiss 1971), over the items answered by every reviewer (>= 2):
  ``(P - P_e) / (1 - P_e)``, ``P`` the mean per-item pair agreement, ``P_e = sum_c p(c)^2``.
* Krippendorff's alpha (``krippendorff`` package, missing answers allowed) at the field's
  level: nominal (options as categories), ordinal / interval (options read as numbers when they
  all are, else by their position).

Kappas treat every field as nominal. A figure that cannot be computed (too few reviewers or
items, no variation) is None.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from lensbench.core.extras import require
from lensbench.tools.review.form import Field, Form
from lensbench.core.answers import Answers

__all__ = ["percent_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "agreement", "binary_scores"]

Table = Sequence[Mapping[str, Any]]  # per item: {reviewer: value}


def percent_agreement(table: Table) -> float | None:
    """Mean share (0-100) of agreeing reviewer pairs over items with >= 2 values; None if none."""
    shares = []
    for row in table:
        vals = [v for v in row.values() if v is not None]
        if len(vals) >= 2:
            pairs = list(combinations(vals, 2))
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return 100.0 * float(np.mean(shares)) if shares else None


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Cohen's kappa of two reviewers' values over the same items (equal lengths, >= 1); None when
    chance agreement is 1 (a single category used by both)."""
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: {len(a)} vs {len(b)} values")
    if not a:
        return None
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    pe = sum(ca[c] * cb[c] for c in set(ca) | set(cb)) / (n * n)
    return None if pe >= 1 else (po - pe) / (1 - pe)


def fleiss_kappa(table: Table) -> float | None:
    """Fleiss' kappa over items that all carry the same number (>= 2) of values; None when there
    are no such items or chance agreement is 1. Raises ValueError for unequal counts."""
    rows = [[v for v in r.values() if v is not None] for r in table]
    rows = [r for r in rows if r]
    if not rows:
        return None
    m = len(rows[0])
    if m < 2 or any(len(r) != m for r in rows):
        raise ValueError("fleiss_kappa needs the same number (>= 2) of values per item")
    n = len(rows)
    per_item = [(sum(c * c for c in Counter(r).values()) - m) / (m * (m - 1)) for r in rows]
    totals = Counter(v for r in rows for v in r)
    pe = sum((c / (n * m)) ** 2 for c in totals.values())
    return None if pe >= 1 else (float(np.mean(per_item)) - pe) / (1 - pe)


def krippendorff_alpha(matrix: np.ndarray, level: str) -> float | None:
    """Krippendorff's alpha of a reviewers x units matrix (NaN = missing) at ``level``
    (``nominal`` | ``ordinal`` | ``interval`` | ``ratio``); None when fewer than 2 reviewers, no
    unit has 2 values, or the package cannot compute it (e.g. a single value used throughout)."""
    krippendorff = require("krippendorff", "review", "Krippendorff's alpha")

    if matrix.shape[0] < 2 or not np.any(np.sum(~np.isnan(matrix), axis=0) >= 2):
        return None
    try:
        return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return None


def _codes(f: Field) -> dict[str, float]:
    if f.level != "nominal":
        try:
            return {o: float(o) for o in f.options}
        except ValueError:
            pass
    return {o: float(i) for i, o in enumerate(f.options)}


def agreement(answers: Answers, form: Form, fields: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per choice field (all, or ``fields``): ``{"n_reviewers", "n_items" (answered by >= 2),
    "percent", "cohen_kappa" (exactly 2 reviewers), "fleiss_kappa" (items answered by all
    reviewers), "krippendorff_alpha"}``. Raises ValueError naming a field that is not a choice."""
    by = form.by_name()
    names = list(fields) if fields is not None else [f.name for f in form.fields if f.kind == "choice"]
    reviewers = sorted(answers)
    keys = sorted({k for r in reviewers for k in answers[r]})
    out = {}
    for name in names:
        f = by.get(name)
        if f is None or f.kind != "choice":
            raise ValueError(f"agreement: {name!r} is not a choice field of the form")
        table = [{r: answers[r].get(k, {}).get(name) for r in reviewers} for k in keys]
        table = [{r: v for r, v in row.items() if v is not None} for row in table]
        multi = [row for row in table if len(row) >= 2]
        full = [row for row in multi if len(row) == len(reviewers)]
        cohen = None
        if len(reviewers) == 2 and multi:
            cohen = cohen_kappa([row[reviewers[0]] for row in multi], [row[reviewers[1]] for row in multi])
        code = _codes(f)
        mat = np.full((len(reviewers), len(keys)), np.nan)
        for j, row in enumerate(table):
            for i, r in enumerate(reviewers):
                if r in row and row[r] in code:
                    mat[i, j] = code[row[r]]
        out[name] = {"n_reviewers": len(reviewers), "n_items": len(multi), "percent": percent_agreement(multi),
                     "cohen_kappa": cohen, "fleiss_kappa": fleiss_kappa(full) if full else None,
                     "krippendorff_alpha": krippendorff_alpha(mat, f.level)}
    return out


def binary_scores(truth: Mapping[str, bool], judged: Mapping[str, bool]) -> dict[str, Any]:
    """Judgments against labels over the keys in both (True = the positive class): ``n``, ``tp``,
    ``fp``, ``fn``, ``tn``, and ``accuracy``, ``precision``, ``recall``, ``f1`` in 0-100 (None
    when undefined, e.g. precision with no positive judgment)."""
    keys = [k for k in truth if k in judged]
    tp = sum(1 for k in keys if truth[k] and judged[k])
    fp = sum(1 for k in keys if not truth[k] and judged[k])
    fn = sum(1 for k in keys if truth[k] and not judged[k])
    tn = len(keys) - tp - fp - fn
    prec = tp / (tp + fp) if tp + fp else None
    rec = tp / (tp + fn) if tp + fn else None
    f1 = 2 * prec * rec / (prec + rec) if prec is not None and rec is not None and prec + rec else None
    pct = (lambda x: None if x is None else 100.0 * x)
    return {"n": len(keys), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "accuracy": pct(tp / len(keys) + tn / len(keys)) if keys else None,
            "precision": pct(prec), "recall": pct(rec), "f1": pct(f1)}
