"""A generated RGB-Th-Bench ``Data`` folder: NOT the benchmark (plain-colour images, template questions).

For trying the commands offline (``lensbench data demo rgb-th-bench DIR``) and for tests; the
layout and fields are the release's (``<Source>/<scene>/questions.json`` with ``data``:
``data_id``, ``data_type``, ``skill_type``, ``QAs``; ``rgb.jpg``/``thermal.jpg``), the skill names
the paper's (Sec. 3.2).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image

__all__ = ["write_release", "write_demo"]

_SKILLS_RGB = ["Scene Understanding", "Detailed Object Presence", "Instance Counting", "Instance Attributes"]
_SKILLS_TH = ["Instance Thermal Attribute", "Coldest Areas Detection", "Warmest Areas Detection",
              "Relative Thermal Attribute"]


def _jpeg(path: Path, seed: int, size: tuple[int, int] = (48, 32)) -> None:
    rnd = random.Random(seed)
    im = Image.new("RGB", size, (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, "JPEG", quality=90)


def write_release(root: str | Path, n_scenes: int = 3, questions_per_unit: int = 4, seed: int = 0) -> Path:
    """Write an RGB-Th-Bench ``Data`` folder (``Source 1/<scene>/questions.json`` + images) under ``root``.

    Each scene has one unit per skill of a few RGB-Txt and RGB-Th-Txt skills, with
    ``questions_per_unit`` yes/no questions each (answers drawn with ``seed``).
    Returns the ``Data`` folder.
    """
    data = Path(root) / "Data"
    rnd = random.Random(seed)
    for s in range(n_scenes):
        scene = data / "Source 1" / f"Scene {s}"
        _jpeg(scene / "rgb.jpg", seed * 100 + 2 * s)
        _jpeg(scene / "thermal.jpg", seed * 100 + 2 * s + 1)
        items = []
        for skill in _SKILLS_RGB + _SKILLS_TH:
            pair = skill in _SKILLS_TH
            qas = [{"question": f"Is statement {j} about {skill.lower()} in scene {s} true?",
                    "answer": rnd.choice(["Yes", "No"])} for j in range(questions_per_unit)]
            rgb, th = f"Scene {s}/rgb.jpg", f"Scene {s}/thermal.jpg"  # relative to the Source folder
            items.append({"data_source": "generated", "data_id": [rgb, th] if pair else rgb,
                          "data_type": "RGB-Thermal Pair" if pair else "Single RGB Image", "skill_type": skill,
                          "QAs": qas})
        (scene / "questions.json").write_text(json.dumps({"data": items}, indent=1), encoding="utf-8")
    return data


def write_demo(root: str | Path) -> Path:
    """The demo: 3 scenes x 8 skills x 4 questions (96 questions); returns the ``Data`` folder."""
    return write_release(root, n_scenes=3, questions_per_unit=4, seed=0)
