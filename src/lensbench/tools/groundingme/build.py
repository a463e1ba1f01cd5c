"""GroundingME's construction pipeline (paper Sec. 3.2), up to the human review.

Stages, each resumable in one work folder:

1. boxes (Sec. 3.2.1) for the SA-1B-style image folder: tags (:mod:`.tags`) -> GroundingDINO
   (:mod:`.detect`) -> the count-favouring NMS (:mod:`.boxes`); or boxes from a box file
   (:mod:`.boxfile`). Raw detections are cached per image in ``detections.jsonl``.
2. selection (Sec. 3.2.3, :mod:`.select`): class / area filters, at most ``max_per_image``
   objects per image, preferred classes first; HR-Bench-style manual boxes join as Small.
3. descriptions and L-1/L-2 (Sec. 3.2.2, :mod:`.describe`).
4. Rejection: a seeded share of the Discriminative items is edited into negatives by
   ``groundingme negatives``' editor (:func:`.negatives.build_negatives`), keeping their L-2.

Every model call goes through the engine of one :class:`lensbench.runtime.session.Session`
(store: ``responses.sqlite`` in the work folder), so a rerun sends only what is missing. The
result, ``candidates.jsonl``, is what the review page shows and ``groundingme export`` writes
in the release format.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from lensbench.core.errors import ConfigError
from lensbench.core.types import GenParams, Request, StoredResponse
from lensbench.core.jsonl import dumps_line, iter_lines, read_jsonl
from lensbench.tools.groundingme.boxes import Detection, count_nms
from lensbench.tools.groundingme.select import Candidate, SelectionRules, pick_per_image, select_candidates

__all__ = ["BuildOptions", "build", "CANDIDATES", "DETECTIONS", "read_candidates", "write_jsonl_atomic"]

CANDIDATES = "candidates.jsonl"
DETECTIONS = "detections.jsonl"
Generate = Callable[[Sequence[Request]], Awaitable[dict[str, StoredResponse]]]
Log = Callable[[str], None]


class BuildOptions(BaseModel):
    """Settings of one construction (``lensbench groundingme build`` flags)."""

    images: Path | None = Field(None, description="SA-1B-style image folder (boxes by tagger + GroundingDINO)")
    boxes: Path | None = Field(None, description="box file for --images instead of tagging and detection")
    small_boxes: Path | None = Field(None, description="HR-Bench-style manual boxes (Small, described from crops)")
    small_images: Path | None = Field(None, description="image folder of --small-boxes (default: its folder)")
    tagger: str = "engine"
    tagger_checkpoint: str | None = None
    detector: str | None = Field(None, description="GroundingDINO checkpoint (hub id or folder)")
    box_threshold: float = Field(0.35, ge=0, le=1)
    class_name: str = "word"
    nms_iou: float = Field(0.5, ge=0, le=1)
    device: str | None = None
    rules: SelectionRules = Field(default_factory=SelectionRules)
    max_per_image: int | None = Field(3, ge=1)
    rejection_share: float = Field(0.2, ge=0, lt=1, description="share of items turned into Rejection (paper: 20%)")
    visual_check: bool = Field(False, description="the model confirms each negative matches no object in its image "
                                                   "(a negative it says matches stays Discriminative)")
    seed: int = 0
    temperature: float = Field(0.0, ge=0)
    max_tokens: int | None = Field(None, gt=0)

    def params(self) -> GenParams:
        """Generation parameters of every construction request."""
        return GenParams(temperature=self.temperature, max_tokens=self.max_tokens)


def write_jsonl_atomic(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``rows`` as JSONL through a temporary file (a crash leaves the old file whole)."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(dumps_line(r) + "\n")
    tmp.replace(path)


def read_candidates(work: Path) -> list[dict[str, Any]]:
    """The items of ``work/candidates.jsonl``. Raises ConfigError when the build has not run."""
    p = Path(work) / CANDIDATES
    if not p.is_file():
        raise ConfigError(f"{p} not found: run 'lensbench groundingme build --work {work}' first")
    return read_jsonl(p, "candidates file", kind=dict)


def _image_size(path: Path) -> tuple[int, int]:
    from lensbench.tools.groundingme.imagefiles import open_image

    return open_image(path).size


def _cached(work: Path) -> dict[tuple[str, str], dict]:
    p = work / DETECTIONS
    out = {}
    if p.is_file():
        for _ln, line in iter_lines(p.read_text(encoding="utf-8")):
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill: that image is annotated again
            out[(d["image"], d["key"])] = d
    return out


async def annotate(opts: BuildOptions, work: Path, images: list[Path], generate: Generate, model_id: str,
                   log: Log) -> tuple[dict[Path, list[Detection]], dict[str, int]]:
    """Raw detections per image (tags -> GroundingDINO), cached in ``detections.jsonl`` by
    image, tagger and detector settings. Images whose tagging failed are left out and counted
    (``n_tag_error``); they are tried again on the next run."""
    from lensbench.tools.groundingme.tags import make_tagger

    if not opts.detector:
        raise ConfigError("--images without --boxes needs --detector (a GroundingDINO checkpoint, e.g. "
                          "IDEA-Research/grounding-dino-base)")
    root = Path(opts.images)
    key = json.dumps({"tagger": opts.tagger, "tagger_model": model_id if opts.tagger == "engine" else
                      opts.tagger_checkpoint, "detector": opts.detector, "box_threshold": opts.box_threshold,
                      "class_name": opts.class_name}, sort_keys=True)
    cache = _cached(work)
    out: dict[Path, list[Detection]] = {}
    todo: dict[str, Path] = {}
    for p in images:
        rel = p.relative_to(root).as_posix()
        hit = cache.get((rel, key))
        if hit is not None:
            out[p] = [Detection.from_json(d) for d in hit["detections"]]
        else:
            todo[rel] = p
    counts = {"n_tag_error": 0, "n_cached_images": len(out)}
    if not todo:
        return out, counts
    from lensbench.tools.groundingme.detect import GroundingDinoDetector
    from lensbench.tools.groundingme.imagefiles import open_image

    tagger = make_tagger(opts.tagger, opts.tagger_checkpoint, opts.params())
    det = GroundingDinoDetector(opts.detector, box_threshold=opts.box_threshold, class_name=opts.class_name,
                                device=opts.device)  # loaded before any request: a bad checkpoint costs nothing
    tags = await tagger.tag(todo, generate)
    with (work / DETECTIONS).open("a", encoding="utf-8") as fh:
        for rel, p in todo.items():
            t = tags.get(rel)
            if t is None:
                counts["n_tag_error"] += 1
                continue
            dets = det.detect(open_image(p), t) if t else []
            out[p] = dets
            fh.write(dumps_line({"image": rel, "key": key, "tags": t, "detections": [d.to_json() for d in dets]},
                                ensure_ascii=False) + "\n")
            fh.flush()
    log(f"boxes: {len(todo) - counts['n_tag_error']} image(s) annotated, {counts['n_tag_error']} tagging failure(s)")
    return out, counts


def select_all(opts: BuildOptions, raw: dict[Path, list[Detection]], source: str) -> tuple[list[Candidate], int]:
    """NMS (detected images only) + selection + per-image pick, in image order; also returns the
    number of boxes left after NMS."""
    cands, n_nms = [], 0
    for p in sorted(raw):
        dets = count_nms(raw[p], opts.nms_iou) if source == "detected" else raw[p]
        n_nms += len(dets)
        w, h = _image_size(p)
        sel = select_candidates(str(p), w, h, dets, opts.rules, source=source)
        cands += pick_per_image(sel, opts.max_per_image if source == "detected" else None,
                                random.Random(f"{opts.seed}/{p.name}"))
    return cands, n_nms


async def make_rejections(items: list[dict[str, Any]], opts: BuildOptions, generate: Generate,
                          counts: dict[str, Any]) -> None:
    """Turn ``round(rejection_share * len(items))`` seeded Discriminative items (in place) into
    Rejection items by the negatives editor, keeping the L-2. With ``opts.visual_check`` the model
    is shown each negative's image and asked whether an object matches the edited description
    (:func:`.visual_check.visual_check`); only the ones it says match nothing become Rejection.
    Adds to ``counts``: ``n_negative_failed`` (edits that failed: those items stay Discriminative)
    and, with the check, ``visual_check`` (verdict -> count)."""
    from lensbench.tools.groundingme.negatives import build_negatives
    from lensbench.tools.groundingme.visual_check import visual_check

    disc = [i for i, it in enumerate(items) if it["subtask_l1"] == "Discriminative"]
    k = min(round(opts.rejection_share * len(items)), len(disc))
    chosen = sorted(random.Random(opts.seed).sample(disc, k))
    counts["n_negative_failed"] = 0
    if not chosen:
        return
    src = [items[i] for i in chosen]
    negs = await build_negatives(src, generate, seed=opts.seed, params=opts.params(),
                                 kinds=[it["subtask_l2"] for it in src])
    counts["n_negative_failed"] = len(chosen) - len(negs)
    if opts.visual_check:
        negs, counts["visual_check"] = await visual_check(negs, generate, params=opts.params())
    by_id = {n["id"]: n for n in negs}
    for i in chosen:
        n = by_id.get(items[i]["id"])
        if n is None:
            continue
        items[i] = {**items[i], "id": items[i]["id"] + "-rej", "subtask_l1": "Rejection",
                    "subtask_l2": n["negative_type"], "description": n["description"],
                    "source_description": n["source_description"], "distractor_bbox": items[i]["bbox"], "bbox": None,
                    **({"visual_check": n["visual_check"]} if "visual_check" in n else {})}


async def build(opts: BuildOptions, work: Path, generate: Generate, model_id: str, log: Log) -> dict[str, Any]:
    """Run every stage into ``work`` (created) and write ``candidates.jsonl``; returns the counts.

    Raises ConfigError (no input, a bad option) and DataError (a bad image or box file) before
    any request is sent.
    """
    from lensbench.tools.groundingme.boxfile import read_box_file
    from lensbench.tools.groundingme.describe import describe_candidates
    from lensbench.tools.groundingme.imagefiles import list_images

    if opts.images is None and opts.small_boxes is None:
        raise ConfigError("give --images (SA-1B-style folder) and/or --small-boxes (HR-Bench-style manual boxes)")
    if opts.boxes is not None and opts.images is None:
        raise ConfigError("--boxes needs --images (the folder its image paths are relative to)")
    work.mkdir(parents=True, exist_ok=True)
    counts: dict[str, Any] = {}
    small = {}
    if opts.small_boxes is not None:
        small = read_box_file(opts.small_boxes, opts.small_images or Path(opts.small_boxes).parent)
    cands: list[Candidate] = []
    if opts.images is not None:
        images = list_images(opts.images)
        if opts.boxes is not None:
            given = read_box_file(opts.boxes, opts.images)
            raw = {p: given.get(p, []) for p in images}
        else:
            raw, c = await annotate(opts, work, images, generate, model_id, log)
            counts.update(c)
        counts["n_images"] = len(images)
        counts["n_boxes"] = sum(len(v) for v in raw.values())
        det_cands, counts["n_boxes_after_nms"] = select_all(opts, raw, "detected")
        cands += det_cands
    if small:
        small_cands, _ = select_all(opts, small, "small")
        counts["n_small_images"] = len(small)
        cands += small_cands
    counts["n_candidates"] = len(cands)
    items, c = await describe_candidates(cands, generate, work / "media", opts.params())
    counts.update(c)
    await make_rejections(items, opts, generate, counts)
    items.sort(key=lambda it: (it["image"], it["id"]))
    write_jsonl_atomic(work / CANDIDATES, items)
    counts["n_items"] = len(items)
    counts["by_category"] = dict(sorted(Counter(f"{it['subtask_l1']}/{it['subtask_l2']}" for it in items).items()))
    (work / "build.json").write_text(json.dumps({"options": opts.model_dump(mode="json"), "counts": counts},
                                                indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return counts
