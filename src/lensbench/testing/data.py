"""Small generated inputs in the official release layouts, for tests that must not need real data."""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image

__all__ = ["make_rgbth_release"]

_SKILLS_RGB = ["Scene Understanding", "Detailed Object Presence", "Instance Counting", "Instance Attributes"]
_SKILLS_TH = ["Instance Thermal Attribute", "Coldest Areas Detection", "Warmest Areas Detection",
              "Relative Thermal Attribute"]


def _jpeg(path: Path, seed: int, size: tuple[int, int] = (48, 32)) -> None:
    rnd = random.Random(seed)
    im = Image.new("RGB", size, (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, "JPEG", quality=90)


def make_rgbth_release(root: str | Path, n_scenes: int = 3, questions_per_unit: int = 4, seed: int = 0) -> Path:
    """Write an RGB-Th-Bench ``Data`` folder (``Source 1/<scene>/questions.json`` + images) under ``root``.

    Each scene has one unit per skill of a few RGB-Txt and RGB-Th-Txt skills, with
    ``questions_per_unit`` yes/no questions each (answers alternate deterministically).
    Returns the ``Data`` folder. Skill names are the paper's (Sec. 3.2).
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
