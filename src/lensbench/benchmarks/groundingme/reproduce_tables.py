"""GroundingME's metric tables for ``lensbench reproduce`` beyond the unit tables (paper Sec. 4-5, App. A):
``w/o Rejection`` (Fig. 6, Sec. 5.3), Acc@0.75 / Acc@0.9 / mAcc (Tab. 8), best-of-N average and oracle
(Tab. 4), and the grounding-with-rejection sets of ``grounding-rej`` runs (Tab. 5), plus Fig. 5 (thinking
gain per model). Every table resamples GroundingME's cluster, the sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.rejection_set import GroundingRejectionSet
from lensbench.benchmarks.groundingme.score import THRESHOLDS, hit_at
from lensbench.core.records import SampleRecord
from lensbench.core.resources import read_json
from lensbench.report.reproduce import Section
from lensbench.report.reproduce.derived import record_table, revalue
from lensbench.report.reproduce.pairs import difference_cells, run_pairs
from lensbench.report.reproduce.stats import with_category
from lensbench.scoring.bootstrap import UnitTable

__all__ = ["extra_tables", "rejection_set_table", "fig5_section", "WITHOUT", "L1"]

WITHOUT = "w/o Rejection"
L1 = ("Discriminative", "Spatial", "Limited", "Rejection")
MAIN, SETS = GroundingME.name, GroundingRejectionSet.name


def rejection_set_table(records: list[SampleRecord]) -> UnitTable | None:
    """A ``grounding-rej`` run as a table ``Acc@0.5``: one column per set (``L-2``, e.g. ``RefCOCOg_val``),
    column group = positive or negative; ``Macro_Average`` = mean of the positive and the negative sets'
    accuracy (Tab. 5), each set its own category; cluster = the item."""
    recs = [r for r in records if r.outcome != "error"]
    if not recs:
        return None
    sets = list(dict.fromkeys(str(r.labels.get("L-2")) for r in recs))
    col = {s: i for i, s in enumerate(sets)}
    neg = {str(r.labels.get("L-2")): r.labels.get("L-1") == "Rejection" for r in recs}
    num = np.zeros((len(recs), len(sets)))
    den = np.zeros_like(num)
    for i, r in enumerate(recs):
        j = col[str(r.labels.get("L-2"))]
        num[i, j], den[i, j] = float(bool(r.scores.get("hit@0.5"))), 1.0
    cats = {"Macro_Average": list(range(len(sets))), **{s: [i] for s, i in col.items()}}
    return UnitTable("Acc@0.5", [r.sample_id for r in recs], sets, num, den, np.array([int(neg[s]) for s in sets]),
                     [r.sample_id for r in recs], "sample", "macro", cats)


def extra_tables(benchmark: str, records: list[SampleRecord], tables: dict[str, Any]) -> dict[str, Any]:
    """``Acc@0.5`` gains the category ``w/o Rejection`` (every L-1 but Rejection, sample-weighted);
    ``Acc@0.75``, ``Acc@0.9``, ``mAcc`` per L-1 and Total; for a best-of-N run ``BoN-average`` (each item's
    mean hit over its N samples) and ``BoN-oracle`` (any sample right), on the units of ``Acc@0.5`` so they
    pair with the judge's pick. A ``grounding-rej`` run: :func:`rejection_set_table`."""
    if benchmark == SETS:
        return {"Acc@0.5": rejection_set_table(records)}
    if benchmark != MAIN:
        return {}
    out: dict[str, Any] = {}
    acc = tables.get("Acc@0.5")
    if acc is not None:
        keep = [c for c in L1[:3] if c in acc.categories]
        out["Acc@0.5"] = acc = with_category(acc, WITHOUT, keep) if keep else acc
    l1 = lambda r: str(r.labels.get("L-1"))  # noqa: E731
    sid = lambda r: r.sample_id  # noqa: E731
    for t in (0.75, 0.9):
        out[f"Acc@{t:g}"] = record_table(f"Acc@{t:g}", records, lambda r, t=t: float(hit_at(r.scores, t)), sid,
                                         "sample", column=l1, total="Total")
    out["mAcc"] = record_table("mAcc", records, lambda r: sum(hit_at(r.scores, t) for t in THRESHOLDS) / len(THRESHOLDS),
                               sid, "sample", column=l1, total="Total")
    bon = {r.sample_id: r.extra["bon"] for r in records if isinstance(r.extra.get("bon"), dict)}
    if acc is not None and bon:
        out["BoN-average"] = revalue(acc, "BoN-average", {k: b.get("mean_hit") for k, b in bon.items()})
        out["BoN-oracle"] = revalue(acc, "BoN-oracle", {k: float(bool(b.get("oracle_hit"))) for k, b in bon.items()})
    return out


def thinking_rows() -> list[tuple[str, dict[str, float]]]:
    """Tab. 6: ``(model as in Tab. 3, {column: Acc@0.5 with thinking})``."""
    return [(r["model"], r["values"]) for r in read_json(__package__, "paper", "table6.json")["rows"]]


def fig5_section(ctx) -> Section:
    """Fig. 5 / Tab. 6: per pair of runs of one model, thinking on (a run matched to ``MODEL (thinking)``, or
    ``enable_thinking`` on) minus off (a run matched to Tab. 3's ``MODEL``, or ``enable_thinking`` off), the
    paired difference per L-1 category and Total with its CI, beside Tab. 6 minus Tab. 3."""
    sec = Section("Fig. 5", "Acc@0.5 gain from thinking per model (thinking - no thinking, points)")
    t3 = {r["model"]: r["values"] for r in read_json(__package__, "paper", "table3.json")["rows"]}
    think = dict(thinking_rows())
    pairs = run_pairs(ctx, MAIN, [(f"{m} (thinking)", m, m) for m in think], {})
    difference_cells(ctx, sec, MAIN, "Acc@0.5", ("Total", *L1), pairs, {},
                     lambda m, c: round(think[m][c] - t3[m][c], 4), lambda m: f"Tab. 6 - Tab. 3: {m}",
                     "one model with thinking toggled: the paper's pairs are its Tab. 6 models",
                     "Fig. 5 / Tab. 6: needs a thinking and a no-thinking run of one model: --match RUN=MODEL and "
                     "--match RUN2='MODEL (thinking)', or --thinking / --no-thinking runs")
    sec.notes.append("Fig. 5 prints no numbers; its gains are Tab. 6 minus Tab. 3 (paper/table6.json notes where "
                     "Sec. 5.1's text disagrees).")
    return sec
