"""The image each GroundingME item is sent with: prepared once per run under ``media_dir``.

Images larger than ``--max-pixels`` are downscaled (JPEG draft decoding for the 8K HR-Bench
photos, :func:`lensbench.media.images.downscale_image_bytes`); predicted boxes are later mapped
back to original pixels with the sizes kept in :class:`PreparedImage`.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lensbench.benchmarks.groundingme.data import GMSample, iter_image_bytes
from lensbench.core.errors import DataError
from lensbench.media.images import downscale_image_bytes, fit_budget

__all__ = ["PreparedImage", "prepare_images", "safe_name"]


@dataclass(frozen=True)
class PreparedImage:
    """The image file sent to the model: ``path``, its size ``(sent_w, sent_h)`` in pixels, and
    the original size ``(orig_w, orig_h)`` the ground truth refers to."""

    path: str
    sent_w: int
    sent_h: int
    orig_w: int
    orig_h: int


def safe_name(sid: str) -> str:
    """A file-name-safe form of a sample id (at most 80 characters)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", sid).strip("._") or "item"
    return s[:80]


def _file_stem(sid: str) -> str:
    """File name stem for a sample id: readable part + 8 hex of its SHA-1 (distinct ids never collide)."""
    return f"{safe_name(sid)}-{hashlib.sha1(sid.encode('utf-8')).hexdigest()[:8]}"


def prepare_images(samples: Sequence[GMSample], media_dir: Path, max_pixels: int | None,
                   *, draft: bool = True, workers: int = 4) -> dict[str, PreparedImage]:
    """Write each sample's image once under ``media_dir/groundingme/<budget>/`` and return
    ``{sample id: PreparedImage}``.

    Within budget: the original bytes (re-encoded only when they carry an EXIF orientation, which
    the official pipeline ignores). Over budget: a JPEG (quality 95) of at most ``max_pixels``
    pixels. Files already there are reused (resumed runs read nothing). Raises DataError for
    missing or undecodable images and for a size that disagrees with ``width``/``height``.
    """
    from concurrent.futures import ThreadPoolExecutor

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

    def one(c: tuple[GMSample, bytes]) -> PreparedImage:
        return _prepare_one(c[0], c[1], folder, max_pixels, draft)

    # decode in a few threads (Pillow releases the GIL while decoding), in bounded chunks
    with ThreadPoolExecutor(max_workers=workers) as pool:
        chunk: list[tuple[GMSample, bytes]] = []
        for item in iter_image_bytes(todo):
            chunk.append(item)
            if len(chunk) >= 2 * workers:
                out.update((c[0].id, pi) for c, pi in zip(chunk, pool.map(one, chunk)))
                chunk = []
        out.update((c[0].id, pi) for c, pi in zip(chunk, pool.map(one, chunk)))
    return out


def _prepare_one(s: GMSample, data: bytes, folder: Path, max_pixels: int | None, draft: bool) -> PreparedImage:
    """Write one sample's image (``data``: its bytes) into ``folder`` as :func:`prepare_images` says."""
    from PIL import Image

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
