"""Detected boxes and GroundingME's customised NMS (paper Sec. 3.2.1, step 3).

"Instead of prioritizing boxes by area, our NMS strategy favors those belonging to classes with
a higher instance count": boxes are visited by the number of boxes their class has in the
image (most first), then by detector score, and a box is dropped when it overlaps a kept box
(of any class) by more than the IoU threshold. An object that GroundingDINO found under two
class names thus keeps the name of the more numerous class, so the intra-class counts the
selection rules read (:mod:`.select`) are not split across synonyms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from lensbench.scoring.bbox import iou

__all__ = ["Detection", "class_counts", "count_nms"]


@dataclass(frozen=True)
class Detection:
    """One detected box.

    ``box``: (x1, y1, x2, y2) in original image pixels; ``label``: class name (the word of the
    highest-similarity token, Sec. 3.2.1 step 2, or a manual annotation's class); ``score``:
    detector confidence in [0, 1] (1.0 for manual boxes); ``tag``: the tag phrase of the text
    query the token belongs to ("" for manual boxes).
    """

    box: tuple[float, float, float, float]
    label: str
    score: float = 1.0
    tag: str = ""

    def to_json(self) -> dict:
        """JSON-able dict (``box`` as a list)."""
        return {"box": list(self.box), "label": self.label, "score": self.score, "tag": self.tag}

    @classmethod
    def from_json(cls, d: dict) -> "Detection":
        """Inverse of :meth:`to_json`. Raises KeyError/ValueError for a malformed dict."""
        b = [float(v) for v in d["box"]]
        if len(b) != 4:
            raise ValueError(f"box must be 4 numbers, got {d['box']!r}")
        return cls(box=(b[0], b[1], b[2], b[3]), label=str(d["label"]), score=float(d.get("score", 1.0)),
                   tag=str(d.get("tag", "")))


def class_counts(dets: Sequence[Detection]) -> Counter[str]:
    """Boxes per class label."""
    return Counter(d.label for d in dets)


def count_nms(dets: Sequence[Detection], iou_threshold: float = 0.5) -> list[Detection]:
    """GroundingME's NMS (Sec. 3.2.1): priority = (class instance count, score), descending.

    Counts are taken over ``dets`` as given (before suppression). Visiting boxes in priority
    order (ties: earlier index first), a box is kept unless its IoU with an already kept box is
    greater than ``iou_threshold`` (in [0, 1]; classes are not separated). Returns the kept
    boxes in their input order. Raises ValueError for a threshold outside [0, 1].
    """
    if not 0.0 <= iou_threshold <= 1.0:
        raise ValueError(f"iou_threshold must be in [0, 1], got {iou_threshold}")
    counts = class_counts(dets)
    order = sorted(range(len(dets)), key=lambda i: (-counts[dets[i].label], -dets[i].score, i))
    kept: list[int] = []
    for i in order:
        if all(iou(dets[i].box, dets[k].box) <= iou_threshold for k in kept):
            kept.append(i)
    return [dets[i] for i in sorted(kept)]
