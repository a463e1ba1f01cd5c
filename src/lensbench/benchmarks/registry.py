"""Benchmark names -> their classes, imported lazily (one explicit table).

Adding a benchmark = one package under :mod:`lensbench.benchmarks` with a ``Benchmark``
subclass + one line below.
"""

from __future__ import annotations

import importlib

from lensbench.benchmarks.base import Benchmark

__all__ = ["BENCHMARKS", "get_benchmark", "all_benchmarks"]

#: CLI name -> ``"module:Class"``.
BENCHMARKS: dict[str, str] = {
    "rgb-th-bench": "lensbench.benchmarks.rgbth.benchmark:RGBThBench",
    "if-bench": "lensbench.benchmarks.ifbench.benchmark:IFBench",
    "iv-bench": "lensbench.benchmarks.ivbench.benchmark:IVBench",
    "gobench": "lensbench.benchmarks.gobench.benchmark:GOBench",
    "groundingme": "lensbench.benchmarks.groundingme.benchmark:GroundingME",
    "grounding-rej": "lensbench.benchmarks.groundingme.rejection_set:GroundingRejectionSet",
}


def get_benchmark(name: str) -> type[Benchmark]:
    """The benchmark class called ``name``. Raises KeyError listing the known names."""
    target = BENCHMARKS.get(name)
    if target is None:
        raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS))}")
    mod, _, cls = target.partition(":")
    return getattr(importlib.import_module(mod), cls)


def all_benchmarks() -> dict[str, type[Benchmark]]:
    """Every benchmark class by name (imports them all)."""
    return {name: get_benchmark(name) for name in BENCHMARKS}
