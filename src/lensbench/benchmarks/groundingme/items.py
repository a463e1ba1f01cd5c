"""Grounding item files: one JSON object per line, the format of GroundingME's Sec. 5.3 data
(positives, negatives, the ``grounding-rej`` evaluation sets)::

    {"id": "...", "image": "images/1.jpg", "description": "...", "bbox": [x1, y1, x2, y2] | null,
     "width": W, "height": H, "set": "RefCOCOg_val", ...}

``bbox`` in original pixels (null = a negative: nothing in the image matches); ``image`` relative
to the file's folder or absolute; other keys are kept (``set``, ``source_description``,
``negative_type``, ``visual_check`` ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lensbench.core.errors import DataError
from lensbench.core.jsonl import dumps_line, iter_jsonl

__all__ = ["read_items_file", "write_items_file"]


def write_items_file(path: Path, items: list[dict[str, Any]]) -> Path:
    """Grounding items as JSONL (atomically); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(dumps_line(it, default=str) + "\n" for it in items), encoding="utf-8")
    tmp.replace(path)
    return path


def read_items_file(path: Path) -> list[dict[str, Any]]:
    """Grounding items from a JSONL file lensbench wrote (image paths relative to the file made
    absolute). Raises DataError naming the file, line and field."""
    p = Path(path)
    return [_check_item(p, f"line {ln}", it, p.parent) for ln, it in iter_jsonl(p, "grounding items file")]


def _check_item(p: Path, where: str, it: Any, base: Path) -> dict[str, Any]:
    if not isinstance(it, dict):
        raise DataError(p, f"{where}: not a JSON object")
    for k in ("id", "image", "description"):
        if not isinstance(it.get(k), (str, int)) or not str(it[k]).strip():
            raise DataError(p, f"{where}: missing or empty", field=k)
    img = Path(it["image"]) if Path(it["image"]).is_absolute() else base / it["image"]
    if not img.is_file():
        raise DataError(p, f"{where}: image file not found: {img}", field="image")
    box = it.get("bbox")
    if box is not None and (not isinstance(box, list) or len(box) != 4 or box[2] < box[0] or box[3] < box[1]):
        raise DataError(p, f"{where}: bbox must be [x1, y1, x2, y2] (x2 >= x1, y2 >= y1) or null", field="bbox")
    for k in ("width", "height"):
        if not isinstance(it.get(k), int) or it[k] <= 0:
            raise DataError(p, f"{where}: must be a positive integer", field=k)
    return {**it, "id": str(it["id"]), "image": str(img.resolve())}
