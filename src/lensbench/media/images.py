"""Image sizes under a pixel budget: the target size (:func:`fit_budget`) and a decode that reaches it cheaply
(:func:`downscale_image_bytes`, JPEG draft mode). Encoding for transport is :mod:`lensbench.media.transport`."""

from __future__ import annotations

import io
import math

from PIL import Image

__all__ = ["fit_budget", "downscale_image_bytes"]


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
