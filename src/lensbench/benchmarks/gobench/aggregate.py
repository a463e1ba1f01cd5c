"""GOBench metrics from SampleRecords: SPS per dimension (Table 3), per category, correlations,
answer agreement, means, and the counts.

Reads only :class:`~lensbench.core.records.SampleRecord` fields written by
:meth:`lensbench.benchmarks.gobench.benchmark.GOBench.scored`: ``outcome``, ``scores``
(``authenticity`` / ``aesthetics`` / ``fidelity`` and ``sps_<dim>``), ``target`` (human scores),
``answer`` (``answers``), ``labels["category"]`` and ``extra`` (``q_agree``, ``parse_method``,
``gt_incomplete``); what loading counted comes apart (``Loaded.counts``, the ``load_info`` argument).

Who enters what: only ``scored`` records have scores. ``unparseable`` records are counted and
excluded from every dimension (as VLMEvalKit excludes its failed rows); ``error`` records
(transport failures) are counted and never scored. SPS averages run over scored records that have
an ``sps_<dim>`` value (images with human ground truth).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from lensbench.benchmarks.gobench.records import ANSWERS, CATEGORIES, DIM_TITLES, DIMENSIONS
from lensbench.benchmarks.gobench.units import has_sps, sps_table
from lensbench.core.records import SampleRecord, count_outcomes
from lensbench.scoring.metrics import correlation, mean

__all__ = ["aggregate_records", "sps_block", "overall"]


def sps_block(records: Sequence[SampleRecord]) -> dict[str, float | None]:
    """``{Authenticity|Aesthetics|Fidelity: mean SPS in percent (0-100) or None}`` over the
    records that have that dimension's ``sps_<dim>`` value (the columns of
    :func:`~lensbench.benchmarks.gobench.units.sps_table`)."""
    t = sps_table(records)
    return {DIM_TITLES[d]: t.column_value(DIM_TITLES[d]) for d in DIMENSIONS}


def overall(block: dict[str, float | None]) -> float | None:
    """VLMEvalKit's ``Overall``: the mean of the three dimensions' SPS (percent); None when a
    dimension has no value (VLMEvalKit would print 0.00 for an empty run)."""
    vals = [block.get(DIM_TITLES[d]) for d in DIMENSIONS]
    if any(v is None for v in vals):
        return None
    return sum(vals) / 3.0  # type: ignore[arg-type]


def _means(records: Sequence[SampleRecord], source: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for d in DIMENSIONS:
        if source == "model":
            v = [r.scores.get(d) for r in records]
        else:
            v = [(r.target or {}).get(d) for r in records]
        out[DIM_TITLES[d]] = mean([x for x in v if x is not None])
    return out


def _agreement(ok: list[SampleRecord], cats: list[str]) -> tuple[dict[str, float | None], dict[str, int]]:
    """Agreement of the answers with the human majority labels (``q_agree``), percent and count, Overall, per
    category (of ``cats``) and per question Q1..Q5."""
    agree: dict[str, list[bool]] = defaultdict(list)
    for r in ok:
        for qi, a in enumerate(r.extra.get("q_agree") or []):
            if a is not None:
                cat = r.labels.get("category")
                agree["Overall"].append(a)
                agree[CATEGORIES.get(cat, cat)].append(a)
                agree[f"Q{qi + 1}"].append(a)
    order = ["Overall"] + [CATEGORIES[c] for c in cats] + [f"Q{i}" for i in range(1, 6)]
    return ({k: (100.0 * sum(agree[k]) / len(agree[k]) if agree.get(k) else None) for k in order},
            {k: len(agree.get(k, [])) for k in order})


def aggregate_records(records: list[SampleRecord], load_info: dict[str, Any] | None = None,
                      overall_metric: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(metrics, counts)`` of a GOBench run.

    ``metrics``: ``SPS`` {Authenticity, Aesthetics, Fidelity} in percent (Table 3) over scored
    images with ground truth (plus ``Overall`` = their mean when ``overall_metric``, VLMEvalKit's
    figure); ``SPS_by_category`` {Direct|Reflect|Refracted: {...}}; ``correlation`` {dim: {PLCC,
    SRCC, n}} between model and human scores per image; ``question_agreement`` {Overall,
    categories, Q1..Q5} in percent (only where per-question human labels exist) and
    ``question_agreement_n``; ``model_mean`` / ``human_mean`` {All|category: {dim: mean}};
    ``answer_distribution`` {Yes, No, Cannot determine} in percent.
    ``counts``: ``n`` (scored images), ``n_images``, ``n_unparseable``, ``n_error``,
    ``n_with_gt``, ``n_without_gt``, ``parse_methods``, ``n_records_total``,
    ``n_images_missing``, ``human_ratings``, ``n_gt_unmatched_keys``, ``per_category`` (and
    ``n_gt_incomplete`` when some ground truth lacked a field under ``--parser vlmevalkit``).
    ``load_info``: what loading counted (``Loaded.counts`` of the benchmark's ``load``).
    """
    info = load_info or {}
    ok = [r for r in records if r.outcome == "scored"]
    with_gt = [r for r in ok if has_sps(r)]
    cat_of = {id(r): r.labels.get("category") for r in records}
    cats = [c for c in CATEGORIES if any(cat_of[id(r)] == c for r in records)]

    def in_cat(rs, c):
        return [r for r in rs if cat_of[id(r)] == c]

    metrics: dict[str, Any] = {"SPS": sps_block(with_gt)}
    if overall_metric:
        metrics["SPS"]["Overall"] = overall(metrics["SPS"])
    metrics["SPS_by_category"] = {CATEGORIES[c]: sps_block(in_cat(with_gt, c)) for c in cats}
    metrics["correlation"] = {}
    for d in DIMENSIONS:
        pairs = [(r.scores[d], r.target[d]) for r in with_gt if r.target and r.target.get(d) is not None]
        metrics["correlation"][DIM_TITLES[d]] = correlation([p[0] for p in pairs], [p[1] for p in pairs])
    metrics["question_agreement"], metrics["question_agreement_n"] = _agreement(ok, cats)
    metrics["model_mean"] = {"All": _means(ok, "model"), **{CATEGORIES[c]: _means(in_cat(ok, c), "model") for c in cats}}
    metrics["human_mean"] = {"All": _means(with_gt, "human"),
                             **{CATEGORIES[c]: _means(in_cat(with_gt, c), "human") for c in cats}}
    dist = Counter(a for r in ok for a in ((r.answer or {}).get("answers") or []) if a is not None)
    tot = sum(dist.values())
    metrics["answer_distribution"] = {a: (100.0 * dist[a] / tot if tot else None) for a in ANSWERS}
    c = count_outcomes(records)
    counts: dict[str, Any] = {
        "n": len(ok),
        "n_images": len(records),
        "n_unparseable": c["n_unparseable"],
        "n_error": c["n_error"],
        "n_with_gt": len(with_gt),
        "n_without_gt": len(ok) - len(with_gt),
        "parse_methods": dict(Counter(str(r.extra.get("parse_method")) for r in ok)),
        "n_records_total": info.get("n_records_total"),
        "n_images_missing": info.get("n_images_missing"),
        "human_ratings": info.get("human_ratings"),
        "n_gt_unmatched_keys": info.get("n_gt_unmatched_keys"),
        "per_category": {CATEGORIES[c]: len(in_cat(ok, c)) for c in cats},
    }
    n_inc = sum(bool(r.extra.get("gt_incomplete")) for r in ok)
    if n_inc:
        counts["n_gt_incomplete"] = n_inc
    return metrics, counts
