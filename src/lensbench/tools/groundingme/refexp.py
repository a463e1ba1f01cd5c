"""Grounding items for GroundingME's data-mixture study (paper Sec. 5.3): RefCOCOg-style referring
expressions read from their common layouts into one normalised list.

The result is a list of *grounding items* (:mod:`lensbench.benchmarks.groundingme.items`).

Layouts read by :func:`read_grounding_items`:

* **COCO-refs** (github.com/lichengunc/refer): a folder with ``refs(umd).p`` (or ``refs(google).p``)
  and ``instances.json``; images in ``images_dir`` (COCO ``train2014``). One item per sentence;
  the box is the referred annotation's COCO ``[x, y, w, h]``.
* **HF / JSON(L) / parquet rows** (a file or a folder of ``*.parquet`` shards), e.g.
  ``jxu124/refcocog`` (``sentences``, ``raw_anns`` with the COCO box, ``raw_image_info``,
  ``image_path``), ``lmms-lab/RefCOCOg`` (embedded ``image``, ``answer`` = list of expressions,
  COCO ``bbox``), or any rows with ``image`` (path or HF image struct), ``description`` and
  ``bbox``. Embedded image bytes are written once to ``media_dir``.

Box format (``box_format``): ``xyxy``, ``xywh``, or ``auto`` = ``xywh`` for COCO-annotation rows
(``raw_anns``, ``iscrowd``, ``area`` or ``segmentation`` present) and ``xyxy`` otherwise.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import random
from pathlib import Path
from typing import Any

from PIL import Image

from lensbench.benchmarks.groundingme.items import read_items_file, write_items_file
from lensbench.core.errors import ConfigError, DataError
from lensbench.core.extras import require
from lensbench.core.jsonl import read_jsonl

__all__ = ["read_grounding_items", "sample_items", "read_items_file", "write_items_file"]

_DESC_KEYS = ("description", "sentence", "sent", "expression", "caption", "ref", "raw")
_COCO_MARKERS = ("raw_anns", "iscrowd", "area", "segmentation")


def _box(raw: Any, fmt: str, p: Path, where: str) -> list[float]:
    try:
        v = [float(x) for x in (json.loads(raw) if isinstance(raw, str) else raw)]
    except (TypeError, ValueError):
        raise DataError(p, f"{where}: bbox must be 4 numbers, got {raw!r}", field="bbox") from None
    if len(v) != 4:
        raise DataError(p, f"{where}: bbox must be 4 numbers, got {raw!r}", field="bbox")
    return [v[0], v[1], v[0] + v[2], v[1] + v[3]] if fmt == "xywh" else v


def _image(row: dict[str, Any], p: Path, where: str, images_dir: Path | None, media_dir: Path) -> Path:
    v = row.get("image", row.get("image_path", row.get("file_name")))
    if isinstance(v, dict) and v.get("bytes"):
        b = v["bytes"]
        f = media_dir / f"{hashlib.sha256(b).hexdigest()[:20]}{Path(v.get('path') or 'x.jpg').suffix or '.jpg'}"
        if not f.is_file():
            media_dir.mkdir(parents=True, exist_ok=True)
            f.write_bytes(b)
        return f
    if isinstance(v, dict):
        v = v.get("path")
    if not isinstance(v, str) or not v:
        raise DataError(p, f"{where}: no image (image / image_path / file_name)", field="image")
    cands = [Path(v)] if Path(v).is_absolute() else \
        [d / v for d in (images_dir, p.parent) if d is not None] + [d / Path(v).name for d in (images_dir,) if d]
    for c in cands:
        if c.is_file():
            return c
    raise DataError(p, f"{where}: image file not found: {v} (give --images DIR)", field="image")


def _descriptions(row: dict[str, Any]) -> list[str]:
    if isinstance(row.get("sentences"), list) and row["sentences"]:
        return [s.get("sent") or s.get("raw") if isinstance(s, dict) else str(s) for s in row["sentences"]]
    if isinstance(row.get("answer"), list) and row["answer"] and all(isinstance(a, str) for a in row["answer"]):
        return list(row["answer"])
    for k in _DESC_KEYS:
        if isinstance(row.get(k), str) and row[k].strip():
            return [row[k]]
    return []


def _row_items(row: dict[str, Any], i: int, p: Path, box_format: str, images_dir: Path | None,
               media_dir: Path) -> list[dict[str, Any]]:
    where = f"row {i}"
    descs = [d.strip() for d in _descriptions(row) if d and d.strip()]
    if not descs:
        raise DataError(p, f"{where}: no description", field="description")
    coco = any(k in row for k in _COCO_MARKERS)
    fmt = ("xywh" if coco else "xyxy") if box_format == "auto" else box_format
    raw_box = row.get("bbox")
    if isinstance(row.get("raw_anns"), str) and box_format == "auto":
        raw_box = json.loads(row["raw_anns"]).get("bbox", raw_box)
    box = None if raw_box is None else _box(raw_box, fmt, p, where)
    img = _image(row, p, where, images_dir, media_dir)
    w, h = row.get("width"), row.get("height")
    if isinstance(row.get("raw_image_info"), str):
        info = json.loads(row["raw_image_info"])
        w, h = info.get("width", w), info.get("height", h)
    if not w or not h:
        with Image.open(img) as im:
            w, h = im.size
    base = str(row.get("id", row.get("ref_id", row.get("question_id", i))))
    return [{"id": base if len(descs) == 1 else f"{base}-s{k}", "image": str(img.resolve()), "description": d,
             "bbox": box, "width": int(w), "height": int(h), **({"split": row["split"]} if "split" in row else {})}
            for k, d in enumerate(descs)]


def _rows(p: Path) -> list[dict[str, Any]]:
    files = sorted(p.rglob("*.parquet")) if p.is_dir() else [p]
    rows: list[dict[str, Any]] = []
    for f in files:
        if f.suffix == ".parquet":
            rows += require("pyarrow.parquet", "data", "reading parquet files").read_table(f).to_pylist()
        elif f.suffix == ".jsonl":
            rows += read_jsonl(f, "annotation file", kind=dict)
        elif f.suffix == ".json":
            data = json.loads(f.read_text(encoding="utf-8"))
            rows += data if isinstance(data, list) else next((v for v in data.values() if isinstance(v, list)), [])
        else:
            raise DataError(f, "expected .jsonl, .json, .parquet or a folder of parquet shards")
    return rows


def _coco_refs(root: Path, images_dir: Path | None) -> list[dict[str, Any]]:
    ref_file = next((root / n for n in ("refs(umd).p", "refs(google).p") if (root / n).is_file()), None)
    inst = root / "instances.json"
    if ref_file is None or not inst.is_file():
        raise DataError(root, "COCO-refs layout needs refs(umd).p (or refs(google).p) and instances.json")
    if images_dir is None:
        raise ConfigError(f"{root}: the COCO-refs layout needs --images (the COCO train2014 folder)")
    with open(ref_file, "rb") as fh:  # the refer API's own format (a pickle of dicts)
        try:
            refs = pickle.load(fh)
        except UnicodeDecodeError:
            fh.seek(0)
            refs = pickle.load(fh, encoding="latin1")
    coco = json.loads(inst.read_text(encoding="utf-8"))
    anns = {a["id"]: a for a in coco["annotations"]}
    imgs = {im["id"]: im for im in coco["images"]}
    rows = []
    for r in refs:
        im = imgs[r["image_id"]]
        rows.append({"id": r["ref_id"], "sentences": r["sentences"], "bbox": anns[r["ann_id"]]["bbox"],
                     "image": im["file_name"], "width": im["width"], "height": im["height"], "split": r["split"],
                     "iscrowd": 0})
    return rows


def read_grounding_items(source: str | Path, *, images_dir: str | Path | None = None, split: str | None = None,
                         box_format: str = "auto", media_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Grounding items from ``source`` (module docstring), filtered to ``split`` when given (rows
    without a ``split`` field are kept). ``media_dir``: where embedded image bytes are written
    (default ``source``'s folder / ``images``). Raises DataError naming the file, row and field;
    ConfigError for a bad ``box_format``."""
    if box_format not in ("auto", "xyxy", "xywh"):
        raise ConfigError(f"--box-format must be auto, xyxy or xywh, got {box_format!r}")
    p = Path(source)
    if not p.exists():
        raise DataError(p, "source not found")
    imgs = Path(images_dir) if images_dir else None
    media = Path(media_dir) if media_dir else (p if p.is_dir() else p.parent) / "images"
    coco = p.is_dir() and any((p / n).is_file() for n in ("refs(umd).p", "refs(google).p"))
    rows = _coco_refs(p, imgs) if coco else _rows(p)
    items = []
    for i, row in enumerate(rows):
        if split is not None and "split" in row and row["split"] != split:
            continue
        items += _row_items(row, i, p, box_format, imgs if not coco else imgs, media)
    if not items:
        raise DataError(p, f"no items{f' in split {split!r}' if split else ''}")
    return items


def sample_items(items: list[dict[str, Any]], n: int | None, seed: int) -> list[dict[str, Any]]:
    """``n`` items drawn without replacement by ``random.Random(seed)`` (all when ``n`` is None or
    not smaller), in their original order."""
    if n is None or n >= len(items):
        return list(items)
    keep = set(random.Random(seed).sample(range(len(items)), n))
    return [it for i, it in enumerate(items) if i in keep]
