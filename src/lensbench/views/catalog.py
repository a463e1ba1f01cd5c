"""What the cross-benchmark readers ask of a benchmark, and where they ask: the benchmark registry.

Reports over runs (leaderboard, ``compare``, the viewer, figures, ``reproduce``) never name a benchmark: they
ask the run's benchmark class for its headline cells, CI cluster and unit tables, its title, its coverage
noun, ... (:class:`BenchmarkFacts`, the class attributes and class methods of
:class:`lensbench.benchmarks.base.Benchmark`). This package sits above the benchmarks, so it imports the
registry directly (third-party benchmarks included); the layer below (:mod:`lensbench.report`) never looks a
benchmark up by name: a run read here carries the lookup (:attr:`lensbench.report.runs.LoadedRun.facts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

from lensbench.benchmarks.registry import benchmark_names, get_benchmark
from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline

__all__ = ["BenchmarkFacts", "describe", "benchmark_order"]


class BenchmarkFacts(Protocol):
    """The facts of a benchmark that reports read (see :class:`lensbench.benchmarks.base.Benchmark`)."""

    name: ClassVar[str]
    title: ClassVar[str]
    headlines: ClassVar[tuple[Headline, ...]]
    cluster: ClassVar[str]
    load_unit: ClassVar[str]
    skipped_key: ClassVar[str]
    not_settings: ClassVar[frozenset[str]]
    viewer_group: ClassVar[tuple[str, ...]]
    Options: ClassVar[type]  # a pydantic model of the benchmark's options; ``Options()`` the defaults
    layout: ClassVar[Any]  # its release's Layout (``layout.release``: its size, for coverage), or None

    def __init__(self, options: Any) -> None: ...

    def tables(self, results: list[Any], fmt: str = "md", with_paper: bool = False) -> str: ...

    @classmethod
    def unit_tables(cls, records: Sequence[SampleRecord]) -> dict[str, UnitTable]: ...

    @classmethod
    def release_key(cls, record: SampleRecord) -> tuple[str, str] | None: ...

    @classmethod
    def headline_cells(cls, metrics: dict[str, Any], tables: Callable[[], dict[str, tuple[str, Any]]]
                       ) -> list[tuple[Headline, str, dict[str, Any], str]]: ...

    @classmethod
    def headline_value(cls, block: dict[str, Any], column: str) -> Any: ...

    @classmethod
    def figures(cls, runs: Sequence[Any]) -> list[tuple[str, str, bytes]]: ...


def describe(name: str) -> BenchmarkFacts | None:
    """The benchmark called ``name`` (its class), or None for a name no registered benchmark has.
    Raises ConfigError (PluginError) for a plugin that cannot be loaded."""
    try:
        return get_benchmark(name)
    except KeyError:
        return None


def benchmark_order() -> list[str]:
    """Every benchmark name in the registry's order (built-in ones first): the order reports list them in."""
    return benchmark_names()
