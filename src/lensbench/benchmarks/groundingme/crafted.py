"""Crafted GroundingME records (:mod:`lensbench.benchmarks.crafting`): boxes on 20 generated images, a quarter
of them Rejection items; labels and scores as :meth:`GroundingME._record` writes."""

from __future__ import annotations

import json

from lensbench.benchmarks.crafting import Crafter
from lensbench.benchmarks.groundingme.taxonomy import L1_ORDER
from lensbench.core.records import SampleRecord
from lensbench.scoring.bbox import iou

__all__ = ["craft_records"]


def craft_records(c: Crafter) -> list[SampleRecord]:
    """``c.n`` records; a right box overlaps the truth by IoU > 0.5, a wrong one hardly at all."""
    out = []
    for i in range(c.n):
        img = c.image(f"gm{i % 20}.png", 500 + i % 20, (400, 300))
        l1 = L1_ORDER[i % len(L1_ORDER)]
        gt: list[float] | None = [40 + i % 50, 30, 200 + i % 50, 180]
        o = c.outcome()
        pred = [gt[0] + 8, gt[1] + 5, gt[2] + 10, gt[3] - 4] if o == "correct" else [250, 200, 390, 290]
        if l1 == "Rejection":
            gt, pred = None, (None if o == "correct" else pred)
        overlap = None if gt is None or o in ("error", "unparseable") else iou(gt, pred)
        scores = {} if o == "error" else {"iou": overlap, "hit@0.5": int(o == "correct")}
        out.append(c.record(f"gm{i}", [img, {"type": "text", "text": f"Locate the object {i}."}], o,
                            answer=None if o in ("unparseable", "error") else pred, target=gt,
                            reply=json.dumps(pred), scores=scores, labels={"L-1": l1, "L-2": f"{l1}-sub{i % 2}"}))
    return out
