"""IF-Bench image collection (paper Sec. 3.2 "Image Collection"): the pool, the size filter, targets.

The pool is every image under ``--images``; its first-level sub-folder names the source data set
(InfPre's 23 sub-data sets; images directly under the folder get the folder's own name). The
paper samples 100 images per data set (``per_dataset``, seeded) and excludes "images with either
width or height below 200 pixels" (``min_side``). Target annotations (for the precise Target
Localization questions, "Manual Annotation") come from a JSON / JSONL file of ``{"image":
<path under --images>, "targets": [{"description": str, "box": [x1, y1, x2, y2] pixels}]}`` (or
one target as top-level ``description`` + ``box``).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from lensbench.core.errors import DataError
from lensbench.core.jsonl import parse_jsonl
from lensbench.tools.ifbench.generate import SourceImage, Target

__all__ = ["IMAGE_EXTS", "Collected", "collect_images", "read_annotations"]

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


@dataclass
class Collected:
    """The kept images and the counts of each step: ``found`` (files with an image extension),
    ``sampled`` (after ``per_dataset``), ``unreadable``, ``too_small`` (short side below
    ``min_side``), ``kept``; ``unreadable_files`` names them."""

    images: list[SourceImage] = field(default_factory=list)
    found: int = 0
    sampled: int = 0
    unreadable: int = 0
    too_small: int = 0
    unreadable_files: list[str] = field(default_factory=list)

    @property
    def kept(self) -> int:
        """Images kept."""
        return len(self.images)


def read_annotations(path: Path) -> dict[str, list[dict]]:
    """``{image path under --images: [{"description", "box"}]}`` from a JSON list / JSONL file.
    Raises DataError naming the file and the entry for a missing or malformed field."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "annotation file not found")
    text = path.read_text(encoding="utf-8")
    try:
        rows = ([v for _ln, v in parse_jsonl(path, text)] if path.suffix.lower() == ".jsonl"
                else json.loads(text))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc}") from None
    if not isinstance(rows, list):
        raise DataError(path, "expected a list of {image, targets} objects")
    out: dict[str, list[dict]] = defaultdict(list)
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("image"), str) or not r["image"].strip():
            raise DataError(path, f"entry {i}: needs an 'image' path", field=f"[{i}].image")
        targets = r.get("targets", [{"description": r.get("description"), "box": r.get("box")}])
        if not isinstance(targets, list):
            raise DataError(path, f"entry {i}: 'targets' must be a list", field=f"[{i}].targets")
        for j, t in enumerate(targets):
            where = f"[{i}].targets[{j}]"
            if not isinstance(t, dict) or not isinstance(t.get("description"), str) or not t["description"].strip():
                raise DataError(path, "needs a non-empty 'description'", field=f"{where}.description")
            box = t.get("box")
            if not (isinstance(box, list) and len(box) == 4 and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in box) and box[0] < box[2]
                    and box[1] < box[3] and min(box) >= 0):
                raise DataError(path, f"'box' must be [x1, y1, x2, y2] pixels with x1 < x2, y1 < y2, got {box!r}",
                                field=f"{where}.box")
            out[r["image"].strip().replace("\\", "/")].append({"description": t["description"].strip(), "box": box})
    return dict(out)


def _targets(anns: list[dict], size: tuple[int, int], path: Path, key: str) -> tuple[Target, ...]:
    w, h = size
    out = []
    for a in anns:
        x1, y1, x2, y2 = a["box"]
        if x2 > w or y2 > h:
            raise DataError(path, f"box {a['box']} of {key} lies outside the {w}x{h} image", field="box")
        out.append(Target(a["description"], (x1 + x2) / 2 / w, (y1 + y2) / 2 / h, (x2 - x1) / w, (y2 - y1) / h))
    return tuple(out)


def collect_images(root: Path, *, min_side: int = 200, per_dataset: int | None = None, seed: int = 0,
                   annotations: Path | None = None) -> Collected:
    """The image pool under ``root`` after sampling and the size filter (module docstring).

    Raises DataError when ``root`` is not a folder, holds no image, or an annotation names an
    image not in the pool or a box outside its image.
    """
    from PIL import Image

    root = Path(root)
    if not root.is_dir():
        raise DataError(root, "--images is not a folder")
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in IMAGE_EXTS and p.is_file())
    if not files:
        raise DataError(root, f"no images ({', '.join(IMAGE_EXTS)}) under this folder")
    anns = read_annotations(annotations) if annotations is not None else {}
    rels = {p.relative_to(root).as_posix() for p in files}
    unknown = sorted(set(anns) - rels)
    if unknown:
        raise DataError(Path(annotations or root), f"{len(unknown)} annotated image(s) not under {root}, e.g. "
                                                   f"{unknown[0]!r}", field="image")
    by_set: dict[str, list[Path]] = defaultdict(list)
    for p in files:
        rel = p.relative_to(root)
        by_set[rel.parts[0] if len(rel.parts) > 1 else root.name].append(p)
    res = Collected(found=len(files))
    for ds in sorted(by_set):
        pool = by_set[ds]
        if per_dataset is not None and len(pool) > per_dataset:
            pool = sorted(random.Random(f"{seed}:{ds}").sample(pool, per_dataset))
        res.sampled += len(pool)
        for p in pool:
            rel = p.relative_to(root).as_posix()
            try:
                with Image.open(p) as im:
                    size = im.size
            except (OSError, ValueError):
                res.unreadable += 1
                res.unreadable_files.append(rel)
                continue
            if min(size) < min_side:
                res.too_small += 1
                continue
            res.images.append(SourceImage(key=f"{ds}/{rel}" if not rel.startswith(f"{ds}/") else rel, path=str(p),
                                          dataset=ds, size=size, targets=_targets(anns.get(rel, []), size, p, rel)))
    return res
