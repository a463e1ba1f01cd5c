"""The Python API for notebooks and scripts: the same runs and run folders as the CLI.

    import lensbench
    result = lensbench.run("rgb-th-bench", model="openai:Qwen/Qwen2.5-VL-7B-Instruct",
                           base_url=["http://gpu1:8000/v1"], out="runs/qwen7b")
    result.metrics["QAcc"]["Overall"]
    run = lensbench.load_run("runs/qwen7b")
    [r for r in run.records if r.outcome == "unparseable"]

Both raise :class:`lensbench.core.errors.LensbenchError` subclasses where the CLI prints
``error: ...`` (bad input, a folder in use, a damaged store ...). Messages name the Python
arguments, not the command line's flags: ``data_dir=/x does not exist``, ``temperature=0.2``,
``blind=True`` where the CLI says ``--data-dir /x``, ``--temperature 0.2``, ``--blind``.
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from lensbench.benchmarks.registry import get_benchmark
from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.results import RunResult
from lensbench.report.runs import LoadedRun, iter_samples, read_manifest
from lensbench.runtime.rebuild import load_or_rebuild
from lensbench.runtime.runner import run_benchmark
from lensbench.runtime.settings import RunSettings
from lensbench.views.catalog import describe

__all__ = ["run", "load_run", "Run", "python_names"]

#: ``--flag`` or ``--no-flag``, and the value that follows it when there is one (not a plain lower-case word)
_FLAG = re.compile(r"--(no-)?([a-z][a-z0-9-]*)(?: (?=[^a-z\s(])(\S+))?")


def _is_bool(ann: Any) -> bool:
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        return any(a is bool for a in typing.get_args(ann))
    return ann is bool


def python_names(message: str, *models: type[BaseModel]) -> str:
    """``message`` with the command-line flags of ``models``' fields written as Python arguments:
    ``--data-dir /x`` -> ``data_dir=/x``, ``--blind`` -> ``blind=True``, ``--no-skip-missing`` ->
    ``skip_missing=False``, a flag named without a value -> ``'name'``. Other ``--words`` stay."""
    fields = {n: f for m in models for n, f in m.model_fields.items()}

    def repl(m: re.Match) -> str:
        neg, name, value = m.group(1), m.group(2).replace("-", "_"), m.group(3)
        f = fields.get(name)
        if f is None:
            return m.group(0)
        if _is_bool(f.annotation):
            return f"{name}={'False' if neg else 'True'}" + (f" {value}" if value else "")
        return f"{name}={value}" if value else f"'{name}'"

    return _FLAG.sub(repl, message)


def run(benchmark: str, *, model: str, out: str | Path, data_dir: str | Path | None = None,
        progress: bool = False, **settings: Any) -> RunResult:
    """Run ``benchmark`` (CLI name, e.g. ``"if-bench"``) on ``model`` (a backend spec) into ``out``.

    ``settings`` are the ``lensbench run`` flags as keyword arguments, the shared ones
    (``base_url=[...]``, ``judge_model``, ``concurrency``, ``limit``, ``seed``, ``temperature`` ...)
    and the benchmark's own (e.g. ``input="if+rgb"`` for IF-Bench); ``data_dir`` defaults to the
    data home (``lensbench data download``). An existing ``out`` of the same benchmark and model is
    resumed. Raises ConfigError naming an unknown keyword or a bad value.
    """
    cls = get_benchmark(benchmark)
    shared = {k: v for k, v in settings.items() if k in RunSettings.model_fields}
    own = {k: v for k, v in settings.items() if k not in RunSettings.model_fields}
    unknown = [k for k in own if k not in cls.Options.model_fields]
    if unknown:
        raise ConfigError(f"lensbench.run({benchmark!r}): unknown setting(s) {', '.join(unknown)}; known: "
                          f"{', '.join(sorted(set(RunSettings.model_fields) | set(cls.Options.model_fields)))}")
    try:
        s = RunSettings(model=model, out=Path(out), data_dir=data_dir, progress=progress, **shared)
        options = cls.Options(**own)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"lensbench.run({benchmark!r}): {bad}") from None
    except ValueError as exc:
        raise ConfigError(f"lensbench.run({benchmark!r}): {exc}") from None
    try:
        return run_benchmark(cls(options), s)
    except LensbenchError as exc:
        exc.args = (python_names(str(exc), RunSettings, cls.Options),) + exc.args[1:]
        raise


@dataclass
class Run(LoadedRun):
    """A run folder read back whole: ``result`` (metrics, counts), ``manifest`` (run.json) and
    ``records`` (one :class:`~lensbench.core.records.SampleRecord` per scored unit, in order). A
    :class:`~lensbench.report.runs.LoadedRun`, so it goes into the leaderboard and ``compare`` as it is."""

    def table(self, fmt: str = "md", with_paper: bool = False) -> str:
        """The benchmark's report tables for this run (as ``lensbench report``)."""
        return get_benchmark(self.result.benchmark)(None).tables([self.result], fmt=fmt, with_paper=with_paper)


def load_run(path: str | Path, subset: str | Path | None = None) -> Run:
    """Read a run folder (``result.json`` is rebuilt from the store when missing); ``subset``: a subset file
    (``lensbench analyze items --out``) the run is restricted to (:mod:`lensbench.report.subset`).

    Raises ConfigError when ``path`` is not a lensbench run folder, or the subset file is bad or does not fit.
    """
    from lensbench.report.subset import apply_subset, load_subset

    p = Path(path)
    item_subset = load_subset(subset) if subset is not None else None
    result = load_or_rebuild(p)
    run = Run(p, manifest=read_manifest(p) or {}, result=result, records=list(iter_samples(p)), records_loaded=True,
              lookup=describe)
    if item_subset is not None:
        run.subset_applied = apply_subset(run, item_subset)
    return run
