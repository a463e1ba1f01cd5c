"""Scoring one GroundingME reply and turning the chosen reply into a :class:`SampleRecord`.

Strict rule (default; GroundingME README, Protocol (Parse, Metrics)): the reply is read by
:func:`~lensbench.benchmarks.groundingme.parse.parse_bbox_reply` in the declared
``--bbox-format`` and mapped to original pixels. A positive item is correct at threshold t iff
IoU >= t (the official scorers' ``>=``, so an IoU of exactly 0.5 is a hit); a Rejection item is
correct iff the reply is ``{"bbox_2d": null}``, whatever t. No box read = ``unparseable``
(IoU 0 on positives, wrong on Rejection items). ``--official-compat``: see
:mod:`~lensbench.benchmarks.groundingme.compat`.
"""

from __future__ import annotations

from typing import Any

from lensbench.benchmarks.groundingme.compat import ZERO, compat_score, official_parse
from lensbench.benchmarks.groundingme.data import GMSample
from lensbench.benchmarks.groundingme.images import PreparedImage
from lensbench.benchmarks.groundingme.parse import parse_bbox_reply
from lensbench.scoring.bbox import iou, to_original_pixels

__all__ = ["THRESHOLDS", "REPORTED_THRESHOLDS", "score_prediction", "hit_at", "record_scores"]

#: IoU thresholds of mAcc: 0.50:0.05:0.95 (Appendix A.2), as exact two-decimal values.
THRESHOLDS: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))
#: Thresholds stored per record (Table 3 and Table 8 columns).
REPORTED_THRESHOLDS: tuple[float, ...] = (0.5, 0.75, 0.9)

_PARSE_NAMES = {"box": "box", "null": "rejected", "unparseable": "unparseable"}


def score_prediction(sample: GMSample, reply: str | None, img: PreparedImage, *, bbox_format: str,
                     compat_rule: str | None = None, resize: dict[str, int] | None = None) -> dict[str, Any]:
    """Score one reply.

    Returns a dict: ``parse`` (our strict parse: ``box`` | ``rejected`` | ``unparseable``),
    ``raw_bbox`` (as written, or None), ``n_boxes_found``, ``pred_bbox`` (original pixels,
    rounded to 0.01 px; None = no box), ``iou`` (in [0, 1]; None on Rejection items in strict
    mode), ``hit`` (correct at 0.5), ``rejected`` (the prediction is a rejection), ``status``
    (``correct`` | ``wrong`` | ``unparseable``). With ``compat_rule`` (``evaluate`` or
    ``lmms-eval``) the official rule decides ``iou``, ``hit``, ``rejected`` and ``status``
    (``unparseable`` = the official parse found nothing), and ``official_raw_bbox``,
    ``compat_parse``, ``compat_reading``, ``center_hit`` are added.
    """
    sent, orig = (img.sent_w, img.sent_h), (img.orig_w, img.orig_h)
    parsed = parse_bbox_reply(reply)
    rec: dict[str, Any] = {"parse": _PARSE_NAMES[parsed.kind], "raw_bbox": list(parsed.box) if parsed.box else None,
                           "n_boxes_found": parsed.n_found}
    if compat_rule:
        op = official_parse(reply)
        cs = compat_score(op.box, sample.bbox, rule=compat_rule, sent_size=sent, orig_size=orig)
        rec.update(official_raw_bbox=op.box, compat_parse=op.method, compat_reading=cs.reading,
                   center_hit=cs.center_hit, iou=cs.iou, hit=cs.iou >= 0.5, rejected=op.box == ZERO,
                   pred_bbox=None if cs.chosen == ZERO else [round(v, 2) for v in cs.chosen])
        rec["status"] = "unparseable" if op.method == "none" else ("correct" if rec["hit"] else "wrong")
        return rec
    pred_box = to_original_pixels(parsed.box, bbox_format, sent_size=sent, orig_size=orig, resize=resize) \
        if parsed.box else None
    rec["pred_bbox"] = [round(v, 2) for v in pred_box] if pred_box else None
    rec["rejected"] = parsed.kind == "null"
    if sample.is_rejection:
        rec["iou"] = None
        rec["hit"] = parsed.kind == "null"
    else:
        rec["iou"] = iou(sample.bbox, pred_box) if pred_box else 0.0
        rec["hit"] = rec["iou"] >= 0.5
    if parsed.kind == "unparseable":
        rec["status"] = "unparseable"
    else:
        rec["status"] = "correct" if rec["hit"] else "wrong"
    return rec


def hit_at(scores: dict[str, Any], t: float) -> bool:
    """Correctness at IoU threshold ``t`` from a record's ``scores``: ``iou >= t``; a record
    without an IoU (a Rejection item under the strict rule) is correct iff ``hit@0.5`` (its
    correctness does not depend on t)."""
    v = scores.get("iou")
    if v is None:
        return bool(scores.get("hit@0.5"))
    return v >= t


def record_scores(c: dict[str, Any]) -> dict[str, Any]:
    """The ``scores`` of a record from a :func:`score_prediction` dict: ``iou`` (None on strict
    Rejection items), ``hit@0.5`` / ``hit@0.75`` / ``hit@0.9`` (1 or 0) and, in compat mode,
    ``center`` (1 or 0, lmms-eval's Center_ACC criterion)."""
    out: dict[str, Any] = {"iou": c["iou"]}
    for t in REPORTED_THRESHOLDS:
        ok = c["hit"] if c["iou"] is None else c["iou"] >= t
        out[f"hit@{t:g}"] = int(bool(ok))
    if "center_hit" in c:
        out["center"] = int(bool(c["center_hit"]))
    return out
