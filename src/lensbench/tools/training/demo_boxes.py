"""Drawn scenes for the training recipes' demo data (``lensbench train demo-data RECIPE``; no downloads).

Each recipe's maker lives with its recipe (``lensbench/tools/<benchmark>/.../train_demo.py``) and draws its
images with :func:`draw_boxes`: a few coloured boxes (seeded), the same shapes in an RGB image and its grey
"infrared" twin when drawn with the same seed. Nothing here is a benchmark result.
"""

from __future__ import annotations

import random
from pathlib import Path

from PIL import Image, ImageDraw

__all__ = ["COLOURS", "draw_boxes"]

#: the box colours, by name (a description names its box by colour)
COLOURS = {"red": (220, 30, 30), "green": (40, 170, 40), "blue": (30, 60, 220), "yellow": (240, 220, 30)}


def draw_boxes(path: Path, rng: random.Random, size=(64, 48), grey: bool = False) -> list[tuple[str, list[int]]]:
    """Draw 2-3 coloured boxes (:data:`COLOURS`) on a dark background into ``path`` (grey when ``grey``);
    returns ``[(colour, [x1, y1, x2, y2])]``."""
    im = Image.new("RGB", size, (rng.randint(0, 60),) * 3)
    d = ImageDraw.Draw(im)
    out = []
    for colour in rng.sample(list(COLOURS), rng.randint(2, 3)):
        x1, y1 = rng.randint(0, size[0] - 20), rng.randint(0, size[1] - 16)
        box = [x1, y1, x1 + rng.randint(10, 19), y1 + rng.randint(8, 15)]
        d.rectangle(box, fill=COLOURS[colour])
        out.append((colour, box))
    path.parent.mkdir(parents=True, exist_ok=True)
    (im.convert("L") if grey else im).save(path)
    return out
