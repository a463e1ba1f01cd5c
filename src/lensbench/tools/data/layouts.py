"""The official release of a benchmark, asked of the benchmark (``Benchmark.layout``, stated in its own folder).

The :class:`~lensbench.benchmarks.layout.Layout` types live in :mod:`lensbench.benchmarks.layout`.
"""

from __future__ import annotations

from lensbench.benchmarks.layout import Layout
from lensbench.benchmarks.registry import benchmark_names, get_benchmark

__all__ = ["get_layout", "all_layouts"]


def get_layout(bench: str) -> Layout:
    """The layout of benchmark ``bench`` (CLI name). Raises KeyError for an unknown benchmark or one with no
    official release to fetch, listing those that have one."""
    layout = get_benchmark(bench).layout
    if layout is None:
        raise KeyError(f"{bench} has no official release to download; benchmarks with one: "
                       f"{', '.join(all_layouts())}")
    return layout


def all_layouts() -> dict[str, Layout]:
    """``{benchmark: layout}`` of every benchmark with an official release (imports them all)."""
    out = {}
    for name in benchmark_names():
        layout = get_benchmark(name).layout
        if layout is not None:
            out[name] = layout
    return out
