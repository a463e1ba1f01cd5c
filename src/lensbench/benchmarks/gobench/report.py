"""GOBench report: Table 3 layout (SPS %), per-category SPS, correlations, agreement, means, counts.

Pure functions of :class:`~lensbench.core.results.RunResult` (metrics and counts from
:mod:`lensbench.benchmarks.gobench.aggregate`); the paper's tables ship as ``paper/table{1,2,3}.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lensbench.benchmarks.gobench.records import ANSWERS, DIM_TITLES, DIMENSIONS
from lensbench.core.resources import read_text
from lensbench.core.results import RunResult
from lensbench.report.common import empty_notes, failed_and_unsent, retry_hint, run_label
from lensbench.report.tables import render_table

__all__ = ["paper_table", "render_tables"]


def paper_table(n: int) -> dict[str, Any]:
    """Table ``n`` (1, 2 or 3) of the paper (``paper/table{n}.json``): ``{"source", "columns", "rows"}``."""
    return json.loads(read_text(__package__, "paper", f"table{n}.json"))


def render_tables(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """Table 3 (SPS %, with VLMEvalKit's ``Overall`` when a run has it), per-category SPS,
    model-vs-human correlation, question agreement, means, counts and notes; ``md`` or ``csv``."""
    dims = [DIM_TITLES[d] for d in DIMENSIONS]
    parts = [_table3(results, fmt, with_paper)]
    cats = list(dict.fromkeys(c for r in results for c in r.metrics.get("SPS_by_category", {})))
    if cats:
        parts.append(render_table(
            ["Model"] + [f"{c} {d}" for c in cats for d in dims],
            [[r.model] + [r.metrics["SPS_by_category"].get(c, {}).get(d) for c in cats for d in dims] for r in results],
            fmt, title="SPS per category (%)"))
    parts.append(render_table(
        ["Model"] + [f"{d} {k}" for d in dims for k in ("PLCC", "SRCC")],
        [[r.model] + [r.metrics["correlation"].get(d, {}).get(k) for d in dims for k in ("PLCC", "SRCC")]
         for r in results], fmt, title="Model vs human scores per image (PLCC / SRCC)", digits=4))
    qa_cols = list(dict.fromkeys(k for r in results for k in r.metrics.get("question_agreement", {})))
    parts.append(render_table(["Model"] + qa_cols,
                              [[r.model] + [r.metrics["question_agreement"].get(k) for k in qa_cols] for r in results],
                              fmt, title="Agreement of each answer with the human majority label (%; only where "
                                         "per-question human labels exist)"))
    parts += [_means(results, fmt), _counts(results, fmt)]
    if fmt == "md":
        parts.append("\n".join(f"- {n}" for n in _notes(results)) + "\n")
    if empty := empty_notes(results, "scored unparseable (excluded from every dimension, as any unparseable reply)"):
        parts.append(empty)
    return "\n".join(parts)


def _table3(results: Sequence[RunResult], fmt: str, with_paper: bool) -> str:
    """Table 3: SPS per dimension (and ``Overall`` when a run has it), the paper's rows first with ``with_paper``."""
    t3 = [DIM_TITLES[d] for d in DIMENSIONS] + (["Overall"] if any("Overall" in r.metrics["SPS"] for r in results) else [])
    rows = [[f"{p['model']} (paper)"] + [p.get(d) for d in t3] for p in paper_table(3)["rows"]] if with_paper else []
    rows += [[run_label(r)] + [r.metrics["SPS"].get(d) for d in t3] for r in results]
    return render_table(["MLLMs"] + [f"{d}↑" for d in t3], rows, fmt,
                        title="GOBench optical understanding: SPS vs human ground truth (Table 3 layout; %)")


def _means(results: Sequence[RunResult], fmt: str) -> str:
    """The model's (and, where matched, the humans') mean scores and the answer distribution."""
    dims = [DIM_TITLES[d] for d in DIMENSIONS]
    rows = []
    for r in results:
        rows.append([r.model, "model"] + [r.metrics["model_mean"]["All"].get(d) for d in dims]
                    + [r.metrics["answer_distribution"].get(a) for a in ANSWERS])
        if r.counts.get("n_with_gt"):
            rows.append([r.model, "human (same images)"] + [r.metrics["human_mean"]["All"].get(d) for d in dims]
                        + [None, None, None])
    return render_table(["Model", "rated by"] + [f"mean {d}" for d in dims] + [f"% {a}" for a in ANSWERS],
                        rows, fmt, title="Mean scores (Authenticity 0-5, Aesthetics / Fidelity 1-5) and "
                                         "answer distribution")


def _counts(results: Sequence[RunResult], fmt: str) -> str:
    return render_table(
        ["Model", "images", "scored", "unparseable (excluded)", "errors (not scored)", "with human GT",
         "records in release", "images missing (skipped)"],
        [[r.model, r.counts.get("n_images"), r.counts.get("n"), r.counts.get("n_unparseable"), r.counts.get("n_error"),
          r.counts.get("n_with_gt"), r.counts.get("n_records_total"), r.counts.get("n_images_missing")]
         for r in results], fmt, title="Counts")


def _notes(results: Sequence[RunResult]) -> list[str]:
    """The notes under the tables: unparseable replies, missing ground truth or images, failed or unsent requests."""
    notes = ["Unparseable replies (a missing answer or rating) are counted above and excluded from every "
             "dimension, as VLMEvalKit does; they are never guessed."]
    for r in results:
        if not r.counts.get("n_with_gt"):
            notes.append(f"{r.model}: no human ground truth matched (--human-ratings), so SPS, correlations "
                         "and agreement are empty; the model's own mean scores are shown.")
        if r.counts.get("n_gt_incomplete"):
            notes.append(f"{r.model}: {r.counts['n_gt_incomplete']} image(s) have ground truth lacking one of "
                         "the three scores and are left out of every dimension (--parser vlmevalkit, as "
                         "VLMEvalKit does).")
        if r.counts.get("n_images_missing"):
            notes.append(f"{r.model}: {r.counts['n_images_missing']} of {r.counts.get('n_records_total')} "
                         "records had no image file and were skipped.")
        failed, unsent = failed_and_unsent(r)  # a --limit run is partial, not failed
        if failed:
            notes.append(f"{r.model}: {failed} request(s) failed in transport and are not "
                         f"scored; {retry_hint(r)}.")
        if unsent:
            notes.append(f"{r.model}: {unsent} request(s) were not sent (the run was stopped before sending "
                         "them); run the same command again to send them.")
    return notes
