"""On-disk cache of sampled video frames: one decode per video for every frame spec of a run.

Frames are sampled by :mod:`lensbench.media.video` (index rules, seek-based decoding, short-side
resize), encoded as JPEG and cached per ``(video, rule, N, resolution)``; several specs of one
video (a sweep) share one decode of the union of their indices.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from lensbench.media.video import VideoError, frame_indices, probe, read_frames, resize_short_side

__all__ = ["JPEG_QUALITY", "FrameSpec", "FrameSet", "FrameCache"]

#: JPEG quality of cached frames (the transport re-encodes; keep generation loss small).
JPEG_QUALITY = 95


@dataclass(frozen=True)
class FrameSpec:
    """What to sample: ``rule`` (see :func:`lensbench.media.video.parse_rule`), ``num`` frames, ``resolution`` = target
    short side in px (``None`` = native)."""

    rule: str = "centers"
    num: int = 32
    resolution: int | None = None

    @property
    def key(self) -> str:
        """Folder name of this spec in the cache, e.g. ``centers_n32_r360``."""
        return f"{self.rule.replace(':', '')}_n{self.num}_r{self.resolution or 'native'}"


@dataclass
class FrameSet:
    """Sampled frames of one video under one spec: JPEG ``paths`` in time order, their
    ``indices``, and the video's ``duration`` (s), ``n_frames``, ``fps``, native ``size``
    (w, h) and the frames' ``frame_size`` (w, h). :attr:`timestamps` gives each frame's time."""

    paths: list[Path]
    indices: list[int]
    duration: float
    n_frames: int
    fps: float
    size: tuple[int, int]
    frame_size: tuple[int, int]
    cached: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def timestamps(self) -> list[float]:
        """Time of each frame in seconds from the stream start, ``index / fps`` (6 decimals).

        The same constant-frame-rate mapping :func:`lensbench.media.video.read_frames` uses to
        turn presentation timestamps into indices; one value per path, in time order.
        """
        return [round(i / self.fps, 6) for i in self.indices]


class FrameCache:
    """On-disk cache of sampled frames: ``root/<video stem>-<id hash>/<spec key>/frame_NNN.jpg``.

    The id hash covers the video's absolute path, size and modification time, so a replaced
    file is decoded again. ``meta.json`` beside the frames holds indices and video facts; a
    folder counts as cached only when ``meta.json`` and every frame exist. Thread-safe per
    video (one lock per video file).
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.decodes = 0  # number of videos actually decoded (for tests / reports)

    def video_dir(self, video: str | Path) -> Path:
        """The cache folder of one video file. Raises VideoError when it is missing."""
        p = Path(video)
        try:
            st = p.stat()
        except FileNotFoundError:
            raise VideoError(p, "video file not found") from None
        h = hashlib.sha256(f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:12]
        return self.root / f"{p.stem}-{h}"

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    @staticmethod
    def _load(d: Path) -> FrameSet | None:
        meta = d / "meta.json"
        if not meta.is_file():
            return None
        try:
            m = json.loads(meta.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            return None
        paths = [d / n for n in m["files"]]
        if not all(p.is_file() for p in paths):
            return None
        return FrameSet(paths=paths, indices=m["indices"], duration=m["duration"], n_frames=m["n_frames"], fps=m["fps"],
                        size=tuple(m["size"]), frame_size=tuple(m["frame_size"]), cached=True, notes=m.get("notes", []))

    def get(self, video: str | Path, spec: FrameSpec) -> FrameSet:
        """Frames of ``video`` under ``spec`` (decoded and written on a miss). Raises VideoError."""
        return self.get_many(video, [spec])[spec]

    def get_many(self, video: str | Path, specs: Sequence[FrameSpec]) -> dict[FrameSpec, FrameSet]:
        """Frames of ``video`` for several specs, decoding the union of their missing indices once.

        Returns ``{spec: FrameSet}``. Raises :class:`VideoError` (missing, corrupt, truncated).
        """
        vdir = self.video_dir(video)
        with self._lock(str(vdir)):
            result: dict[FrameSpec, FrameSet] = {}
            missing: list[FrameSpec] = []
            for s in dict.fromkeys(specs):
                got = self._load(vdir / s.key)
                if got is None:
                    missing.append(s)
                else:
                    result[s] = got
            if not missing:
                return result
            info = probe(video)
            if info.duration <= 0 or info.n_frames <= 0:
                raise VideoError(video, "video has no frames")
            wanted = {s: frame_indices(s.rule, info, s.num) for s in missing}
            union = sorted({i for idx in wanted.values() for i in idx})
            frames = read_frames(video, union, info=info)
            self.decodes += 1
            images: dict[int, Image.Image] = {}
            for s in missing:
                d = vdir / s.key
                vdir.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=vdir))
                files = []
                fsize = (info.width, info.height)
                resized: dict[int, Image.Image] = {}
                for j, i in enumerate(wanted[s]):
                    if i not in resized:
                        if i not in images:
                            images[i] = Image.fromarray(frames[i])
                        resized[i] = resize_short_side(images[i], s.resolution)
                    im = resized[i]
                    fsize = im.size
                    name = f"frame_{j:03d}.jpg"
                    im.save(tmp / name, "JPEG", quality=JPEG_QUALITY)
                    files.append(name)
                meta = {"video": str(video), "spec": {"rule": s.rule, "num": s.num, "resolution": s.resolution},
                        "indices": wanted[s], "files": files, "duration": info.duration, "n_frames": info.n_frames,
                        "fps": info.fps, "size": [info.width, info.height], "frame_size": list(fsize)}
                (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
                if d.exists():
                    shutil.rmtree(d)
                os.replace(tmp, d)
                result[s] = FrameSet(paths=[d / n for n in files], indices=wanted[s], duration=info.duration,
                                     n_frames=info.n_frames, fps=info.fps, size=(info.width, info.height),
                                     frame_size=tuple(fsize), cached=False)
            return result
