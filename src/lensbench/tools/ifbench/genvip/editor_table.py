"""IF-Bench Tab. 5 ("Impact of editing models"): GenViP runs (``--input if+rgb+text``) with an Editor
column, the paper's rows (``benchmarks/ifbench/paper/table5_6.json``) beside ours.

A run's editor is read from its translated images: ``translate_report.json`` in the run's
``--translated-dir`` (written by ``lensbench genvip translate``; its ``editor`` fingerprint names
the model and the LoRA); the IF-only run is ``Vanilla``; a folder without a report is named by
its path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from lensbench.benchmarks.ifbench.analyses import paper_table
from lensbench.benchmarks.ifbench.data import COLUMNS
from lensbench.benchmarks.ifbench.report import label, setting
from lensbench.core.results import RunResult
from lensbench.report.tables import render_table

__all__ = ["editor_of", "render_editor_table"]


def editor_of(r: RunResult) -> str:
    """The editor behind a run's RGB images (module docstring)."""
    inp, _ = setting(r)
    if "rgb" not in inp:
        return "Vanilla"
    folder = r.options.get("translated_dir")
    if not folder:
        return "release translations (translated_rgb_imgs)"
    rep = Path(folder) / "translate_report.json"
    try:
        return str(json.loads(rep.read_text(encoding="utf-8"))["editor"]).replace("|", "; ")  # no table pipes
    except (OSError, ValueError, KeyError):
        return str(folder)


def render_editor_table(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = True) -> str:
    """Tab. 5 layout: Model, Editor, Avg and the ten dimensions (%), ours then the paper's."""
    t = paper_table("table5_6")
    rows = [[label(r), editor_of(r), *[r.metrics["Score"].get(c) for c in COLUMNS]] for r in results]
    if with_paper:
        rows += [[f"{t['model']} (paper)", row["name"], *[row[c] for c in COLUMNS]] for row in t["table5"]]
    return render_table(["Model", "Editor", *COLUMNS], rows, fmt, digits=1,
                        title="IF-Bench Tab. 5: GenViP (IF + RGB + Text) by editing model (%)")
