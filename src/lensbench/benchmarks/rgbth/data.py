"""RGB-Th-Bench release loader: skills, prompt groups, input modes and the (scene, skill) units.

Source: RGB-Th-Bench README, Protocol; paper Sec. 3.2 (the 14 skills and their abbreviations, Fig. 4-5) and Sec. 3.3
(the two prompt groups); release layout ``Source */<scene>/questions.json`` =
``{"data": [item]}`` with ``data_id``, ``data_type``, ``skill_type``, ``QAs``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lensbench.benchmarks.fields import inside, missing_media, want_choice, want_list, want_obj, want_str
from lensbench.core.errors import DataError
from lensbench.core.jsonl import read_json

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
#: thermal image only, for every skill; ``rgb-only`` = the scene's RGB image only, for every skill;
#: ``blind`` = no image at all, the paper's text (the language-prior baseline of ``lensbench reproduce``).
INPUT_MODES = ("rgb+thermal", "thermal-only", "rgb-only", "blind")
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


def load_units(data_dir: Path, include_extra: bool = False, input_mode: str = DEFAULT_INPUT, *,
               skip_missing: bool = False, stats: dict[str, Any] | None = None) -> list[Unit]:
    """Units of ``data_dir`` (the ``Data`` folder with ``Source */<scene>/questions.json``), file order.

    Every field read is type-checked (:mod:`lensbench.benchmarks.fields`); image paths must resolve
    inside ``data_dir``. Units whose image is missing are an error listing the counts unless
    ``skip_missing`` (then left out; ``stats["n_skipped_missing"]`` counts them when ``stats`` is given).

    Raises DataError naming the file and field for a malformed file or field of the wrong type, an
    unknown skill or data type, a bad answer, an image path leaving the data folder, or missing
    images (in ``thermal-only`` mode: no ``thermal.jpg`` / ``thermal.png`` in the scene folder).
    Raises ValueError for an unknown ``input_mode``.
    """
    if input_mode not in INPUT_MODES:
        raise ValueError(f"unknown input mode {input_mode!r}; one of {', '.join(INPUT_MODES)}")
    files = sorted(Path(data_dir).glob("*/*/questions.json"))
    if not files:
        raise DataError(data_dir, "no '<Source>/<scene>/questions.json' files found (expected the RGB-Th-Bench "
                                  "'Data' folder)")
    units: list[Unit] = []
    missing: list[str] = []
    first_missing: Path | None = None
    n_all = 0
    for f in files:
        doc = read_json(f)
        items = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise DataError(f, "expected an object with a 'data' list", field="data")
        source_dir = f.parent.parent
        scene_key = f"{source_dir.name}/{f.parent.name}"
        for i, it in enumerate(items):
            u = _unit(Path(data_dir), f, i, it, source_dir, scene_key, include_extra, input_mode)
            if u is None:
                continue
            n_all += 1
            lack = [p for p in u.images if not os.path.isfile(p)]
            if lack:
                missing.append(lack[0])
                first_missing = first_missing or f
                continue
            units.append(u)
    missing_media(first_missing or data_dir, missing, n_all, "units", data_dir, skip=skip_missing)
    if stats is not None and missing:
        stats["n_skipped_missing"] = len(missing)
    return units


def _thermal_of_scene(f: Path, where: str) -> str:
    """The scene folder's ``thermal.jpg``, else ``thermal.png`` (the third-party thermal-only rule)."""
    for name in ("thermal.jpg", "thermal.png"):
        p = f.parent / name
        if p.is_file():
            return str(p)
    raise DataError(f, f"--input thermal-only needs {f.parent / 'thermal.jpg'} (or thermal.png)", field=where)


def _unit(data_dir: Path, f: Path, i: int, it: Any, source_dir: Path, scene_key: str, include_extra: bool,
          input_mode: str) -> Unit | None:
    where = f"data[{i}]"
    want_obj(it, f, where)
    for k in ("data_id", "data_type", "skill_type", "QAs"):
        if k not in it:
            raise DataError(f, "missing field", field=f"{where}.{k}")
    skill = want_str(it["skill_type"], f, f"{where}.skill_type")
    want_str(it["data_type"], f, f"{where}.data_type")
    ids = it["data_id"] if isinstance(it["data_id"], list) else [it["data_id"]]
    for k, rel in enumerate(ids):
        want_str(rel, f, f"{where}.data_id" + (f"[{k}]" if isinstance(it["data_id"], list) else ""), nonempty=True,
                 expected="a path string or a [rgb, thermal] pair of strings")
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
    if len(ids) != n_img:
        raise DataError(f, f"{it['data_type']!r} needs {n_img} image(s), got {len(ids)}", field=f"{where}.data_id")
    expected_group = RGB_TXT if n_img == 1 else RGB_TH_TXT
    if group != expected_group:
        raise DataError(f, f"skill {skill!r} belongs to {group} but data_type is {it['data_type']!r}",
                        field=f"{where}.data_type")
    images = [str(inside(data_dir, rel, f, f"{where}.data_id", base=source_dir)) for rel in ids]
    if input_mode == "thermal-only":
        images = [_thermal_of_scene(f, f"{where}.data_id")]
    elif input_mode == "rgb-only":
        images = images[:1]
    elif input_mode == "blind":
        images = []
    qas = []
    for j, qa in enumerate(want_list(it["QAs"], f, f"{where}.QAs", nonempty=True)):
        want_obj(qa, f, f"{where}.QAs[{j}]")
        if "question" not in qa or "answer" not in qa:
            raise DataError(f, "needs 'question' and 'answer'", field=f"{where}.QAs[{j}]")
        question = want_str(qa["question"], f, f"{where}.QAs[{j}].question", nonempty=True)
        ans = want_choice(qa["answer"], f, f"{where}.QAs[{j}].answer", ("Yes", "No"),
                          normalise=lambda a: a.strip().capitalize())
        qas.append((question.strip(), ans))
    qas_t = tuple(qas)
    return Unit(scene_key, skill, abbrev, group, extra, tuple(images), qas_t, contradictions(qas_t))
