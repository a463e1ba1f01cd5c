"""Description generation (paper Sec. 3.2.2) through the engine, and the L-1/L-2 assignment.

SA-1B-style objects (``source="detected"``) are framed by a red box in the full-size image
(``prompts/describe_redbox.txt``: visual attributes and spatial relationships, plus a category
hint); HR-Bench-style objects (``source="small"``) are sent as crops
(``prompts/describe_crop.txt``: visual attributes only). Both prompts are our own: the paper
publishes none.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from lensbench.core.types import GenParams, ImagePart, Message, Request, StoredResponse
from lensbench.scoring.text import extract_json_object, strip_reasoning
from lensbench.tools.groundingme.imagefiles import crop_image, red_box_image
from lensbench.tools.groundingme.select import Candidate, assign_category
from lensbench.tools.groundingme.templates import tool_prompt

__all__ = ["candidate_id", "describe_request", "parse_description", "describe_candidates"]

Generate = Callable[[Sequence[Request]], Awaitable[dict[str, StoredResponse]]]


def candidate_id(c: Candidate) -> str:
    """A stable item id: ``<image stem>-<10 hex of sha256(image name, box, class)>``."""
    key = json.dumps([Path(c.image).name, [round(v, 2) for v in c.det.box], c.det.label])
    return f"{Path(c.image).stem}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def describe_request(c: Candidate, media_dir: Path, params: GenParams) -> Request:
    """The description request of one candidate: the red-box image (or the crop for
    ``source="small"``), then the prompt with ``{label}`` filled."""
    if c.source == "small":
        img, tmpl = crop_image(c.image, c.det.box, media_dir), tool_prompt("describe_crop")
    else:
        img, tmpl = red_box_image(c.image, c.det.box, media_dir), tool_prompt("describe_redbox")
    return Request(id=f"describe/{candidate_id(c)}", params=params,
                   messages=(Message.user(ImagePart.of(img), tmpl.replace("{label}", c.det.label)),))


def parse_description(text: str | None) -> tuple[str | None, str | None]:
    """``(description, category hint)`` from a reply: ``{"description": ..., "category": ...}``
    (reasoning and fences ignored); a reply without JSON is taken whole as the description.
    ``(None, None)`` when nothing is left (the reply is then counted, never silently dropped)."""
    s = re.sub(r"```(?:json)?", "", strip_reasoning(text)).strip()
    obj = extract_json_object(s)
    if obj:
        try:
            d = json.loads(obj)
        except json.JSONDecodeError:
            d = None
        if isinstance(d, dict):
            desc = d.get("description")
            cat = d.get("category")
            desc = desc.strip() if isinstance(desc, str) and desc.strip() else None
            return desc, (cat.strip() if isinstance(cat, str) and cat.strip() else None)
    s = s.strip().strip('"').strip()
    return (s or None), None


async def describe_candidates(cands: Sequence[Candidate], generate: Generate, media_dir: Path,
                              params: GenParams | None = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Describe every candidate and assign its L-1/L-2 (:func:`select.assign_category`).

    Returns ``(items, counts)``: one item per described candidate (``id``, ``image``,
    ``width``, ``height``, ``bbox``, ``description``, ``subtask_l1``, ``subtask_l2``,
    ``object_class``, ``class_count``, ``area_ratio``, ``source``, ``score``, ``category_hint``)
    and ``counts`` with ``n_error`` (transport failures, never described) and ``n_empty`` (a
    reply with no description: kept out of the items and counted).
    """
    p = params or GenParams(temperature=0.0)
    reqs = [describe_request(c, media_dir, p) for c in cands]
    replies = await generate(reqs)
    items, counts = [], {"n_error": 0, "n_empty": 0}
    for c, r in zip(cands, reqs):
        rep = replies.get(r.id)
        if rep is None or not rep.ok:
            counts["n_error"] += 1
            continue
        desc, hint = parse_description(rep.text)
        if desc is None:
            counts["n_empty"] += 1
            continue
        l1, l2 = assign_category(c, desc, hint)
        items.append({"id": candidate_id(c), "image": str(c.image), "width": c.width, "height": c.height,
                      "bbox": [round(v, 2) for v in c.det.box], "description": desc, "subtask_l1": l1,
                      "subtask_l2": l2, "object_class": c.det.label, "class_count": c.class_count,
                      "area_ratio": round(c.area_ratio, 6), "source": c.source, "score": c.det.score,
                      "category_hint": hint})
    return items, counts
