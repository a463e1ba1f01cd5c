"""Crafted sample records for tests and benchmarks of the report side (viewer, leaderboard, statistics).

A benchmark's :meth:`~lensbench.benchmarks.base.Benchmark.craft_records` writes about ``n`` records in
its own :class:`~lensbench.core.records.SampleRecord` shape (the labels its unit tables read) with
seeded random outcomes; :class:`Crafter` gives it the draws, small generated images and the record
constructor. :func:`lensbench.testing.runs.craft_run` turns them into a run folder. Nothing here is a
benchmark result.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.core.types import file_sha256

__all__ = ["Crafter", "make_image"]


def make_image(path: Path, size: tuple[int, int] = (320, 240), seed: int = 0, fmt: str = "PNG") -> Path:
    """Write a small deterministic test image (gradient + a rectangle) and return its path."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    img = Image.new("RGB", size, (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    d = ImageDraw.Draw(img)
    w, h = size
    x, y = rng.randrange(w // 2), rng.randrange(h // 2)
    d.rectangle([x, y, x + w // 3, y + h // 3], fill=(255 - x % 256, 128, y % 256))
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, fmt)
    return path


@dataclass
class Crafter:
    """What a crafted-records maker draws from: about ``n`` records, ``rng`` (seeded), ``accuracy`` =
    P(correct | scored), ``p_error`` = P(transport error), images under ``media``."""

    benchmark: str
    n: int
    rng: random.Random
    accuracy: float
    p_error: float
    media: Path

    def outcome(self) -> str:
        """``error`` with P ``p_error``, ``unparseable`` with P 0.03, else ``correct`` with P ``accuracy``."""
        x = self.rng.random()
        if x < self.p_error:
            return "error"
        if x < self.p_error + 0.03:
            return "unparseable"
        return "correct" if self.rng.random() < self.accuracy else "wrong"

    def image(self, name: str, seed: int, size: tuple[int, int] = (320, 240), folder: Path | None = None
              ) -> dict[str, Any]:
        """An image message part of a generated image ``name`` (made once) under ``folder`` (default ``media``)."""
        p = (folder or self.media) / name
        if not p.exists():
            make_image(p, size, seed)
        return {"type": "image", "path": str(p), "sha256": file_sha256(p)}

    def record(self, sid: str, parts: list[dict[str, Any]], outcome: str, **fields: Any) -> SampleRecord:
        """One record of one user message ``parts``; an ``error`` has no reply and the error ``HTTP 500``."""
        reply = fields.pop("reply", None)
        return SampleRecord(benchmark=self.benchmark, sample_id=sid, request_id=sid,
                            messages=[{"role": "user", "content": parts}], reply=None if outcome == "error" else reply,
                            outcome=outcome, error="HTTP 500" if outcome == "error" else None, latency_s=0.5, **fields)
