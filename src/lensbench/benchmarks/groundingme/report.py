"""GroundingME tables in the paper's layout: Table 3 (Acc@0.5 per L-2 / L-1 / Total), Table 8
(Acc@0.75, Acc@0.9, mAcc), our rejection / parse table, the official-compat extras
(all-sample IoU, Center_ACC) and Table 4 (best-of-N). Official-compat runs are labelled with the
rule that scored them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lensbench.benchmarks.groundingme.taxonomy import L1_ABBR, L1_ORDER, L2_ABBR, L2_ORDER
from lensbench.core.resources import read_json
from lensbench.core.results import RunResult
from lensbench.report.common import empty_notes, run_tags, skipped_notes
from lensbench.report.tables import render_table

__all__ = ["run_label", "render_tables"]

_COMPAT_READINGS = {"evaluate": "raw / normalised readings", "lmms-eval": "raw / normalised / MiMo / Qwen readings"}


def _judge(o: dict[str, Any]) -> str | None:
    return o.get("bon_judge") or o.get("judge")


def run_label(r: RunResult) -> str:
    """``model (bbox format, official-compat RULE, best-of-N, judge MODE)``."""
    o = r.options or {}
    tags = [str(o.get("bbox_format", "abs"))]
    if o.get("official_compat"):
        tags.append(f"official-compat {o.get('compat_rule') or 'evaluate'}")
    if (o.get("best_of") or 1) > 1:
        tags.append(f"best-of-{o['best_of']}" + (f", judge {_judge(o)}" if _judge(o) else ""))
    return f"{r.model} ({', '.join(tags + run_tags(r))})"


def _paper(name: str) -> dict[str, Any]:
    return read_json(__package__, "paper", f"{name}.json")


def _compat_note(results: Sequence[RunResult]) -> str:
    """The title note of official-compat runs (the rules that scored them), else ``""``."""
    rules = sorted({(r.options or {}).get("compat_rule") or "evaluate" for r in results
                    if (r.options or {}).get("official_compat")})
    if not rules:
        return ""
    return " [official-compat scoring, rule " + "; rule ".join(f"{x}: best IoU over {_COMPAT_READINGS.get(x, x)}"
                                                               for x in rules) + ", unparseable = rejection]"


def _table3(results: Sequence[RunResult], fmt: str, with_paper: bool, note: str) -> str:
    """Table 3: Acc@0.5 per L-2, L-1 average and Total."""
    cols = ["Model"]
    keys: list[str] = []
    for l1 in L1_ORDER:
        for l2 in L2_ORDER[l1]:
            cols.append(f"{L1_ABBR[l1]} {L2_ABBR[l2]}")
            keys.append(f"{l1}/{l2}")
        cols.append(f"{L1_ABBR[l1]} Avg.")
        keys.append(l1)
    cols.append("Total")
    keys.append("Total")
    rows = [[run_label(r), *[r.metrics.get("Acc@0.5", {}).get(k) for k in keys]] for r in results]
    if with_paper:
        rows += [[f"{row['model']} (paper)", *[row["values"].get(k) for k in keys]] for row in _paper("table3")["rows"]]
    return render_table(cols, rows, fmt, title="GroundingME Table 3: Acc@0.5 (%)" + note, digits=1)


def _table8(results: Sequence[RunResult], fmt: str, with_paper: bool, note: str) -> str:
    """Table 8: Acc@0.75, Acc@0.9 and mAcc per L-1 and Total."""
    cols = ["Model"]
    keys: list[tuple[str, str]] = []
    for c in ("Discriminative", "Spatial", "Limited", "Total"):
        for m in ("Acc@0.75", "Acc@0.9", "mAcc"):
            cols.append(f"{L1_ABBR.get(c, c)} {m}")
            keys.append((m, c))
    rows = [[run_label(r), *[r.metrics.get(m, {}).get(c) for m, c in keys]] for r in results]
    if with_paper:
        rows += [[f"{row['model']} (paper)", *[row["values"].get(f"{c}/{m}") for m, c in keys]]
                 for row in _paper("table8")["rows"]]
    return render_table(cols, rows, fmt, title="GroundingME Table 8: Acc@0.75, Acc@0.9, mAcc 0.50:0.05:0.95 (%)"
                        + note, digits=1)


def _rejections(results: Sequence[RunResult], fmt: str, note: str) -> str:
    """Our rejection / parse table (no paper counterpart)."""
    cols = ["Model", "Rejection rate on Rejection items", "False rejections on positives", "Unparseable",
            "mIoU positives", "n", "errors"]
    rows = [[run_label(r), r.metrics.get("Rejection rate", {}).get("Rejection"),
             r.metrics.get("Rejection rate", {}).get("Positives"), r.metrics.get("Unparseable rate", {}).get("Total"),
             r.metrics.get("mIoU", {}).get("Positives"), r.counts.get("n"), r.counts.get("n_error")]
            for r in results]
    return render_table(cols, rows, fmt, title="GroundingME rejections and parsing (%)" + note, digits=1)


def _compat_extras(compat: Sequence[RunResult], fmt: str, note: str) -> str:
    """The official-compat extras: IoU over all samples and lmms-eval's Center_ACC."""
    order = ["Total", *L1_ORDER]
    cols = ["Model", *[f"IoU {L1_ABBR.get(c, c)}" for c in order], *[f"Center_ACC {L1_ABBR.get(c, c)}" for c in order]]
    rows = [[run_label(r), *[r.metrics["Official IoU"].get(c) for c in order],
             *[r.metrics.get("Center_ACC", {}).get(c) for c in order]] for r in compat]
    return render_table(cols, rows, fmt, title="GroundingME official extras: IoU over all samples, "
                        "Center_ACC (lmms-eval) (%)" + note, digits=1)


def _table4(bon: Sequence[RunResult], fmt: str, with_paper: bool, note: str) -> str:
    """Table 4: best-of-N average, judge-selected and oracle Acc@0.5."""
    cols = ["Model", "Selection", "Judge", "Total", "Dis.", "Spa.", "Lim.", "Rej."]
    order = ["Total", "Discriminative", "Spatial", "Limited", "Rejection"]
    rows = []
    for r in bon:
        o = r.options or {}
        n = o.get("best_of")
        rows.append([run_label(r), f"Average over N={n}", "-", *[r.metrics["BoN average"].get(c) for c in order]])
        if _judge(o):
            fb = r.counts.get("judge_fallbacks", 0)
            rows.append([run_label(r), f"Judge-selected ({fb} fixed-rule verdicts)", _judge(o),
                         *[r.metrics["BoN selected"].get(c) for c in order]])
        rows.append([run_label(r), f"Oracle best-of-{n}", "-", *[r.metrics["BoN oracle"].get(c) for c in order]])
    if with_paper:
        rows += [["Qwen3-VL-A22B-Thinking (paper)", row["type"], row["judge"], *[row["values"].get(c) for c in order]]
                 for row in _paper("table4")["rows"]]
    return render_table(cols, rows, fmt, title="GroundingME Table 4: test-time scaling, Acc@0.5 (%)" + note, digits=1)


def render_tables(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """The tables for one or more runs as ``md`` or ``csv``: Table 3, Table 8, rejections / parsing, the
    official-compat extras (when a run has them), Table 4 (best-of-N runs, or ``with_paper``), notes;
    ``with_paper`` adds the paper's rows (``paper/table{3,8,4}.json``)."""
    note = _compat_note(results)
    parts = [_table3(results, fmt, with_paper, note), _table8(results, fmt, with_paper, note),
             _rejections(results, fmt, note)]
    if compat := [r for r in results if "Official IoU" in r.metrics]:
        parts.append(_compat_extras(compat, fmt, note))
    bon = [r for r in results if "BoN average" in r.metrics]
    if bon or with_paper:
        parts.append(_table4(bon, fmt, with_paper, note))
    if skipped_notes(results, "sample(s)"):
        parts.append(skipped_notes(results, "sample(s)"))
    if empty := empty_notes(results, "scored unparseable (a miss)"):
        parts.append(empty)
    return "\n".join(parts)
