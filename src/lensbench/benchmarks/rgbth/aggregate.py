"""RGB-Th-Bench metrics from SampleRecords: QAcc, SAcc, significance thresholds, counts.

Source: paper Sec. 3.4 (QAcc = % questions right; SAcc = % (scene, skill) units with ALL their
questions right), Table 3 (per prompt group = mean of its skills; Overall = mean of the 14
skills; "Statistically Significant" row, p < 0.05), SPEC §2.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.scoring.metrics import binomial_threshold, mean
from lensbench.benchmarks.rgbth.data import PAPER_ABBREVS, RGB_TH_TXT, RGB_TXT

__all__ = ["aggregate_records", "GROUPS", "SIGNIFICANCE_TEST"]

GROUPS = (RGB_TXT, RGB_TH_TXT)
SIGNIFICANCE_TEST = ("one-sided exact binomial, p < 0.05; chance 50% per question, 6.25% per 4-question unit")


def aggregate_records(records: list[SampleRecord]) -> tuple[dict[str, Any], dict[str, Any]]:
    """QAcc / SAcc per skill abbreviation, per group and Overall (percent); counts and thresholds.

    ``records``: one per question, ``labels`` = {skill, abbrev, group, scene, extra}.
    Returns ``(metrics, counts)``: ``metrics = {"QAcc": {col: %}, "SAcc": {col: %},
    "significance": {"QAcc": {col: %}, "SAcc": {col: %}, "test": str}}`` with columns
    ``Overall``, ``RGB-Txt``, ``RGB-Th-Txt`` and the abbreviations (paper order, extra skills
    last; a column with nothing scored is None). A question whose call failed (``error``) is
    left out of QAcc and its unit out of SAcc. ``counts``: ``n`` (questions scored),
    ``n_questions``, ``n_unparseable`` (Fail = non-compliance), ``n_error``, ``n_units``,
    ``n_units_scored``, ``n_units_missing``, ``per_skill`` {abbrev: {questions, units}} and
    ``data_defects`` [{unit, skill, question}] (units asking one question with opposite answers).
    """
    by_skill_q: dict[str, list[bool]] = defaultdict(list)
    units: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    order: list[str] = []
    groups: dict[str, str] = {}
    extra: dict[str, bool] = {}
    defects: list[dict[str, str]] = []
    for r in records:
        lab = r.labels
        ab = lab["abbrev"]
        if ab not in groups:
            order.append(ab)
            groups[ab] = lab["group"]
            extra[ab] = bool(lab["extra"])
        units[(lab["scene"], ab)].append(r)
        if r.outcome != "error":
            by_skill_q[ab].append(r.outcome == "correct")
        for q in r.extra.get("defects", ()):
            d = {"unit": f"{lab['scene']}/{ab}", "skill": lab["skill"], "question": q}
            if d not in defects:
                defects.append(d)
    by_skill_u: dict[str, list[bool]] = defaultdict(list)
    missing_units = 0
    for (_scene, ab), rs in units.items():
        if any(r.outcome == "error" for r in rs):
            missing_units += 1
            continue
        by_skill_u[ab].append(all(r.outcome == "correct" for r in rs))
    paper_order = [a for a in PAPER_ABBREVS if a in groups] + [a for a in order if a not in PAPER_ABBREVS]
    qacc: dict[str, float | None] = {}
    sacc: dict[str, float | None] = {}
    for ab in paper_order:
        qs, us = by_skill_q.get(ab, []), by_skill_u.get(ab, [])
        qacc[ab] = 100.0 * sum(qs) / len(qs) if qs else None
        sacc[ab] = 100.0 * sum(us) / len(us) if us else None
    core = [a for a in paper_order if not extra[a]]
    cols = {g: [a for a in core if groups[a] == g] for g in GROUPS}
    q_out: dict[str, float | None] = {"Overall": mean(qacc[a] for a in core)}
    s_out: dict[str, float | None] = {"Overall": mean(sacc[a] for a in core)}
    for g, abs_ in cols.items():
        q_out[g] = mean(qacc[a] for a in abs_)
        s_out[g] = mean(sacc[a] for a in abs_)
    q_out.update(qacc)
    s_out.update(sacc)
    # significance thresholds from the counts (binomial, p < 0.05; Table 3's row)
    n_q = {g: sum(len(by_skill_q.get(a, [])) for a in abs_) for g, abs_ in cols.items()}
    n_u = {g: sum(len(by_skill_u.get(a, [])) for a in abs_) for g, abs_ in cols.items()}
    n_q["Overall"], n_u["Overall"] = sum(n_q.values()), sum(n_u.values())
    sig_q, sig_s = {}, {}
    for col in ("Overall", *GROUPS):
        sig_q[col] = binomial_threshold(n_q[col], 0.5) if n_q[col] else None
        sig_s[col] = binomial_threshold(n_u[col], 0.5 ** 4) if n_u[col] else None
    metrics = {"QAcc": q_out, "SAcc": s_out, "significance": {"QAcc": sig_q, "SAcc": sig_s, "test": SIGNIFICANCE_TEST}}
    counts = {
        "n": sum(r.outcome != "error" for r in records),
        "n_questions": len(records),
        "n_unparseable": sum(r.outcome == "unparseable" for r in records),
        "n_error": sum(r.outcome == "error" for r in records),
        "n_units": len(units),
        "n_units_scored": len(units) - missing_units,
        "n_units_missing": missing_units,
        "per_skill": {ab: {"questions": len(by_skill_q.get(ab, [])), "units": len(by_skill_u.get(ab, []))}
                      for ab in paper_order},
        "data_defects": defects,
    }
    return metrics, counts
