"""GOBench's loader: ``data_total.json`` of the release into :class:`~.records.GORecord` s, images resolved,
human ground truth attached, and what loading counted (:class:`~lensbench.benchmarks.steps.Loaded`).

Source: ``data/data_total.json`` of github.com/Amber0614/GOBench (999 objects with ``index``, ``category``,
``image`` (path relative to the ``data`` folder), ``title``, ``prompt``, ``Questions_reality`` (5 numbered
lines), ``Question_aesthetics``, ``Question_Instruction_consistency``); 333 scenarios x 3 generated images.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from lensbench.benchmarks.fields import inside, missing_media, want_obj, want_str
from lensbench.benchmarks.gobench.records import CATEGORIES, GORecord, scenario_of, split_questions
from lensbench.benchmarks.steps import Loaded
from lensbench.core.errors import ConfigError, DataError

__all__ = ["load_gobench", "load_records", "find_records_file", "one_per_scenario"]

_REQUIRED = ("index", "category", "image", "prompt", "Questions_reality")


def load_gobench(data_dir: Path, o: Any) -> Loaded:
    """The records of ``data_dir``'s ``data_total.json`` as GOBench's options ``o`` ask (``--images-dir``,
    ``--layout``, ``--categories``, ``--human-ratings``, ``--skip-missing``, ``--prompt-style``), with
    ``Loaded.counts``: ``n_records_total``, ``records_file``, ``n_images_missing``, ``n_loaded`` and the
    ground-truth matching of :func:`lensbench.benchmarks.gobench.humans.attach_human_gt`.

    Raises DataError naming the file/field for bad records, a missing image (``--no-skip-missing``), an
    image path leaving the data folder, no image at all, or unreadable ratings; ConfigError for unknown
    ``--categories`` or ``--prompt-style vlmevalkit`` without the TSV's question cells.
    """
    path = find_records_file(Path(data_dir))
    images_dir = Path(o.images_dir) if o.images_dir else None
    if images_dir is not None and not images_dir.is_dir():
        raise DataError(images_dir, "--images-dir is not a folder")
    records = load_records(path, images_dir)
    if o.layout == "scenario":
        records = one_per_scenario(records, images_dir or path.parent, path)
    n_all = len(records)
    if o.categories:
        keep = {c.strip() for c in o.categories.split(",") if c.strip()}
        unknown = keep - set(CATEGORIES)
        if unknown:
            raise ConfigError(f"--categories: unknown {sorted(unknown)}; known: {', '.join(CATEGORIES)}")
        records = [r for r in records if r.category in keep]
    info: dict[str, Any] = {"n_records_total": n_all, "records_file": str(path)}
    if o.human_ratings:
        from lensbench.benchmarks.gobench.humans import attach_human_gt

        hp = Path(o.human_ratings)
        records, found = attach_human_gt(hp, records, image_cache=Path(o.image_cache) if o.image_cache else None,
                                         generator=o.ratings_generator)
        info.update(found)
    missing = [r for r in records if r.image_path is None]
    if len(missing) < len(records):  # none at all: the layout hint below
        missing_media(path, [m.image for m in missing], len(records), "records", images_dir or path.parent,
                      skip=o.skip_missing)
    present = [r for r in records if r.image_path is not None]
    if not present:
        raise DataError(images_dir or path.parent, f"none of the {len(records)} records' images was found "
                        "(expected <category>/<N.M>.png, e.g. direct_light_images/1.1.png)", field="image")
    if o.prompt_style == "vlmevalkit":
        noq = [r.index for r in present if not r.tsv_question]
        if noq:
            raise ConfigError(f"--prompt-style vlmevalkit needs the TSV's question cells (--human-ratings "
                              f"GOBench.tsv); {len(noq)} record(s) have none, e.g. {noq[0]}")
    info.update(n_images_missing=len(missing), n_loaded=len(present))
    return Loaded(present, info)


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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(path, f"not valid JSON: {exc}") from None
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
