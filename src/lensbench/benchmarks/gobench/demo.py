"""A generated GOBench folder: NOT the benchmark (drawn light scenes, template prompts and questions,
made-up human ratings).

For trying every command offline (``lensbench data demo gobench DIR``), both parts of GOBench:

* the release layout the loader reads (:mod:`lensbench.benchmarks.gobench.layout`):
  ``data_total.json`` (records with ``index``, ``category``, ``image``, ``title``, ``prompt``,
  ``Questions_reality`` as 5 numbered lines, ``Question_aesthetics``,
  ``Question_Instruction_consistency``) and ``<category>/<N.M>.png`` (three images per scenario,
  variants ``.1``-``.3``), so ``lensbench run gobench`` and the generation side (``lensbench gobench
  generate | filter | rate``, which read the prompts of ``data_total.json``) both work;
* ``GOBench.tsv`` in VLMEvalKit's layout (numbered rows in ``data_total.json`` order; ``image``
  base64 PNG, ``question``, ``answer`` with ``Reality Assessment Score`` / ``Aesthetics Rating`` /
  ``Instruction Consistency Rating``), the human ground truth for ``--human-ratings`` and
  ``lensbench gobench summary``.

Scenarios cycle through the three categories (paper Fig. 2: direct, reflected, refracted light).
"""

from __future__ import annotations

import base64
import csv
import io
import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

from lensbench.benchmarks.gobench.records import CATEGORIES

__all__ = ["write_demo", "DEMO_SCENES"]

#: (category, prompt) per generated scenario; the prompt names what the drawn image shows.
DEMO_SCENES = (
    ("direct_light_images", "A red ball on a table lit by a lamp from the left, casting a shadow to the right."),
    ("reflect_light_images", "A candle in front of a flat mirror, its reflection the same size behind the glass."),
    ("refracted_light_images", "A straight pencil in a glass of water, looking bent at the water surface."),
    ("direct_light_images", "A street lamp at night lighting a bench, the bench's shadow falling away from it."),
    ("reflect_light_images", "A calm lake reflecting a tree upside down, the reflection directly below it."),
    ("refracted_light_images", "A prism splitting a white beam into a rainbow on a wall."),
)

_QUESTIONS = ("Does the light come from one consistent direction?",
              "Do the shadows fall away from the light source?",
              "Are reflections placed where the law of reflection puts them?",
              "Is the bending of light at surfaces physically plausible?",
              "Are the brightness and colours consistent with the light sources?")


def _png(k: int, variant: int, rnd: random.Random, size: tuple[int, int] = (96, 72)) -> bytes:
    """A drawn scene: a gradient sky, a light disc, a ray and an object (not flat, with edges, so the
    generation side's quality filter keeps it)."""
    w, h = size
    im = Image.new("RGB", size)
    d = ImageDraw.Draw(im)
    for y in range(h):
        d.line((0, y, w, y), fill=(30 + y, 40 + 2 * variant * 10, 90 + k * 20 % 120))
    lx, ly = 8 + rnd.randrange(20), 6 + rnd.randrange(10)
    d.ellipse((lx, ly, lx + 12, ly + 12), fill=(255, 240, 160))
    ox, oy = w // 2 + rnd.randrange(-10, 10), h // 2 + rnd.randrange(0, 10)
    d.line((lx + 6, ly + 6, ox, oy), fill=(255, 255, 200), width=2)
    d.rectangle((ox, oy, ox + 16, oy + 14), fill=(200, 40 + 60 * variant, 40))
    d.polygon([(ox + 16, oy + 14), (ox + 34, oy + 18), (ox + 16, oy + 18)], fill=(15, 15, 25))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def write_demo(root: str | Path, n_scenarios: int = len(DEMO_SCENES), seed: int = 0) -> Path:
    """Write the demo under ``root`` (``n_scenarios`` scenarios, at most 6, x 3 images: 18 records by
    default) and return ``root`` (the folder to give to ``--data-dir``; the ratings are
    ``root/GOBench.tsv``)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(seed)
    questions = "\n".join(f"{i}. {q}" for i, q in enumerate(_QUESTIONS, 1))
    numbers = {c: 0 for c in CATEGORIES}
    records, rows = [], []
    for k, (cat, prompt) in enumerate(DEMO_SCENES[:n_scenarios]):
        numbers[cat] += 1
        for v in (1, 2, 3):
            image = f"{cat}/{numbers[cat]}.{v}.png"
            png = _png(k, v, rnd)
            (root / cat).mkdir(exist_ok=True)
            (root / image).write_bytes(png)
            records.append({"index": f"{cat}_{numbers[cat]}.{v}", "category": cat, "image": image,
                            "title": f"demo scene {k + 1}", "prompt": prompt, "Questions_reality": questions,
                            "Question_aesthetics": "Rate the aesthetic quality of the image from 1 to 5.",
                            "Question_Instruction_consistency": "Rate how well the image follows the prompt "
                                                                "from 1 to 5."})
            reality = rnd.randrange(11) / 2  # 0-5 in steps of 0.5 (Yes 1, Cannot determine 0.5, No 0)
            answer = (f"Reality Assessment Score: {reality:g}\nAesthetics Rating: {1 + rnd.randrange(17) / 4:g}\n"
                      f"Instruction Consistency Rating: {1 + rnd.randrange(17) / 4:g}")
            rows.append({"index": str(len(records)), "image": base64.b64encode(png).decode("ascii"),
                         "question": f"Prompt: {prompt}\nReality questions:\n{questions}", "answer": answer})
    (root / "data_total.json").write_text(json.dumps(records, indent=1), encoding="utf-8")
    with (root / "GOBench.tsv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["index", "image", "question", "answer"], delimiter="\t")
        w.writeheader()
        w.writerows(rows)
    return root
