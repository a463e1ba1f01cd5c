"""Image encoding for transport: decoded, resized and encoded once per run (cached by content hash)."""

from __future__ import annotations

import base64
import io
import math
from collections import OrderedDict
from pathlib import Path

from PIL import Image, ImageOps

from lensbench.core.errors import DataError

__all__ = ["ImageEncoder", "fit_budget", "downscale_image_bytes"]


class ImageEncoder:
    """Encode image files as base64 data URLs, with an LRU cache keyed by content hash.

    Args:
        fmt: ``"jpeg"`` (default, quality ``quality``) or ``"png"``.
        max_side: longest side in pixels after downscaling (aspect kept; never upscaled);
            ``None`` keeps the original size.
        cache_items: how many encoded images to keep in memory.
    """

    def __init__(self, fmt: str = "jpeg", max_side: int | None = None, quality: int = 90, cache_items: int = 256):
        if fmt not in ("jpeg", "png"):
            raise ValueError(f"image format must be jpeg or png, got {fmt!r}")
        if max_side is not None and max_side < 16:
            raise ValueError(f"image max side must be >= 16 px, got {max_side}")
        self.fmt = fmt
        self.max_side = max_side
        self.quality = quality
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._cache_items = cache_items

    @property
    def fingerprint(self) -> str:
        """What changes the pixels a model sees: part of the model fingerprint (request key)."""
        return f"{self.fmt}:{self.max_side or 'orig'}:{self.quality if self.fmt == 'jpeg' else ''}"

    def encode_bytes(self, path: str | Path) -> tuple[bytes, str]:
        """``(encoded bytes, mime type)`` for an image file.

        Raises:
            DataError: the file is missing or not a decodable image (names the file).
        """
        try:
            with Image.open(path) as im:
                im = ImageOps.exif_transpose(im)
                if self.max_side and max(im.size) > self.max_side:
                    if getattr(im, "format", None) == "JPEG":
                        im.draft("RGB", (self.max_side, self.max_side))
                    im.thumbnail((self.max_side, self.max_side), Image.Resampling.BICUBIC)
                buf = io.BytesIO()
                if self.fmt == "jpeg":
                    im.convert("RGB").save(buf, "JPEG", quality=self.quality)
                    mime = "image/jpeg"
                else:
                    im.save(buf, "PNG")
                    mime = "image/png"
        except FileNotFoundError:
            raise DataError(path, "image file not found") from None
        except OSError as exc:
            raise DataError(path, f"cannot decode image: {exc}") from None
        return buf.getvalue(), mime

    def data_url(self, path: str | Path, sha256: str = "") -> str:
        """``data:<mime>;base64,...`` URL for an image file (cached by ``sha256`` when given)."""
        key = sha256 or str(path)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        data, mime = self.encode_bytes(path)
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        self._cache[key] = url
        if len(self._cache) > self._cache_items:
            self._cache.popitem(last=False)
        return url


def fit_budget(width: int, height: int, max_pixels: int | None) -> tuple[int, int]:
    """Size ``(w, h)`` after downscaling ``width x height`` px to at most ``max_pixels`` pixels.

    Aspect kept: each side ``floor(side * sqrt(max_pixels / (w*h)))``, at least 1, then trimmed
    by one pixel at a time (longer side first) while float rounding leaves it over budget.
    Unchanged when within budget or ``max_pixels`` is None. Raises ValueError for ``max_pixels < 1``.
    """
    if max_pixels is None or width * height <= max_pixels:
        return width, height
    if max_pixels < 1:
        raise ValueError(f"max_pixels must be >= 1, got {max_pixels}")
    s = math.sqrt(max_pixels / (width * height))
    w, h = max(1, int(width * s)), max(1, int(height * s))
    while w * h > max_pixels:
        if w >= h:
            w -= 1
        else:
            h -= 1
    return w, h


def downscale_image_bytes(data: bytes, max_pixels: int | None, *, draft: bool = True):
    """Decode encoded image ``data`` and return ``(PIL image, original (w, h))``, fitted to
    ``max_pixels`` pixels by :func:`fit_budget`.

    JPEGs over budget are decoded in Pillow's draft mode (DCT scaling by 1/2, 1/4 or 1/8, never
    below the target size) before the final Lanczos resize: an 8K photo decodes several times
    faster and in a fraction of the memory. A downscaled image is RGB. EXIF orientation is NOT
    applied (boxes of grounding datasets refer to the stored pixel grid). Raises OSError for
    undecodable data.
    """
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
