"""What the report side asks of a benchmark, and where it asks: the benchmarks by name.

Reports over runs (leaderboard, ``compare``, the viewer, figures) never name a benchmark: they ask
the run's benchmark class for its headline cells, CI cluster and unit tables, its title, its
coverage noun, ... (:class:`BenchmarkFacts`, the class attributes and class methods of
:class:`lensbench.benchmarks.base.Benchmark`). The benchmarks sit above this layer (their own
reports use it), so they are found through a lookup that the benchmark registry installs when it
is imported (:func:`install`); :func:`describe` imports the registry first when nothing is
installed yet, so a report made from a library call finds every benchmark too, third-party ones
included.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol

from lensbench.core.records import SampleRecord
from lensbench.scoring.bootstrap import UnitTable
from lensbench.scoring.units import Headline

__all__ = ["BenchmarkFacts", "describe", "benchmark_order", "install"]

#: the module that installs the lookup (the benchmark registry)
REGISTRY = "lensbench.benchmarks.registry"


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


_lookup: Callable[[str], BenchmarkFacts | None] | None = None
_names: Callable[[], list[str]] | None = None


def install(lookup: Callable[[str], BenchmarkFacts | None], names: Callable[[], list[str]]) -> None:
    """Set the lookup of benchmarks by name and the list of names in their order (the registry calls this
    once, when it is imported)."""
    global _lookup, _names
    _lookup, _names = lookup, names


def _installed() -> tuple[Callable[[str], BenchmarkFacts | None], Callable[[], list[str]]]:
    if _lookup is None or _names is None:
        importlib.import_module(REGISTRY)  # installs the lookup
    assert _lookup is not None and _names is not None, f"{REGISTRY} did not install its lookup"
    return _lookup, _names


def describe(name: str) -> BenchmarkFacts | None:
    """The benchmark called ``name`` (its class), or None for a name no registered benchmark has.
    Raises ConfigError for a plugin that cannot be loaded."""
    return _installed()[0](name)


def benchmark_order() -> list[str]:
    """Every benchmark name in the registry's order (built-in ones first): the order reports list them in."""
    return _installed()[1]()
