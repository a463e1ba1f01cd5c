"""Video frame sampling with PyAV: indices by rule, seek-based decoding, short-side resize, disk cache.

IV-Bench (IV-Bench README, Protocol; paper Sec. 4.1) feeds each model N uniformly sampled frames (default 32).
The official loader (``video_bench/models/*.py`` of multimodal-art-projection/IV-Bench,
``get_index``) takes the centre of each of N equal segments over the frame indices
``[0, n_frames - 1]``; that is rule ``centers`` here. ``linspace`` (N evenly spaced indices
including both ends) and ``fps:F`` (one frame every 1/F seconds) are alternatives.

Decoding never runs through the whole file: for each target index (ascending) the reader seeks
to the nearest keyframe at or before the target's timestamp and decodes forward only until the
target; when the next target lies within one (observed) GOP of the current position it keeps
decoding forward instead of seeking again. Frame indices are derived from presentation
timestamps assuming a constant frame rate (``index = round((pts - start) * time_base * fps)``),
which is also how decord (the official loader's reader) maps indices on CFR files.

Frames are resized so that the short side equals the target (aspect kept, never upscaled) by
:func:`resize_short_side`; the on-disk cache of sampled frames (several specs of one video
sharing one decode) is :mod:`lensbench.media.frame_cache`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import Image

from lensbench.core.extras import require

__all__ = [
    "VideoError",
    "VideoInfo",
    "probe",
    "parse_rule",
    "centers_indices",
    "linspace_indices",
    "fps_indices",
    "frame_indices",
    "read_frames",
    "decode_all",
    "resize_short_side",
]


class VideoError(Exception):
    """A video that cannot be opened or decoded (missing, corrupt, truncated). Names the file."""

    def __init__(self, path: str | Path, message: str):
        self.path = str(path)
        super().__init__(f"{path}: {message}")


@dataclass(frozen=True)
class VideoInfo:
    """Container facts of a video file.

    Attributes:
        n_frames: frames in the video stream (container header; estimated as
            ``round(duration * fps)`` when the header has none).
        fps: average frame rate (frames/s, > 0).
        duration: seconds, the container (format) duration, as ``ffprobe -show_entries
            format=duration`` reports it (what the official code puts into the prompt).
        width, height: coded frame size in pixels.
    """

    path: str
    n_frames: int
    fps: float
    duration: float
    width: int
    height: int


def _open(path: str | Path):
    av = require("av", "video", "video decoding")

    p = Path(path)
    if not p.is_file():
        raise VideoError(p, "video file not found")
    try:
        container = av.open(str(p))
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise VideoError(p, f"cannot open video ({exc})") from None
    if not container.streams.video:
        container.close()
        raise VideoError(p, "no video stream")
    return container


def _rate(stream) -> Fraction | None:
    for r in (stream.average_rate, stream.guessed_rate, stream.base_rate):
        if r:
            return Fraction(r)
    return None


def _info_from(container, path: str | Path) -> VideoInfo:
    stream = container.streams.video[0]
    rate = _rate(stream)
    if rate is None or rate <= 0:
        raise VideoError(path, "video stream has no frame rate")
    duration = None
    if container.duration:
        duration = container.duration / 1_000_000
    elif stream.duration and stream.time_base:
        duration = float(stream.duration * stream.time_base)
    n = int(stream.frames or 0)
    if n <= 0:
        if not duration:
            raise VideoError(path, "container gives neither a frame count nor a duration")
        n = max(1, round(duration * float(rate)))
    if not duration:
        duration = n / float(rate)
    cc = stream.codec_context
    return VideoInfo(path=str(path), n_frames=n, fps=float(rate), duration=float(duration),
                     width=int(cc.width or 0), height=int(cc.height or 0))


def probe(path: str | Path) -> VideoInfo:
    """Container facts of ``path`` without decoding. Raises :class:`VideoError`."""
    container = _open(path)
    try:
        return _info_from(container, path)
    finally:
        container.close()


# --------------------------------------------------------------------------- index rules
_RULE_RE = re.compile(r"^(centers|linspace|fps:(\d+(?:\.\d+)?))$")


def parse_rule(rule: str) -> tuple[str, float | None]:
    """``("centers"|"linspace", None)`` or ``("fps", F)`` from a rule string.

    Raises ValueError for anything else (message lists the accepted forms).
    """
    m = _RULE_RE.match(rule.strip())
    if not m:
        raise ValueError(f"unknown frame rule {rule!r}: use centers, linspace or fps:F (e.g. fps:1)")
    if m.group(2):
        f = float(m.group(2))
        if f <= 0:
            raise ValueError(f"frame rule {rule!r}: F must be > 0")
        return "fps", f
    return m.group(1), None


def centers_indices(n_frames: int, num: int) -> list[int]:
    """The official IV-Bench rule (``get_index`` of the official model wrappers, no bound).

    ``max_frame = n_frames - 1``; ``seg = max_frame / num``; frame ``i`` (0-based, ``i < num``)
    is ``int(seg / 2 + round_half_even(seg * i))``. Returns ``num`` indices in ``[0, n_frames-1]``
    (repeats possible when ``num > n_frames``). Raises ValueError for ``num < 1`` or
    ``n_frames < 1``.
    """
    if num < 1 or n_frames < 1:
        raise ValueError(f"need num >= 1 and n_frames >= 1, got num={num}, n_frames={n_frames}")
    seg = float(n_frames - 1) / num
    return [int(seg / 2 + float(np.round(seg * i))) for i in range(num)]


def linspace_indices(n_frames: int, num: int) -> list[int]:
    """``num`` evenly spaced indices from 0 to ``n_frames - 1`` inclusive (round half to even)."""
    if num < 1 or n_frames < 1:
        raise ValueError(f"need num >= 1 and n_frames >= 1, got num={num}, n_frames={n_frames}")
    return [int(v) for v in np.round(np.linspace(0, n_frames - 1, num))]


def fps_indices(n_frames: int, video_fps: float, duration: float, sample_fps: float, cap: int | None = None) -> list[int]:
    """One frame every ``1 / sample_fps`` seconds from t = 0: ``index_k = floor(k / sample_fps * video_fps)``.

    ``k = 0 .. max(1, floor(duration * sample_fps)) - 1``, indices clipped to ``n_frames - 1``.
    When ``cap`` is given and more frames result, ``cap`` of them are kept by
    :func:`linspace_indices` over the list (so ``--frames`` bounds the count).
    """
    count = max(1, math.floor(duration * sample_fps + 1e-9))
    idx = [min(n_frames - 1, int(math.floor(k / sample_fps * video_fps + 1e-9))) for k in range(count)]
    if cap is not None and len(idx) > cap:
        idx = [idx[j] for j in linspace_indices(len(idx), cap)]
    return idx


def frame_indices(rule: str, info: VideoInfo, num: int) -> list[int]:
    """Indices of the frames to sample from a video described by ``info`` under ``rule``."""
    kind, f = parse_rule(rule)
    if kind == "centers":
        return centers_indices(info.n_frames, num)
    if kind == "linspace":
        return linspace_indices(info.n_frames, num)
    return fps_indices(info.n_frames, info.fps, info.duration, f, cap=num)


# --------------------------------------------------------------------------- decoding
def read_frames(path: str | Path, indices: Iterable[int], *, info: VideoInfo | None = None,
                eof_tolerance_s: float = 1.0) -> dict[int, np.ndarray]:
    """Decode the frames at ``indices`` by seeking: ``{index: HxWx3 uint8 RGB array}``.

    For each target (ascending, de-duplicated) the reader seeks to the keyframe at or before the
    target's timestamp and decodes forward to it, or keeps decoding forward when the target is
    within one GOP of the current position (GOP length learnt while decoding: the largest
    distance between keyframes seen, at least the frames decoded since the last keyframe), so a
    file with sparse keyframes is not re-decoded from the same keyframe for every target. A target past the last decodable frame
    by at most ``eof_tolerance_s`` seconds gets the last frame (container frame counts are
    sometimes off by a frame or two); further is a truncated file.

    Raises:
        VideoError: the file is missing, cannot be opened, fails to decode, or ends before a
            target (truncated); the message names the file.
    """
    av = require("av", "video", "video decoding")

    targets = sorted(set(int(i) for i in indices))
    if not targets:
        return {}
    if targets[0] < 0:
        raise ValueError(f"negative frame index {targets[0]}")
    container = _open(path)
    try:
        seeker = _Seeker(av, container, path, info or _info_from(container, path), eof_tolerance_s)
        return {idx: seeker.frame(idx) for idx in targets}
    except av.FFmpegError as exc:
        raise VideoError(path, f"decode failed ({exc})") from None
    finally:
        container.close()


class _Seeker:
    """The frames of one open video by index, asked in ascending order (see :func:`read_frames`): decoded
    forward within one GOP of the last frame, reached by a seek to the keyframe before them otherwise."""

    def __init__(self, av, container, path: str | Path, info: VideoInfo, eof_tolerance_s: float):
        self.av, self.container, self.path, self.info = av, container, path, info
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        self.stream, self.tb, self.rate = stream, stream.time_base, _rate(stream)
        self.start = stream.start_time or 0
        self.eof_frames = max(1, eof_tolerance_s * float(self.rate))  # past the last frame, still "the last"
        self.gen = None  # the decoder since the last seek
        self.cur = -1  # index of the last decoded frame (-1: none / after a seek)
        self.gop = 0  # largest keyframe distance seen while decoding forward
        self.last_key: int | None = None
        self.last_frame, self.last_idx = None, -1

    def frame(self, idx: int) -> np.ndarray:
        """The ``HxWx3`` RGB frame at ``idx``. Raises VideoError when decoding fails or the video ends
        (beyond the EOF tolerance) before it."""
        # decode forward instead of seeking when the target is within one GOP: the largest keyframe
        # distance seen, or (lower bound) the frames decoded since the last keyframe
        span = max(self.gop, self.cur - self.last_key if (self.last_key is not None and self.cur >= 0) else 0)
        if self.gen is None or idx <= self.cur or (idx - self.cur) > span:
            got = self._land(idx)
            if got is not None:
                return got
        got = self._forward(idx)
        if got is not None:
            return got
        if self.last_frame is not None and (idx - self.last_idx) <= self.eof_frames:
            self.gen = None
            return self.last_frame.to_ndarray(format="rgb24")
        raise VideoError(self.path, f"video ends before frame {idx} (last decodable frame "
                                    f"{self.last_idx if self.last_idx >= 0 else 'none'}; container says "
                                    f"{self.info.n_frames} frames): truncated or corrupt")

    def _index_of(self, frame, prev: int) -> int:
        if frame.pts is None:
            return prev + 1
        return int(round(float((frame.pts - self.start) * self.tb * self.rate)))

    def _land(self, idx: int) -> np.ndarray | None:
        """Seek to the keyframe at or before ``idx`` (further back while the demuxer lands after it) and
        decode its first frame: that frame when it is ``idx``'s, else None (decode forward from there)."""
        back = 0
        while True:
            t = max(0, idx - back)
            self.container.seek(self.start + int(math.floor(t / self.rate / self.tb)), stream=self.stream,
                                backward=True, any_frame=False)
            self.gen, self.cur, self.last_key = self.container.decode(self.stream), -1, None
            try:
                frame = next(self.gen, None)
            except self.av.FFmpegError as exc:
                raise VideoError(self.path, f"decode failed near frame {idx} ({exc})") from None
            if frame is None:  # nothing after the seek point: handled as EOF
                return None
            fi = self._index_of(frame, -1)
            if fi > idx and idx - back > 0:  # the demuxer landed after the target: seek further back
                back = max(2 * back, int(round(float(self.rate))), 1)
                continue
            self.cur = self.last_key = self.last_idx = fi
            self.last_frame = frame
            return frame.to_ndarray(format="rgb24") if fi >= idx else None

    def _forward(self, idx: int) -> np.ndarray | None:
        """Decode forward to ``idx`` (learning the GOP length); None when the video ends first."""
        try:
            for frame in self.gen:
                fi = self._index_of(frame, self.cur)
                if fi <= self.cur:  # repeated timestamp: keep counting forward
                    fi = self.cur + 1
                self.cur = fi
                if frame.key_frame:
                    if self.last_key is not None:
                        self.gop = max(self.gop, fi - self.last_key)
                    self.last_key = fi
                self.last_frame, self.last_idx = frame, fi
                if fi >= idx:
                    return frame.to_ndarray(format="rgb24")
        except self.av.FFmpegError as exc:
            raise VideoError(self.path, f"decode failed before frame {idx} ({exc})") from None
        return None


def decode_all(path: str | Path) -> list[np.ndarray]:
    """Every frame of the first video stream in decode order, as RGB arrays (tests, benchmarks).

    Memory: ``n_frames * H * W * 3`` bytes. Raises :class:`VideoError`.
    """
    av = require("av", "video", "video decoding")

    container = _open(path)
    try:
        return [f.to_ndarray(format="rgb24") for f in container.decode(container.streams.video[0])]
    except av.FFmpegError as exc:
        raise VideoError(path, f"decode failed ({exc})") from None
    finally:
        container.close()


def resize_short_side(img: Image.Image, short: int | None) -> Image.Image:
    """``img`` scaled so its short side is ``short`` px (aspect kept, bicubic); never upscaled.

    ``None`` or a target >= the short side returns ``img`` unchanged. The long side is
    ``round(long * short / current_short)``.
    """
    if not short:
        return img
    w, h = img.size
    s = min(w, h)
    if short >= s:
        return img
    if w <= h:
        size = (short, max(1, round(h * short / w)))
    else:
        size = (max(1, round(w * short / h)), short)
    return img.resize(size, Image.Resampling.BICUBIC)
