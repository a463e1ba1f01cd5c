"""GOBench records: constants, the per-image record, ground-truth holder and the release loader.

Sources (paper = ``seeds/GOBench.md``, arXiv 2506.00991):

* Records: ``data/data_total.json`` of github.com/Amber0614/GOBench (999 objects with ``index``,
  ``category``, ``image`` (path relative to the ``data`` folder), ``title``, ``prompt``,
  ``Questions_reality`` (5 numbered lines), ``Question_aesthetics``,
  ``Question_Instruction_consistency``). 333 scenarios x 3 generated images (``N.1``-``N.3``).
* Scores (Sec. 2.2): Optical Authenticity 0-5, Aesthetic Quality and Instruction Fidelity 1-5.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from lensbench.benchmarks.fields import inside, want_obj, want_str
from lensbench.core.errors import DataError
from lensbench.core.jsonl import read_json

__all__ = [
    "one_per_scenario",
    "ANSWERS", "POINTS", "DIMENSIONS", "DIM_TITLES", "CATEGORIES", "DELTA_MAX",
    "GORecord", "HumanGT", "load_records", "find_records_file", "split_questions", "scenario_of",
]

#: The three answers to an Optical Authenticity question (Sec. 2.2), canonical spelling.
ANSWERS = ("Yes", "No", "Cannot determine")
#: Points per answer (Sec. 2.2): Yes 1, No 0, Cannot determine 0.5.
POINTS = {"Yes": 1.0, "No": 0.0, "Cannot determine": 0.5}
#: Dimension keys used throughout (authenticity 0-5, aesthetics 1-5, fidelity 1-5).
DIMENSIONS = ("authenticity", "aesthetics", "fidelity")
#: Column titles of Tables 1-3.
DIM_TITLES = {"authenticity": "Authenticity", "aesthetics": "Aesthetics", "fidelity": "Fidelity"}
#: ``category`` value -> display name (Fig. 2: Direct light 315, Reflect light 357, Refracted light 327).
CATEGORIES = {"direct_light_images": "Direct", "reflect_light_images": "Reflect", "refracted_light_images": "Refracted"}
#: Eq. 1's maximum permissible absolute difference.
DELTA_MAX = 0.5

_REQUIRED = ("index", "category", "image", "prompt", "Questions_reality")


@dataclass(frozen=True)
class HumanGT:
    """Human ground truth of one image: mean over raters per dimension.

    ``authenticity`` 0-5, ``aesthetics`` / ``fidelity`` 1-5 (floats: means of raters);
    ``majority`` = per-question majority label (one of :data:`ANSWERS`, or None when raters tie
    or no per-question labels exist), length 5 or empty; ``n_raters`` when known.
    """

    authenticity: float | None
    aesthetics: float | None
    fidelity: float | None
    majority: tuple[str | None, ...] = ()
    n_raters: int | None = None

    def get(self, dim: str) -> float | None:
        """The score of dimension ``dim`` (a key of :data:`DIMENSIONS`)."""
        return getattr(self, dim)


@dataclass(frozen=True)
class GORecord:
    """One GOBench-Gen-1k case (an image with its scenario's prompt and questions).

    ``index`` e.g. ``"direct_light_images_1.1"``; ``image`` the release's relative path
    (``"direct_light_images/1.1.png"``); ``scenario`` ``"direct_light_images/1"``; ``variant``
    ``"1"``-``"3"`` (which of the scenario's three generations); ``questions`` the 5 reality
    questions without their ``"N. "`` prefix; ``image_path`` the resolved file (None when
    absent); ``gt`` the human ground truth when ratings were given; ``tsv_question`` the
    VLMEvalKit TSV ``question`` cell and ``tsv_index`` its ``index`` cell when the TSV was given.
    """

    index: str
    category: str
    image: str
    title: str
    prompt: str
    questions: tuple[str, ...]
    scenario: str
    variant: str
    image_path: str | None = None
    gt: HumanGT | None = None
    tsv_question: str | None = None
    tsv_index: str | None = None

    @property
    def category_name(self) -> str:
        """Display name of the category (Direct / Reflect / Refracted)."""
        return CATEGORIES.get(self.category, self.category)


def scenario_of(image: str) -> tuple[str, str]:
    """``(scenario, variant)`` of a release image path: ``"reflect_light_images/62.3.png"`` ->
    ``("reflect_light_images/62", "3")``. A name without a variant (``"62.png"``) gives variant ``""``."""
    cat, _, name = image.replace("\\", "/").rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    num, _, var = stem.partition(".")
    return (f"{cat}/{num}" if cat else num), var


def split_questions(text: str) -> tuple[str, ...]:
    """The questions of a ``Questions_reality`` string: non-empty lines, ``"N. "`` prefix removed.

    Mirrors the official script's ``get_reality_questions`` (a line starting with a digit and
    containing ``". "`` loses everything up to the first ``". "``).
    """
    out = []
    for line in text.split("\n"):
        q = line.strip()
        if not q:
            continue
        if q[0].isdigit() and ". " in q:
            q = q.split(". ", 1)[1]
        out.append(q)
    return tuple(out)


def find_records_file(data_dir: Path) -> Path:
    """``data_total.json`` under ``data_dir`` (the release's ``data`` folder or the repo root).

    Raises DataError naming ``data_dir`` when neither ``data_dir/data_total.json`` nor
    ``data_dir/data/data_total.json`` exists (or ``data_dir`` is the file itself).
    """
    d = Path(data_dir)
    if d.is_file():
        return d
    for cand in (d / "data_total.json", d / "data" / "data_total.json"):
        if cand.is_file():
            return cand
    raise DataError(d, "no data_total.json here or in data/ (expected the GOBench release's data folder)")


def load_records(path: Path, images_dir: Path | None = None) -> list[GORecord]:
    """Parse ``data_total.json`` into records, resolving each image against ``images_dir``
    (default: the file's folder, as the release lays it out: ``<data>/<category>/<N.M>.png``).

    A missing image leaves ``image_path=None`` (the caller decides whether that is an error).
    Raises DataError naming the file and field for invalid JSON, a missing field or one of the
    wrong type (:mod:`lensbench.benchmarks.fields`), an ``image`` path that resolves outside the
    image folder, a question list that does not have 5 questions, or a duplicated ``index``.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(path, "expected a JSON list of records")
    base = Path(images_dir) if images_dir is not None else path.parent
    out: list[GORecord] = []
    seen: set[str] = set()
    for i, r in enumerate(data):
        where = f"[{i}]"
        want_obj(r, path, where)
        for k in _REQUIRED:
            if k not in r:
                raise DataError(path, "missing field", field=f"{where}.{k}")
            want_str(r[k], path, f"{where}.{k}", nonempty=True)
        title = want_str(r.get("title", ""), path, f"{where}.title")
        if r["index"] in seen:
            raise DataError(path, f"duplicate index {r['index']!r}", field=f"{where}.index")
        seen.add(r["index"])
        qs = split_questions(r["Questions_reality"])
        if len(qs) != 5:
            raise DataError(path, f"expected 5 reality questions, found {len(qs)}", field=f"{where}.Questions_reality")
        img_rel = r["image"].replace("\\", "/")
        p = inside(base, img_rel, path, f"{where}.image")
        scen, var = scenario_of(img_rel)
        out.append(GORecord(index=r["index"], category=r["category"], image=img_rel, title=title,
                            prompt=r["prompt"], questions=qs, scenario=scen, variant=var,
                            image_path=str(p) if p.is_file() else None))
    return out


def one_per_scenario(records: list[GORecord], base: Path, path: Path) -> list[GORecord]:
    """``--layout scenario``: one record per scenario (its first), its image ``<category>/<N>.png`` under
    ``base`` (as ``lensbench gobench generate`` writes it; ``image_path`` None when absent), index
    ``<category>_<N>``. Raises DataError naming ``path`` for an image path that leaves ``base``."""
    reps: dict[str, GORecord] = {}
    for r in records:
        if r.scenario not in reps:
            img = f"{r.scenario}.png"
            p = inside(base, img, path, "image (--layout scenario)")
            reps[r.scenario] = replace(r, index=r.scenario.replace("/", "_"), image=img, variant="",
                                       image_path=str(p) if p.is_file() else None)
    return list(reps.values())
