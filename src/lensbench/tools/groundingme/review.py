"""GroundingME's human steps on the shared review page (:mod:`lensbench.tools.review`).

* Selection and refinement (Sec. 3.2.3): each built candidate is accepted, edited (description
  text, box, subcategory) or rejected; the outcome over reviewers (``resolve``'s rule) decides
  what ``groundingme export`` writes.
* Human rejection verification (App. C): reviewers judge sampled Discriminative and Rejection
  items "groundable" or "not groundable" without seeing any box; with Rejection as the positive
  class, accuracy / precision / recall / F1 against the labels (paper: 91, 88.24, 93.75, 90.91).
"""

from __future__ import annotations

import io
import random
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lensbench.benchmarks.groundingme.taxonomy import L1_ORDER, L2_ORDER
from lensbench.tools.review import Field, Form, ReviewItem, binary_scores, resolve

__all__ = ["SUBTASKS", "selection_form", "selection_items", "apply_review", "verification_form",
           "sample_for_verification", "verification_items", "verification_scores", "NOT_GROUNDABLE"]

#: The twelve L-2 subcategories as ``"L1/L2"`` (Table 3 order).
SUBTASKS: tuple[str, ...] = tuple(f"{l1}/{l2}" for l1 in L1_ORDER for l2 in L2_ORDER[l1])
NOT_GROUNDABLE = "not groundable"

_CRITERIA = ("Sec. 3.2.3: fix the box if it is wrong; edit the description so that it has (1) Uniqueness: it "
             "refers to one and only one object (no object for Rejection), (2) Subject Clarity: it names the "
             "target, (3) Task Specificity: it fits the subcategory (e.g. ordinal words for Counting), (4) Factual "
             "Accuracy: every detail is verifiable in the image. Rejection items keep their factual error on "
             "purpose (the other box is the object the wrong description was made from). Reject simple, redundant "
             "or unfixable items. Change the subcategory before editing the text or the box, then Save edit.")


def selection_form() -> Form:
    """The selection / refinement form: decision (accept / edit / reject), ``description``
    (text), ``box`` (the object's box), ``subtask`` (one of :data:`SUBTASKS`, optional)."""
    return Form(fields=(Field.decision(), Field.text("description", "Description"), Field.box("box", "Object box"),
                        Field.choice("subtask", SUBTASKS, "Subcategory (change it only if wrong)", required=False)),
                title="GroundingME selection and refinement", info=("category", "object", "source"),
                instructions=_CRITERIA, done_word="reviewed", item_word="Object")


def selection_items(candidates: Sequence[dict[str, Any]]) -> list[ReviewItem]:
    """One review item per built candidate (key = its id): the image with the candidate's box (a
    Rejection item shows the box it was made from as ``distractor``, not editable), the
    description to edit, the category, class and the unedited description as read-only info."""
    out = []
    for c in candidates:
        rej = c["subtask_l1"] == "Rejection"
        boxes = {"distractor": c["distractor_bbox"]} if rej and c.get("distractor_bbox") else (
            {"box": c["bbox"]} if c.get("bbox") else {})
        out.append(ReviewItem(
            key=c["id"], images=(c["image"],), title=f"{c['subtask_l1']} / {c['subtask_l2']}",
            info={"category": f"{c['subtask_l1']}/{c['subtask_l2']}",
                  "object": f"{c.get('object_class', '?')} ({c.get('class_count', '?')} in the image)",
                  "source": ("made from: " + c["source_description"]) if c.get("source_description") else ""},
            texts={"description": c["description"]}, boxes=boxes, meta={"id": c["id"]}))
    return out


def _subtask(answers, key: str) -> str | None:
    """The subcategory most keep-voters gave (ties: the first reviewer by name), None when none gave one."""
    vals = [a["subtask"] for r in sorted(answers) for k, a in answers[r].items()
            if k == key and a.get("decision") in ("accept", "edit") and a.get("subtask")]
    if not vals:
        return None
    counts = Counter(vals)
    best = max(counts.values())
    return next(v for v in vals if counts[v] == best)


def apply_review(candidates: Sequence[dict[str, Any]], answers, rule: str = "majority"
                 ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The items to release after review, and counts.

    An item nobody decided is left out (``n_unreviewed``), one the rule rejects too
    (``n_rejected``); a kept item takes the edited description and box (``resolve``: the value
    most editors gave) and the subcategory most keep-voters chose. A Rejection item has no box; an
    item moved out of Rejection takes the edited box, else its distractor box (``n_no_box``
    counts those left without one, dropped). Each kept item gains ``review`` (votes, edited fields).
    """
    form = selection_form()
    items = {it.key: it for it in selection_items(candidates)}
    outcomes = resolve(answers, form, items, rule=rule)
    kept, counts = [], Counter({"n_unreviewed": 0, "n_rejected": 0, "n_no_box": 0, "n_edited": 0})
    for c in candidates:
        o = outcomes.get(c["id"])
        if o is None:
            counts["n_unreviewed"] += 1
            continue
        if not o.keep:
            counts["n_rejected"] += 1
            continue
        new = dict(c)
        new["description"] = o.texts.get("description", c["description"])
        sub = _subtask(answers, c["id"])
        edited = list(o.edited)
        if sub and sub != f"{c['subtask_l1']}/{c['subtask_l2']}":
            new["subtask_l1"], new["subtask_l2"] = sub.split("/", 1)
            edited.append("subtask")
        if new["subtask_l1"] == "Rejection":
            new["bbox"] = None
        else:
            new["bbox"] = o.boxes.get("box") or c.get("bbox") or c.get("distractor_bbox")
            if new["bbox"] is None:
                counts["n_no_box"] += 1
                continue
        new["review"] = {"votes": o.votes, "edited": edited}
        counts["n_edited"] += bool(edited)
        kept.append(new)
    counts["n_kept"] = len(kept)
    return kept, dict(counts)


# ----------------------------------------------------------------------------------- App. C
def verification_form() -> Form:
    """The App. C form: one binary verdict ``verdict`` (groundable / not groundable; keys y / n)."""
    return Form(fields=(Field.judge("verdict", "groundable", NOT_GROUNDABLE, label="Does exactly one object in the "
                                    "image match every detail of the description?"),),
                title="GroundingME human rejection verification", info=("description",),
                instructions="App. C: judge from the image and the description alone. 'not groundable' = no "
                             "object matches every detail (the description must be rejected).",
                done_word="judged", item_word="Sample")


def sample_for_verification(samples: Sequence[Any], n: int = 100, seed: int = 0) -> list[Any]:
    """``n`` samples drawn by ``random.Random(seed)`` from the Discriminative and Rejection items
    (App. C restricts to those two: their descriptions look alike), in drawn order. Raises
    ValueError when fewer than ``n`` such items exist or ``n`` < 1."""
    pool = [s for s in samples if s.subtask_l1 in ("Discriminative", "Rejection")]
    if n < 1 or n > len(pool):
        raise ValueError(f"--n must be in 1..{len(pool)} (the Discriminative + Rejection items), got {n}")
    return random.Random(seed).sample(pool, n)


def verification_items(samples: Sequence[Any], image_dir: Path) -> list[ReviewItem]:
    """Review items for App. C (key = sample id): the image (written once to ``image_dir`` from
    the release) and the description; no box is shown. ``meta`` keeps the label (never shown)."""
    from PIL import Image

    from lensbench.benchmarks.groundingme.data import iter_image_bytes

    image_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for s, data in iter_image_bytes(samples):
        fmt = (Image.open(io.BytesIO(data)).format or "png").lower()
        p = image_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', s.id)}.{'jpg' if fmt == 'jpeg' else fmt}"
        if not p.is_file():
            p.write_bytes(data)
        paths[s.id] = str(p)
    return [ReviewItem(key=s.id, images=(paths[s.id],), info={"description": s.description},
                       meta={"subtask_l1": s.subtask_l1, "subtask_l2": s.subtask_l2}) for s in samples]


def verification_scores(answers, truth: dict[str, bool]) -> dict[str, dict[str, Any]]:
    """Per reviewer and ``"all"`` (every judgment pooled): :func:`binary_scores` with Rejection as
    the positive class (``truth[id]`` True for a Rejection item; judged positive = "not
    groundable"). Keys of the pooled row are ``reviewer/id``."""
    out, pooled_t, pooled_j = {}, {}, {}
    for r in sorted(answers):
        judged = {k: a["verdict"] == NOT_GROUNDABLE for k, a in answers[r].items() if k in truth and "verdict" in a}
        out[r] = binary_scores(truth, judged)
        pooled_t.update({f"{r}/{k}": truth[k] for k in judged})
        pooled_j.update({f"{r}/{k}": v for k, v in judged.items()})
    if len(out) > 1:
        out["all"] = binary_scores(pooled_t, pooled_j)
    return out
