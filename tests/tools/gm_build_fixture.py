"""A small GroundingME construction scene and a scripted model for it (fake OpenAI server).

Two SA-1B-style images with a box file and one HR-Bench-style image with a manual box:

* ``a.png`` (200 x 150): 4 orange cones, 1 "pylon" box on the first cone with a higher score
  (the NMS must drop it: cone has 4 boxes, pylon 1), 2 cars (dropped: fewer than 3) and a wall
  covering the image (dropped: > 50%);
* ``b.png`` (240 x 160): 8 blue flags, one touching the left edge;
* ``hr/h.png`` (400 x 300): one small green kite.

The scripted model finds the red frame in each description image and names its corner in
words, so every description is unique and shows where the red box was drawn.
"""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

from PIL import Image, ImageDraw

CONES = [(10, 10, 30, 40), (50, 10, 70, 40), (90, 10, 110, 40), (130, 10, 150, 40)]
CARS = [(10, 100, 40, 120), (60, 100, 90, 120)]
FLAGS = [(25 * i + 30, 60, 25 * i + 45, 90) for i in range(7)] + [(0, 110, 15, 140)]
KITE = (200, 100, 220, 115)
WORDS = "zero one two three four five six seven eight nine".split()


def make_scene(root: Path) -> dict[str, Path]:
    """Write the images and box files under ``root``; returns their paths."""
    sa = root / "sa"
    sa.mkdir(parents=True)
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
    (root / "boxes.json").write_text(json.dumps(boxes))
    hr = root / "hr"
    hr.mkdir()
    h = Image.new("RGB", (400, 300), (128, 128, 128))
    ImageDraw.Draw(h).rectangle(KITE, fill=(0, 200, 0))
    h.save(hr / "h.png")
    (hr / "small.jsonl").write_text(json.dumps({"image": "h.png", "bbox": list(KITE), "label": "kite"}) + "\n")
    return {"images": sa, "boxes": root / "boxes.json", "small": hr / "small.jsonl"}


def parts(body: dict) -> tuple[Image.Image | None, str]:
    """The image (decoded) and the text of the last user message of a chat body."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return None, content
    img, text = None, ""
    for p in content:
        if p.get("type") == "image_url":
            img = Image.open(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))).convert("RGB")
        elif p.get("type") == "text":
            text = p["text"]
    return img, text


def red_frame(im: Image.Image) -> tuple[int, int, int, int] | None:
    """Bounding rectangle of the red pixels (r > 180, g < 90, b < 90), or None."""
    px = im.load()
    xs, ys = [], []
    for y in range(im.height):
        for x in range(im.width):
            r, g, b = px[x, y]
            if r > 180 and g < 90 and b < 90:
                xs.append(x)
                ys.append(y)
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


def spell(n: int) -> str:
    """``57`` -> ``"five seven"`` (descriptions without digits)."""
    return " ".join(WORDS[int(c)] for c in str(n))


class ScriptedBuilder:
    """The construction model: tags, red-box / crop descriptions, negative edits; records what it saw."""

    def __init__(self):
        self.frames: list[tuple[str, tuple[int, int, int, int]]] = []
        self.crops: list[tuple[int, int]] = []
        self.texts: list[str] = []

    def __call__(self, body: dict) -> str:
        im, text = parts(body)
        self.texts.append(text)
        if "Original description:" in text:  # negatives editor (text only)
            orig = text.split("Original description: ", 1)[1].split("\n", 1)[0]
            return json.dumps({"description": orig.replace("orange", "purple").replace('"B"', '"C"')})
        if "framed by the red box" in text:
            label = re.search(r"detected as: (.+)\.\n", text).group(1)
            fr = red_frame(im)
            self.frames.append((label, fr))
            where = f"at {spell(fr[0])} {spell(fr[1])}"
            if label == "cone":
                desc = f'A cone marked "B" {where}.' if abs(fr[0] - 50) <= 2 else f"An orange cone {where}."
                return "<think>look</think>" + json.dumps({"description": desc, "category": "appearance"})
            return "```json\n" + json.dumps({"description": f"A blue flag {where}.", "category": "state"}) + "\n```"
        if "This image is a crop" in text:
            self.crops.append(im.size)
            return json.dumps({"description": "A small green kite flying high."})
        if "List every kind of physical object" in text:
            return json.dumps({"classes": ["Cone", "flag", "cone", "traffic light"]})
        raise AssertionError(f"unexpected prompt: {text[:80]!r}")
