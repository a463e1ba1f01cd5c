"""Pre-flight: every image a run will send is checked before the first request goes out.

A truncated file or a decompression bomb found after hundreds of paid requests wastes them; so
before sending, each distinct image (by content hash) is opened and decoded (JPEGs in draft mode
at 1/8 scale, which still reads the whole entropy-coded stream, so truncation shows) in a thread
pool, and its dimensions are checked. Decoded video frames (written by lensbench) are skipped.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image

from lensbench.core.errors import DataError
from lensbench.core.types import ImagePart, Request

__all__ = ["MAX_PIXELS", "check_image", "preflight_media"]

#: largest image accepted, in pixels (30000 x 30000 = 900 Mpx is refused; the largest released
#: benchmark image, 7680 x 4320, is 33 Mpx).
MAX_PIXELS = 200_000_000

_CHECKED: set[str] = set()


def check_image(path: str | Path, max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """``(width, height)`` of a decodable image file.

    Raises:
        DataError: naming the file, when it is missing, not an image, truncated or damaged, has
            a zero side, or has more than ``max_pixels`` pixels (a decompression bomb).
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(p, "image file not found")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(p) as im:
                w, h = im.size
                if w < 1 or h < 1:
                    raise DataError(p, f"image has a zero side ({w}x{h})")
                if w * h > max_pixels:
                    raise DataError(p, f"image is {w}x{h} = {w * h / 1e6:.0f} Mpx, over the {max_pixels / 1e6:.0f} Mpx "
                                       "limit (a decompression bomb?)")
                if im.format == "JPEG":
                    im.draft("RGB", (max(1, w // 8), max(1, h // 8)))
                im.load()
    except DataError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise DataError(p, f"image refused as a decompression bomb: {exc}") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise DataError(p, f"cannot decode image: {exc}") from None
    return w, h


async def preflight_media(requests: Sequence[Request], workers: int = 4) -> int:
    """Check every distinct image of ``requests`` (not yet checked in this process); returns how many were checked.

    Raises the first :class:`DataError` found (before anything is sent).
    """
    todo: dict[str, str] = {}
    for r in requests:
        for m in r.messages:
            for p in m.parts:
                if isinstance(p, ImagePart) and p.video is None and p.sha256 not in _CHECKED:
                    todo.setdefault(p.sha256 or p.path, p.path)
    if not todo:
        return 0
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futs = [loop.run_in_executor(pool, check_image, path) for path in todo.values()]
        await asyncio.gather(*futs)
    _CHECKED.update(todo)
    return len(todo)
