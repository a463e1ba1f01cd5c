"""Small generated inputs in the official release layouts, for tests that must not need real data."""

from __future__ import annotations

from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release

__all__ = ["make_rgbth_release"]
