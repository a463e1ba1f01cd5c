"""Images for the viewer: thumbnails as data URLs, full-image references, video frames by hash.

Thumbnails are JPEGs of at most :data:`THUMB_SIDE` px (Pillow, draft mode for big JPEGs), made
once per content hash. An image over Pillow's decompression-bomb limit is never decoded: the
page shows a placeholder saying why (``"why"`` in its registry entry). IV-Bench logs a video's frames as sha256 + timestamps; the JPEGs live in
the run folder's ``media/`` (the frame cache), so :func:`frame_index` hashes the files there to
resolve them.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import IO, Any

__all__ = ["THUMB_SIDE", "thumbnail", "thumbnail_data_url", "probe_image", "image_size", "frame_index",
           "ImageRegistry"]

THUMB_SIDE = 160


def _bomb_limit() -> int:
    """Pillow's decompression-bomb limit in pixels (``Image.MAX_IMAGE_PIXELS``; its default when unset)."""
    from PIL import Image

    return Image.MAX_IMAGE_PIXELS or 89_478_485


def _too_big(w: int, h: int) -> str | None:
    limit = _bomb_limit()
    if w * h > limit:
        return (f"{w} x {h} px = {w * h / 1e6:.0f} Mpx, over the {limit / 1e6:.0f} Mpx decompression-bomb limit: "
                "not decoded")
    return None


def _bomb_message(exc: Exception) -> str:
    return f"a decompression bomb ({str(exc).split(', could')[0].rstrip('.')}): not decoded"


def thumbnail(src: str | Path | IO[bytes], side: int = THUMB_SIDE, quality: int = 70) -> tuple[str | None, int, int, str | None]:
    """``(data URL of a JPEG thumbnail, width, height, why not)`` of an image file or binary file object.

    The URL is None when the image cannot be shown; ``why`` then says why for a decompression
    bomb (more pixels than Pillow's ``MAX_IMAGE_PIXELS``: the header is read, nothing is decoded,
    so the page shows a placeholder) and is None for an unreadable file.
    """
    from PIL import Image

    try:
        with Image.open(src) as im:
            w, h = im.size
            why = _too_big(w, h)
            if why:
                return None, w, h, why
            im.draft("RGB", (side, side))  # JPEG: decode at 1/2..1/8 scale
            im.thumbnail((side, side))
            im = im.convert("RGB")
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=quality)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return None, 0, 0, _bomb_message(exc)
    except (OSError, ValueError):
        return None, 0, 0, None
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii"), w, h, None


def thumbnail_data_url(src: str | Path | IO[bytes], side: int = THUMB_SIDE,
                       quality: int = 70) -> tuple[str | None, int, int]:
    """``(data URL of a JPEG thumbnail, original width, original height)``; ``(None, w, h)`` when
    it cannot be shown (unreadable, or a decompression bomb: see :func:`thumbnail`)."""
    return thumbnail(src, side, quality)[:3]


def probe_image(path: str | Path) -> tuple[int, int, str | None]:
    """``(width, height, why not shown)`` from the header only; ``(0, 0, None)`` when unreadable,
    ``why`` set for a decompression bomb (see :func:`thumbnail`)."""
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():  # main thread only (the registry's add)
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                w, h = im.size
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return 0, 0, _bomb_message(exc)
    except (OSError, ValueError):
        return 0, 0, None
    return w, h, _too_big(w, h)


def image_size(path: str | Path) -> tuple[int, int]:
    """(width, height) read from the header; (0, 0) when unreadable (a decompression bomb's size is
    returned, nothing is decoded)."""
    return probe_image(path)[:2]


def frame_index(run_dir: Path, wanted: set[str]) -> dict[str, Path]:
    """``{sha256: path}`` of the cached frame JPEGs under ``run_dir/media`` whose hash is in ``wanted``."""
    import hashlib

    out: dict[str, Path] = {}
    root = run_dir / "media"
    if not wanted or not root.is_dir():
        return out
    for p in sorted(root.rglob("*.jp*g")):
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest in wanted:
            out[digest] = p
            if len(out) == len(wanted):
                break
    return out


class ImageRegistry:
    """Every image the viewer shows, once per sha256: ``{sha: {"t": thumb URL, "u": full URL, "w", "h"}}``.

    ``embed``: thumbnails as data URLs for the first ``max_thumbs`` images (later ones show the
    full image, lazily); otherwise (``--serve``) thumbnails and images are server URLs
    ``/thumb/<sha>`` and ``/media/<sha>``. ``paths`` maps sha -> file for the server.
    """

    def __init__(self, embed: bool = True, max_thumbs: int = 3000):
        self.embed = embed
        self.max_thumbs = max_thumbs
        self.items: dict[str, dict[str, Any]] = {}
        self.paths: dict[str, Path] = {}
        self._pending: list[str] = []

    def add(self, sha: str, path: str | Path | None) -> str:
        """Register an image (``path`` None or missing = unresolvable); returns ``sha``."""
        if sha in self.items:
            return sha
        p = Path(path) if path else None
        if p is None or not p.is_file():
            self.items[sha] = {"t": None, "u": None, "w": 0, "h": 0, "missing": str(path) if path else None}
            return sha
        if not self.embed or len(self.paths) >= self.max_thumbs:
            w, h, why = probe_image(p)
            if why:  # a decompression bomb: a placeholder, never decoded nor served
                self.items[sha] = {"t": None, "u": None, "w": w, "h": h, "why": why}
                return sha
        self.paths[sha] = p
        if not self.embed:
            self.items[sha] = {"t": f"/thumb/{sha}", "u": f"/media/{sha}", "w": w, "h": h}
        elif len(self.paths) <= self.max_thumbs:
            self.items[sha] = {"t": None, "u": p.resolve().as_uri(), "w": 0, "h": 0}
            self._pending.append(sha)
        else:
            self.items[sha] = {"t": p.resolve().as_uri(), "u": p.resolve().as_uri(), "w": w, "h": h}
        return sha

    def finish(self, workers: int | None = None) -> None:
        """Make the pending thumbnails, in parallel threads (Pillow decodes without the GIL); a
        decompression bomb becomes a placeholder (no thumbnail, no link to the file)."""
        import os
        import warnings
        from concurrent.futures import ThreadPoolExecutor

        from PIL import Image

        todo, self._pending = self._pending, []
        if not todo:
            return
        with warnings.catch_warnings(), ThreadPoolExecutor(max_workers=workers or min(16, os.cpu_count() or 2)) as pool:
            warnings.simplefilter("error", Image.DecompressionBombWarning)  # caught in thumbnail(), never printed
            for sha, (t, w, h, why) in zip(todo, pool.map(lambda x: thumbnail(self.paths[x]), todo)):
                self.items[sha].update(t=t, w=w, h=h)
                if why:
                    self.items[sha].update(u=None, why=why)
                    del self.paths[sha]
