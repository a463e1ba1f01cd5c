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


def render_tables(results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
    """The tables for one or more runs as ``md`` or ``csv``; ``with_paper`` adds the paper's rows
    (``paper/table{3,8,4}.json``)."""
    label = run_label

    def paper(name: str) -> dict[str, Any]:
        return read_json(__package__, "paper", f"{name}.json")

    parts: list[str] = []
    rules = sorted({(r.options or {}).get("compat_rule") or "evaluate" for r in results
                    if (r.options or {}).get("official_compat")})
    note = ""
    if rules:
        note = " [official-compat scoring, rule " + "; rule ".join(f"{x}: best IoU over {_COMPAT_READINGS.get(x, x)}"
                                                                 for x in rules) + ", unparseable = rejection]"
    # Table 3
    cols3 = ["Model"]
    keys3: list[str] = []
    for l1 in L1_ORDER:
        for l2 in L2_ORDER[l1]:
            cols3.append(f"{L1_ABBR[l1]} {L2_ABBR[l2]}")
            keys3.append(f"{l1}/{l2}")
        cols3.append(f"{L1_ABBR[l1]} Avg.")
        keys3.append(l1)
    cols3.append("Total")
    keys3.append("Total")
    rows3 = [[label(r), *[r.metrics.get("Acc@0.5", {}).get(k) for k in keys3]] for r in results]
    if with_paper:
        for row in paper("table3")["rows"]:
            rows3.append([f"{row['model']} (paper)", *[row["values"].get(k) for k in keys3]])
    parts.append(render_table(cols3, rows3, fmt, title="GroundingME Table 3: Acc@0.5 (%)" + note, digits=1))
    # Table 8
    cols8 = ["Model"]
    keys8: list[tuple[str, str]] = []
    for c in ("Discriminative", "Spatial", "Limited", "Total"):
        for m in ("Acc@0.75", "Acc@0.9", "mAcc"):
            cols8.append(f"{L1_ABBR.get(c, c)} {m}")
            keys8.append((m, c))
    rows8 = [[label(r), *[r.metrics.get(m, {}).get(c) for m, c in keys8]] for r in results]
    if with_paper:
        for row in paper("table8")["rows"]:
            rows8.append([f"{row['model']} (paper)", *[row["values"].get(f"{c}/{m}") for m, c in keys8]])
    parts.append(render_table(cols8, rows8, fmt, title="GroundingME Table 8: Acc@0.75, Acc@0.9, mAcc 0.50:0.05:0.95 (%)"
                              + note, digits=1))
    # rejection / parse table (ours only)
    colsr = ["Model", "Rejection rate on Rejection items", "False rejections on positives", "Unparseable",
             "mIoU positives", "n", "errors"]
    rowsr = [[label(r), r.metrics.get("Rejection rate", {}).get("Rejection"),
              r.metrics.get("Rejection rate", {}).get("Positives"), r.metrics.get("Unparseable rate", {}).get("Total"),
              r.metrics.get("mIoU", {}).get("Positives"), r.counts.get("n"), r.counts.get("n_error")]
             for r in results]
    parts.append(render_table(colsr, rowsr, fmt, title="GroundingME rejections and parsing (%)" + note, digits=1))
    compat = [r for r in results if "Official IoU" in r.metrics]
    if compat:
        order = ["Total", *L1_ORDER]
        colsc = ["Model", *[f"IoU {L1_ABBR.get(c, c)}" for c in order], *[f"Center_ACC {L1_ABBR.get(c, c)}" for c in order]]
        rowsc = [[label(r), *[r.metrics["Official IoU"].get(c) for c in order],
                  *[r.metrics.get("Center_ACC", {}).get(c) for c in order]] for r in compat]
        parts.append(render_table(colsc, rowsc, fmt, title="GroundingME official extras: IoU over all samples, "
                                  "Center_ACC (lmms-eval) (%)" + note, digits=1))
    # Table 4
    bon = [r for r in results if "BoN average" in r.metrics]
    if bon or with_paper:
        cols4 = ["Model", "Selection", "Judge", "Total", "Dis.", "Spa.", "Lim.", "Rej."]
        order = ["Total", "Discriminative", "Spatial", "Limited", "Rejection"]
        rows4 = []
        for r in bon:
            o = r.options or {}
            judge = _judge(o) or "-"
            n = o.get("best_of")
            rows4.append([label(r), f"Average over N={n}", "-", *[r.metrics["BoN average"].get(c) for c in order]])
            if _judge(o):
                fb = r.counts.get("judge_fallbacks", 0)
                rows4.append([label(r), f"Judge-selected ({fb} fixed-rule verdicts)", judge,
                              *[r.metrics["BoN selected"].get(c) for c in order]])
            rows4.append([label(r), f"Oracle best-of-{n}", "-", *[r.metrics["BoN oracle"].get(c) for c in order]])
        if with_paper:
            for row in paper("table4")["rows"]:
                rows4.append(["Qwen3-VL-A22B-Thinking (paper)", row["type"], row["judge"],
                              *[row["values"].get(c) for c in order]])
        parts.append(render_table(cols4, rows4, fmt, title="GroundingME Table 4: test-time scaling, Acc@0.5 (%)"
                                  + note, digits=1))
    if skipped_notes(results, "sample(s)"):
        parts.append(skipped_notes(results, "sample(s)"))
    if empty := empty_notes(results, "scored unparseable (a miss)"):
        parts.append(empty)
    return "\n".join(parts)
