"""GroundingME metrics from :class:`SampleRecord` lists (paper Table 3, Table 8, Table 4).

All metrics are in percent and over samples (L-1 and Total are sample-weighted means, not means
of the L-2 means: the paper's Table 3 totals agree with that). Transport errors are left out of
every denominator and counted in ``n_error``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from lensbench.benchmarks.groundingme.best_of_n import FALLBACK_RULE
from lensbench.benchmarks.groundingme.score import THRESHOLDS, hit_at
from lensbench.benchmarks.groundingme.taxonomy import L1_ORDER, L2_ORDER
from lensbench.benchmarks.groundingme.units import acc_table
from lensbench.core.records import SampleRecord

__all__ = ["aggregate_records", "acc5_block"]

_BON_ROWS = (("mean_hit", "BoN average"), ("selected_hit", "BoN selected"), ("oracle_hit", "BoN oracle"))


def _pct(xs: list[bool]) -> float | None:
    return 100.0 * sum(xs) / len(xs) if xs else None


def _mean_pct(xs: list[float]) -> float | None:
    return 100.0 * sum(xs) / len(xs) if xs else None


def acc5_block(records: list[SampleRecord]) -> dict[str, float | None]:
    """Acc@0.5 (percent) per ``L1/L2`` column (Table 3's order, unknown L-2 names sorted after each
    L-1's), per L-1 and ``Total``: the values of :func:`~lensbench.benchmarks.groundingme.units.acc_table`."""
    t = acc_table(records)
    present = {r.labels["L-1"]: set() for r in records}
    for r in records:
        if r.outcome != "error":
            present[r.labels["L-1"]].add(r.labels["L-2"])
    out: dict[str, float | None] = {}
    for l1 in L1_ORDER:
        for l2 in [*L2_ORDER[l1], *sorted(present.get(l1, set()) - set(L2_ORDER[l1]))]:
            out[f"{l1}/{l2}"] = t.column_value(f"{l1}/{l2}")
        out[l1] = t.value(l1) if l1 in t.categories else None
    out["Total"] = t.value("Total")
    return out


def aggregate_records(records: list[SampleRecord]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, counts)``.

    Metrics: ``Acc@0.5`` (keys ``L1/L2``, ``L1``, ``Total``), ``Acc@0.75``, ``Acc@0.9``, ``mAcc``
    (mean of Acc over IoU 0.50:0.05:0.95; L-1 and Total), ``mIoU`` (positives: L-1 and
    ``Positives``; a positive without a box counts 0), ``Rejection rate`` (``Positives`` = false
    rejections, ``Rejection`` = on Rejection items), ``Unparseable rate`` (``Total``); with
    best-of-N: ``BoN average`` / ``BoN selected`` / ``BoN oracle`` (``Total`` and L-1, Table 4).
    In official-compat mode also ``Official IoU`` (mean IoU over ALL samples, Rejection items
    scoring 1 or 0, as the official ``IoU``) and ``Center_ACC`` (lmms-eval), Total and L-1.

    Counts: ``n``, ``n_error``, ``n_unparseable``, ``n_rejected``, ``n_positive``,
    ``n_rejection_items``, ``n_<L1>``; best-of-N adds ``best_of`` and the judge's
    ``judge_mode``, ``judge_matches``, ``judge_fallbacks``, ``judge_errors``,
    ``judge_fallback_rule``; compat mode adds ``scoring``.
    """
    scored = [r for r in records if r.outcome != "error"]
    official = any(r.extra.get("compat_rule") for r in scored)
    groups: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in scored:
        l1, l2 = r.labels["L-1"], r.labels["L-2"]
        groups[l1].append(r)
        groups[f"{l1}/{l2}"].append(r)
    groups["Total"] = scored
    pos = [r for r in scored if r.labels["L-1"] != "Rejection"]
    rej_items = groups.get("Rejection", [])
    metrics: dict[str, Any] = {"Acc@0.5": acc5_block(records), **_stricter(groups)}
    miou = {c: _mean_pct([r.scores.get("iou") or 0.0 for r in groups.get(c, [])]) for c in L1_ORDER[:3]}
    miou["Positives"] = _mean_pct([r.scores.get("iou") or 0.0 for r in pos])
    metrics["mIoU"] = miou
    metrics["Rejection rate"] = {"Positives": _pct([bool(r.extra.get("rejected")) for r in pos]),
                                 "Rejection": _pct([bool(r.extra.get("rejected")) for r in rej_items])}
    metrics["Unparseable rate"] = {"Total": _pct([r.outcome == "unparseable" for r in scored])}
    if official:
        order = ["Total", *L1_ORDER]
        metrics["Official IoU"] = {c: _mean_pct([r.scores.get("iou") or 0.0 for r in groups.get(c, [])]) for c in order}
        metrics["Center_ACC"] = {c: _mean_pct([r.scores.get("center") or 0 for r in groups.get(c, [])]) for c in order}
    bon = [r for r in scored if r.extra.get("bon")]
    if bon:
        metrics.update(_bon_rows(bon))
    counts: dict[str, Any] = {
        "n": len(scored), "n_error": len(records) - len(scored),
        "n_unparseable": sum(r.outcome == "unparseable" for r in scored),
        "n_rejected": sum(bool(r.extra.get("rejected")) for r in scored),
        "n_positive": len(pos), "n_rejection_items": len(rej_items),
        **{f"n_{l1}": len(groups.get(l1, [])) for l1 in L1_ORDER},
    }
    if bon:
        counts.update(_bon_counts(bon))
    if official:
        counts["scoring"] = "official-compat"
    return metrics, counts


def _stricter(groups: dict[str, list[SampleRecord]]) -> dict[str, dict[str, float | None]]:
    """``Acc@0.75``, ``Acc@0.9`` and ``mAcc`` (mean Acc over IoU 0.50:0.05:0.95) per L-1 and Total (Table 8)."""
    cols = list(L1_ORDER) + ["Total"]

    def acc(rs: list[SampleRecord], t: float) -> float | None:
        return _pct([hit_at(r.scores, t) for r in rs])

    out: dict[str, dict[str, float | None]] = {
        name: {c: acc(groups.get(c, []), t) for c in cols} for t, name in ((0.75, "Acc@0.75"), (0.9, "Acc@0.9"))}
    out["mAcc"] = {c: (sum(acc(groups[c], t) for t in THRESHOLDS) / len(THRESHOLDS)) if groups.get(c) else None
                   for c in cols}
    return out


def _bon_rows(bon: list[SampleRecord]) -> dict[str, dict[str, float | None]]:
    """Table 4's rows (``BoN average`` / ``selected`` / ``oracle``) per L-1 and Total, from the records' ``bon``."""
    out = {}
    for key, name in _BON_ROWS:
        row = {}
        for c in ["Total", *L1_ORDER]:
            rs = [r for r in bon if c == "Total" or r.labels["L-1"] == c]
            vals = [float(r.extra["bon"][key]) for r in rs if r.extra["bon"].get(key) is not None]
            row[c] = 100.0 * sum(vals) / len(vals) if vals else None
        out[name] = row
    return out


def _bon_counts(bon: list[SampleRecord]) -> dict[str, Any]:
    """``best_of`` and, with a judge, its mode, matches, fixed-rule fallbacks, errors and the fallback rule."""
    out: dict[str, Any] = {"best_of": max(r.extra["bon"]["n"] for r in bon)}
    ks = [r.extra["knockout"] for r in bon if r.extra.get("knockout")]
    if ks:
        out.update(judge_mode=ks[0]["mode"], judge_matches=sum(len(k["matches"]) for k in ks),
                   judge_fallbacks=sum(k["fallbacks"] for k in ks), judge_errors=sum(k["judge_errors"] for k in ks),
                   judge_fallback_rule=FALLBACK_RULE)
    return out
