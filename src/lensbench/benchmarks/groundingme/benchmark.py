"""GroundingME (Li et al., arXiv 2512.17495): visual grounding with rejection.

Protocol (SPEC §5; paper Sec. 3.3, 4.2, 5.2, 5.3, Appendix A-B):

* Data: HF ``lirang04/GroundingME`` split ``test`` (1,005 items; parquet files with ``id``,
  ``image``, ``description``, ``bbox`` [x1, y1, x2, y2] in original pixels or null,
  ``subtask_l1`` in Discriminative/Spatial/Limited/Rejection, ``subtask_l2``, ``width``,
  ``height``), or VLMEvalKit's ``groundingme.tsv`` (``index``, base64 ``image``, ``question`` =
  description, ``answer`` = bbox literal, ``width``, ``height``, ``subtask_l1``, ``subtask_l2``).
* Prompt: Table 9, image first (``prompts/groundingme_prompt.txt``); greedy decoding
  (temperature 0, Sec. 4.2); ``max_tokens`` 20480 as the official scorer's
  ``max_completion_tokens``.
* Images larger than ``--max-pixels`` are downscaled once into ``ctx.media_dir`` (JPEG draft
  decoding for the 8K HR-Bench photos); the predicted box is mapped back to original pixels.
* Parse: the JSON object with key ``bbox_2d`` (4 numbers, or null = rejection), tolerant of
  reasoning text, code fences and single quotes; no box at all = ``unparseable`` (never a
  rejection). No ``eval``.
* Coordinates: the model's convention is declared with ``--bbox-format`` (see
  :data:`BBOX_FORMATS`). ``--official-compat`` reproduces the official scorers instead (best
  IoU over {raw, rel-0..1 or /999}, unparseable = [0, 0, 0, 0] = a rejection) and is labelled so
  in every table.
* Metrics (percent): Acc@0.5 per L-2, L-1 and Total (Table 3; L-1 and Total are over samples,
  checked against the paper's numbers), Acc@0.75 / Acc@0.9 / mAcc over IoU 0.50:0.05:0.95
  (Table 8), mean IoU on positives, rejection rates. A positive item is correct at threshold t
  iff IoU >= t (the official scorers' ``>=``); a Rejection item is correct iff the prediction
  is null (independent of t).
* Best-of-N (Sec. 5.2, Table 4): N samples (distinct seeds, temperature 0.7 unless
  ``--temperature``), a pairwise knockout tournament judged by a text-only LLM (Table 11, full
  responses incl. reasoning) or a multimodal LLM (Table 10, image + the two boxes); reported:
  the average over the N samples, the judge-selected sample, and the oracle best-of-N.
"""

from __future__ import annotations

import asyncio
import base64
import csv
import io
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field, field_validator

from lensbench.core.errors import ConfigError, DataError, LensbenchError
from lensbench.scoring.text import extract_json_object, strip_reasoning
from lensbench.report.tables import render_table
from lensbench.core.types import GenParams, ImagePart, Message, Request, StoredResponse
from lensbench.benchmarks.base import Benchmark, RunContext, RunResult
from lensbench.core.resources import read_text

__all__ = [
    "GroundingME", "GMSample", "ImageSource", "ParsedBox", "L1_ORDER", "L2_ORDER", "BBOX_FORMATS",
    "THRESHOLDS", "load_prompt", "build_prompt", "parse_bbox_reply", "official_parse_bbox", "iou",
    "smart_resize", "to_original_pixels", "official_best_iou", "fit_budget", "downscale_image_bytes",
    "parse_judge_verdict", "score_prediction", "groundingme_app", "CLI_GROUPS",
    "build_negatives", "mix_negatives",
]

# ----------------------------------------------------------------------------- taxonomy

#: L-1 categories in the paper's table order (Sec. 3.3.1, Table 3).
L1_ORDER: tuple[str, ...] = ("Discriminative", "Spatial", "Limited", "Rejection")
#: L-2 subcategories per L-1 in Table 3's column order.
L2_ORDER: dict[str, tuple[str, ...]] = {
    "Discriminative": ("Appearance", "Component", "Text", "State"),
    "Spatial": ("Relationship", "Counting"),
    "Limited": ("Occlusion", "Small"),
    "Rejection": ("Appearance", "Component", "Text", "State"),
}
_L2_ABBR = {"Appearance": "App.", "Component": "Cmp.", "Text": "Txt.", "State": "Sta.", "Relationship": "Rel.",
            "Counting": "Cnt.", "Occlusion": "Occ.", "Small": "Sml."}
_L1_ABBR = {"Discriminative": "Dis.", "Spatial": "Spa.", "Limited": "Lim.", "Rejection": "Rej."}
# Spellings seen in releases and the paper's text (Sec. 3.2.3 says "Partial" for Occlusion).
_L2_ALIASES = {"relation": "Relationship", "relational": "Relationship", "relations": "Relationship",
               "count": "Counting", "partial": "Occlusion", "occluded": "Occlusion", "tiny": "Small",
               "appear": "Appearance", "components": "Component", "status": "State"}

#: Protocol default for new tokens: the official scorer's ``max_completion_tokens`` (20480);
#: ``--max-tokens`` overrides it.
DEFAULT_MAX_TOKENS = 20480

#: IoU thresholds of mAcc: 0.50:0.05:0.95 (Appendix A.2), as exact two-decimal values.
THRESHOLDS: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))

#: Coordinate conventions a model may use (``--bbox-format``):
#: ``abs`` pixels of the image the model received (= original pixels when not downscaled);
#: ``abs-resized`` pixels of that image after Qwen2.5-VL's smart resize (factor 28);
#: ``rel1000`` x, y in 0..1000 (Qwen3-VL); ``rel1`` x, y in 0..1; ``yxyx1000`` Gemini's
#: [y1, x1, y2, x2] in 0..1000 (paper Appendix D; the prompt says [y1, x1, y2, x2] then).
BBOX_FORMATS: tuple[str, ...] = ("abs", "abs-resized", "rel1000", "rel1", "yxyx1000")

BboxFormat = Literal["abs", "abs-resized", "rel1000", "rel1", "yxyx1000"]


def canonical_l1(value: Any, path: Any = "?", field_name: str = "subtask_l1") -> str:
    """The L-1 name in :data:`L1_ORDER` for ``value`` (case-insensitive).

    Raises:
        DataError: naming ``path`` and the field for an unknown category.
    """
    s = str(value or "").strip()
    for name in L1_ORDER:
        if s.lower() == name.lower():
            return name
    raise DataError(path, f"unknown L-1 category {value!r} (expected one of {', '.join(L1_ORDER)})", field=field_name)


def canonical_l2(l1: str, value: Any) -> str:
    """The L-2 name for ``value`` under ``l1``: strips an ``"<L1>_"`` prefix, maps known aliases,
    matches Table 3's names case-insensitively; unknown names are kept as given (stripped)."""
    s = str(value or "").strip()
    if s.lower().startswith(l1.lower() + "_"):
        s = s[len(l1) + 1:]
    low = s.lower()
    for name in L2_ORDER.get(l1, ()):
        if low == name.lower():
            return name
    return _L2_ALIASES.get(low, s)


# ----------------------------------------------------------------------------- samples and loader

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
    sid = str(rec["id"]).strip()
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
    import pyarrow as pa

    return pa.ipc.open_stream(pa.memory_map(str(f), "r")).read_all()


def load_parquet(files: Sequence[Path], kind: str = "parquet") -> list[GMSample]:
    """Samples from HF parquet shards (or ``datasets`` Arrow files with ``kind="arrow"``);
    metadata columns only, image bytes stay on disk.

    Raises:
        DataError: a missing column (names the file and field) or a bad value.
    """
    import pyarrow.parquet as pq

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
                p = Path(row.get("image_path") or "")
                if not p.is_absolute():
                    p = path.parent / p
                src = ImageSource("file", str(p))
            rec = {"id": row.get("id") or key, "description": row["question"], "bbox": row["answer"],
                   "subtask_l1": row["subtask_l1"], "subtask_l2": row["subtask_l2"],
                   "width": row["width"], "height": row["height"]}
            out.append(_make_sample(rec, src, path, f"row {i} (index {key})"))
    return out


def load_groundingme(data_dir: Path) -> list[GMSample]:
    """Load a local copy of GroundingME: a ``.tsv`` / ``.parquet`` file, or a folder holding
    ``groundingme.tsv``, HF parquet shards (``data/test-*.parquet``; test shards preferred) or
    the Arrow files of a ``datasets`` cache / ``save_to_disk`` folder.

    Raises:
        DataError: nothing loadable, duplicate ids, or a bad field (names file and field).
    """
    p = Path(data_dir)
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
            samples = load_tsv((named or tsvs)[0])
    else:
        raise DataError(p, "no such file or folder")
    seen: set[str] = set()
    for s in samples:
        if s.id in seen:
            raise DataError(p, f"duplicate id {s.id!r}", field="id")
        seen.add(s.id)
    if not samples:
        raise DataError(p, "no samples")
    return samples


# ----------------------------------------------------------------------------- images

@dataclass(frozen=True)
class PreparedImage:
    """The image file sent to the model: ``path``, its size ``(sent_w, sent_h)`` in pixels, and
    the original size ``(orig_w, orig_h)`` the ground truth refers to."""

    path: str
    sent_w: int
    sent_h: int
    orig_w: int
    orig_h: int

    @property
    def downscaled(self) -> bool:
        """True when the sent image is smaller than the original."""
        return (self.sent_w, self.sent_h) != (self.orig_w, self.orig_h)


def fit_budget(width: int, height: int, max_pixels: int | None) -> tuple[int, int]:
    """Size ``(w, h)`` after downscaling ``width x height`` to at most ``max_pixels`` pixels,
    aspect kept (each side ``floor(side * sqrt(max_pixels / (w*h)))``, at least 1); unchanged
    when within budget or ``max_pixels`` is None. Raises ValueError for ``max_pixels < 1``."""
    if max_pixels is None or width * height <= max_pixels:
        return width, height
    if max_pixels < 1:
        raise ValueError(f"max_pixels must be >= 1, got {max_pixels}")
    s = math.sqrt(max_pixels / (width * height))
    w, h = max(1, int(width * s)), max(1, int(height * s))
    while w * h > max_pixels:  # guard float rounding
        if w >= h:
            w -= 1
        else:
            h -= 1
    return w, h


def downscale_image_bytes(data: bytes, max_pixels: int | None, *, draft: bool = True, quality: int = 95):
    """Decode ``data`` and return ``(PIL image, original (w, h))`` fitted to ``max_pixels``.

    JPEGs larger than the budget are decoded with Pillow's draft mode (DCT scaling by 1/2,
    1/4 or 1/8, never below the target size) before the final Lanczos resize, which decodes an
    8K photo several times faster and in a fraction of the memory (``benchmarks/large_images.py``).
    EXIF orientation is NOT applied (the official scorers decode with PIL without transposing,
    and the boxes refer to the stored pixel grid). Raises OSError for undecodable data.
    """
    from PIL import Image

    im = Image.open(io.BytesIO(data))
    orig = im.size
    target = fit_budget(orig[0], orig[1], max_pixels)
    if target != orig:
        if draft and im.format == "JPEG":
            im.draft("RGB", target)
        im = im.convert("RGB")
        if im.size != target:
            im = im.resize(target, Image.Resampling.LANCZOS)
    else:
        im.load()
    return im, orig


def _safe_name(sid: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", sid).strip("._") or "item"
    return s[:80]


def _file_stem(sid: str) -> str:
    """File name stem for a sample id: readable part + 8 hex of its SHA-1 (distinct ids never collide)."""
    import hashlib

    return f"{_safe_name(sid)}-{hashlib.sha1(sid.encode('utf-8')).hexdigest()[:8]}"


def _iter_image_bytes(samples: Sequence[GMSample]) -> Iterable[tuple[GMSample, bytes]]:
    """(sample, encoded image bytes) for each sample, reading each source file once."""
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
            import pyarrow.parquet as pq

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
        if cell.get("path"):
            p = Path(cell["path"])
            for cand in (p, parquet.parent / p):
                if cand.is_file():
                    return cand.read_bytes()
    elif isinstance(cell, (bytes, bytearray)):
        return bytes(cell)
    raise DataError(parquet, f"sample {s.id!r}: image has neither bytes nor a readable path", field="image")


def prepare_images(samples: Sequence[GMSample], media_dir: Path, max_pixels: int | None,
                   *, draft: bool = True, workers: int = 4) -> dict[str, PreparedImage]:
    """Write each sample's image once under ``media_dir/groundingme/<budget>/`` and return
    ``{sample id: PreparedImage}``.

    Within budget: the original bytes (re-encoded only when they carry an EXIF orientation, which
    the official pipeline ignores). Over budget: a JPEG (quality 95) of at most ``max_pixels``
    pixels. Files already there are reused (resumed runs read nothing). Raises DataError for
    missing or undecodable images and for a size that disagrees with ``width``/``height``.
    """
    from PIL import Image

    folder = media_dir / "groundingme" / (f"max{max_pixels}" if max_pixels else "orig")
    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, PreparedImage] = {}
    todo: list[GMSample] = []
    for s in samples:
        hits = sorted(h for h in folder.glob(_file_stem(s.id) + "__*") if not h.name.endswith(".tmp"))
        if hits:
            with Image.open(hits[0]) as im:
                w, h = im.size
            out[s.id] = PreparedImage(str(hits[0]), w, h, s.width, s.height)
        else:
            todo.append(s)
    def one(s: GMSample, data: bytes) -> PreparedImage:
        try:
            with Image.open(io.BytesIO(data)) as probe:
                orig = probe.size
                fmt = probe.format or "PNG"
                orient = probe.getexif().get(0x0112, 1)
        except OSError as exc:
            raise DataError(s.image.path, f"sample {s.id!r}: cannot decode image ({exc})", field="image") from None
        if orig != (s.width, s.height):
            raise DataError(s.image.path, f"sample {s.id!r}: image is {orig[0]}x{orig[1]} px but width/height say "
                                          f"{s.width}x{s.height}", field="width")
        stem = _file_stem(s.id)
        target = fit_budget(orig[0], orig[1], max_pixels)
        if target == orig and orient in (1, None):
            ext = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp"}.get(fmt, fmt.lower())
            dest = folder / f"{stem}__{orig[0]}x{orig[1]}.{ext}"
            tmp = dest.with_name(dest.name + ".tmp")
            tmp.write_bytes(data)
        else:
            im, _ = downscale_image_bytes(data, max_pixels, draft=draft)
            dest = folder / f"{stem}__{im.size[0]}x{im.size[1]}.jpg"
            tmp = dest.with_name(dest.name + ".tmp")
            im.convert("RGB").save(tmp, "JPEG", quality=95)
        tmp.replace(dest)  # atomic: an interrupted run never leaves a half-written image behind
        with Image.open(dest) as im2:
            w, h = im2.size
        return PreparedImage(str(dest), w, h, s.width, s.height)

    # decode in a few threads (Pillow releases the GIL while decoding), in bounded chunks
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        chunk: list[tuple[GMSample, bytes]] = []
        for item in _iter_image_bytes(todo):
            chunk.append(item)
            if len(chunk) >= 2 * workers:
                for s, pi in zip([c[0] for c in chunk], pool.map(lambda c: one(*c), chunk)):
                    out[s.id] = pi
                chunk = []
        for s, pi in zip([c[0] for c in chunk], pool.map(lambda c: one(*c), chunk)):
            out[s.id] = pi
    return out


# ----------------------------------------------------------------------------- prompts

def load_prompt(name: str) -> str:
    """Template text of ``prompts/groundingme_<name>.txt`` (the part after the ``-----`` header
    line that cites its source), without the final newline. Raises FileNotFoundError."""
    raw = read_text(__package__, "prompts", f"{name}.txt")
    _, sep, body = raw.partition("\n-----\n")
    if not sep:
        raise ValueError(f"prompt file groundingme_{name}.txt lacks its '-----' header separator")
    return body[:-1] if body.endswith("\n") else body


def build_prompt(description: str, bbox_format: str = "abs") -> str:
    """Table 9 prompt for ``description``; for ``yxyx1000`` the format is written
    ``[y1, x1, y2, x2]`` (Appendix D's Gemini adjustment)."""
    text = load_prompt("prompt").replace("{description}", description)
    if bbox_format == "yxyx1000":
        text = text.replace("[x1, y1, x2, y2]", "[y1, x1, y2, x2]")
    return text


# ----------------------------------------------------------------------------- parsing

@dataclass(frozen=True)
class ParsedBox:
    """A parsed reply: ``kind`` ``"box"`` (``box`` = 4 floats as written by the model),
    ``"null"`` (a rejection) or ``"unparseable"`` (no ``bbox_2d`` found); ``n_found`` = how many
    ``bbox_2d`` values the reply held (the last one is used)."""

    kind: Literal["box", "null", "unparseable"]
    box: tuple[float, float, float, float] | None = None
    n_found: int = 0


_FENCE = re.compile(r"```[a-zA-Z0-9_-]*")
_KEY_RE = re.compile(r"""["']?bbox_2d["']?\s*[:=]\s*""")
_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"


def _value_after_key(text: str, start: int) -> tuple[bool, Any]:
    """Parse the value after a ``bbox_2d:`` key: null/None, or a (nested) list of numbers."""
    s = text[start:].lstrip()
    m = re.match(r"(null|None|none|NULL)\b", s)
    if m:
        return True, None
    if not s.startswith("["):
        return False, None
    depth = 0
    for i, c in enumerate(s):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                chunk = s[: i + 1]
                try:
                    return True, json.loads(chunk)
                except json.JSONDecodeError:
                    nums = re.findall(_NUM, chunk)
                    if re.fullmatch(r"[\s\[\]\(\),\"']*(?:" + _NUM + r"[\s\[\]\(\),\"']*)*", chunk):
                        return True, [float(x) for x in nums]
                    return False, None
    return False, None


def _box_from_value(value: Any) -> tuple[bool, tuple[float, float, float, float] | None]:
    """(ok, box) for a ``bbox_2d`` value: None, [4 numbers], [[4 numbers]] or numeric strings."""
    if value is None:
        return True, None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, list) and len(value) == 4:
        try:
            vals = [float(v) for v in value]
        except (TypeError, ValueError):
            return False, None
        if all(math.isfinite(v) for v in vals):
            return True, (vals[0], vals[1], vals[2], vals[3])
    return False, None


def parse_bbox_reply(text: str | None) -> ParsedBox:
    """Parse a GroundingME reply (SPEC §5 "Parse").

    Strips the reasoning trace (:func:`lensbench.parsing.strip_reasoning`) and code fences,
    then finds every ``bbox_2d`` key (JSON, single-quoted or unquoted keys; ``null``/``None``)
    and keeps the LAST well-formed value: ``null`` = rejection, 4 numbers (or one nested list
    of 4) = a box. No ``bbox_2d`` value at all = ``unparseable`` (never a rejection, and no
    bare-number fallback: that is the official scorers' rule, see :func:`official_parse_bbox`).
    Never evaluates model output.
    """
    s = _FENCE.sub("", strip_reasoning(text))
    found: list[tuple[float, float, float, float] | None] = []
    for m in _KEY_RE.finditer(s):
        ok, value = _value_after_key(s, m.end())
        if not ok:
            continue
        ok, box = _box_from_value(value)
        if ok:
            found.append(box)
    if not found:
        return ParsedBox("unparseable")
    last = found[-1]
    return ParsedBox("null" if last is None else "box", last, len(found))


def official_parse_bbox(text: str | None) -> list[float]:
    """The official scorers' ``parse_bbox`` semantics (lirang04/GroundingME ``evaluate.py``,
    VLMEvalKit ``groundingme.py``), reimplemented: greedy ``{...bbox_2d...}`` JSON, null ->
    [0, 0, 0, 0]; else the LAST four numbers anywhere in the raw reply; else [0, 0, 0, 0].
    Used only by ``--official-compat``."""
    t = text or ""
    m = re.search(r'\{.*"bbox_2d".*\}', t, re.DOTALL)
    if m:
        try:
            data = json.loads(m.group(0))
            box = data["bbox_2d"]
            if box is None:
                return [0.0, 0.0, 0.0, 0.0]
            if isinstance(box, list) and len(box) == 4:
                return [float(c) for c in box]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            pass
    pat = r"(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)[\s,]+(-?\d+(?:\.\d+)?)"
    matches = re.findall(pat, t)
    if matches:
        return [float(c) for c in matches[-1]]
    return [0.0, 0.0, 0.0, 0.0]


# ----------------------------------------------------------------------------- geometry

def iou(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes in the same pixel frame, in [0, 1].
    Continuous coordinates (no +1); a missing or zero-area union gives 0."""
    if a is None or b is None:
        return 0.0
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(0.0, iw) * max(0.0, ih)
    area_a = max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])
    area_b = max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


def smart_resize(height: int, width: int, factor: int = 28, min_pixels: int = 4 * 28 * 28,
                 max_pixels: int = 16384 * 28 * 28) -> tuple[int, int]:
    """Qwen2.5-VL's ``smart_resize`` rule (qwen-vl-utils ``vision_process.py``; the HF
    Qwen2VLImageProcessor): both sides rounded to multiples of ``factor`` (Python ``round``,
    half to even), then scaled down (floor) / up (ceil) so that ``min_pixels <= h*w <= max_pixels``.
    Defaults = Qwen2.5-VL's released preprocessor config (3136 .. 12,845,056 px).
    Returns ``(h, w)`` in pixels. Raises ValueError for an aspect ratio above 200."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio must be <= 200, got {max(height, width) / min(height, width):.1f}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def to_original_pixels(box: Sequence[float], fmt: str, *, sent_size: tuple[int, int], orig_size: tuple[int, int],
                       resize: dict[str, int] | None = None) -> tuple[float, float, float, float]:
    """Map a box written in convention ``fmt`` (:data:`BBOX_FORMATS`) to (x1, y1, x2, y2) in
    original pixels. ``sent_size``/``orig_size`` are (w, h) of the image sent / of the original;
    ``resize`` holds ``factor``, ``min_pixels``, ``max_pixels`` for ``abs-resized``.
    Raises ConfigError for an unknown format."""
    x1, y1, x2, y2 = (float(v) for v in box)
    ow, oh = orig_size
    if fmt == "abs":
        sx, sy = ow / sent_size[0], oh / sent_size[1]
    elif fmt == "abs-resized":
        rh, rw = smart_resize(sent_size[1], sent_size[0], **(resize or {}))
        sx, sy = ow / rw, oh / rh
    elif fmt == "rel1000":
        sx, sy = ow / 1000.0, oh / 1000.0
    elif fmt == "rel1":
        sx, sy = float(ow), float(oh)
    elif fmt == "yxyx1000":
        x1, y1, x2, y2 = y1, x1, y2, x2
        sx, sy = ow / 1000.0, oh / 1000.0
    else:
        raise ConfigError(f"unknown bbox format {fmt!r}; known: {', '.join(BBOX_FORMATS)}")
    return (x1 * sx, y1 * sy, x2 * sx, y2 * sy)


def official_best_iou(pred: Sequence[float], gt: Sequence[float] | None, *, sent_size: tuple[int, int],
                      orig_size: tuple[int, int]) -> tuple[float, list[float]]:
    """The official scorers' IoU (``--official-compat``): GT of Rejection items is [0,0,0,0]
    and scores 1 iff the prediction is [0,0,0,0]; otherwise the best IoU over two readings of
    the prediction: raw pixels (mapped from the sent image to the original when downscaled) and
    ``normalize_bbox`` (all coordinates <= 1: times width/height; else /999 times width/height).
    Returns ``(iou, chosen box in original pixels)``."""
    zero = [0.0, 0.0, 0.0, 0.0]
    p = [float(v) for v in pred]
    ow, oh = orig_size
    if gt is None:
        return (1.0 if p == zero else 0.0), p
    raw = list(to_original_pixels(p, "abs", sent_size=sent_size, orig_size=orig_size)) if p != zero else zero
    if all(c <= 1 for c in p):
        norm = [p[0] * ow, p[1] * oh, p[2] * ow, p[3] * oh]
    else:
        norm = [p[0] / 999 * ow, p[1] / 999 * oh, p[2] / 999 * ow, p[3] / 999 * oh]
    cands = [raw, norm]
    ious = [iou(gt, c) for c in cands]
    k = ious.index(max(ious))
    return ious[k], cands[k]


# ----------------------------------------------------------------------------- scoring

def score_prediction(sample: GMSample, reply: str | None, img: PreparedImage, *, bbox_format: str,
                     official_compat: bool = False, resize: dict[str, int] | None = None) -> dict[str, Any]:
    """Score one reply: ``{"outcome": box|rejected|unparseable, "raw_bbox", "pred_bbox" (original
    px or None), "iou" (positives; None on Rejection items), "hit" (Acc@0.5 correctness),
    "status"}``. Strict mode: a Rejection item is a hit iff the reply is ``null``; an
    unparseable reply is never a hit. Official-compat: see :func:`official_best_iou`."""
    sent, orig = (img.sent_w, img.sent_h), (img.orig_w, img.orig_h)
    parsed = parse_bbox_reply(reply)
    rec: dict[str, Any] = {"outcome": {"box": "box", "null": "rejected", "unparseable": "unparseable"}[parsed.kind],
                           "raw_bbox": list(parsed.box) if parsed.box else None, "n_boxes_found": parsed.n_found}
    if official_compat:
        pred = official_parse_bbox(reply)
        value, chosen = official_best_iou(pred, sample.bbox, sent_size=sent, orig_size=orig)
        rec["official_raw_bbox"] = pred
        rec["pred_bbox"] = None if chosen == [0.0, 0.0, 0.0, 0.0] else [round(v, 2) for v in chosen]
        rec["iou"] = value
        rec["hit"] = value >= 0.5
        rec["official_rejection"] = pred == [0.0, 0.0, 0.0, 0.0]
    else:
        pred_box = to_original_pixels(parsed.box, bbox_format, sent_size=sent, orig_size=orig, resize=resize) \
            if parsed.box else None
        rec["pred_bbox"] = [round(v, 2) for v in pred_box] if pred_box else None
        if sample.is_rejection:
            rec["iou"] = None
            rec["hit"] = parsed.kind == "null"
        else:
            rec["iou"] = iou(sample.bbox, pred_box) if pred_box else 0.0
            rec["hit"] = rec["iou"] >= 0.5
    if parsed.kind == "unparseable" and not official_compat:
        rec["status"] = "unparseable"
    else:
        rec["status"] = "correct" if rec["hit"] else "wrong"
    return rec


def _hit_at(rec: dict[str, Any], t: float, official: bool) -> bool:
    """Correctness of a record at IoU threshold ``t``."""
    if rec.get("subtask_l1") == "Rejection":
        if official:
            return (rec.get("iou") or 0.0) >= t
        return rec.get("outcome") == "rejected"
    return rec.get("iou") is not None and rec["iou"] >= t


# ----------------------------------------------------------------------------- judge tournament

_BOXED = re.compile(r"\\boxed\s*\{\s*\\?(?:text\{)?\s*([AB])\s*\}?\s*\}")


def parse_judge_verdict(text: str | None) -> str | None:
    """``"A"``, ``"B"`` or ``None`` from a judge reply (Tables 10/11 ask for ``\\boxed{A}`` or
    ``\\boxed{B}``): reasoning stripped first; the LAST ``\\boxed{}`` wins (Table 10 asks the
    judge to conclude with it); none found = None (a failed verdict)."""
    s = strip_reasoning(text)
    found = _BOXED.findall(s)
    return found[-1] if found else None


def _full_response(resp: StoredResponse) -> str:
    """A reply with its reasoning, as the text-only judge sees it (Sec. 5.2 "full responses")."""
    text = resp.text or ""
    if resp.reasoning and "<think>" not in text:
        return f"<think>\n{resp.reasoning}\n</think>\n\n{text}"
    return text


# ----------------------------------------------------------------------------- the benchmark

class GroundingME(Benchmark):
    """GroundingME (arXiv 2512.17495): grounding with rejection; Table 3 / Table 8 / Table 4."""

    name = "groundingme"
    title = "GroundingME"

    class Options(BaseModel):
        """GroundingME options (``lensbench run groundingme --help``)."""

        bbox_format: str = Field(default="abs", description="model's box convention: abs (pixels of the image sent), "
                                 "abs-resized (Qwen2.5-VL smart-resized pixels), rel1000 (Qwen3-VL), rel1, "
                                 "yxyx1000 (Gemini [y1,x1,y2,x2])")
        max_pixels: Optional[int] = Field(default=None, ge=1024, description="downscale images above this many pixels "
                                          "(JPEG draft decoding); boxes are mapped back to original pixels")
        official_compat: bool = Field(default=False, description="reproduce the official scorers (best IoU over "
                                      "conventions, unparseable = [0,0,0,0]); labelled in reports")
        best_of: int = Field(default=1, ge=1, le=64, description="N samples per item (Sec. 5.2; N=16, "
                             "temperature 0.7 unless --temperature)")
        judge: Optional[str] = Field(default=None, description="best-of-N selector: text (Table 11, full responses) or "
                                     "mm (Table 10, image + boxes), optionally text:SPEC / mm:SPEC; the judge backend "
                                     "is --judge-model")
        judge_retries: int = Field(default=1, ge=0, le=5, description="retries of a judge call without a \\boxed{A|B} "
                                   "verdict before the fixed rule (candidate A, the lower sample index, advances)")
        resize_factor: int = Field(default=28, ge=1, description="abs-resized: smart-resize patch factor")
        resize_min_pixels: int = Field(default=3136, ge=1, description="abs-resized: smart-resize min_pixels")
        resize_max_pixels: int = Field(default=12845056, ge=1, description="abs-resized: smart-resize max_pixels")

        @field_validator("bbox_format")
        @classmethod
        def _fmt(cls, v: str) -> str:
            if v not in BBOX_FORMATS:
                raise ValueError(f"bbox_format must be one of {', '.join(BBOX_FORMATS)}, got {v!r}")
            return v

        @field_validator("judge")
        @classmethod
        def _judge(cls, v: Optional[str]) -> Optional[str]:
            if v is None or v == "":
                return None
            mode = v.split(":", 1)[0]
            if mode not in ("text", "mm"):
                raise ValueError(f"judge must be text, mm, text:SPEC or mm:SPEC, got {v!r}")
            return v

    # -- protocol pieces
    def load(self, data_dir: Path) -> list[GMSample]:
        """HF parquet shards or VLMEvalKit TSV under ``data_dir`` (:func:`load_groundingme`)."""
        return load_groundingme(Path(data_dir))

    @property
    def judge_mode(self) -> str | None:
        """``"text"``, ``"mm"`` or None."""
        return self.options.judge.split(":", 1)[0] if self.options.judge else None

    def judge_spec(self) -> str | None:
        """The SPEC of ``--judge text:SPEC`` / ``mm:SPEC`` (used when ``--judge-model`` is absent)."""
        j = self.options.judge
        return j.split(":", 1)[1] if j and ":" in j else None

    def show(self, run_dir: Path, sample_id: str, out: Path | None = None) -> Path:
        """Ground-truth (green) and predicted (red) boxes of one sample as a PNG (``lensbench show``)."""
        rec = find_record(run_dir, sample_id)
        dest = out or Path(run_dir) / "show" / f"{_safe_name(sample_id)}.png"
        draw_record(rec, dest)
        return dest

    def _resize(self) -> dict[str, int]:
        o = self.options
        return {"factor": o.resize_factor, "min_pixels": o.resize_min_pixels, "max_pixels": o.resize_max_pixels}

    async def evaluate(self, samples: list[GMSample], ctx: RunContext) -> list[dict[str, Any]]:
        """Prepare images, send N requests per item, parse and score; for N > 1 with a judge,
        run the knockout tournament. One record per item (see :meth:`aggregate`)."""
        o = self.options
        n = o.best_of
        if o.judge and n < 2:
            raise ConfigError("--judge selects among --best-of N samples; give --best-of 2 or more")
        if o.judge and not ctx.has_judge:
            spec = o.judge.split(":", 1)[1] if ":" in o.judge else "SPEC"
            raise ConfigError(f"--judge {o.judge} needs a judge backend: pass --judge-model {spec}")
        if ctx.image_max_side and o.bbox_format in ("abs", "abs-resized"):
            raise ConfigError(f"--image-max-side re-scales the image after GroundingME's own downscaling, so "
                              f"--bbox-format {o.bbox_format} boxes could not be mapped back; use --max-pixels instead")
        images = await asyncio.to_thread(prepare_images, samples, ctx.media_dir, o.max_pixels)
        base = ctx.params(temperature=0.0 if n == 1 else 0.7, max_tokens=DEFAULT_MAX_TOKENS)
        requests: list[Request] = []
        parts: dict[str, tuple[ImagePart, str]] = {}
        for s in samples:
            img = images[s.id]
            part = ImagePart.of(img.path)
            prompt = build_prompt(s.description, o.bbox_format)
            parts[s.id] = (part, prompt)
            for k in range(n):
                params = base if n == 1 else base.model_copy(update={"seed": (base.seed if base.seed is not None
                                                                              else ctx.seed) + k})
                requests.append(Request(
                    id=s.id if n == 1 else f"{s.id}#{k}", messages=(Message.user(part, prompt),), params=params,
                    meta={"benchmark": self.name, "sample_id": s.id, "sample_index": k, "subtask_l1": s.subtask_l1,
                          "bbox": list(s.bbox) if s.bbox else None, "width": s.width, "height": s.height}))
        resp = await ctx.generate(requests, label="groundingme")
        records: list[dict[str, Any]] = []
        cands_all: dict[str, list[dict[str, Any]]] = {}
        for s in samples:
            img = images[s.id]
            cands = []
            for k in range(n):
                rid = s.id if n == 1 else f"{s.id}#{k}"
                r = resp[rid]
                if not r.ok:
                    c = {"sample_index": k, "status": "error", "error": r.error, "outcome": "error", "hit": False,
                         "iou": None}
                else:
                    c = {"sample_index": k, **score_prediction(s, r.text, img, bbox_format=o.bbox_format,
                                                               official_compat=o.official_compat,
                                                               resize=self._resize()),
                         "reply": r.text, "reasoning": r.reasoning}
                cands.append(c)
            cands_all[s.id] = cands
        selected: dict[str, int] = {sid: 0 for sid in cands_all}
        judge_info: dict[str, dict[str, Any]] = {}
        if n > 1 and o.judge:
            selected, judge_info = await self._tournament(samples, cands_all, resp, parts, ctx)
        elif n > 1:
            # no judge: the record shows the first valid sample; Table 4 rows need only the candidates
            for sid, cands in cands_all.items():
                selected[sid] = next((c["sample_index"] for c in cands if c["status"] != "error"), 0)
        for s in samples:
            img = images[s.id]
            cands = cands_all[s.id]
            pick = cands[selected[s.id]]
            rec = {"id": s.id, "status": pick["status"], "subtask_l1": s.subtask_l1, "subtask_l2": s.subtask_l2,
                   "description": s.description, "gt_bbox": list(s.bbox) if s.bbox else None,
                   "width": s.width, "height": s.height, "image": img.path, "sent_size": [img.sent_w, img.sent_h],
                   "bbox_format": o.bbox_format, "official_compat": o.official_compat}
            rec.update({k: v for k, v in pick.items() if k not in ("status", "sample_index")})
            if n > 1:
                valid = [c for c in cands if c["status"] != "error"]
                rec["selected_index"] = selected[s.id]
                rec["bon"] = {
                    "n": n, "n_valid": len(valid),
                    "mean_hit": (sum(c["hit"] for c in valid) / len(valid)) if valid else None,
                    "oracle_hit": any(c["hit"] for c in valid),
                    "selected_hit": bool(pick["hit"]) if pick["status"] != "error" else None,
                    "samples": [{"i": c["sample_index"], "status": c["status"], "outcome": c["outcome"],
                                 "raw_bbox": c.get("raw_bbox"), "pred_bbox": c.get("pred_bbox"), "iou": c.get("iou"),
                                 "hit": c["hit"]} for c in cands],
                }
                if s.id in judge_info:
                    rec["bon"]["judge"] = judge_info[s.id]
            records.append(rec)
        return records

    async def _tournament(self, samples, cands_all, resp, parts, ctx):
        """Pairwise knockout per item (Sec. 5.2): rounds of (A, B) matches over the surviving
        candidates in sample order, byes for an odd one out; transport-failed candidates are
        dropped before the first round. A judge call without a verdict is retried
        ``judge_retries`` times (temperature 0.7, seed = attempt), then candidate A advances
        (the fixed rule, counted as ``fallbacks``). Returns ``(selected, info)``."""
        o = self.options
        mode = self.judge_mode
        tmpl = load_prompt("judge_text" if mode == "text" else "judge_mm")
        n = o.best_of
        alive: dict[str, list[int]] = {}
        for s in samples:
            ok = [c["sample_index"] for c in cands_all[s.id] if c["status"] != "error"]
            alive[s.id] = ok or [0]
        info = {s.id: {"mode": mode, "matches": [], "fallbacks": 0, "judge_errors": 0} for s in samples}
        by_id = {s.id: s for s in samples}
        rnd = 0
        while any(len(v) > 1 for v in alive.values()):
            rnd += 1
            pending: dict[str, list[tuple[int, int]]] = {sid: [(v[i], v[i + 1]) for i in range(0, len(v) - 1, 2)]
                                                         for sid, v in alive.items() if len(v) > 1}
            verdicts: dict[tuple[str, int, int], str | None] = {}
            attempts: dict[tuple[str, int, int], int] = {}
            todo = [(sid, a, b) for sid, pairs in pending.items() for a, b in pairs]
            for attempt in range(o.judge_retries + 1):
                if not todo:
                    break
                reqs = []
                for sid, a, b in todo:
                    reqs.append(self._judge_request(by_id[sid], a, b, rnd, attempt, tmpl, mode, cands_all, resp,
                                                    parts, n))
                out = await ctx.generate(reqs, label=f"groundingme-judge-r{rnd}")
                nxt = []
                for (sid, a, b), rq in zip(todo, reqs):
                    r = out[rq.id]
                    attempts[(sid, a, b)] = attempt + 1
                    v = parse_judge_verdict(r.text) if r.ok else None
                    if not r.ok:
                        info[sid]["judge_errors"] += 1
                    verdicts[(sid, a, b)] = v
                    if v is None:
                        nxt.append((sid, a, b))
                todo = nxt
            for sid, pairs in pending.items():
                winners = []
                for a, b in pairs:
                    v = verdicts.get((sid, a, b))
                    fallback = v is None
                    w = b if v == "B" else a
                    if fallback:
                        info[sid]["fallbacks"] += 1
                    info[sid]["matches"].append({"round": rnd, "a": a, "b": b, "verdict": v, "winner": w,
                                                 "attempts": attempts.get((sid, a, b), 0), "fallback": fallback})
                    winners.append(w)
                v = alive[sid]
                if len(v) % 2 == 1:
                    winners.append(v[-1])
                alive[sid] = winners
        return {sid: v[0] for sid, v in alive.items()}, info

    def _judge_request(self, s: GMSample, a: int, b: int, rnd: int, attempt: int, tmpl: str, mode: str,
                       cands_all, resp, parts, n: int) -> Request:
        part, prompt = parts[s.id]
        ca, cb = cands_all[s.id][a], cands_all[s.id][b]
        if mode == "text":
            ra, rb = resp[f"{s.id}#{a}"], resp[f"{s.id}#{b}"]
            text = (tmpl.replace("{instruction}", prompt).replace("{response_a}", _full_response(ra))
                    .replace("{response_b}", _full_response(rb)))
            msg = Message.user(text)
        else:
            def show(c):
                if c.get("outcome") == "rejected":
                    return "null"
                if c.get("raw_bbox") is None:
                    return "none (no box could be parsed)"
                return json.dumps([int(v) if float(v).is_integer() else v for v in c["raw_bbox"]])
            text = (tmpl.replace("{instruction}", prompt).replace("{bbox_a}", show(ca))
                    .replace("{bbox_b}", show(cb)))
            msg = Message.user(part, text)
        params = GenParams(temperature=0.0) if attempt == 0 else GenParams(temperature=0.7, seed=attempt)
        return Request(id=f"judge/{s.id}/r{rnd}/{a}v{b}/t{attempt}", messages=(msg,), params=params, role="judge",
                       meta={"benchmark": self.name, "sample_id": s.id, "judge_mode": mode, "pair": [a, b]})

    # -- aggregation
    def aggregate(self, records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Metrics in percent from per-item records; transport errors are excluded from every
        denominator and counted in ``n_error``; unparseable replies count as wrong (strict) and
        are counted in ``n_unparseable``.

        Metric names: ``Acc@0.5`` (columns ``L1/L2``, ``L1``, ``Total``), ``Acc@0.75``,
        ``Acc@0.9``, ``mAcc`` (L-1 and Total), ``mIoU`` (positives: L-1 and ``Positives``),
        ``Rejection rate`` (``Positives`` = false rejections, ``Rejection`` = on Rejection
        items), ``Unparseable rate``; with best-of-N: ``BoN average``, ``BoN selected``,
        ``BoN oracle`` (Total and L-1, Table 4)."""
        scored = [r for r in records if r.get("status") != "error"]
        official = any(r.get("official_compat") for r in scored)
        metrics: dict[str, Any] = {}

        def pct(xs: list[bool]) -> float | None:
            return 100.0 * sum(xs) / len(xs) if xs else None

        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in scored:
            groups[r["subtask_l1"]].append(r)
            groups[f"{r['subtask_l1']}/{r['subtask_l2']}"].append(r)
        groups["Total"] = scored
        acc5: dict[str, Any] = {}
        for l1 in L1_ORDER:
            for l2 in L2_ORDER[l1]:
                acc5[f"{l1}/{l2}"] = pct([_hit_at(r, 0.5, official) for r in groups.get(f"{l1}/{l2}", [])])
            extra = sorted({r["subtask_l2"] for r in groups.get(l1, [])} - set(L2_ORDER[l1]))
            for l2 in extra:
                acc5[f"{l1}/{l2}"] = pct([_hit_at(r, 0.5, official) for r in groups[f"{l1}/{l2}"]])
            acc5[l1] = pct([_hit_at(r, 0.5, official) for r in groups.get(l1, [])])
        acc5["Total"] = pct([_hit_at(r, 0.5, official) for r in scored])
        metrics["Acc@0.5"] = acc5
        cols = list(L1_ORDER) + ["Total"]
        for t, name in ((0.75, "Acc@0.75"), (0.9, "Acc@0.9")):
            metrics[name] = {c: pct([_hit_at(r, t, official) for r in groups.get(c, [])]) for c in cols}
        macc = {}
        for c in cols:
            rs = groups.get(c, [])
            macc[c] = (sum(pct([_hit_at(r, t, official) for r in rs]) for t in THRESHOLDS) / len(THRESHOLDS)) if rs else None
        metrics["mAcc"] = macc
        pos = [r for r in scored if r["subtask_l1"] != "Rejection"]
        miou = {c: (100.0 * sum(r["iou"] or 0.0 for r in groups.get(c, [])) / len(groups[c]) if groups.get(c) else None)
                for c in L1_ORDER[:3]}
        miou["Positives"] = 100.0 * sum(r["iou"] or 0.0 for r in pos) / len(pos) if pos else None
        metrics["mIoU"] = miou
        rej_items = groups.get("Rejection", [])
        metrics["Rejection rate"] = {"Positives": pct([r.get("outcome") == "rejected" for r in pos]),
                                     "Rejection": pct([r.get("outcome") == "rejected" for r in rej_items])}
        metrics["Unparseable rate"] = {"Total": pct([r.get("outcome") == "unparseable" for r in scored])}
        bon = [r for r in scored if r.get("bon")]
        if bon:
            for key, name in (("mean_hit", "BoN average"), ("selected_hit", "BoN selected"), ("oracle_hit", "BoN oracle")):
                row = {}
                for c in ["Total", *L1_ORDER]:
                    rs = [r for r in bon if c == "Total" or r["subtask_l1"] == c]
                    vals = [float(r["bon"][key]) for r in rs if r["bon"].get(key) is not None]
                    row[c] = 100.0 * sum(vals) / len(vals) if vals else None
                metrics[name] = row
        counts: dict[str, Any] = {
            "n": len(scored), "n_error": len(records) - len(scored),
            "n_unparseable": sum(r.get("outcome") == "unparseable" for r in scored),
            "n_rejected": sum(r.get("outcome") == "rejected" for r in scored),
            "n_positive": len(pos), "n_rejection_items": len(rej_items),
        }
        for l1 in L1_ORDER:
            counts[f"n_{l1}"] = len(groups.get(l1, []))
        if bon:
            counts["best_of"] = max(r["bon"]["n"] for r in bon)
            js = [r["bon"]["judge"] for r in bon if r["bon"].get("judge")]
            if js:
                counts["judge_mode"] = js[0]["mode"]
                counts["judge_matches"] = sum(len(j["matches"]) for j in js)
                counts["judge_fallbacks"] = sum(j["fallbacks"] for j in js)
                counts["judge_errors"] = sum(j["judge_errors"] for j in js)
                counts["judge_fallback_rule"] = "candidate A (lower sample index) advances"
        if official:
            counts["scoring"] = "official-compat"
        return metrics, counts

    # -- rendering
    def tables(self, results, fmt: str = "md", with_paper: bool = False) -> str:
        """See :meth:`Benchmark.tables` (transition alias of :meth:`render`)."""
        return self.render(results, fmt, with_paper)

    def render(self, results: Sequence[RunResult], fmt: str = "md", with_paper: bool = False) -> str:
        """Table 3 (Acc@0.5 per L-2/L-1/Total), Table 8 (Acc@0.75/0.9/mAcc), a rejection and
        parse table, and Table 4 rows for best-of-N runs. ``with_paper`` adds the paper's rows
        (``data/groundingme_paper_table{3,8,4}.json``). Official-compat runs are labelled."""
        def label(r: RunResult) -> str:
            o = r.options or {}
            tags = [str(o.get("bbox_format", "abs"))]
            if o.get("official_compat"):
                tags.append("official-compat")
            if (o.get("best_of") or 1) > 1:
                tags.append(f"best-of-{o['best_of']}" + (f", judge {o['judge']}" if o.get("judge") else ""))
            return f"{r.model} ({', '.join(tags)})"

        def paper(name: str) -> dict[str, Any]:
            return json.loads(read_text(__package__, "paper", f"{name}.json"))

        parts: list[str] = []
        any_official = any((r.options or {}).get("official_compat") for r in results)
        note = (" [official-compat scoring: best IoU over raw / normalised readings, unparseable = rejection]"
                if any_official else "")
        # Table 3
        cols3 = ["Model"]
        keys3: list[str] = []
        for l1 in L1_ORDER:
            for l2 in L2_ORDER[l1]:
                cols3.append(f"{_L1_ABBR[l1]} {_L2_ABBR[l2]}")
                keys3.append(f"{l1}/{l2}")
            cols3.append(f"{_L1_ABBR[l1]} Avg.")
            keys3.append(l1)
        cols3.append("Total")
        keys3.append("Total")
        rows3 = [[label(r), *[r.metrics.get("Acc@0.5", {}).get(k) for k in keys3]] for r in results]
        if with_paper:
            for row in paper("table3")["rows"]:
                rows3.append([f"{row['model']} (paper)", *[row["values"].get(k) for k in keys3]])
        parts.append(render_table(cols3, rows3, fmt, title="GroundingME Table 3: Acc@0.5 (%)" + note, digits=1))
        # Table 8
        cols8 = ["Model"]
        keys8: list[tuple[str, str]] = []
        for c in ("Discriminative", "Spatial", "Limited", "Total"):
            for m in ("Acc@0.75", "Acc@0.9", "mAcc"):
                cols8.append(f"{_L1_ABBR.get(c, c)} {m}")
                keys8.append((m, c))
        rows8 = [[label(r), *[r.metrics.get(m, {}).get(c) for m, c in keys8]] for r in results]
        if with_paper:
            for row in paper("table8")["rows"]:
                rows8.append([f"{row['model']} (paper)", *[row["values"].get(f"{c}/{m}") for m, c in keys8]])
        parts.append(render_table(cols8, rows8, fmt, title="GroundingME Table 8: Acc@0.75, Acc@0.9, mAcc 0.50:0.05:0.95 (%)"
                                  + note, digits=1))
        # rejection / parse table (ours only)
        colsr = ["Model", "Rejection rate on Rejection items", "False rejections on positives", "Unparseable",
                 "mIoU positives", "n", "errors"]
        rowsr = [[label(r), r.metrics.get("Rejection rate", {}).get("Rejection"),
                  r.metrics.get("Rejection rate", {}).get("Positives"), r.metrics.get("Unparseable rate", {}).get("Total"),
                  r.metrics.get("mIoU", {}).get("Positives"), r.counts.get("n"), r.counts.get("n_error")]
                 for r in results]
        parts.append(render_table(colsr, rowsr, fmt, title="GroundingME rejections and parsing (%)" + note, digits=1))
        # Table 4
        bon = [r for r in results if "BoN average" in r.metrics]
        if bon or with_paper:
            cols4 = ["Model", "Selection", "Judge", "Total", "Dis.", "Spa.", "Lim.", "Rej."]
            order = ["Total", "Discriminative", "Spatial", "Limited", "Rejection"]
            rows4 = []
            for r in bon:
                o = r.options or {}
                judge = o.get("judge") or "-"
                n = o.get("best_of")
                rows4.append([label(r), f"Average over N={n}", "-", *[r.metrics["BoN average"].get(c) for c in order]])
                if o.get("judge"):
                    fb = r.counts.get("judge_fallbacks", 0)
                    rows4.append([label(r), f"Judge-selected ({fb} fixed-rule verdicts)", judge,
                                  *[r.metrics["BoN selected"].get(c) for c in order]])
                rows4.append([label(r), f"Oracle best-of-{n}", "-", *[r.metrics["BoN oracle"].get(c) for c in order]])
            if with_paper:
                for row in paper("table4")["rows"]:
                    rows4.append(["Qwen3-VL-A22B-Thinking (paper)", row["type"], row["judge"],
                                  *[row["values"].get(c) for c in order]])
            parts.append(render_table(cols4, rows4, fmt, title="GroundingME Table 4: test-time scaling, Acc@0.5 (%)"
                                      + note, digits=1))
        return "\n".join(parts)


# ----------------------------------------------------------------------------- CLI: show, negatives

try:
    import typer
except ImportError:  # pragma: no cover - typer is a core dependency
    typer = None


def draw_record(record: dict[str, Any], out_png: Path, image_path: str | None = None) -> Path:
    """Draw the ground truth (green) and the prediction (red; the sample's selected box) of a
    ``samples.jsonl`` record on its image and write a PNG. Boxes in original pixels are scaled
    to the stored image. Raises DataError when the image file is missing."""
    from PIL import Image, ImageDraw

    path = image_path or record.get("image")
    if not path or not Path(path).is_file():
        raise DataError(path or "?", f"image of record {record.get('id')!r} not found (run folder moved?)", field="image")
    with Image.open(path) as im0:
        im = im0.convert("RGB")
    ow, oh = record.get("width") or im.width, record.get("height") or im.height
    sx, sy = im.width / ow, im.height / oh
    draw = ImageDraw.Draw(im)
    lw = max(2, round(max(im.size) / 300))

    def rect(box, color, text):
        x1, y1, x2, y2 = box[0] * sx, box[1] * sy, box[2] * sx, box[3] * sy
        draw.rectangle([min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)], outline=color, width=lw)
        draw.text((min(x1, x2) + lw, max(0, min(y1, y2) - 12)), text, fill=color)

    if record.get("gt_bbox"):
        rect(record["gt_bbox"], (0, 200, 0), "GT")
    if record.get("pred_bbox"):
        iou_v = record.get("iou")
        rect(record["pred_bbox"], (230, 0, 0), "pred" + (f" IoU={iou_v:.2f}" if isinstance(iou_v, float) else ""))
    caption = f"{record.get('id')} [{record.get('subtask_l1')}/{record.get('subtask_l2')}] {record.get('status')}: " \
              f"{record.get('outcome')}"
    draw.rectangle([0, 0, im.width, 16], fill=(0, 0, 0))
    draw.text((4, 2), caption[:200], fill=(255, 255, 255))
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    im.save(out_png, "PNG")
    return out_png


def find_record(run_dir: Path, sample_id: str) -> dict[str, Any]:
    """The ``samples.jsonl`` record with ``id == sample_id``. Raises DataError naming the file."""
    p = Path(run_dir) / "samples.jsonl"
    if not p.is_file():
        raise DataError(p, "no samples.jsonl (not a finished lensbench run folder)")
    with p.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                if str(rec.get("id")) == sample_id:
                    return rec
    raise DataError(p, f"no record with id {sample_id!r}", field="id")


NEG_ATTRIBUTES: tuple[str, ...] = ("Appearance", "Component", "Text", "State")
#: neg:pos ratios of Sec. 5.3 / Table 5.
PAPER_RATIOS: tuple[str, ...] = ("1:8", "1:4", "1:2", "1:1", "2:1")


def parse_ratio(ratio: str) -> tuple[int, int]:
    """``"NEG:POS"`` -> (neg, pos), both positive ints. Raises ConfigError."""
    m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", ratio or "")
    if not m or int(m.group(1)) <= 0 or int(m.group(2)) <= 0:
        raise ConfigError(f"--ratio must be NEG:POS with positive integers (e.g. 1:2), got {ratio!r}")
    return int(m.group(1)), int(m.group(2))


def read_refexp_source(path: Path) -> list[dict[str, Any]]:
    """RefCOCOg-style items from JSON (list, or {"annotations"/"data"/"items": [...]}), JSONL or
    parquet. Each item needs a description (``description``, ``sentence``, ``sent``, ``caption``,
    ``expression``, ``ref``, or ``sentences[0].sent``) and keeps every other field.
    Raises DataError naming the file and the missing field."""
    p = Path(path)
    if not p.is_file():
        raise DataError(p, "source file not found")
    if p.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        items = pq.read_table(p).to_pylist()
    elif p.suffix.lower() == ".jsonl":
        items = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    else:
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DataError(p, f"not valid JSON: {exc}") from None
        if isinstance(data, dict):
            for k in ("annotations", "data", "items", "refs"):
                if isinstance(data.get(k), list):
                    data = data[k]
                    break
        if not isinstance(data, list):
            raise DataError(p, "expected a list of items (or an object with an 'annotations' list)")
        items = data
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise DataError(p, f"item {i} is not an object")
        desc = None
        for k in ("description", "sentence", "sent", "caption", "expression", "ref", "raw"):
            if isinstance(it.get(k), str) and it[k].strip():
                desc = it[k]
                break
        if desc is None and isinstance(it.get("sentences"), list) and it["sentences"]:
            s0 = it["sentences"][0]
            desc = s0.get("sent") or s0.get("raw") if isinstance(s0, dict) else (s0 if isinstance(s0, str) else None)
        if not desc:
            raise DataError(p, f"item {i} has no description", field="description")
        out.append({**it, "description": desc})
    return out


def parse_edit_reply(text: str | None) -> str | None:
    """The edited description from the builder LLM's reply (``{"description": "..."}``, tolerant
    of reasoning and fences; a bare line of text is accepted); None when empty."""
    s = _FENCE.sub("", strip_reasoning(text)).strip()
    obj = extract_json_object(s)
    if obj:
        for cand in (obj, obj.replace("'", '"')):
            try:
                d = json.loads(cand)
                if isinstance(d, dict) and isinstance(d.get("description"), str) and d["description"].strip():
                    return d["description"].strip()
            except json.JSONDecodeError:
                continue
    s = s.strip().strip('"').strip()
    return s or None


def mix_negatives(positives: list[dict[str, Any]], negatives: list[dict[str, Any]], ratio: str, seed: int,
                  total: int | None = None) -> list[dict[str, Any]]:
    """Sample a mixture with ``neg:pos`` = ``ratio`` (Sec. 5.3: 1:8 ... 2:1), seeded.

    ``total`` items (default: as many as the pools allow at that ratio); counts are
    ``round(total * neg / (neg + pos))`` negatives and the rest positives, drawn without
    replacement by ``random.Random(seed)`` and shuffled together. Raises ConfigError when a
    pool is too small for the request."""
    import random

    neg, pos = parse_ratio(ratio)
    max_total = min(len(negatives) * (neg + pos) // neg, len(positives) * (neg + pos) // pos)
    total = max_total if total is None else total
    n_neg = round(total * neg / (neg + pos))
    n_pos = total - n_neg
    if n_neg > len(negatives) or n_pos > len(positives):
        raise ConfigError(f"ratio {ratio} with {total} items needs {n_neg} negatives and {n_pos} positives; "
                          f"have {len(negatives)} and {len(positives)}")
    rng = random.Random(seed)
    mix = rng.sample(negatives, n_neg) + rng.sample(positives, n_pos)
    rng.shuffle(mix)
    return mix


async def build_negatives(items: list[dict[str, Any]], generate, *, seed: int = 0,
                          params: GenParams | None = None) -> list[dict[str, Any]]:
    """Edit each item's description into a Rejection negative with an LLM (Sec. 5.3).

    The attribute type (Appearance / Component / Text / State) is drawn per item by
    ``random.Random(seed)``; ``generate(requests) -> {id: StoredResponse}`` sends the requests
    (the engine's ``ctx.generate`` or :func:`_engine_generate`). Returns negatives: the item with
    the edited ``description``, ``bbox: null``, ``source_description``, ``negative_type``;
    items whose edit failed or came back unchanged are skipped (``skipped`` counts in the caller)."""
    import random

    rng = random.Random(seed)
    tmpl = load_prompt("negative")
    kinds = [rng.choice(NEG_ATTRIBUTES) for _ in items]
    reqs = []
    for i, (it, kind) in enumerate(zip(items, kinds)):
        text = tmpl.replace("{description}", it["description"]).replace("{attribute}", kind)
        reqs.append(Request(id=f"neg/{i}", messages=(Message.user(text),), params=params or GenParams(temperature=0.0),
                            meta={"negative_type": kind}))
    out = await generate(reqs)
    negs = []
    for i, (it, kind) in enumerate(zip(items, kinds)):
        r = out[f"neg/{i}"]
        edited = parse_edit_reply(r.text) if r.ok else None
        if not edited or edited.strip() == it["description"].strip():
            continue
        neg = {k: v for k, v in it.items() if k not in ("sentences",)}
        neg.update({"description": edited, "bbox": None, "source_description": it["description"],
                    "negative_type": kind, "label": "negative"})
        negs.append(neg)
    return negs


def _engine_generate(backend, store_dir: Path, concurrency: int = 8):
    """``generate(requests)`` through the engine with a run store in ``store_dir`` (cached,
    deduplicated, retried, resumable): a re-run of ``negatives`` sends only what is missing."""
    from lensbench.run.engine import Engine
    from lensbench.run.store import RunStore

    async def gen(reqs: list[Request]) -> dict[str, StoredResponse]:
        with RunStore(store_dir) as store:
            engine = Engine({"model": backend}, store, concurrency=concurrency, progress=False)
            return await engine.run(reqs, "negatives")

    return gen


if typer is not None:
    groundingme_app = typer.Typer(help="GroundingME tools: draw boxes of a run, build rejection negatives.",
                                  no_args_is_help=True)

    @groundingme_app.command("show")
    def show_cmd(run_dir: Path = typer.Argument(..., help="a finished groundingme run folder"),
                 id: str = typer.Option(..., "--id", help="sample id"),
                 out: Optional[Path] = typer.Option(None, "--out", help="PNG path (default RUN_DIR/show/<id>.png)")):
        """Draw the ground-truth (green) and predicted (red) boxes of one sample as a PNG."""
        try:
            rec = find_record(run_dir, id)
            dest = out or Path(run_dir) / "show" / f"{_safe_name(id)}.png"
            draw_record(rec, dest)
        except LensbenchError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(str(dest))

    @groundingme_app.command("negatives")
    def negatives_cmd(source: Path = typer.Option(..., "--source", help="RefCOCOg-style JSON / JSONL / parquet"),
                      llm: str = typer.Option(..., "--llm", help="editing LLM backend spec, e.g. openai:MODEL"),
                      out: Path = typer.Option(..., "--out", help="output JSONL (mixture)"),
                      ratio: str = typer.Option("1:1", "--ratio", help="NEG:POS (paper: 1:8, 1:4, 1:2, 1:1, 2:1)"),
                      total: Optional[int] = typer.Option(None, "--total", help="items in the mixture (default: max)"),
                      seed: int = typer.Option(0, "--seed", help="seed for attribute types and sampling"),
                      base_url: list[str] = typer.Option([], "--base-url", help="endpoint(s) of the LLM"),
                      api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env"),
                      concurrency: int = typer.Option(8, "--concurrency")):
        """Edit descriptions into negatives (bbox null) and mix them with positives at NEG:POS."""
        from lensbench.backends.base import BackendConfig
        from lensbench.backends.providers import make_backend

        try:
            parse_ratio(ratio)
            items = read_refexp_source(source)
            backend = make_backend(llm, BackendConfig(base_urls=base_url, api_key_env=api_key_env, seed=seed))
        except LensbenchError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

        async def main():
            try:
                return await build_negatives(items, _engine_generate(backend, out.with_name(out.name + '.cache'), concurrency),
                                             seed=seed)
            finally:
                await backend.aclose()

        negs = asyncio.run(main())
        positives = [{**it, "label": "positive"} for it in items]
        try:
            mix = mix_negatives(positives, negs, ratio, seed, total)
        except LensbenchError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for it in mix:
                fh.write(json.dumps(it, ensure_ascii=False, default=str) + "\n")
        n_neg = sum(1 for it in mix if it.get("label") == "negative")
        typer.echo(f"{len(negs)}/{len(items)} descriptions edited; wrote {len(mix)} items "
                   f"({n_neg} negatives, {len(mix) - n_neg} positives) to {out}")

    CLI_GROUPS = {"groundingme": groundingme_app}
else:  # pragma: no cover
    groundingme_app = None
    CLI_GROUPS = {}
