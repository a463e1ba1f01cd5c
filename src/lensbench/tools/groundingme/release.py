"""Write constructed GroundingME items in the release formats that ``lensbench run groundingme`` reads.

* HF parquet (``data/test-00000-of-00001.parquet``): ``id``, ``image`` (HF Image struct
  ``{bytes, path}``: the original file's bytes), ``description``, ``bbox`` (list of int64
  [x1, y1, x2, y2] in original pixels, null for Rejection), ``subtask_l1``, ``subtask_l2``,
  ``width``, ``height`` as the release ``lirang04/GroundingME`` (see
  :mod:`lensbench.benchmarks.groundingme.data`), plus the construction's own columns
  ``object_class``, ``class_count``, ``source`` (read by ``lensbench data stats groundingme``,
  ignored by the loader).
* VLMEvalKit TSV (``groundingme.tsv``): ``index``, ``image`` (base64 of the file, or the index of
  the first row holding the same image), ``question`` (description), ``answer`` (bbox JSON or
  empty), ``width``, ``height``, ``subtask_l1``, ``subtask_l2``, and ``id``.
"""

from __future__ import annotations

import base64
import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lensbench.core.errors import DataError
from lensbench.core.extras import require

__all__ = ["PARQUET_NAME", "TSV_NAME", "release_rows", "write_parquet", "write_tsv"]

PARQUET_NAME = "data/test-00000-of-00001.parquet"
TSV_NAME = "groundingme.tsv"


def _int_box(b: Any) -> list[int] | None:
    return None if b is None else [int(round(float(v))) for v in b]


def release_rows(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Release rows (without image bytes) from construction items, in order.

    Raises DataError naming ``id`` for a duplicate id, or a non-Rejection item without a bbox.
    """
    seen: set[str] = set()
    rows = []
    for it in items:
        if it["id"] in seen:
            raise DataError("items", f"duplicate id {it['id']!r}", field="id")
        seen.add(it["id"])
        box = None if it["subtask_l1"] == "Rejection" else _int_box(it.get("bbox"))
        if box is None and it["subtask_l1"] != "Rejection":
            raise DataError("items", f"item {it['id']!r} ({it['subtask_l1']}) has no bbox", field="bbox")
        rows.append({"id": it["id"], "image_file": it["image"], "description": it["description"], "bbox": box,
                     "subtask_l1": it["subtask_l1"], "subtask_l2": it["subtask_l2"], "width": int(it["width"]),
                     "height": int(it["height"]), "object_class": it.get("object_class"),
                     "class_count": it.get("class_count"), "source": it.get("source")})
    return rows


def write_parquet(items: Sequence[dict[str, Any]], out_dir: Path) -> Path:
    """``out_dir/data/test-00000-of-00001.parquet`` (written through a temporary file); returns its path."""
    pa = require("pyarrow", "data", "writing the GroundingME parquet")
    pq = require("pyarrow.parquet", "data", "writing the GroundingME parquet")
    rows = release_rows(items)
    cache: dict[str, bytes] = {}
    table_rows = []
    for r in rows:
        f = r.pop("image_file")
        if f not in cache:
            cache[f] = Path(f).read_bytes()
        table_rows.append({"id": r["id"], "image": {"bytes": cache[f], "path": Path(f).name}, **r})
    schema = pa.schema([("id", pa.string()), ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                        ("description", pa.string()), ("bbox", pa.list_(pa.int64())), ("subtask_l1", pa.string()),
                        ("subtask_l2", pa.string()), ("width", pa.int64()), ("height", pa.int64()),
                        ("object_class", pa.string()), ("class_count", pa.int64()), ("source", pa.string())])
    out = Path(out_dir) / PARQUET_NAME
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(pa.Table.from_pylist(table_rows, schema=schema), tmp)
    tmp.replace(out)
    return out


def write_tsv(items: Sequence[dict[str, Any]], out_path: Path) -> Path:
    """VLMEvalKit's ``groundingme.tsv`` at ``out_path`` (a repeated image is stored once and
    referred to by the index of its first row); returns ``out_path``."""
    rows = release_rows(items)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".tmp")
    first: dict[str, int] = {}
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(["index", "image", "question", "answer", "width", "height", "subtask_l1", "subtask_l2", "id"])
        for i, r in enumerate(rows):
            f = r["image_file"]
            img = str(first[f]) if f in first else base64.b64encode(Path(f).read_bytes()).decode("ascii")
            first.setdefault(f, i)
            w.writerow([i, img, r["description"], json.dumps(r["bbox"]) if r["bbox"] else "", r["width"], r["height"],
                        r["subtask_l1"], r["subtask_l2"], r["id"]])
    tmp.replace(out_path)
    return out_path
