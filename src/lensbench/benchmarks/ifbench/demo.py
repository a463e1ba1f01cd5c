"""A generated IF-Bench folder: NOT the benchmark (drawn "infrared" scenes, template questions).

For trying every command offline (``lensbench data demo if-bench DIR``): ``if_bench.json`` in the
release layout (``{dimension: [record]}``, each record ``dataset``, ``dst_thermal_path`` and a
bilingual ``question`` with ``answer`` and ``en_``/``cn_`` question and options A-D),
``infrared_imgs/`` (grey scenes with a few warm blobs) and ``translated_rgb_imgs/`` (the GenViP
inputs, a false-colour version) so every ``--input`` configuration runs. Each question asks how
many warm objects the image shows; the answer is right for the drawn image.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

from lensbench.benchmarks.ifbench.data import DIMENSIONS

__all__ = ["write_demo"]

LETTERS = "ABCD"


def _scene(n_blobs: int, rnd: random.Random, size: tuple[int, int] = (96, 72)) -> Image.Image:
    im = Image.new("L", size, 40 + rnd.randrange(30))
    d = ImageDraw.Draw(im)
    for _ in range(n_blobs):
        x, y = rnd.randrange(4, size[0] - 20), rnd.randrange(4, size[1] - 20)
        d.ellipse((x, y, x + 14, y + 14), fill=200 + rnd.randrange(55))
    return im


def write_demo(root: str | Path, per_dimension: int = 2, seed: int = 0) -> Path:
    """Write the demo under ``root`` (``per_dimension`` questions in each of the 10 dimensions) and return it."""
    root = Path(root)
    (root / "infrared_imgs").mkdir(parents=True, exist_ok=True)
    (root / "translated_rgb_imgs").mkdir(parents=True, exist_ok=True)
    rnd = random.Random(seed)
    doc: dict[str, list[dict]] = {}
    k = 0
    for dim in DIMENSIONS:
        for _ in range(per_dimension):
            n = 1 + rnd.randrange(4)
            name = f"demo_{k:03d}.jpg"
            ir = _scene(n, rnd)
            ir.save(root / "infrared_imgs" / name, "JPEG", quality=90)
            Image.merge("RGB", (ir, ir.point(lambda v: 255 - v), ir.point(lambda v: v // 2))).save(
                root / "translated_rgb_imgs" / name, "JPEG", quality=90)
            counts = [n] + rnd.sample([c for c in range(1, 8) if c != n], 3)
            rnd.shuffle(counts)
            doc.setdefault(dim, []).append({
                "dataset": "lensbench-demo", "dst_thermal_path": name,
                "question": {"dimension": dim, "answer": LETTERS[counts.index(n)],
                             "en_question": f"[{dim}] How many warm objects does this infrared image show?",
                             "en_options": {x: str(c) for x, c in zip(LETTERS, counts)},
                             "cn_question": f"[{dim}] 这张红外图像中有几个温暖的物体？",
                             "cn_options": {x: f"{c}个" for x, c in zip(LETTERS, counts)}}})
            k += 1
    (root / "if_bench.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return root
