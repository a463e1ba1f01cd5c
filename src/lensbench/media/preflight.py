"""Pre-flight: every image a run will send is checked before the first request goes out.

A truncated file or a decompression bomb found after hundreds of paid requests wastes them; so
before sending, each distinct image (by content hash) is read once in a thread pool, its header
parsed and its dimensions checked, and its integrity verified without decoding where the format
allows it (issue 11: the check must not double the decoding that :mod:`lensbench.media.transport`
does while requests are in flight): a JPEG must end with its EOI marker after a header that
parses up to the scan, a PNG must have every chunk's CRC-32 right through IEND. A JPEG that does
not end with EOI (trailing bytes after it, or truncated) and every other format are decoded (JPEGs
in draft mode at 1/8 scale, which still reads the whole entropy-coded stream, so truncation
shows). Decoded video frames (written by lensbench) are skipped.
"""

from __future__ import annotations

import asyncio
import io
import struct
import warnings
import zlib
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image

from lensbench.core.errors import DataError
from lensbench.core.types import ImagePart, Request

__all__ = ["MAX_PIXELS", "check_image", "preflight_images", "preflight_media"]

#: largest image accepted, in pixels (30000 x 30000 = 900 Mpx is refused; the largest released
#: benchmark image, 7680 x 4320, is 33 Mpx).
MAX_PIXELS = 200_000_000

_CHECKED: set[str] = set()  # content hashes (or paths) checked in this process


def _png_intact(raw: bytes) -> bool:
    """Every chunk of a PNG present with a matching CRC-32, through IEND."""
    pos, n = 8, len(raw)
    while pos + 12 <= n:
        length, = struct.unpack_from(">I", raw, pos)
        end = pos + 8 + length
        if end + 4 > n:
            return False
        if zlib.crc32(raw[pos + 4:end]) != struct.unpack_from(">I", raw, end)[0]:
            return False
        if raw[pos + 4:pos + 8] == b"IEND":
            return True
        pos = end + 4
    return False


def check_image(path: str | Path, max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """``(width, height)`` of a decodable image file.

    Raises:
        DataError: naming the file, when it is missing, not an image, truncated or damaged, has
            a zero side, or has more than ``max_pixels`` pixels (a decompression bomb).
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise DataError(p, "image file not found") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw)) as im:
                w, h = im.size
                if w < 1 or h < 1:
                    raise DataError(p, f"image has a zero side ({w}x{h})")
                if w * h > max_pixels:
                    raise DataError(p, f"image is {w}x{h} = {w * h / 1e6:.0f} Mpx, over the {max_pixels / 1e6:.0f} Mpx "
                                       "limit (a decompression bomb?)")
                if im.format == "JPEG" and raw.endswith(b"\xff\xd9"):
                    return w, h  # header parsed through the scan header; the stream ends with EOI
                if im.format == "PNG":
                    if not _png_intact(raw):
                        raise DataError(p, "cannot decode image: truncated or damaged PNG (a chunk is cut or its "
                                           "CRC does not match)")
                    return w, h
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
                if isinstance(p, ImagePart) and p.video is None and p.sha256 not in _CHECKED and p.path not in _CHECKED:
                    todo.setdefault(p.sha256 or p.path, p.path)
    return await _check_all(todo, workers)


async def preflight_images(paths: Iterable[str | Path], workers: int = 4) -> int:
    """:func:`preflight_media` for image files given by path (a benchmark that streams its requests
    checks its images before the first batch). Returns how many were checked; raises DataError."""
    todo = {str(p): str(p) for p in paths if str(p) not in _CHECKED}
    return await _check_all(todo, workers)


async def _check_all(todo: dict[str, str], workers: int) -> int:
    if not todo:
        return 0
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futs = [loop.run_in_executor(pool, check_image, path) for path in todo.values()]
        await asyncio.gather(*futs)
    _CHECKED.update(todo)
    return len(todo)
