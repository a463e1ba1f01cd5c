"""Image encoding for transport: decoded, resized and encoded once per run (cached by content hash)."""

from __future__ import annotations

import base64
import io
from collections import OrderedDict
from pathlib import Path

from PIL import Image, ImageOps

from lensbench.core.errors import DataError

__all__ = ["ImageEncoder"]


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
