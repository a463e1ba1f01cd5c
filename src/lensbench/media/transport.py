"""Images for transport: prepared once per image, off the event loop, ahead of need, as JSON fragments.

docs/protocol.md, general rules: an image is sent as the released file's own bytes (the model sees exactly the
published image) unless a size limit is asked (``--image-max-side``) or its format is one servers
do not take (anything but JPEG, PNG, WebP, GIF) or another format is forced (``--image-format
jpeg|png``); only then is it decoded and re-encoded. Which happened is recorded
(:attr:`MediaPrep.reencoded`).

Each prepared image is kept as the bytes of its whole OpenAI ``image_url`` content part
(``{"type":"image_url","image_url":{"url":"data:<mime>;base64,..."}}``), so a request body is
joined from cached fragments without re-escaping base64 (``json.dumps`` of a body that embeds
megabytes of base64 scans every byte of it, per request). Preparation runs in a thread pool:
the engine asks for the images of the requests about to be sent (:meth:`MediaPrep.prefetch`),
so they are ready when a worker builds the body. The cache is an LRU bounded in bytes.
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PIL import Image, ImageOps

from lensbench.core.errors import DataError

__all__ = ["PASS_THROUGH", "MediaPrep", "sniff_format"]

#: formats sent as the file's own bytes (PIL format name -> MIME type)
PASS_THROUGH = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
_MAGIC = ((b"\xff\xd8\xff", "JPEG"), (b"\x89PNG\r\n\x1a\n", "PNG"), (b"GIF87a", "GIF"), (b"GIF89a", "GIF"))


def sniff_format(head: bytes) -> str | None:
    """PIL format name of an image from its first bytes (JPEG, PNG, GIF, WEBP), or None."""
    for magic, fmt in _MAGIC:
        if head.startswith(magic):
            return fmt
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


class MediaPrep:
    """Prepares image content parts for OpenAI-compatible bodies.

    Args:
        fmt: ``"auto"`` (pass-through where possible, else JPEG), ``"jpeg"`` or ``"png"`` (always
            re-encode to that format).
        max_side: longest side in px after downscaling (aspect kept, never upscaled; re-encodes);
            None keeps the original size.
        quality: JPEG quality of re-encoded images (1-100).
        workers: threads preparing images; cache_bytes: LRU bound of prepared fragments.
    Raises ValueError for another ``fmt`` or ``max_side`` < 16.
    """

    def __init__(self, fmt: str = "auto", max_side: int | None = None, quality: int = 90, workers: int | None = None,
                 cache_bytes: int = 512 << 20):
        if fmt not in ("auto", "jpeg", "png"):
            raise ValueError(f"image format must be auto, jpeg or png, got {fmt!r}")
        if max_side is not None and max_side < 16:
            raise ValueError(f"image max side must be >= 16 px, got {max_side}")
        self.fmt, self.max_side, self.quality = fmt, max_side, quality
        self._pool = ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1),
                                        thread_name_prefix="lensbench-media")
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cache_bytes, self._size = cache_bytes, 0
        self._pending: dict[str, Future] = {}
        #: sha256 -> {"path", "why"} of re-encoded images ("max side 1024", "format TIFF", "forced jpeg")
        self.reencoded: dict[str, dict[str, str]] = {}
        self.passed: set[str] = set()

    @property
    def fingerprint(self) -> str:
        """What changes the bytes a model is sent: part of the model fingerprint (request key)."""
        if self.fmt == "auto" and self.max_side is None:
            return "passthrough"
        q = f":{self.quality}" if self.fmt in ("auto", "jpeg") else ""
        return f"{self.fmt}:{self.max_side or 'orig'}{q}"

    # ------------------------------------------------------------------ preparation (worker threads)
    def encode(self, path: str | Path) -> tuple[bytes, str, str | None]:
        """``(bytes, mime, why re-encoded or None)`` for an image file, as it will be sent.

        Raises DataError naming the file when it is missing or cannot be decoded.
        """
        p = Path(path)
        try:
            with p.open("rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            raise DataError(p, "image file not found") from None
        kind = sniff_format(raw[:16])
        if self.fmt == "auto" and self.max_side is None and kind in PASS_THROUGH:
            return raw, PASS_THROUGH[kind], None
        why = (f"max side {self.max_side}" if self.max_side else
               f"format {kind or 'unknown'}" if self.fmt == "auto" else f"forced {self.fmt}")
        try:
            with Image.open(io.BytesIO(raw)) as im:
                if self.max_side and max(im.size) > self.max_side and im.format == "JPEG":
                    im.draft("RGB", (self.max_side, self.max_side))
                im.load()  # draft scale fixed here (thumbnail() must not pick another)
                ImageOps.exif_transpose(im, in_place=True)  # in place: no full-size copy per image
                if self.max_side and max(im.size) > self.max_side:
                    im.thumbnail((self.max_side, self.max_side), Image.Resampling.BICUBIC)
                buf = io.BytesIO()
                if self.fmt == "png":
                    im.save(buf, "PNG")
                    mime = "image/png"
                else:
                    im.convert("RGB").save(buf, "JPEG", quality=self.quality)
                    mime = "image/jpeg"
        except (OSError, SyntaxError, ValueError) as exc:
            raise DataError(p, f"cannot decode image: {exc}") from None
        return buf.getvalue(), mime, why

    def _prepare(self, path: str, sha: str) -> bytes:
        data, mime, why = self.encode(path)
        frag = (b'{"type":"image_url","image_url":{"url":"data:' + mime.encode("ascii") + b";base64,"
                + base64.b64encode(data) + b'"}}')
        with self._lock:
            if why is None:
                self.passed.add(sha)
            else:
                self.reencoded[sha] = {"path": str(path), "why": why}
            self._cache[sha] = frag
            self._size += len(frag)
            while self._size > self._cache_bytes and len(self._cache) > 1:
                _k, old = self._cache.popitem(last=False)
                self._size -= len(old)
            self._pending.pop(sha, None)
        return frag

    # ------------------------------------------------------------------ API (event loop)
    def _future(self, path: str, sha: str) -> Future | bytes:
        with self._lock:
            hit = self._cache.get(sha)
            if hit is not None:
                self._cache.move_to_end(sha)
                return hit
            fut = self._pending.get(sha)
            if fut is None:
                fut = self._pool.submit(self._prepare, path, sha)
                self._pending[sha] = fut
            return fut

    def prefetch(self, path: str, sha: str) -> None:
        """Start preparing an image in the pool (no-op when cached or under way)."""
        self._future(path, sha or str(path))

    async def fragment(self, path: str, sha: str) -> bytes:
        """The image's JSON content-part bytes, prepared once (awaits the pool when not cached yet)."""
        got = self._future(path, sha or str(path))
        if isinstance(got, bytes):
            return got
        return await asyncio.wrap_future(got)

    def fragment_sync(self, path: str, sha: str) -> bytes:
        """:meth:`fragment` for synchronous callers."""
        got = self._future(path, sha or str(path))
        return got if isinstance(got, bytes) else got.result()

    def summary(self) -> dict:
        """``{"passed_through": n, "reencoded": {sha256: {"path", "why"}}}`` for the run manifest."""
        with self._lock:
            return {"passed_through": len(self.passed), "reencoded": dict(self.reencoded)}

    def close(self) -> None:
        """Stop the worker threads (pending preparations finish first)."""
        self._pool.shutdown(wait=True)
