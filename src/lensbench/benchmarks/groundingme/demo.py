"""A generated GroundingME folder: NOT the benchmark (drawn shapes, template descriptions).

For trying every command offline (``lensbench data demo groundingme DIR``): a VLMEvalKit-style
``groundingme.tsv`` (``index``, base64 JPEG ``image``, ``question`` = description, ``answer`` =
the box ``[x1, y1, x2, y2]`` in pixels or empty, ``width``, ``height``, ``subtask_l1``,
``subtask_l2``), so no parquet reader (pyarrow) is needed. Each image holds a few coloured
shapes; the description names one of them (its box is the answer) or, for the Rejection items,
a shape the image does not hold.

:func:`write_items_demo` writes the same kind of images in the ``grounding-rej`` variant's own format
(``items.jsonl`` + ``images/``; :mod:`.rejection_set`), for ``lensbench data demo grounding-rej DIR``.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

from lensbench.benchmarks.groundingme.taxonomy import L2_ORDER

__all__ = ["write_demo", "write_items_demo", "ITEMS_DEMO_SETS"]

#: the sets of :func:`write_items_demo` (``set`` of its items): positives, then negatives
ITEMS_DEMO_SETS = ("demo_val", "demo_rej_val")

_COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220), "yellow": (230, 210, 40)}
_SHAPES = ("square", "circle")


def _image(rnd: random.Random, size=(160, 120)) -> tuple[bytes, list[tuple[str, str, list[int]]]]:
    im = Image.new("RGB", size, (235, 235, 235))
    d = ImageDraw.Draw(im)
    objs = []
    for colour in rnd.sample(list(_COLOURS), 3):
        shape = rnd.choice(_SHAPES)
        w = rnd.randrange(18, 40)
        x, y = rnd.randrange(0, size[0] - w), rnd.randrange(0, size[1] - w)
        box = [x, y, x + w, y + w]
        (d.rectangle if shape == "square" else d.ellipse)(box, fill=_COLOURS[colour])
        objs.append((colour, shape, box))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=90)
    return buf.getvalue(), objs


def write_demo(root: str | Path, seed: int = 0) -> Path:
    """Write ``root/groundingme.tsv`` (one item per L-1/L-2 cell of Table 3: 12 items) and return ``root``."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(seed)
    with open(root / "groundingme.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["index", "image", "question", "answer", "width", "height", "subtask_l1", "subtask_l2"])
        i = 0
        for l1, l2s in L2_ORDER.items():
            for l2 in l2s:
                jpeg, objs = _image(rnd)
                colour, shape, box = objs[0]
                if l1 == "Rejection":
                    absent = next(c for c in _COLOURS if c not in {o[0] for o in objs})
                    desc, answer = f"the {absent} {shape}", ""
                else:
                    desc, answer = f"the {colour} {shape}", json.dumps(box)
                w.writerow([i, base64.b64encode(jpeg).decode("ascii"), desc, answer, 160, 120, l1, l2])
                i += 1
    return root


def write_items_demo(root: str | Path, n: int = 12, seed: int = 0) -> Path:
    """Write ``root/items.jsonl`` and ``root/images/<i>.jpg`` (160 x 120): ``n`` items alternating a positive
    (the description names a drawn shape; ``bbox`` its box in pixels; set ``demo_val``) and a negative (a colour
    the image does not hold; ``bbox`` null; set ``demo_rej_val``), the format :mod:`.rejection_set` reads.
    Returns ``root``."""
    from lensbench.benchmarks.groundingme.items import write_items_file

    root = Path(root)
    (root / "images").mkdir(parents=True, exist_ok=True)
    rnd = random.Random(seed)
    items = []
    for i in range(n):
        jpeg, objs = _image(rnd)
        (root / "images" / f"{i}.jpg").write_bytes(jpeg)
        colour, shape, box = objs[0]
        neg = i % 2 == 1
        if neg:
            colour = next(c for c in _COLOURS if c not in {o[0] for o in objs})
        items.append({"id": f"demo-{i}", "image": f"images/{i}.jpg", "description": f"the {colour} {shape}",
                      "bbox": None if neg else box, "width": 160, "height": 120, "set": ITEMS_DEMO_SETS[int(neg)]})
    write_items_file(root / "items.jsonl", items)
    return root
