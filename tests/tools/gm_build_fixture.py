"""A scripted construction model for the scene of :mod:`lensbench.tools.groundingme.demo_scene` (fake OpenAI server).

The scripted model finds the red frame in each description image and names its corner in
words, so every description is unique and shows where the red box was drawn.
"""

from __future__ import annotations

import base64
import io
import json
import re

from PIL import Image

from lensbench.tools.groundingme.demo_scene import CARS, CONES, FLAGS, KITE, make_scene  # noqa: F401 (re-exported)

WORDS = "zero one two three four five six seven eight nine".split()


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
        self.checked: list[tuple[str, tuple[int, int]]] = []

    def __call__(self, body: dict) -> str:
        im, text = parts(body)
        self.texts.append(text)
        if "matches the following description in every detail?" in text:  # the negatives' visual check
            desc = text.split("in every detail?\n", 1)[1].split("\n", 1)[0]
            self.checked.append((desc, im.size))
            return "Yes." if '"C"' in desc else "No, nothing here matches."
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
