"""GroundingME data loaders: HF parquet shards, ``datasets`` Arrow files, VLMEvalKit's TSV.

Layouts (GroundingME README, Protocol (Data)): HF ``lirang04/GroundingME`` split ``test`` (parquet with ``id``,
``image`` (HF Image struct), ``description``, ``bbox`` [x1, y1, x2, y2] original pixels or null,
``subtask_l1``, ``subtask_l2``, ``width``, ``height``), the same as a ``datasets`` cache /
``save_to_disk`` folder (Arrow IPC streams), or VLMEvalKit's ``groundingme.tsv`` (``index``,
base64 ``image`` or a reference to another row's index, ``question`` = description, ``answer`` =
bbox literal, ``width``, ``height``, ``subtask_l1``, ``subtask_l2``). Image bytes stay on disk
until :func:`iter_image_bytes` streams them.
"""

from __future__ import annotations

import base64
import csv
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lensbench.benchmarks.groundingme.taxonomy import canonical_l1, canonical_l2
from lensbench.benchmarks.fields import inside, missing_media, want_int_or_str
from lensbench.core.errors import DataError
from lensbench.core.extras import require

__all__ = ["ImageSource", "GMSample", "load_parquet", "load_tsv", "load_groundingme", "iter_image_bytes"]


@dataclass(frozen=True)
class ImageSource:
    """Where a sample's image bytes live.

    ``kind``: ``"file"`` (``path`` is an image file), ``"parquet"`` / ``"arrow"`` (row ``row`` of
    a parquet file / of a ``datasets`` Arrow stream file ``path``, column ``image`` = HF Image
    struct {bytes, path}), ``"tsv"`` (base64 in the
    ``image`` column of the row whose ``index`` is ``key`` in VLMEvalKit TSV ``path``).
    """

    kind: Literal["file", "parquet", "arrow", "tsv"]
    path: str
    row: int = 0
    key: str = ""


@dataclass(frozen=True)
class GMSample:
    """One GroundingME item.

    ``bbox``: ground truth (x1, y1, x2, y2) in original pixels, ``None`` for Rejection items
    (a release's box on a Rejection item, if any, is kept as ``distractor_bbox`` and not
    scored). ``width``/``height``: original image size in pixels.
    """

    id: str
    description: str
    bbox: tuple[float, float, float, float] | None
    subtask_l1: str
    subtask_l2: str
    width: int
    height: int
    image: ImageSource
    distractor_bbox: tuple[float, float, float, float] | None = None

    @property
    def is_rejection(self) -> bool:
        """True for Rejection items (the correct answer is ``{"bbox_2d": null}``)."""
        return self.subtask_l1 == "Rejection"


_REQUIRED = ("id", "image", "description", "bbox", "subtask_l1", "subtask_l2", "width", "height")


def _as_box(value: Any, path: Any, field_name: str, where: str) -> tuple[float, float, float, float] | None:
    """A 4-number box from a list / array / JSON text, ``None`` for null / empty. Raises DataError."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, str):
        t = value.strip()
        if t.lower() in ("", "none", "null", "nan", "[]"):
            return None
        try:
            value = json.loads(t)
        except json.JSONDecodeError:
            nums = re.findall(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", t)
            value = [float(n) for n in nums]
        if value is None:
            return None
    try:
        vals = [float(v) for v in list(value)]
    except (TypeError, ValueError):
        raise DataError(path, f"{where}: bbox must be 4 numbers or null, got {value!r}", field=field_name) from None
    if len(vals) == 0:
        return None
    if len(vals) != 4 or not all(math.isfinite(v) for v in vals):
        raise DataError(path, f"{where}: bbox must be 4 finite numbers [x1, y1, x2, y2], got {value!r}", field=field_name)
    if vals[2] < vals[0] or vals[3] < vals[1]:
        raise DataError(path, f"{where}: bbox has x2 < x1 or y2 < y1: {vals}", field=field_name)
    return (vals[0], vals[1], vals[2], vals[3])


def _pos_int(value: Any, path: Any, field_name: str, where: str) -> int:
    try:
        v = int(float(value))
    except (TypeError, ValueError):
        raise DataError(path, f"{where}: {field_name} must be a positive integer, got {value!r}", field=field_name) from None
    if v <= 0:
        raise DataError(path, f"{where}: {field_name} must be a positive integer, got {value!r}", field=field_name)
    return v


def _make_sample(rec: dict[str, Any], image: ImageSource, path: Any, where: str) -> GMSample:
    sid = str(want_int_or_str(rec["id"], path, "id")).strip()
    if not sid:
        raise DataError(path, f"{where}: empty id", field="id")
    desc = rec.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise DataError(path, f"{where}: description must be a non-empty string", field="description")
    l1 = canonical_l1(rec.get("subtask_l1"), path)
    l2 = canonical_l2(l1, rec.get("subtask_l2"))
    box = _as_box(rec.get("bbox"), path, "bbox", where)
    distractor = None
    if l1 == "Rejection":
        distractor, box = box, None
    elif box is None:
        raise DataError(path, f"{where}: a {l1} item needs a bbox (null is allowed only for Rejection)", field="bbox")
    return GMSample(id=sid, description=desc, bbox=box, subtask_l1=l1, subtask_l2=l2,
                    width=_pos_int(rec.get("width"), path, "width", where),
                    height=_pos_int(rec.get("height"), path, "height", where),
                    image=image, distractor_bbox=distractor)


def _parquet_files(root: Path) -> list[Path]:
    files = sorted(p for p in root.rglob("*.parquet") if p.is_file())
    tests = [p for p in files if re.search(r"(^|[/_\-.])test([/_\-.]|$)", str(p.relative_to(root)))]
    return tests or files


def _read_arrow_stream(f: Path):
    """A ``datasets`` cache / ``save_to_disk`` Arrow file (IPC stream), memory-mapped."""
    pa = require("pyarrow", "data", "reading Arrow files")

    return pa.ipc.open_stream(pa.memory_map(str(f), "r")).read_all()


def load_parquet(files: Sequence[Path], kind: str = "parquet") -> list[GMSample]:
    """Samples from HF parquet shards (or ``datasets`` Arrow files with ``kind="arrow"``);
    metadata columns only, image bytes stay on disk.

    Raises:
        DataError: a missing column (names the file and field) or a bad value.
    """
    pq = require("pyarrow.parquet", "data", "reading parquet files")

    out: list[GMSample] = []
    for f in files:
        try:
            if kind == "arrow":
                full = _read_arrow_stream(f)
                names = set(full.column_names)
            else:
                pf = pq.ParquetFile(f)
                names = set(pf.schema_arrow.names)
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise DataError(f, f"cannot read {kind}: {exc}") from None
        for col in _REQUIRED:
            if col not in names:
                raise DataError(f, f"missing column (have: {', '.join(sorted(names))})", field=col)
        cols = [c for c in _REQUIRED if c != "image"]
        table = full.select(cols) if kind == "arrow" else pf.read(columns=cols)
        for i, rec in enumerate(table.to_pylist()):
            out.append(_make_sample(rec, ImageSource(kind, str(f), row=i), f, f"row {i}"))
    return out


def _tsv_reader(fh) -> csv.DictReader:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    return csv.DictReader(fh, delimiter="\t")


def load_tsv(path: Path) -> list[GMSample]:
    """Samples from VLMEvalKit's ``groundingme.tsv`` (streamed; images are not kept in memory).

    Columns: ``index``, ``image`` (base64, or the ``index`` of another row holding it),
    ``question`` (the description), ``answer`` (bbox literal or empty), ``width``, ``height``,
    ``subtask_l1``, ``subtask_l2``; an ``id`` column is used when present, else ``index``;
    an ``image_path`` column may replace ``image``.

    Raises:
        DataError: missing columns or bad values (names the file and field).
    """
    out: list[GMSample] = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = _tsv_reader(fh)
        names = set(reader.fieldnames or [])
        for col in ("index", "question", "answer", "width", "height", "subtask_l1", "subtask_l2"):
            if col not in names:
                raise DataError(path, f"missing column (have: {', '.join(sorted(names))})", field=col)
        if "image" not in names and "image_path" not in names:
            raise DataError(path, "missing column (need image or image_path)", field="image")
        for i, row in enumerate(reader):
            key = str(row["index"]).strip()
            if "image" in names and row.get("image"):
                src = ImageSource("tsv", str(path), row=i, key=key)
            else:
                rel = row.get("image_path") or ""  # docs/protocol.md: must resolve inside the TSV's folder
                p = inside(path.parent, rel, path, f"row {i} (index {key}).image_path") if rel else path.parent
                src = ImageSource("file", str(p))
            rec = {"id": row.get("id") or key, "description": row["question"], "bbox": row["answer"],
                   "subtask_l1": row["subtask_l1"], "subtask_l2": row["subtask_l2"],
                   "width": row["width"], "height": row["height"]}
            out.append(_make_sample(rec, src, path, f"row {i} (index {key})"))
    return out


def load_groundingme(data_dir: Path, *, skip_missing: bool = False, stats: dict | None = None) -> list[GMSample]:
    """Load a local copy of GroundingME: a ``.tsv`` / ``.parquet`` file, or a folder holding
    ``groundingme.tsv``, HF parquet shards (``data/test-*.parquet``; test shards preferred) or
    the Arrow files of a ``datasets`` cache / ``save_to_disk`` folder.

    Image files named by a TSV's ``image_path`` must exist (else an error with counts, unless
    ``skip_missing``: left out, ``stats["n_skipped_missing"]`` counts them).

    Raises:
        DataError: nothing loadable, duplicate ids, a bad field (names file and field), an image
            path leaving the data folder, or missing image files (unless ``skip_missing``).
    """
    p = Path(data_dir)
    src = p  # the data file naming the images (for the missing-media message)
    if p.is_file() and p.suffix.lower() == ".tsv":
        samples = load_tsv(p)
    elif p.is_file() and p.suffix.lower() == ".parquet":
        samples = load_parquet([p])
    elif p.is_dir():
        files = _parquet_files(p)
        arrows = sorted(q for q in p.rglob("*.arrow") if q.is_file())
        arrows = [q for q in arrows if "test" in q.name] or arrows
        if files:
            samples = load_parquet(files)
        elif arrows:
            samples = load_parquet(arrows, kind="arrow")
        else:
            tsvs = sorted(p.rglob("*.tsv"))
            named = [t for t in tsvs if t.name.lower() == "groundingme.tsv"]
            if not (named or tsvs):
                raise DataError(p, "no GroundingME data: expected HF parquet shards (data/test-*.parquet) "
                                   "or VLMEvalKit's groundingme.tsv")
            src = (named or tsvs)[0]
            samples = load_tsv(src)
    else:
        raise DataError(p, "no such file or folder")
    seen: set[str] = set()
    for s in samples:
        if s.id in seen:
            raise DataError(p, f"duplicate id {s.id!r}", field="id")
        seen.add(s.id)
    if not samples:
        raise DataError(p, "no samples")
    lack = [s for s in samples if s.image.kind == "file" and not Path(s.image.path).is_file()]
    missing_media(src, [s.image.path for s in lack], len(samples), "samples", p if p.is_dir() else p.parent,
                  skip=skip_missing)
    if lack and stats is not None:
        stats["n_skipped_missing"] = len(lack)
    gone = {s.id for s in lack}
    return [s for s in samples if s.id not in gone] if lack else samples




def iter_image_bytes(samples: Sequence[GMSample]) -> Iterable[tuple[GMSample, bytes]]:
    """``(sample, encoded image bytes)`` for each sample, reading each source file once.

    Raises DataError for a missing file, a row without bytes, bad base64 or a dangling TSV
    image reference (naming the file and field)."""
    by_src: dict[tuple[str, str], list[GMSample]] = defaultdict(list)
    for s in samples:
        by_src[(s.image.kind, s.image.path)].append(s)
    for (kind, path), group in by_src.items():
        if kind == "file":
            for s in group:
                try:
                    yield s, Path(s.image.path).read_bytes()
                except FileNotFoundError:
                    raise DataError(s.image.path, f"image of sample {s.id!r} not found", field="image") from None
        elif kind in ("parquet", "arrow"):
            pq = require("pyarrow.parquet", "data", "reading parquet files")

            rows = {s.image.row: s for s in group}
            if kind == "arrow":
                batches = _read_arrow_stream(Path(path)).select(["image"]).to_batches(max_chunksize=16)
            else:
                batches = pq.ParquetFile(path).iter_batches(columns=["image"], batch_size=16)
            base = 0
            for batch in batches:
                col = batch.column(0).to_pylist()
                for j, cell in enumerate(col):
                    s = rows.get(base + j)
                    if s is None:
                        continue
                    yield s, _image_cell_bytes(cell, Path(path), s)
                base += len(col)
        else:  # tsv
            wanted = {s.image.key: s for s in group}
            refs: dict[str, list[GMSample]] = defaultdict(list)
            with open(path, encoding="utf-8", newline="") as fh:
                for row in _tsv_reader(fh):
                    key = str(row.get("index", "")).strip()
                    img = row.get("image") or ""
                    s = wanted.get(key)
                    if s is not None and len(img) <= 64 and img.strip().isdigit():
                        refs[img.strip()].append(s)  # VLMEvalKit: image stored once, referenced by index
                        continue
                    targets = ([s] if s is not None else []) + refs.pop(key, [])
                    for t in targets:
                        try:
                            yield t, base64.b64decode(img, validate=False)
                        except (ValueError, TypeError):
                            raise DataError(path, f"row with index {key}: image is not base64", field="image") from None
            # references to rows that appear later in the file
            if refs:
                with open(path, encoding="utf-8", newline="") as fh:
                    for row in _tsv_reader(fh):
                        key = str(row.get("index", "")).strip()
                        for t in refs.pop(key, []):
                            yield t, base64.b64decode(row.get("image") or "", validate=False)
            for key, ss in refs.items():
                raise DataError(path, f"image of index {ss[0].image.key} refers to missing index {key}", field="image")


def _image_cell_bytes(cell: Any, parquet: Path, s: GMSample) -> bytes:
    if isinstance(cell, dict):
        if cell.get("bytes"):
            return bytes(cell["bytes"])
        if cell.get("path"):  # docs/protocol.md: a path named by the data must resolve inside its folder
            cand = inside(parquet.parent, str(cell["path"]), parquet, f"sample {s.id!r} image.path")
            if cand.is_file():
                return cand.read_bytes()
    elif isinstance(cell, (bytes, bytearray)):
        return bytes(cell)
    raise DataError(parquet, f"sample {s.id!r}: image has neither bytes nor a readable path", field="image")

