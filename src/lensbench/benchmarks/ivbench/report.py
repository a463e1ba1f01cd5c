"""IV-Bench report: Table 2 layout (one row per run and config), Counts, and the sweep table.

Columns and row layout follow the paper's Table 2 (``paper/table2.json`` holds its 27 rows).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lensbench.benchmarks.ivbench.data import TABLE2_COLUMNS
from lensbench.benchmarks.ivbench.sweep import config_label, sweep_in_order
from lensbench.core.resources import read_text
from lensbench.core.results import RunResult
from lensbench.report.common import counts_table, empty_notes, incomplete_notes, run_tags
from lensbench.report.tables import render_table

__all__ = ["paper_rows", "render_tables"]

COUNT_COLUMNS = [
    ("scored", "n"), ("unparseable (wrong)", "n_unparseable"), ("errors (not scored)", "n_error"),
    ("video errors", "n_video_error"), ("skipped (missing media)", "n_skipped_missing"),
    ("items w/ answer among distractors", "n_items_duplicate_answer"),
    ("duplicate distractors dropped", "n_duplicate_distractors_removed"),
    ("empty distractors dropped", "n_empty_distractors_removed"),
]


def paper_rows() -> list[dict[str, Any]]:
    """Table 2 of the paper (``paper/table2.json``): 27 models, ``{"model", column: %}``."""
    return json.loads(read_text(__package__, "paper", "table2.json"))["rows"]
def _table2(results: Sequence[RunResult], fmt: str, with_paper: bool) -> str:
    rows: list[list[Any]] = []
    if results and results[0].metrics.get("chance"):
        ch = results[0].metrics["chance"]
        rows.append(["Random guess (expected)", *[ch.get(c) for c in TABLE2_COLUMNS]])
    if with_paper:
        rows += [[f"{p['model']} (paper)", *[p.get(c) for c in TABLE2_COLUMNS]] for p in paper_rows()]
    for r in results:
        tags = ([f"pattern: {r.options['pattern']}"] if r.options.get("pattern", "video-first") != "video-first"
                else []) + run_tags(r)
        tag = f" [{'; '.join(tags)}]" if tags else ""
        sweep = r.metrics.get("sweep")
        if sweep:
            for s in sweep_in_order(sweep):
                stag = f" [incomplete: {s['n_error']} errors]" if s.get("n_error") else ""
                rows.append([f"{r.model} ({s['label']}){stag}", *[s["accuracy"].get(c) for c in TABLE2_COLUMNS]])
        else:
            cfg = r.metrics.get("config", {})
            label = config_label(cfg.get("frames") or 0, cfg.get("resolution")) if cfg.get("frames") else ""
            rows.append([f"{r.model}" + (f" ({label})" if label else "") + tag,
                         *[r.metrics["accuracy"].get(c) for c in TABLE2_COLUMNS]])
    return render_table(["Model", *TABLE2_COLUMNS], rows, fmt,
                        title="IV-Bench accuracy (Table 2 layout; %; P-Avg, R-Avg, Overall sample-weighted)")


def _sweep(results: Sequence[RunResult], fmt: str) -> list[str]:
    srows = []
    for r in results:
        for s in sweep_in_order(r.metrics.get("sweep", [])):
            a = s["accuracy"]
            srows.append([r.model, s["frames"], s["resolution"] or "native", a.get("Overall"), a.get("P-Avg"),
                          a.get("R-Avg"), s["n"], s["n_unparseable"], s["n_error"]])
    parts = [render_table(["Model", "frames", "short side (px)", "Overall", "P-Avg", "R-Avg", "scored",
                           "unparseable", "errors"], srows, fmt,
                          title="Frame / resolution sweep (Sec. 4.3.2, Fig. 3(b), 4)")]
    for r in results:
        png = Path(r.run_dir) / "ivbench_sweep.png" if r.run_dir else None
        if png is not None and png.is_file() and fmt == "md":
            parts.append(f"Sweep plot: {png}\n")
    return parts


def _notes(results: Sequence[RunResult]) -> list[str]:
    parts = []
    for r in results:
        if r.counts.get("n_skipped_missing"):
            parts.append(f"Run {r.run_dir or r.model}: {r.counts['n_skipped_missing']} of "
                         f"{r.counts.get('n_queries_in_file')} queries were skipped for missing video/image "
                         "(--skip-missing); scores cover the rest only.\n")
        parts.append(incomplete_notes([r], lambda r: (
            f"{r.counts.get('n_error')} record(s) not scored ({r.counts.get('n_video_error', 0)} undecodable video, "
            f"{r.counts.get('n_transport_error', 0)} transport); re-run with the same --out to retry.")))
    return [p for p in parts if p]


def render_tables(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """Table 2 layout (one row per run, or per run and config in a sweep), Counts, sweep table and notes.

    ``fmt``: ``md`` or ``csv``; ``with_paper`` adds the paper's 27 Table 2 rows. A first row gives
    the expected accuracy of a uniform random guess over the first run's items. Runs with
    errors are tagged ``[incomplete: N errors]``; skipped media and incomplete runs get a note.
    """
    parts = [_table2(results, fmt, with_paper), counts_table(results, COUNT_COLUMNS, fmt, title="Counts")]
    if any(r.metrics.get("sweep") for r in results):
        parts += _sweep(results, fmt)
    parts += _notes(results)
    if empty := empty_notes(results, "scored unparseable (wrong)"):
        parts.append(empty)
    return "\n".join(parts)
