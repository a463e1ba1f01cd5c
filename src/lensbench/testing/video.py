"""Synthetic test videos (re-exported from :mod:`lensbench.media.synth_video`, which the demo data uses too)."""

from __future__ import annotations

from lensbench.media.synth_video import write_test_video

__all__ = ["write_test_video"]
