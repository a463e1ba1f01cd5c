"""RGB-Th-Bench metrics from SampleRecords: QAcc, SAcc, significance thresholds, counts.

Source: paper Sec. 3.4 (QAcc = % questions right; SAcc = % (scene, skill) units with ALL their
questions right), Table 3 (per prompt group = mean of its skills; Overall = mean of the 14
skills; "Statistically Significant" row, p < 0.05), RGB-Th-Bench README, Protocol.
"""

from __future__ import annotations

from typing import Any

from lensbench.benchmarks.rgbth.data import RGB_TH_TXT, RGB_TXT
from lensbench.benchmarks.rgbth.units import skill_tables
from lensbench.core.records import SampleRecord
from lensbench.scoring.metrics import binomial_threshold

__all__ = ["aggregate_records", "GROUPS", "SIGNIFICANCE_TEST"]

GROUPS = (RGB_TXT, RGB_TH_TXT)
SIGNIFICANCE_TEST = ("one-sided exact binomial, p < 0.05; chance 50% per question, 6.25% per 4-question unit")


def aggregate_records(records: list[SampleRecord]) -> tuple[dict[str, Any], dict[str, Any]]:
    """QAcc / SAcc per skill abbreviation, per group and Overall (percent); counts and thresholds.

    ``records``: one per question, ``labels`` = {skill, abbrev, group, scene, extra}. The values
    are those of the unit tables (:func:`~lensbench.benchmarks.rgbth.units.skill_tables`, which the
    CIs resample too). Returns ``(metrics, counts)``: ``metrics = {"QAcc": {col: %}, "SAcc": {col: %},
    "significance": {"QAcc": {col: %}, "SAcc": {col: %}, "test": str}}`` with columns
    ``Overall``, ``RGB-Txt``, ``RGB-Th-Txt`` and the abbreviations (paper order, extra skills
    last; a column with nothing scored is None). A question whose call failed (``error``) is
    left out of QAcc and its unit out of SAcc. ``counts``: ``n`` (questions scored),
    ``n_questions``, ``n_unparseable`` (Fail = non-compliance), ``n_error``, ``n_units``,
    ``n_units_scored``, ``n_units_missing``, ``per_skill`` {abbrev: {questions, units}} and
    ``data_defects`` [{unit, skill, question}] (units asking one question with opposite answers).
    """
    tables = skill_tables(records, extra_skills=True)
    q, s = tables["QAcc"], tables["SAcc"]
    metrics: dict[str, Any] = {}
    for name, t in (("QAcc", q), ("SAcc", s)):
        metrics[name] = {"Overall": t.value("Overall"),
                         **{g: t.value(g) if g in t.categories else None for g in GROUPS},
                         **{ab: t.value(ab) for ab in t.columns}}
    # significance thresholds from the counts (binomial, p < 0.05; Table 3's row)
    n_q = {g: q.n_units(g) if g in q.categories else 0 for g in GROUPS}
    n_u = {g: s.n_units(g) if g in s.categories else 0 for g in GROUPS}
    n_q["Overall"], n_u["Overall"] = sum(n_q.values()), sum(n_u.values())
    sig_q, sig_s = {}, {}
    for col in ("Overall", *GROUPS):
        sig_q[col] = binomial_threshold(n_q[col], 0.5) if n_q[col] else None
        sig_s[col] = binomial_threshold(n_u[col], 0.5 ** 4) if n_u[col] else None
    metrics["significance"] = {"QAcc": sig_q, "SAcc": sig_s, "test": SIGNIFICANCE_TEST}
    n_units = len({(r.labels["scene"], r.labels["abbrev"]) for r in records})
    counts = {
        "n": sum(r.outcome != "error" for r in records),
        "n_questions": len(records),
        "n_unparseable": sum(r.outcome == "unparseable" for r in records),
        "n_error": sum(r.outcome == "error" for r in records),
        "n_units": n_units,
        "n_units_scored": len(s.units),
        "n_units_missing": n_units - len(s.units),
        "per_skill": {ab: {"questions": q.n_units(ab), "units": s.n_units(ab)} for ab in q.columns},
        "data_defects": _defects(records),
    }
    return metrics, counts


def _defects(records: list[SampleRecord]) -> list[dict[str, str]]:
    """``[{unit, skill, question}]`` of the units that ask one question with opposite answers (``extra.defects``)."""
    defects: list[dict[str, str]] = []
    for r in records:
        for question in r.extra.get("defects", ()):
            d = {"unit": f"{r.labels['scene']}/{r.labels['abbrev']}", "skill": r.labels["skill"], "question": question}
            if d not in defects:
                defects.append(d)
    return defects
