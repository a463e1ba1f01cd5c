"""IF-Bench Tab. 5 ("Impact of editing models"): GenViP runs (``--input if+rgb+text``) with an Editor
column, the paper's rows (``benchmarks/ifbench/paper/table5_6.json``) beside ours.

A run's editor: :func:`lensbench.benchmarks.ifbench.report.editor_of` (from the run's
``translate_report.json``).
"""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.benchmarks.ifbench.analyses import paper_table
from lensbench.benchmarks.ifbench.data import COLUMNS
from lensbench.benchmarks.ifbench.report import editor_of, label
from lensbench.core.results import RunResult
from lensbench.report.tables import render_table

__all__ = ["editor_of", "render_editor_table"]


def render_editor_table(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = True) -> str:
    """Tab. 5 layout: Model, Editor, Avg and the ten dimensions (%), ours then the paper's."""
    t = paper_table("table5_6")
    rows = [[label(r), editor_of(r), *[r.metrics["Score"].get(c) for c in COLUMNS]] for r in results]
    if with_paper:
        rows += [[f"{t['model']} (paper)", row["name"], *[row[c] for c in COLUMNS]] for row in t["table5"]]
    return render_table(["Model", "Editor", *COLUMNS], rows, fmt, digits=1,
                        title="IF-Bench Tab. 5: GenViP (IF + RGB + Text) by editing model (%)")
