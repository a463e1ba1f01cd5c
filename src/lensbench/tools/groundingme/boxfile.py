"""Box files given to ``lensbench groundingme build``: manual boxes (HR-Bench's Small objects
are boxed by hand, Sec. 3.2.1) or boxes from a detector run elsewhere.

Format: JSON (a list, or ``{"boxes": [...]}``) or JSONL, one object per box: ``image`` (path
relative to the image folder), ``bbox`` [x1, y1, x2, y2] in original pixels, ``label`` (class
name), optional ``score`` in [0, 1].
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

from lensbench.benchmarks.fields import inside, want_obj, want_str
from lensbench.core.errors import DataError
from lensbench.core.jsonl import parse_jsonl
from lensbench.tools.groundingme.boxes import Detection

__all__ = ["read_box_file"]


def _rows(path: Path) -> list:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(path, "box file not found") from None
    try:
        if path.suffix.lower() == ".jsonl":
            return [v for _ln, v in parse_jsonl(path, text)]
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc}") from None
    if isinstance(doc, dict) and isinstance(doc.get("boxes"), list):
        doc = doc["boxes"]
    if not isinstance(doc, list):
        raise DataError(path, "expected a list of boxes (or an object with a 'boxes' list)")
    return doc


def read_box_file(path: str | Path, image_root: str | Path) -> dict[Path, list[Detection]]:
    """``{image path: [Detection]}`` from a box file, images resolved inside ``image_root``.

    Raises DataError naming the file and field (``[i].bbox`` ...) for a malformed row, a box that
    is not 4 finite numbers with x1 < x2 and y1 < y2, a score outside [0, 1], an image path
    leaving ``image_root``, or a missing image file.
    """
    p = Path(path)
    out: dict[Path, list[Detection]] = defaultdict(list)
    for i, row in enumerate(_rows(p)):
        where = f"[{i}]"
        want_obj(row, p, where)
        img = inside(image_root, want_str(row.get("image"), p, f"{where}.image", nonempty=True), p, f"{where}.image")
        if not img.is_file():
            raise DataError(p, f"{where}: image {img} not found", field=f"{where}.image")
        label = want_str(row.get("label"), p, f"{where}.label", nonempty=True).strip()
        box = row.get("bbox")
        try:
            b = [float(v) for v in box] if isinstance(box, list) else []
        except (TypeError, ValueError):
            b = []
        if len(b) != 4 or not all(math.isfinite(v) for v in b) or b[2] <= b[0] or b[3] <= b[1]:
            raise DataError(p, f"{where}: bbox must be [x1, y1, x2, y2] with x1 < x2 and y1 < y2, got {box!r}",
                            field=f"{where}.bbox")
        score = row.get("score", 1.0)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise DataError(p, f"{where}: score must be a number in [0, 1], got {score!r}", field=f"{where}.score")
        out[img].append(Detection(box=(b[0], b[1], b[2], b[3]), label=label, score=float(score)))
    return dict(out)
