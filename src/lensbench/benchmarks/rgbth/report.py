"""RGB-Th-Bench report: Table 3 layout, Fig. 4/5 per-skill tables, counts and notes (md or csv).

Source: paper Table 3 (groups x QAcc/SAcc, Random Baseline and "Statistically Significant"
rows), Fig. 4 / Fig. 5 (per-skill QAcc / SAcc), Sec. 4.3 (non-compliance counts).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from lensbench.core.resources import read_json
from lensbench.core.results import RunResult
from lensbench.report.common import (counts_table, empty_notes, incomplete_notes, retry_hint, run_label,
                                     skipped_notes)
from lensbench.report.tables import render_table
from lensbench.scoring.metrics import binomial_threshold
from lensbench.benchmarks.rgbth.data import DEFAULT_INPUT, EXTRA_SKILLS, RGB_TH_TXT, RGB_TXT, SKILLS

__all__ = ["paper_rows", "paper_significance", "model_label", "render_tables", "notes"]

_PKG = "lensbench.benchmarks.rgbth"
_GROUP_OF = {a: g for a, g in [*SKILLS.values(), *EXTRA_SKILLS.values()]}
_CORE = {a for a, _g in SKILLS.values()}


def paper_rows() -> list[dict[str, Any]]:
    """The model rows of Table 3 (``paper/table3.json``): ``[{model, QAcc: {col: %}, SAcc: {...}}]``."""
    return read_json(_PKG, "paper", "table3.json")["rows"]


def paper_significance() -> dict[str, dict[str, float]]:
    """Table 3's "Statistically Significant" row as printed (``>`` thresholds, %)."""
    return read_json(_PKG, "paper", "significance.json")["thresholds"]


def model_label(r: RunResult) -> str:
    """Row name: the model (tagged ``[input: MODE]`` when not the paper's input), plus the incomplete tag."""
    mode = r.options.get("input", DEFAULT_INPUT)
    label = run_label(r)
    if mode != DEFAULT_INPUT:
        label = label.replace(r.model, f"{r.model} [input: {mode}]", 1)
    return label


def _name(r: RunResult) -> str:
    mode = r.options.get("input", DEFAULT_INPUT)
    return r.model if mode == DEFAULT_INPUT else f"{r.model} [input: {mode}]"


def _row3(name, q, s):
    return [name, q.get(RGB_TXT), s.get(RGB_TXT), q.get(RGB_TH_TXT), s.get(RGB_TH_TXT), q.get("Overall"),
            s.get("Overall")]


def render_tables(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """Table 3 (group QAcc/SAcc), Fig. 4/5 per-skill tables, the counts and the notes."""
    cols3 = ["Model", "RGB-Txt QAcc", "RGB-Txt SAcc", "RGB-Th-Txt QAcc", "RGB-Th-Txt SAcc", "Overall QAcc",
             "Overall SAcc"]
    rows = [_row3("Random Baseline", {c: 50.0 for c in (RGB_TXT, RGB_TH_TXT, "Overall")},
                  {c: 6.25 for c in (RGB_TXT, RGB_TH_TXT, "Overall")})]
    rows += [_row3(name, sig.get("QAcc", {}), sig.get("SAcc", {})) for name, sig, _r in _significance_rows(results)]
    if with_paper:
        rows += [_row3(f"{p['model']} (paper)", p["QAcc"], p["SAcc"]) for p in paper_rows()]
    rows += [_row3(model_label(r), r.metrics["QAcc"], r.metrics["SAcc"]) for r in results]
    parts = [render_table(cols3, rows, fmt, title="RGB-Th-Bench (Table 3 layout; %)")]
    abbrevs: list[str] = []
    for r in results:
        for k in r.metrics["QAcc"]:
            if k not in ("Overall", RGB_TXT, RGB_TH_TXT) and k not in abbrevs:
                abbrevs.append(k)
    for metric, fig in (("QAcc", "Fig. 4"), ("SAcc", "Fig. 5")):
        parts.append(render_table(["Model"] + abbrevs, [[_name(r)] + [r.metrics[metric].get(a) for a in abbrevs]
                                                         for r in results], fmt,
                                  title=f"Per-skill {metric} ({fig} layout; %)"))
    parts.append(counts_table(results, [("questions scored", "n"), ("unparseable (non-compliance)", "n_unparseable"),
                                        ("errors (not scored)", "n_error"), ("units scored", "n_units_scored"),
                                        ("units missing", "n_units_missing")], fmt))
    parts += incomplete_notes(results, lambda r: (
        f"{r.counts.get('n_error')} question(s) failed in transport and are left out "
        f"({r.counts.get('n_units_missing')} unit(s) missing from SAcc); {retry_hint(r)}."
    )).splitlines(keepends=True)
    if skipped := skipped_notes(results, "unit(s)"):
        parts.append(skipped)
    if empty := empty_notes(results, "scored Fail (no Yes/No in it: non-compliance, counted unparseable)"):
        parts.append(empty)
    note = notes(results)
    if note:
        parts.append(note)
    return "\n".join(parts)


def _significance_rows(results: Sequence[RunResult]) -> list[tuple[str, dict[str, Any], RunResult]]:
    """Table 3's "Statistically Significant (>=)" row(s): the least accuracy significantly above chance
    (itself significant, hence ">="), from each run's counts: one row when every run has the same
    thresholds, else one per run (runs with different numbers of scored questions or units)."""
    sigs = [(r.metrics.get("significance", {}), r) for r in results]
    distinct = {json.dumps({k: v for k, v in sig.items() if k != "test"}, sort_keys=True) for sig, _r in sigs}
    if len(distinct) <= 1:
        return [("Statistically Significant (>=)", sig, r) for sig, r in sigs[:1]]
    names = _unique_names(results)
    return [(f"Statistically Significant (>=) [{name}]", sig, r) for (sig, r), name in zip(sigs, names)]


def _unique_names(results: Sequence[RunResult]) -> list[str]:
    """Each run's :func:`_name`, made unique (issue 29: two runs of one model gave two rows with one label): a
    name shared by several runs gets its run folder's name, and a number when even that repeats."""
    names = [_name(r) for r in results]
    out = [n if names.count(n) == 1 else f"{n} ({PurePath(r.run_dir).name or 'no folder'})"
           for n, r in zip(names, results)]
    return [n if out.count(n) == 1 else f"{n} #{out[:i].count(n) + 1}" for i, n in enumerate(out)]


def _group_counts(r: RunResult) -> dict[str, tuple[int, int]]:
    """``{column: (questions scored, units scored)}`` over the paper's skills, from ``counts["per_skill"]``."""
    out = {g: [0, 0] for g in (RGB_TXT, RGB_TH_TXT)}
    for ab, c in r.counts.get("per_skill", {}).items():
        if ab in _CORE:
            out[_GROUP_OF[ab]][0] += c.get("questions", 0)
            out[_GROUP_OF[ab]][1] += c.get("units", 0)
    out["Overall"] = [out[RGB_TXT][0] + out[RGB_TH_TXT][0], out[RGB_TXT][1] + out[RGB_TH_TXT][1]]
    return {k: (v[0], v[1]) for k, v in out.items()}


def notes(results: Sequence[RunResult]) -> str:
    """The report's notes: data defects found at load, and how our significance row differs from the paper's."""
    lines: list[str] = []
    seen: set[str] = set()
    for r in results:
        for d in r.counts.get("data_defects", []):
            key = f"{d['unit']}|{d['question']}"
            if key not in seen:
                seen.add(key)
                lines.append(f"- Data defect: unit {d['unit']} ({d['skill']}) asks {d['question']!r} more than once "
                             "with opposite answers (Yes and No); the unit can never pass SAcc. Scored as released.")
    per_run = []
    short = dict(zip(map(id, results), _unique_names(results)))
    for name, sig_all, r in _significance_rows(results):
        sig, n = sig_all.get("SAcc", {}), _group_counts(r)
        text = ", ".join(f"{c} >= {sig[c]:.2f} ({n[c][1]} units)" for c in (RGB_TXT, RGB_TH_TXT, "Overall")
                         if sig.get(c) is not None)
        if text:
            per_run.append(text if name.endswith("(>=)") else f"{short[id(r)]}: {text}")
    if per_run:
        paper = paper_significance()["SAcc"]
        ours = "; ".join(per_run)
        whose = "this run's" if len(per_run) == 1 else "each run's"  # one row: every run has the same counts
        if ours:
            pq, pn = paper_significance()["QAcc"], (812, 1624)  # the paper's questions per group / overall
            by_q = " / ".join(f"{binomial_threshold(n_, 0.5 ** 4):.2f}" for n_ in pn)
            lines.append(
                f"- SAcc significance: the paper's thresholds (> {paper[RGB_TXT]:g} per group, > {paper['Overall']:g} "
                f"Overall) are not reproduced by an exact one-sided binomial test over the units scored "
                f"(chance 6.25% for a 4-question unit, p < 0.05): ours, from {whose} counts: {ours}. The "
                f"paper's figures match the same test with the number of QUESTIONS as n ({pn[0]} / {pn[1]} give "
                f"{by_q}, printed > {paper[RGB_TXT]:g} / > {paper['Overall']:g}); a unit, not a question, is one "
                f"SAcc trial, so we count units. QAcc thresholds: paper > {pq[RGB_TXT]:g} / > {pq['Overall']:g}.")
    return ("Notes:\n" + "\n".join(lines) + "\n") if lines else ""
