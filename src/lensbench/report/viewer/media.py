"""Images for the viewer: thumbnails as data URLs, full-image references, video frames by hash.

Thumbnails are JPEGs of at most :data:`THUMB_SIDE` px (Pillow, draft mode for big JPEGs), made
once per content hash. IV-Bench logs a video's frames as sha256 + timestamps; the JPEGs live in
the run folder's ``media/`` (the frame cache), so :func:`frame_index` hashes the files there to
resolve them.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

__all__ = ["THUMB_SIDE", "thumbnail_data_url", "image_size", "frame_index", "ImageRegistry"]

THUMB_SIDE = 160


def thumbnail_data_url(path: str | Path, side: int = THUMB_SIDE, quality: int = 70) -> tuple[str | None, int, int]:
    """``(data URL of a JPEG thumbnail, original width, original height)``; ``(None, 0, 0)`` when unreadable."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            w, h = im.size
            im.draft("RGB", (side, side))  # JPEG: decode at 1/2..1/8 scale
            im.thumbnail((side, side))
            im = im.convert("RGB")
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=quality)
    except (OSError, ValueError):
        return None, 0, 0
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii"), w, h


def image_size(path: str | Path) -> tuple[int, int]:
    """(width, height) read from the header; (0, 0) when unreadable."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            return im.size
    except (OSError, ValueError):
        return 0, 0


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
        self.paths[sha] = p
        if not self.embed:
            w, h = image_size(p)
            self.items[sha] = {"t": f"/thumb/{sha}", "u": f"/media/{sha}", "w": w, "h": h}
        elif len(self.paths) <= self.max_thumbs:
            self.items[sha] = {"t": None, "u": p.resolve().as_uri(), "w": 0, "h": 0}
            self._pending.append(sha)
        else:
            w, h = image_size(p)
            self.items[sha] = {"t": p.resolve().as_uri(), "u": p.resolve().as_uri(), "w": w, "h": h}
        return sha

    def finish(self, workers: int | None = None) -> None:
        """Make the pending thumbnails, in parallel threads (Pillow decodes without the GIL)."""
        import os
        from concurrent.futures import ThreadPoolExecutor

        todo, self._pending = self._pending, []
        if not todo:
            return
        with ThreadPoolExecutor(max_workers=workers or min(16, os.cpu_count() or 2)) as pool:
            for sha, (t, w, h) in zip(todo, pool.map(lambda x: thumbnail_data_url(self.paths[x]), todo)):
                self.items[sha].update(t=t, w=w, h=h)
