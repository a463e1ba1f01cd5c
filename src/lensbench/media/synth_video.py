"""Synthetic videos written with PyAV (tests, ``benchmarks/frames.py``, IV-Bench's demo data).

Every frame differs from its neighbours (a moving bar, a frame-number-dependent shade and a
binary stripe code of the frame number), so a frame at the wrong index is detected by pixel
comparison.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lensbench.core.extras import require

__all__ = ["write_test_video"]


def write_test_video(path: str | Path, n_frames: int = 120, fps: int = 24, size: tuple[int, int] = (320, 180),
                     codec: str = "libx264", gop: int = 12, bframes: int | None = None, preset: str = "ultrafast",
                     crf: int | None = None) -> Path:
    """Write a ``size`` = (width, height) video of ``n_frames`` at ``fps`` and return its path.

    ``codec``: any PyAV encoder (``libx264``, ``mpeg4``, ...); the container follows the suffix
    (``.mp4``, ``.avi``, ``.mkv``). ``gop``: keyframe interval in frames. ``bframes``: x264
    B-frames (None = encoder default). Frames are generated directly in YUV 4:2:0 (cheap even
    at 720p). Width must be even, height a multiple of 4. Raises ValueError otherwise.
    """
    av = require("av", "video", "writing test videos")

    w, h = size
    if w % 2 or h % 4:
        raise ValueError(f"width must be even and height a multiple of 4, got {size}")
    path = Path(path)
    container = av.open(str(path), "w")
    stream = container.add_stream(codec, rate=fps)
    stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
    stream.codec_context.gop_size = gop
    if codec == "libx264":
        opts = {"preset": preset, "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0"}
        if bframes is not None:
            opts["bf"] = str(bframes)
        if crf is not None:
            opts["crf"] = str(crf)
        stream.options = opts
    y = np.zeros((h, w), np.uint8)
    u = np.full((h // 2, w // 2), 128, np.uint8)
    v = np.full((h // 2, w // 2), 128, np.uint8)
    bar = max(4, w // 32)
    code_h = max(8, h // 12)
    bit_w = max(2, w // 16)
    for i in range(n_frames):
        y[:] = 40 + (i * 7) % 160
        x0 = (i * 5) % max(1, w - bar)
        y[:, x0:x0 + bar] = 235
        for b in range(16):  # frame number as a stripe code along the bottom
            y[h - code_h:, b * bit_w:(b + 1) * bit_w] = 250 if (i >> b) & 1 else 10
        u[:] = 128 + ((i * 3) % 64) - 32
        v[:] = 128 - ((i * 5) % 64) + 32
        frame = av.VideoFrame.from_ndarray(np.concatenate([y, u.reshape(-1, w), v.reshape(-1, w)]), format="yuv420p")
        frame.pts = i
        for p in stream.encode(frame):
            container.mux(p)
    for p in stream.encode():
        container.mux(p)
    container.close()
    return path
