"""A small GroundingME construction scene (images, box files) and scripted replies for the fake server.

Demo data for ``lensbench groundingme build``: the "build your own" walk-through of
the GroundingME README (``python -m lensbench.tools.groundingme.demo_scene DIR``):

* ``sa/a.png`` (200 x 150): 4 orange cones, 1 "pylon" box on the first cone with a higher score
  (the NMS drops it: cone has 4 boxes, pylon 1), 2 cars (dropped: fewer than 3 instances) and a
  wall covering the image (dropped: > 50% of the image);
* ``sa/b.png`` (240 x 160): 8 blue flags, one touching the left edge (Occlusion, the rest Counting);
* ``hr/h.png`` (400 x 300): one small green kite with a manual box (Small).

``replies.json`` holds substring rules for ``python -m lensbench.testing.server --replies``: one
fixed reply per prompt kind (tags, red-box description per class, crop description, negative
edit, grounding answer).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PIL import Image, ImageDraw

__all__ = ["CONES", "CARS", "FLAGS", "KITE", "make_scene", "DEMO_REPLIES"]

CONES = [(10, 10, 30, 40), (50, 10, 70, 40), (90, 10, 110, 40), (130, 10, 150, 40)]
CARS = [(10, 100, 40, 120), (60, 100, 90, 120)]
FLAGS = [(25 * i + 30, 60, 25 * i + 45, 90) for i in range(7)] + [(0, 110, 15, 140)]
KITE = (200, 100, 220, 115)

#: ``[{"contains": TEXT, "reply": REPLY}]``: the first rule whose TEXT is in a request's text answers it.
DEMO_REPLIES = [
    {"contains": "Original description:", "reply": '{"description": "A purple cone standing upright."}'},
    {"contains": "detected as: cone", "reply": '{"description": "An orange cone standing upright.", '
                                               '"category": "appearance"}'},
    {"contains": "detected as: flag", "reply": '{"description": "A blue flag in a row of flags.", '
                                               '"category": "relationship"}'},
    {"contains": "This image is a crop", "reply": '{"description": "A small green kite."}'},
    {"contains": "List every kind of physical object", "reply": '{"classes": ["cone", "flag", "car"]}'},
    {"contains": "describes:", "reply": '{"bbox_2d": [10, 10, 30, 40]}'},
]


def make_scene(root: str | Path) -> dict[str, Path]:
    """Write the scene under ``root`` (created); returns ``{"images", "boxes", "small", "replies"}`` paths."""
    root = Path(root)
    sa = root / "sa"
    sa.mkdir(parents=True, exist_ok=True)
    a = Image.new("RGB", (200, 150), (128, 128, 128))
    d = ImageDraw.Draw(a)
    for b in CONES:
        d.rectangle(b, fill=(255, 140, 0))
    for b in CARS:
        d.rectangle(b, fill=(40, 40, 40))
    a.save(sa / "a.png")
    b_im = Image.new("RGB", (240, 160), (128, 128, 128))
    d = ImageDraw.Draw(b_im)
    for b in FLAGS:
        d.rectangle(b, fill=(0, 0, 230))
    b_im.save(sa / "b.png")
    boxes = [{"image": "a.png", "bbox": list(b), "label": "cone", "score": 0.6} for b in CONES]
    boxes += [{"image": "a.png", "bbox": [10, 10, 30, 39], "label": "pylon", "score": 0.95}]
    boxes += [{"image": "a.png", "bbox": list(b), "label": "car"} for b in CARS]
    boxes += [{"image": "a.png", "bbox": [0, 0, 200, 150], "label": "wall"}]
    boxes += [{"image": "b.png", "bbox": list(b), "label": "flag", "score": 0.7} for b in FLAGS]
    (root / "boxes.json").write_text(json.dumps(boxes, indent=1))
    hr = root / "hr"
    hr.mkdir(exist_ok=True)
    h = Image.new("RGB", (400, 300), (128, 128, 128))
    ImageDraw.Draw(h).rectangle(KITE, fill=(0, 200, 0))
    h.save(hr / "h.png")
    (hr / "small.jsonl").write_text(json.dumps({"image": "h.png", "bbox": list(KITE), "label": "kite"}) + "\n")
    (root / "replies.json").write_text(json.dumps(DEMO_REPLIES, indent=1))
    return {"images": sa, "boxes": root / "boxes.json", "small": hr / "small.jsonl", "replies": root / "replies.json"}


if __name__ == "__main__":
    print(make_scene(sys.argv[1] if len(sys.argv) > 1 else "gm-demo")["images"].parent)
