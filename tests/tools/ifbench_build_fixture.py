"""A small infrared image pool and a scripted generator for the IF-Bench construction tests.

Pool (``make_pool``): ``dsA/a0.png`` (annotated, 320x240), ``dsA/a1.png`` (320x240),
``dsA/small.png`` (150x400: short side below 200), ``dsB/b0.png``, ``dsB/b1.png`` (256x256),
``dsB/broken.jpg`` (not an image). Each kept image has its own red level (40 * (index + 1)), so
the scripted generator (``responder``) knows which image it was sent, however it was re-encoded.
"""

from __future__ import annotations

import base64
import io
import json
import re

from PIL import Image

KEPT = ["dsA/a0.png", "dsA/a1.png", "dsB/b0.png", "dsB/b1.png"]
#: the annotated target of a0: box [40, 60, 120, 140] in 320x240 -> centre (0.25, 0.4167), size (0.25, 0.333)
TARGET_TEXT = "[(Hot engine of the truck, 0.25, 0.42, 0.25, 0.33)]"


def make_pool(root):
    """Write the pool under ``root/images`` and the annotations file; returns (images, annotations)."""
    imgs = root / "images"
    for i, rel in enumerate(KEPT):
        (imgs / rel).parent.mkdir(parents=True, exist_ok=True)
        size = (320, 240) if rel.startswith("dsA") else (256, 256)
        Image.new("RGB", size, (40 * (i + 1), 30, 30)).save(imgs / rel)
    Image.new("RGB", (150, 400), (250, 250, 250)).save(imgs / "dsA" / "small.png")
    (imgs / "dsB" / "broken.jpg").write_bytes(b"not an image at all")
    ann = root / "targets.json"
    ann.write_text(json.dumps([{"image": "dsA/a0.png", "targets": [
        {"description": "Hot engine of the truck", "box": [40, 60, 120, 140]}]}]))
    return imgs, ann


def image_index(body: dict) -> int:
    """Which pool image a chat request carries (from its red level)."""
    for m in body["messages"]:
        if isinstance(m["content"], list):
            for part in m["content"]:
                if part.get("type") == "image_url":
                    raw = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                    r = Image.open(io.BytesIO(raw)).convert("RGB").getpixel((5, 5))[0]
                    return round(r / 40) - 1
    raise AssertionError("no image in the request")


def system_text(body: dict) -> str:
    (m,) = [m for m in body["messages"] if m["role"] == "system"]
    return m["content"] if isinstance(m["content"], str) else "".join(p["text"] for p in m["content"])


def requested(body: dict) -> list[str]:
    m = re.search(r"the 4 evaluation dimensions: (.*?)\. You should", system_text(body))
    return m.group(1).split(", ")


def question(dim: str, tag: str, answer: str = "A") -> dict:
    """A well-formed generated question whose right option text is ``right <tag>``."""
    opts = {"A": f"right {tag}", "B": f"wrong1 {tag}", "C": f"wrong2 {tag}", "D": f"wrong3 {tag}"}
    right = opts["A"]
    opts["A"], opts[answer] = opts[answer], right
    return {"dimension": dim, "en_question": f"Question {tag}?", "en_options": opts, "answer": answer,
            "cn_question": f"问题 {tag}？", "cn_options": {k: f"选项 {v}" for k, v in opts.items()}}


def responder(body: dict) -> str:
    """Scripted generator replies per image (see the tests' expected counts)."""
    i = image_index(body)
    dims = requested(body)
    if i == 0:  # 4 good questions
        return json.dumps([question(d, f"a0-{k}") for k, d in enumerate(dims)], ensure_ascii=False)
    if i == 1:  # fenced, trailing comma as in Fig. 14's example; 3 good + 1 of a dimension not requested
        other = next(d for d in ("Scene Understanding", "Image Theme", "Object Counting", "Action Recognition",
                                 "Commonsense Reasoning") if d not in dims)
        items = [question(d, f"a1-{k}", "B") for k, d in enumerate(dims[:3])] + [question(other, "a1-x")]
        return "```json\n" + json.dumps(items, ensure_ascii=False)[:-1] + ",\n]\n```"
    if i == 2:
        return "I cannot produce questions for this image."
    bad_opts = question(dims[0], "b1-0")
    del bad_opts["en_options"]["D"]
    bad_ans = question(dims[1], "b1-1")
    bad_ans["answer"] = "E"
    return json.dumps([bad_opts, bad_ans, question(dims[2], "b1-2", "C"), question(dims[2], "b1-dup"),
                       question(dims[3], "b1-3", "D")], ensure_ascii=False)


#: what the script yields: valid questions and rejections by reason
EXPECTED_VALID = 4 + 3 + 0 + 2
EXPECTED_REJECTED = {"dimension not requested": 1, "no JSON list": 1, "repeated dimension": 1,
                     "schema: answer": 1, "schema: en_options": 1}
