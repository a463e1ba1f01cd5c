"""IF-Bench loader: ``if_bench.json`` and the image folders -> :class:`Question` samples.

Data layout (IF-Bench README, Protocol; official release github.com/casiatao/IF-Bench ``evaluate/if_bench/``):
``if_bench.json`` = ``{dimension: [record]}`` (680 four-option questions on 499 infrared images,
10 dimensions); record fields ``dataset``, ``dst_thermal_path`` (file name under the image folder),
``question.{dimension, answer, en_question, en_options, cn_question, cn_options}``; ``pos_info``
and ``question.original_answer`` are ignored. Images are not in the git release: HF dataset
``casiatao/IF-Bench`` (``infrared_imgs/``, ``translated_rgb_imgs/``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from lensbench.benchmarks.ifbench.prompts import INPUTS, LANG_FIELDS, LETTERS
from lensbench.benchmarks.fields import inside, missing_media, want_choice, want_list, want_obj, want_options, want_str
from lensbench.core.errors import DataError
from lensbench.core.jsonl import read_json

__all__ = ["DIMENSIONS", "ABBREVS", "COLUMNS", "Question", "load_questions", "find_image"]

#: Dimension name (as in the data) -> Table 2 abbreviation, in Table 2's column order.
DIMENSIONS: dict[str, str] = {
    "Scene Understanding": "SU",
    "Image Theme": "IT",
    "Viewpoint of Capture": "VC",
    "Target Localization": "TL",
    "Spatial Relationship Understanding": "SRU",
    "Object Counting": "OC",
    "Thermal Feature Understanding": "TFU",
    "Action Recognition": "AR",
    "Thermal Feature Reasoning": "TFR",
    "Commonsense Reasoning": "CR",
}
ABBREVS: list[str] = list(DIMENSIONS.values())
#: Table 2 columns: Avg, then the 10 dimension abbreviations.
COLUMNS: list[str] = ["Avg"] + ABBREVS
_IMG_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff")


@dataclass(frozen=True)
class Question:
    """One IF-Bench question as published.

    ``qid`` = ``"<abbrev>-<index within its dimension list, 3 digits>"``; ``answer`` is the
    original letter; ``options`` maps language -> the 4 option texts in original A-D order;
    ``questions`` maps language -> question text; ``if_path``/``rgb_path``: the infrared and
    translated image files (``None`` when not needed or in blind mode).
    """

    qid: str
    dimension: str
    abbrev: str
    dataset: str
    image_name: str
    answer: str
    questions: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, tuple[str, str, str, str]], ...]
    if_path: str | None
    rgb_path: str | None

    def question(self, lang: str) -> str:
        """The question text in ``lang``."""
        return dict(self.questions)[lang]

    def option_list(self, lang: str) -> tuple[str, str, str, str]:
        """The options in ``lang``, original A-D order."""
        return dict(self.options)[lang]


def _find_json(data_dir: Path) -> Path:
    if data_dir.is_file():
        return data_dir
    for cand in (data_dir / "if_bench.json", data_dir / "evaluate" / "if_bench" / "if_bench.json",
                 data_dir / "if_bench" / "if_bench.json"):
        if cand.is_file():
            return cand
    raise DataError(data_dir, "no if_bench.json found (looked for if_bench.json, evaluate/if_bench/if_bench.json)")


def find_image(folder: Path, name: str) -> Path | None:
    """``folder/name``, else ``folder/<base name>``, else the same stem with another image extension."""
    p = folder / name
    if p.is_file():
        return p
    base = folder / Path(name).name
    if base.is_file():
        return base
    for ext in _IMG_EXTS:
        q = base.with_suffix(ext)
        if q.is_file():
            return q
    return None


def load_questions(data_dir: str | Path, *, input_config: str = "if", blind: bool = False,
                   image_dir: str | None = None, translated_dir: str | None = None, skip_missing: bool = False,
                   stats: dict | None = None) -> list[Question]:
    """Questions of ``if_bench.json`` under ``data_dir`` (or the file itself), with image paths.

    Image folders: ``image_dir`` or ``DATA_DIR/infrared_imgs``, ``DATA_DIR/images``, ``DATA_DIR``
    (the first holding the first question's image); translated images for the ``rgb`` inputs in
    ``translated_dir`` or ``DATA_DIR/translated_rgb_imgs``, by base name (another image extension
    with the same stem is accepted). No image is needed in ``blind`` mode. Every field read is
    type-checked (:mod:`lensbench.benchmarks.fields`); image names must resolve inside their folder.
    Questions whose image is missing are an error listing the counts unless ``skip_missing`` (then
    left out, qids unchanged; ``stats["n_skipped_missing"]`` counts them when ``stats`` is given).

    Raises DataError naming the file and field for malformed records or fields of the wrong type,
    unknown dimensions, answers outside A-D, option sets other than A-D, image names leaving their
    folder, or missing images.
    """
    data_dir = Path(data_dir)
    jpath = _find_json(data_dir)
    root = jpath.parent if data_dir.is_file() else data_dir
    doc = read_json(jpath)
    if isinstance(doc, dict):
        items = []
        for dim, lst in doc.items():
            want_list(lst, jpath, dim)
            items += [(f"{dim}[{i}]", dim, rec) for i, rec in enumerate(lst)]
    elif isinstance(doc, list):
        items = [(f"[{i}]", None, rec) for i, rec in enumerate(doc)]
    else:
        raise DataError(jpath, "expected an object {dimension: [question]} or a list of questions")
    need = set() if blind else set(INPUTS[input_config][1])
    img_dir = _image_dir(root, jpath, items, image_dir) if "if" in need else None
    rgb_dir = None
    if "rgb" in need:
        rgb_dir = Path(translated_dir) if translated_dir else root / "translated_rgb_imgs"
        if not rgb_dir.is_dir():
            raise DataError(rgb_dir, f"translated image folder not found (input {input_config!r} needs "
                                     "--translated-dir; make one with 'lensbench genvip translate')")
    counters: dict[str, int] = defaultdict(int)
    out, missing = [], []
    for where, dim_key, rec in items:
        q, lack = _question(jpath, where, dim_key, rec, counters, img_dir, rgb_dir)
        if lack:
            missing.append(lack)
        else:
            out.append(q)
    if not items:
        raise DataError(jpath, "no questions")
    missing_media(jpath, missing, len(items), "questions", ", ".join(str(d) for d in (img_dir, rgb_dir) if d),
                  skip=skip_missing)
    if stats is not None and missing:
        stats["n_skipped_missing"] = len(missing)
    return out


def _image_dir(root: Path, jpath: Path, items, image_dir: str | None) -> Path:
    names = [rec["dst_thermal_path"] for _w, _d, rec in items
             if isinstance(rec, dict) and isinstance(rec.get("dst_thermal_path"), str)]
    first = names[0] if names else None
    if image_dir:
        d = Path(image_dir)
        if not d.is_dir():
            raise DataError(d, "--images-dir is not a folder")
        return d
    cands = [root / "infrared_imgs", root / "images", root]
    for c in cands:  # the first folder holding any question's image (the first question's may be missing)
        if c.is_dir() and any(find_image(c, n) is not None for n in names):
            return c
    raise DataError(jpath, f"image {first!r} not found in any of: {', '.join(str(c) for c in cands)} "
                           "(download the images with 'lensbench data download if-bench', give --images-dir, or use --blind)",
                    field="dst_thermal_path")


def _question(jpath, where, dim_key, rec, counters, img_dir, rgb_dir) -> tuple[Question, str | None]:
    """The question of one record and the name of its missing image (None when all are there)."""
    want_obj(rec, jpath, where)
    for k in ("dst_thermal_path", "question"):
        if k not in rec:
            raise DataError(jpath, "missing field", field=f"{where}.{k}")
    name = want_str(rec["dst_thermal_path"], jpath, f"{where}.dst_thermal_path", nonempty=True,
                    expected="an image file name")
    dataset = want_str(rec.get("dataset", ""), jpath, f"{where}.dataset")
    q = want_obj(rec["question"], jpath, f"{where}.question")
    for k in ("dimension", "answer", "en_question", "en_options", "cn_question", "cn_options"):
        if k not in q:
            raise DataError(jpath, "missing field", field=f"{where}.question.{k}")
    dim = want_str(q["dimension"], jpath, f"{where}.question.dimension")
    if dim not in DIMENSIONS:
        raise DataError(jpath, f"unknown dimension {dim!r}", field=f"{where}.question.dimension")
    if dim_key is not None and dim_key != dim:
        raise DataError(jpath, f"listed under {dim_key!r} but its dimension is {dim!r}",
                        field=f"{where}.question.dimension")
    ans = want_choice(q["answer"], jpath, f"{where}.question.answer", LETTERS)
    opts, qs = [], []
    for lang, (qf, of) in LANG_FIELDS.items():
        opts.append((lang, want_options(q[of], jpath, f"{where}.question.{of}", LETTERS)))
        qs.append((lang, want_str(q[qf], jpath, f"{where}.question.{qf}", nonempty=True)))
    abbrev = DIMENSIONS[dim]
    idx = counters[abbrev]
    counters[abbrev] += 1
    if_path = rgb_path = lack = None
    field = f"{where}.dst_thermal_path"
    if img_dir is not None:
        inside(img_dir, name, jpath, field)
        p = find_image(img_dir, name)
        if p is None:
            lack = name
        else:
            if_path = str(inside(img_dir, str(p.relative_to(img_dir)), jpath, field))
    if rgb_dir is not None:
        inside(rgb_dir, Path(name).name, jpath, field)
        p = find_image(rgb_dir, Path(name).name)
        if p is None:
            lack = lack or f"translated {Path(name).name}"
        else:
            rgb_path = str(inside(rgb_dir, p.name, jpath, field))
    return Question(qid=f"{abbrev}-{idx:03d}", dimension=dim, abbrev=abbrev, dataset=dataset,
                    image_name=name, answer=ans, questions=tuple(qs), options=tuple(opts),
                    if_path=if_path, rgb_path=rgb_path), lack
