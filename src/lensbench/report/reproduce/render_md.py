"""A reproduction report as markdown: the runs, a verdict summary, every artifact cell by cell, the
claims with their tests, what the runs cannot support (:func:`render_markdown`)."""

from __future__ import annotations

from typing import Any

from lensbench.report.reproduce.model import VERDICTS, ClaimResult, Report, Section
from lensbench.report.tables import render_table

__all__ = ["render_markdown", "fmt", "fmt_p", "cell_rows", "CELL_COLUMNS", "TEST_COLUMNS", "test_rows", "VERDICT_COL",
           "REASON_COL"]

CELL_COLUMNS = ["run (= paper row)", "column", "ours", "95% CI", "paper", "verdict", "p", "p (Holm)",
                "ours - paper, 90% CI", "reason / note"]
#: index of the verdict and of the reason column in :data:`CELL_COLUMNS`
VERDICT_COL, REASON_COL = 5, 9
TEST_COLUMNS = ["test", "estimate", "95% CI", "p", "p (Holm)", "verdict", "method"]


def fmt(v: Any, digits: int = 2) -> str:
    """A number with ``digits`` decimals (thousands separated for integers), ``-`` for None, text as is."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


def fmt_p(p: float | None) -> str:
    """A p-value to 3 significant digits (``<0.001`` below that), ``-`` for None."""
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def _ci(lo: float | None, hi: float | None) -> str:
    return "-" if lo is None or hi is None else f"[{lo:.2f}, {hi:.2f}]"


def cell_rows(sec: Section) -> list[list[str]]:
    """The section's cells as text rows (:data:`CELL_COLUMNS`)."""
    return [[c.row, c.column, fmt(c.value), _ci(c.low, c.high), fmt(c.published), c.verdict, fmt_p(c.p),
             fmt_p(c.p_holm), _ci(c.d_low, c.d_high), c.reason] for c in sec.cells]


def test_rows(claim: ClaimResult) -> list[list[str]]:
    """The claim's tests as text rows (:data:`TEST_COLUMNS`)."""
    return [[t.subject, fmt(t.estimate), _ci(t.low, t.high), fmt_p(t.p), fmt_p(t.p_holm), t.verdict, t.method]
            for t in claim.tests]


def _md(cols: list[str], rows: list[list[Any]]) -> str:
    return render_table(cols, [[_esc(fmt(v)) for v in r] for r in rows], "md")


def _esc(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render_markdown(rep: Report) -> str:
    """The whole report as markdown (see the module docstring)."""
    out = [f"# Reproduction: {rep.paper}", "", rep.cite, ""]
    out += [f"{n}" for n in rep.notes] + ([""] if rep.notes else [])
    out += ["## Runs", ""]
    if rep.runs:
        out.append(_md(["run", "benchmark", "model", "matched to", "settings", "state", "coverage"],
                       [[r["run"], r["benchmark"], r["model"],
                         (", ".join(r["matched"]) + (" (--match)" if r["explicit"] else " (model name)"))
                         if r["matched"] else "no paper row", "; ".join(r["settings"]) or "the paper's",
                         r["state"], r["coverage"]]
                        for r in rep.runs]))
    else:
        out.append("No run of this paper's benchmarks was given.\n")
    out += [rep.design, ""] + ([rep.rule, ""] if rep.rule else [])
    verdict_sections = [s for s in rep.sections if s.cells]
    if verdict_sections:
        out += ["## Verdicts", ""]
        out.append(_md(["artifact", "cells", *VERDICTS],
                       [[f"{s.id}: {s.title}", len(s.cells), *s.counts().values()] for s in verdict_sections]))
    for s in rep.sections:
        out += [f"## {s.id}: {s.title}", ""]
        if s.cells:
            out.append(_md(CELL_COLUMNS, cell_rows(s)))
        if s.columns and s.rows:
            out.append(_md(s.columns, s.rows))
        out += [f"- {n}" for n in s.notes] + ([""] if s.notes else [])
    n_tests = sum(1 for c in rep.claims for t in c.tests if t.p is not None)
    out += ["## Claims", "", f"Every p below is adjusted by Holm's method over all {n_tests} tests of this paper "
            "(alpha 0.05): supported = adjusted p < 0.05 in the claimed direction; contradicted = adjusted "
            "p < 0.05 the other way; not shown = neither.", ""]
    for c in rep.claims:
        out += [f"### {c.id} ({c.cite})", "", f"> {c.statement}", "", f"**{c.summary()}**", ""]
        if c.tests:
            out.append(_md(TEST_COLUMNS, test_rows(c)))
        out += [f"- {n}" for n in c.notes] + ([""] if c.notes else [])
    out += ["## What the runs cannot support", ""]
    out += [f"- {n}" for n in rep.needs] or ["Nothing: every artifact and claim had runs."]
    out.append("")
    if rep.problems:
        out += ["## Runs not read", ""] + [f"- {p}" for p in rep.problems] + [""]
    return "\n".join(out).rstrip() + "\n"
