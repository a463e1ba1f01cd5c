"""GroundingME's selection rules and L-1/L-2 assignment (paper Sec. 3.2.3).

Sec. 3.2.3: "we filter out simple samples by removing any classes with fewer than three
instances and objects with bounding box occupying more than 50% of the image. We then
meticulously select the majority of our samples from object classes with an instance count
higher than 5. We further enrich the benchmark's diversity by supplementing specific subtasks
based on predefined rules, for instance, by selecting samples for Counting and Partial
subcategories from scenes with eight or more instances, or for Text subcategory from
descriptions containing numbers or strings."

Our reading, each a field of :class:`SelectionRules`: a class's instance count is the number
of its boxes in the image after NMS; "scenes with eight or more instances" = the target's
class has >= 8 boxes in the image; "Partial" is the Occlusion L-2 (its definition, Table 20:
"partial visibility caused by occlusion or truncation by the image frame"), so a dense-scene
object whose box touches the image border goes to Occlusion and the others to Counting.
HR-Bench objects (manually boxed, Sec. 3.2.1) are the Small subcategory. The other objects take
the L-2 the description model named (Appearance / Component / State / Relationship), Appearance
when it named none. Human review (accept / edit / fix box / reject) has the last word.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from lensbench.tools.groundingme.boxes import Detection, class_counts

__all__ = ["SelectionRules", "Candidate", "select_candidates", "pick_per_image", "has_text_cue", "assign_category",
           "HINT_L2"]

#: L-2 names the description model may suggest, and the L-1 each belongs to.
HINT_L2: dict[str, tuple[str, str]] = {
    "appearance": ("Discriminative", "Appearance"),
    "component": ("Discriminative", "Component"),
    "state": ("Discriminative", "State"),
    "relationship": ("Spatial", "Relationship"),
}


class SelectionRules(BaseModel):
    """The Sec. 3.2.3 thresholds (defaults: the paper's numbers)."""

    min_class_instances: int = Field(3, ge=1, description="drop classes with fewer boxes in the image (paper: 3)")
    max_area_ratio: float = Field(0.5, gt=0, le=1, description="drop boxes covering more of the image (paper: 50%)")
    preferred_min_instances: int = Field(6, ge=1, description="classes with at least this many boxes are picked "
                                         "first (paper: 'higher than 5')")
    dense_min_instances: int = Field(8, ge=1, description="Counting / Occlusion need this many boxes of the class "
                                     "(paper: 'eight or more')")
    border_px: float = Field(2.0, ge=0, description="a box within this many pixels of the image edge is truncated "
                             "by the frame (Occlusion)")


@dataclass(frozen=True)
class Candidate:
    """An object that passed the selection rules.

    ``image``: the image file; ``width``/``height``: its size in pixels; ``det``: the box;
    ``class_count``: boxes of its class in the image; ``area_ratio``: box area / image area in
    (0, 1]; ``preferred``: class count >= ``preferred_min_instances``; ``dense``: class count >=
    ``dense_min_instances``; ``truncated``: the box touches the image border; ``source``:
    ``"detected"`` (SA-1B-style pipeline) or ``"small"`` (HR-Bench-style manual box, described
    from a crop).
    """

    image: str
    width: int
    height: int
    det: Detection
    class_count: int
    area_ratio: float
    preferred: bool
    dense: bool
    truncated: bool
    source: str = "detected"
    extra: dict = field(default_factory=dict, compare=False)


def _truncated(box: Sequence[float], width: int, height: int, border: float) -> bool:
    return box[0] <= border or box[1] <= border or box[2] >= width - border or box[3] >= height - border


def select_candidates(image: str, width: int, height: int, dets: Sequence[Detection], rules: SelectionRules,
                      source: str = "detected") -> list[Candidate]:
    """Boxes of one image (after NMS) that pass the Sec. 3.2.3 filters, in input order.

    A box is dropped when its class has fewer than ``min_class_instances`` boxes or its area is
    more than ``max_area_ratio`` of ``width * height``. For ``source="small"`` (manual HR-Bench
    boxes) the class-count filter does not apply (the paper boxes those by hand). Raises
    ValueError for a non-positive image size.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"{image}: image size must be positive, got {width}x{height}")
    counts = class_counts(dets)
    out = []
    for d in dets:
        n = counts[d.label]
        x1, y1, x2, y2 = d.box
        ratio = max(0.0, x2 - x1) * max(0.0, y2 - y1) / (width * height)
        if ratio <= 0 or ratio > rules.max_area_ratio:
            continue
        if source != "small" and n < rules.min_class_instances:
            continue
        out.append(Candidate(image=image, width=width, height=height, det=d, class_count=n, area_ratio=ratio,
                             preferred=n >= rules.preferred_min_instances, dense=n >= rules.dense_min_instances,
                             truncated=_truncated(d.box, width, height, rules.border_px), source=source))
    return out


def pick_per_image(cands: Sequence[Candidate], max_per_image: int | None, rng: random.Random) -> list[Candidate]:
    """At most ``max_per_image`` candidates of one image: preferred-class ones first (the
    majority rule of Sec. 3.2.3), then dense ones, each group in a seeded random order; all
    when ``max_per_image`` is None. Returns them in input order."""
    if max_per_image is None or len(cands) <= max_per_image:
        return list(cands)
    idx = list(range(len(cands)))
    rng.shuffle(idx)
    idx.sort(key=lambda i: (not cands[i].preferred, not cands[i].dense))  # stable: the shuffle breaks ties
    return [cands[i] for i in sorted(idx[:max_per_image])]


_DQUOTE = re.compile(r"[\"“]([^\"”\n]{1,80})[\"”]")
_SQUOTE = re.compile(r"(?<!\w)['‘]([^'’\n]{1,80})['’](?!\w)")


def has_text_cue(description: str) -> bool:
    """True when a description contains a digit or a quoted string (the Text rule of Sec. 3.2.3:
    "descriptions containing numbers or strings"); apostrophes inside words are not quotes."""
    return bool(re.search(r"\d", description) or _DQUOTE.search(description) or _SQUOTE.search(description))


def assign_category(cand: Candidate, description: str, hint: str | None) -> tuple[str, str]:
    """(L-1, L-2) for a described candidate, by the rules in this module's docstring, in order:
    Small (HR-Bench source) -> Text (digits or quoted strings) -> Occlusion (dense and truncated)
    -> Counting (dense) -> the model's ``hint`` (case-insensitive key of :data:`HINT_L2`) ->
    Discriminative/Appearance."""
    if cand.source == "small":
        return "Limited", "Small"
    if has_text_cue(description):
        return "Discriminative", "Text"
    if cand.dense:
        return ("Limited", "Occlusion") if cand.truncated else ("Spatial", "Counting")
    return HINT_L2.get((hint or "").strip().lower(), ("Discriminative", "Appearance"))
