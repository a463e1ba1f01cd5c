"""Benchmark names -> their classes, imported lazily: one explicit table, plus installed plugins.

Adding a benchmark = one package under :mod:`lensbench.benchmarks` with a ``Benchmark`` subclass +
one line in :data:`BENCHMARKS`; or, without editing lensbench, a package of your own that names its
class in the ``lensbench.benchmarks`` entry-point group (``pyproject.toml``:
``[project.entry-points."lensbench.benchmarks"] my-bench = "my_pkg.bench:MyBench"``; see
docs/adding-a-benchmark.md). A plugin cannot replace a built-in name (the built-in wins).

A plugin cannot take the tool down (issue 30 item 5): one that fails to import, or names no
:class:`Benchmark` subclass of its own name, is a :class:`PluginError` (one line naming it and the
error); the class of a loaded plugin is handed out guarded (:func:`guarded`), so an exception its
own code raises at construction, load, expand, score, aggregate or in its tables becomes a
:class:`PluginError` naming the plugin, the method and the error, never a traceback.

The cross-benchmark readers (:mod:`lensbench.views`) import this module directly (:mod:`lensbench.views.catalog`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from importlib.metadata import entry_points

from lensbench.benchmarks.base import Benchmark
from lensbench.benchmarks.steps import Batches, Unsent
from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.records import SampleRecord
from lensbench.core.types import Request

__all__ = ["BENCHMARKS", "ENTRY_POINT_GROUP", "PluginError", "get_benchmark", "all_benchmarks", "benchmark_names",
           "plugins", "guarded"]


class PluginError(ConfigError):
    """A benchmark plugin that cannot be loaded, or whose own code raised: ``plugin`` its name,
    ``reason`` the error in words (``"RuntimeError: boom"``). A ConfigError, so a command prints its
    one line and exits 2."""

    def __init__(self, message: str, plugin: str, reason: str):
        super().__init__(message)
        self.plugin, self.reason = plugin, reason


#: the Benchmark methods a plugin's override of is guarded (:func:`guarded`)
_CONTRACT = ("__init__", "load", "sample_id", "expand", "evaluate", "send", "score", "score_sample", "failed",
             "scored", "finish", "aggregate", "unit_tables", "headline_cells", "headline_value", "judge_spec",
             "dataset_stats", "reproduction", "craft_records", "figures", "count_release", "absent_media",
             "judge_use", "no_judge_reason", "check_judge_flags", "requirements", "write_demo", "draw", "tables")

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



def _records(v) -> bool:
    return isinstance(v, list) and all(isinstance(r, SampleRecord) for r in v)


#: what a guarded method must return: method -> (test, the type in words); a plugin returning anything else
#: is a PluginError at once (rather than a TypeError deep inside the runner)
_RETURNS = {
    "load": (lambda v: isinstance(v, list), "a list of samples (Loaded)"),
    "expand": (lambda v: isinstance(v, Batches) or (isinstance(v, (list, tuple)) and all(
        isinstance(u, (Request, Unsent)) for u in v)), "a list of Request / Unsent, or Batches"),
    "scored": (lambda v: isinstance(v, SampleRecord), "a SampleRecord"),
    "failed": (lambda v: isinstance(v, SampleRecord), "a SampleRecord"),
    "score_sample": (_records, "a list of SampleRecord"),
    "score": (_records, "a list of SampleRecord"),
    "aggregate": (lambda v: isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, dict) for x in v),
                  "a (metrics, counts) pair of dicts"),
    "tables": (lambda v: isinstance(v, str), "a str"),
}


def get_benchmark(name: str) -> type[Benchmark]:
    """The benchmark class called ``name``.

    Raises KeyError listing the known names; PluginError (a ConfigError) when a plugin's entry point cannot be
    imported or does not name a :class:`Benchmark` subclass whose ``name`` is the entry point's. A plugin's
    class comes :func:`guarded`.
    """
    target = BENCHMARKS.get(name) or plugins().get(name)
    if target is None:
        raise KeyError(f"unknown benchmark {name!r}; known: {', '.join(sorted(benchmark_names()))}")
    mod, _, attr = target.partition(":")
    if name in BENCHMARKS:
        return getattr(importlib.import_module(mod), attr)
    return _plugin_class(name, target)


@functools.lru_cache(maxsize=64)
def _plugin_class(name: str, target: str) -> type[Benchmark]:
    """The guarded class of plugin ``name`` = ``target`` (one class per plugin, so ``get_benchmark``
    returns the same object each time). Raises PluginError."""
    mod, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(mod), attr)
    except Exception as exc:  # noqa: BLE001 - another package's import-time error, reported as one line
        why = f"{type(exc).__name__}: {exc}"
        raise PluginError(f"plugin {name!r} ({target}) cannot be loaded: {why}", name, why) from None
    if not (isinstance(cls, type) and issubclass(cls, Benchmark) and getattr(cls, "name", None) == name):
        why = f"{target} is not a lensbench Benchmark subclass named {name!r}"
        raise PluginError(f"plugin {name!r} ({target}) is not a lensbench Benchmark subclass named {name!r}", name, why)
    return guarded(cls, name, target)


def guarded(cls: type[Benchmark], name: str, target: str) -> type[Benchmark]:
    """A subclass of plugin class ``cls`` (same name, module and docs) whose own overrides of the
    :class:`Benchmark` methods turn an exception that is not a LensbenchError into a
    :class:`PluginError` ``plugin 'NAME' (TARGET): METHOD raised TYPE: MESSAGE``. LensbenchErrors (a
    plugin's DataError naming a file) and BaseExceptions (Ctrl-C, cancellation) pass unchanged;
    methods the plugin inherits from lensbench are not wrapped."""
    ns: dict[str, object] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__,
                             "lensbench_plugin": target}
    for meth in _CONTRACT:
        raw = inspect.getattr_static(cls, meth, None)
        if raw is None or raw is inspect.getattr_static(Benchmark, meth, None):
            continue
        if isinstance(raw, (classmethod, staticmethod)):
            ns[meth] = type(raw)(_wrap(raw.__func__, name, target, meth))
        elif inspect.isfunction(raw):
            ns[meth] = _wrap(raw, name, target, meth)
    return type(cls)(cls.__name__, (cls,), ns)


def _wrap(fn, name: str, target: str, meth: str):
    test, want = _RETURNS.get(meth, (None, ""))

    def fault(exc: Exception) -> PluginError:
        why = f"{type(exc).__name__}: {exc}"
        return PluginError(f"plugin {name!r} ({target}): {meth} raised {why}", name, why)

    def checked(value):
        if test is not None and not test(value):
            why = f"returned {type(value).__name__}, not {want}"
            raise PluginError(f"plugin {name!r} ({target}): {meth} {why}", name, why)
        return value

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def guard_async(*args, **kwargs):
            try:
                return checked(await fn(*args, **kwargs))
            except LensbenchError:
                raise
            except Exception as exc:  # noqa: BLE001 - a plugin's own bug, reported as one line
                raise fault(exc) from None
        return guard_async

    @functools.wraps(fn)
    def guard(*args, **kwargs):
        try:
            return checked(fn(*args, **kwargs))
        except LensbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's own bug, reported as one line
            raise fault(exc) from None
    return guard


def all_benchmarks() -> dict[str, type[Benchmark]]:
    """Every benchmark class by name (imports them all)."""
    return {name: get_benchmark(name) for name in benchmark_names()}
