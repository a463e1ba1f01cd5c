"""RGB-Th-Bench release loader: skills, prompt groups, input modes and the (scene, skill) units.

Source: SPEC §2; paper Sec. 3.2 (the 14 skills and their abbreviations, Fig. 4-5) and Sec. 3.3
(the two prompt groups); release layout ``Source */<scene>/questions.json`` =
``{"data": [item]}`` with ``data_id``, ``data_type``, ``skill_type``, ``QAs``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lensbench.core.errors import DataError

__all__ = ["RGB_TXT", "RGB_TH_TXT", "SKILLS", "EXTRA_SKILLS", "PAPER_ABBREVS", "INPUT_MODES", "DEFAULT_INPUT",
           "Unit", "load_units", "contradictions"]

RGB_TXT = "RGB-Txt"
RGB_TH_TXT = "RGB-Th-Txt"

#: skill_type -> (abbreviation of Sec. 3.2 / Fig. 4-5, prompt group), in the paper's order.
SKILLS: dict[str, tuple[str, str]] = {
    "Scene Understanding": ("Scene", RGB_TXT),
    "Detailed Object Presence": ("ObjPr", RGB_TXT),
    "Instance Attributes": ("Attr", RGB_TXT),
    "Instance Location w.r.t. Image": ("LocIm", RGB_TXT),
    "Instance Spatial Relation": ("SpRel", RGB_TXT),
    "Instance Counting": ("Count", RGB_TXT),
    "Instance Interaction": ("Interact", RGB_TXT),
    "Temperature to Color Mapping Understanding": ("Temp2Col", RGB_TH_TXT),
    "RGB-Thermal-Heatmap Alignment": ("HeatAlign", RGB_TH_TXT),
    "Instance Thermal Attribute": ("ThermAttr", RGB_TH_TXT),
    "Relative Thermal Attribute": ("RelTherm", RGB_TH_TXT),
    "Warmest Areas Detection": ("Warmest", RGB_TH_TXT),
    "Coldest Areas Detection": ("Coldest", RGB_TH_TXT),
    "Risk and Anomaly Detection": ("Anomaly", RGB_TH_TXT),
}
#: The two skills present in the files but not in the paper's 14 (``--include-extra-skills``).
EXTRA_SKILLS: dict[str, tuple[str, str]] = {
    "Numerical Text Reference Understanding": ("NumText", RGB_TXT),
    "Non-Numerical Text Reference Understanding": ("NonNumText", RGB_TXT),
}
PAPER_ABBREVS = [a for a, _ in SKILLS.values()]

#: Input modes (``--input``): what each request shows the model.
#: ``rgb+thermal`` = the paper (Sec. 3.3): the unit's own images (RGB, or RGB then thermal);
#: ``thermal-only`` = the third-party re-evaluation's ``benchmark_thermal.py``: the scene's
#: thermal image only, for every skill; ``rgb-only`` = the scene's RGB image only, for every skill.
INPUT_MODES = ("rgb+thermal", "thermal-only", "rgb-only")
DEFAULT_INPUT = "rgb+thermal"

_DATA_TYPES = {"Single RGB Image": 1, "RGB-Thermal Pair": 2}


@dataclass(frozen=True)
class Unit:
    """One (scene, skill) unit: the images sent for it and its questions.

    ``scene_key`` = ``"Source N/<scene>"``; ``group`` = the skill's prompt group of the paper
    (used for grouping whatever the input mode); ``images`` = paths sent, in order (input mode
    applied); ``qas`` = ((question, "Yes"|"No"), ...) in file order (3 to 5 questions);
    ``defects`` = questions asked more than once with opposite answers (data defects).
    """

    scene_key: str
    skill: str
    abbrev: str
    group: str
    extra: bool
    images: tuple[str, ...]
    qas: tuple[tuple[str, str], ...]
    defects: tuple[str, ...] = ()


def contradictions(qas: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """Questions that occur more than once in ``qas`` with different answers (file order).

    Such a unit can never have all its questions right, so it can never pass SAcc.
    """
    answers: dict[str, set[str]] = {}
    for q, a in qas:
        answers.setdefault(q, set()).add(a)
    return tuple(q for q, s in answers.items() if len(s) > 1)


def load_units(data_dir: Path, include_extra: bool = False, input_mode: str = DEFAULT_INPUT) -> list[Unit]:
    """Units of ``data_dir`` (the ``Data`` folder with ``Source */<scene>/questions.json``), file order.

    Raises DataError naming the file and field for a malformed file, an unknown skill or data
    type, a bad answer, or a missing image (in ``thermal-only`` mode: no ``thermal.jpg`` /
    ``thermal.png`` in the scene folder). Raises ValueError for an unknown ``input_mode``.
    """
    if input_mode not in INPUT_MODES:
        raise ValueError(f"unknown input mode {input_mode!r}; one of {', '.join(INPUT_MODES)}")
    files = sorted(Path(data_dir).glob("*/*/questions.json"))
    if not files:
        raise DataError(data_dir, "no '<Source>/<scene>/questions.json' files found (expected the RGB-Th-Bench "
                                  "'Data' folder)")
    units: list[Unit] = []
    for f in files:
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f, f"not valid JSON: {exc}") from None
        items = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise DataError(f, "expected an object with a 'data' list", field="data")
        source_dir = f.parent.parent
        scene_key = f"{source_dir.name}/{f.parent.name}"
        for i, it in enumerate(items):
            u = _unit(f, i, it, source_dir, scene_key, include_extra, input_mode)
            if u is not None:
                units.append(u)
    return units


def _thermal_of_scene(f: Path, where: str) -> str:
    """The scene folder's ``thermal.jpg``, else ``thermal.png`` (the third-party thermal-only rule)."""
    for name in ("thermal.jpg", "thermal.png"):
        p = f.parent / name
        if p.is_file():
            return str(p)
    raise DataError(f, f"--input thermal-only needs {f.parent / 'thermal.jpg'} (or thermal.png)", field=where)


def _unit(f: Path, i: int, it: Any, source_dir: Path, scene_key: str, include_extra: bool,
          input_mode: str) -> Unit | None:
    where = f"data[{i}]"
    if not isinstance(it, dict):
        raise DataError(f, "item is not an object", field=where)
    for k in ("data_id", "data_type", "skill_type", "QAs"):
        if k not in it:
            raise DataError(f, "missing field", field=f"{where}.{k}")
    skill = it["skill_type"]
    if skill in SKILLS:
        (abbrev, group), extra = SKILLS[skill], False
    elif skill in EXTRA_SKILLS:
        (abbrev, group), extra = EXTRA_SKILLS[skill], True
        if not include_extra:
            return None
    else:
        raise DataError(f, f"unknown skill {skill!r}", field=f"{where}.skill_type")
    n_img = _DATA_TYPES.get(it["data_type"])
    if n_img is None:
        raise DataError(f, f"unknown data_type {it['data_type']!r}", field=f"{where}.data_type")
    ids = it["data_id"] if isinstance(it["data_id"], list) else [it["data_id"]]
    if len(ids) != n_img:
        raise DataError(f, f"{it['data_type']!r} needs {n_img} image(s), got {len(ids)}", field=f"{where}.data_id")
    expected_group = RGB_TXT if n_img == 1 else RGB_TH_TXT
    if group != expected_group:
        raise DataError(f, f"skill {skill!r} belongs to {group} but data_type is {it['data_type']!r}",
                        field=f"{where}.data_type")
    images = []
    for rel in ids:
        p = source_dir / rel
        if not p.is_file():
            raise DataError(f, f"image not found: {p}", field=f"{where}.data_id")
        images.append(str(p))
    if input_mode == "thermal-only":
        images = [_thermal_of_scene(f, f"{where}.data_id")]
    elif input_mode == "rgb-only":
        images = images[:1]
    qas = []
    if not isinstance(it["QAs"], list) or not it["QAs"]:
        raise DataError(f, "expected a non-empty list", field=f"{where}.QAs")
    for j, qa in enumerate(it["QAs"]):
        if not isinstance(qa, dict) or "question" not in qa or "answer" not in qa:
            raise DataError(f, "needs 'question' and 'answer'", field=f"{where}.QAs[{j}]")
        ans = str(qa["answer"]).strip().capitalize()
        if ans not in ("Yes", "No"):
            raise DataError(f, f"answer must be Yes or No, got {qa['answer']!r}", field=f"{where}.QAs[{j}].answer")
        qas.append((str(qa["question"]).strip(), ans))
    qas_t = tuple(qas)
    return Unit(scene_key, skill, abbrev, group, extra, tuple(images), qas_t, contradictions(qas_t))
