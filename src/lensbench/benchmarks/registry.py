"""Benchmark names -> their classes, imported lazily: one explicit table, plus installed plugins.

Adding a benchmark = one package under :mod:`lensbench.benchmarks` with a ``Benchmark`` subclass +
one line in :data:`BENCHMARKS`; or, without editing lensbench, a package of your own that names its
class in the ``lensbench.benchmarks`` entry-point group (``pyproject.toml``:
``[project.entry-points."lensbench.benchmarks"] my-bench = "my_pkg.bench:MyBench"``; see
docs/adding-a-benchmark.md). A plugin cannot replace a built-in name (the built-in wins).

Importing this module installs the lookup the report side asks (:func:`lensbench.report.catalog.install`).
"""

from __future__ import annotations

import functools
import importlib
import sys
from importlib.metadata import entry_points

from lensbench.benchmarks.base import Benchmark
from lensbench.core.errors import ConfigError
from lensbench.report.catalog import install

__all__ = ["BENCHMARKS", "ENTRY_POINT_GROUP", "get_benchmark", "all_benchmarks", "benchmark_names", "plugins"]

#: CLI name -> ``"module:Class"`` of the built-in benchmarks.
BENCHMARKS: dict[str, str] = {
    "rgb-th-bench": "lensbench.benchmarks.rgbth.benchmark:RGBThBench",
    "if-bench": "lensbench.benchmarks.ifbench.benchmark:IFBench",
    "iv-bench": "lensbench.benchmarks.ivbench.benchmark:IVBench",
    "gobench": "lensbench.benchmarks.gobench.benchmark:GOBench",
    "groundingme": "lensbench.benchmarks.groundingme.benchmark:GroundingME",
    "grounding-rej": "lensbench.benchmarks.groundingme.rejection_set:GroundingRejectionSet",
}
#: the entry-point group third-party packages register their benchmarks in (name -> ``"module:Class"``)
ENTRY_POINT_GROUP = "lensbench.benchmarks"


def plugins() -> dict[str, str]:
    """Benchmarks of installed packages (the :data:`ENTRY_POINT_GROUP` entry points), name -> ``"module:Class"``,
    built-in names left out. Read once per ``sys.path`` (scanning the installed packages takes ~70 ms, so
    a built-in benchmark never asks)."""
    return _plugins(tuple(sys.path))


@functools.lru_cache(maxsize=4)
def _plugins(_path: tuple[str, ...]) -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in BENCHMARKS}


def benchmark_names() -> list[str]:
    """Every benchmark name: the built-in ones in table order, then the plugins' (sorted)."""
    return [*BENCHMARKS, *sorted(plugins())]


def get_benchmark(name: str) -> type[Benchmark]:
    """The benchmark class called ``name``.

    Raises KeyError listing the known names; ConfigError when a plugin's entry point cannot be imported or does
    not name a :class:`Benchmark` subclass whose ``name`` is the entry point's.
    """
    target = BENCHMARKS.get(name) or plugins().get(name)
    if target is None:
        raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(sorted(benchmark_names()))}")
    mod, _, attr = target.partition(":")
    if name in BENCHMARKS:
        return getattr(importlib.import_module(mod), attr)
    try:
        cls = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"entry point {name!r} = {target!r} ({ENTRY_POINT_GROUP}) cannot be loaded: "
                          f"{type(exc).__name__}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Benchmark) and cls.name == name):
        raise ConfigError(f"entry point {name!r} = {target!r} ({ENTRY_POINT_GROUP}) is not a lensbench Benchmark "
                          f"subclass named {name!r}")
    return cls


def all_benchmarks() -> dict[str, type[Benchmark]]:
    """Every benchmark class by name (imports them all)."""
    return {name: get_benchmark(name) for name in benchmark_names()}


def _facts(name: str) -> type[Benchmark] | None:
    try:
        return get_benchmark(name)
    except KeyError:
        return None


install(_facts, benchmark_names)
