"""Read run folders: the one module that reads a run folder's files.

A run folder holds ``run.json`` (manifest), ``samples.jsonl`` (one
:class:`~lensbench.core.records.SampleRecord` per line) and ``result.json``
(:class:`~lensbench.core.results.RunResult`); ``responses.sqlite`` is the store
(:mod:`lensbench.runtime.store`). Two ways to read them:

* strict, for commands that need the file: :func:`read_manifest`, :func:`load_result`,
  :func:`iter_samples` raise ConfigError naming the file (and line);
* lenient, for reports and the viewer over many runs: :func:`read_folder` reads what is there into a
  :class:`LoadedRun` and lists what is missing or unreadable in ``problems`` instead of raising, so a
  report lists the bad runs and goes on. The cross-benchmark readers read runs through
  :func:`lensbench.views.runs.read_run`, which also hands the run its benchmark lookup (``lookup``: this
  layer sits below the benchmarks and never looks one up by name). (The public :func:`lensbench.load_run` is the strict read of
  one whole folder, its result rebuilt from the store when missing.)

:func:`run_tables` and :func:`run_intervals` compute a run's metric tables and CIs once per
process (the leaderboard, ``compare`` and the viewer share them); CIs drawn with the design a
report asks for are read from ``result.json`` when the run stored them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.records import SampleRecord
from lensbench.core.results import RunResult
from lensbench.scoring.bootstrap import Design, Interval, UnitTable
from lensbench.scoring.intervals import intervals_from_block, tables_block
from lensbench.report.subset import ItemSubset, SubsetApplied, apply_subset

__all__ = ["MANIFEST", "SAMPLES", "RESULT", "read_manifest", "load_result", "iter_samples", "LoadedRun", "read_folder",
           "ensure_records", "run_tables", "run_intervals", "run_table_settings"]

MANIFEST = "run.json"
SAMPLES = "samples.jsonl"
RESULT = "result.json"


def _manifest(p: Path) -> Any:
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: unreadable manifest ({exc})") from None


def read_manifest(run_dir: str | Path) -> dict[str, Any] | None:
    """The manifest of ``run_dir``, or None when there is none. Raises ConfigError if unreadable."""
    p = Path(run_dir) / MANIFEST
    if not p.is_file():
        return None
    doc = _manifest(p)
    if not isinstance(doc, dict):
        raise ConfigError(f"{p}: the manifest is not a JSON object")
    return doc


def _result(p: Path) -> RunResult:
    try:
        return RunResult.from_json(json.loads(p.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise ConfigError(f"{p}: unreadable result ({exc})") from None


def load_result(run_dir: str | Path) -> RunResult:
    """The :class:`RunResult` stored in ``run_dir/result.json``.

    Raises ConfigError naming the folder when it holds no finished result, or the file when unreadable.
    """
    p = Path(run_dir) / RESULT
    if not p.is_file():
        raise ConfigError(f"{run_dir}: no {RESULT} (not a lensbench run folder, or the run has not finished)")
    return _result(p)


def iter_samples(run_dir: str | Path) -> Iterator[SampleRecord]:
    """The records of ``run_dir/samples.jsonl``, in order. Raises ConfigError naming the folder when it
    has none, and the file and line when one is not a record."""
    p = Path(run_dir) / SAMPLES
    if not p.is_file():
        raise ConfigError(f"{run_dir}: no {SAMPLES} (not a finished lensbench run folder)")
    with p.open(encoding="utf-8", newline="\n") as fh:  # lines end at "\n" only, as lensbench.core.jsonl reads them
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield SampleRecord.model_validate_json(line)
            except ValueError as exc:
                raise ConfigError(f"{run_dir}: {SAMPLES} line {i} is not a sample record "
                                  f"({str(exc).splitlines()[0]})") from None


@dataclass
class LoadedRun:
    """One run folder as read: ``result`` / ``records`` are None when missing or unreadable.

    ``benchmark`` and ``model`` come from ``result.json``, else from ``run.json``, else ``"?"``.
    ``finished``: result.json present and complete; ``problems``: one sentence per defect (also why
    the records are unusable, e.g. an old-format line); ``records_loaded``: ``samples.jsonl`` was read;
    ``subset_applied``: the item subset the run was restricted to (None: all its items).
    """

    path: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    result: RunResult | None = None
    records: list[SampleRecord] | None = None
    problems: list[str] = field(default_factory=list)
    records_loaded: bool = field(default=False, repr=False, compare=False)
    _tables: dict[str, UnitTable] | None = field(default=None, repr=False, compare=False)
    _intervals: dict[Design, dict[tuple[str, str], Interval]] = field(default_factory=dict, repr=False,
                                                                      compare=False)
    _coverage: Any = field(default=None, repr=False, compare=False)  # lensbench.report.coverage.run_coverage
    lookup: Callable[[str], Any] | None = field(default=None, repr=False, compare=False)
    subset_applied: SubsetApplied | None = field(default=None, repr=False, compare=False)

    @property
    def facts(self) -> Any:
        """The run's benchmark class (what reports ask of it, :class:`lensbench.views.catalog.BenchmarkFacts`)
        through ``lookup`` (set by :func:`lensbench.views.runs.read_run`); None for an unknown benchmark or a
        run read without a lookup. Raises ConfigError for a plugin that cannot be loaded."""
        return self.lookup(self.benchmark) if self.lookup is not None else None

    @property
    def benchmark(self) -> str:
        """The benchmark's CLI name (``"?"`` when unknown)."""
        return self.result.benchmark if self.result else str(self.manifest.get("benchmark") or "?")

    @property
    def model(self) -> str:
        """The model's display name (``"?"`` when unknown)."""
        return self.result.model if self.result else str(self.manifest.get("model_name") or "?")

    @property
    def finished(self) -> bool:
        """True when result.json exists and the run has no failed requests."""
        return self.result is not None and self.result.complete

    @property
    def label(self) -> str:
        """Short unique-ish name: ``model`` plus the folder name."""
        return f"{self.model} ({self.path.name})"


def read_folder(run_dir: str | Path, with_records: bool = True,
                lookup: Callable[[str], Any] | None = None, subset: ItemSubset | None = None) -> LoadedRun:
    """Read ``run_dir``; never raises for a missing or broken file (see :class:`LoadedRun`).
    ``with_records=False``: ``samples.jsonl`` is read on first use (:func:`ensure_records`); ``lookup``:
    benchmark name -> its class or None (:attr:`LoadedRun.facts`); ``subset``: the run restricted to these
    items (:func:`lensbench.report.subset.apply_subset`: records read now; ``subset_applied`` says what was
    kept). Raises ConfigError only for a subset that does not fit the run."""
    p = Path(run_dir)
    run = LoadedRun(p, lookup=lookup)
    if not p.is_dir():
        run.problems.append(f"{p}: not a folder")
        return run
    if (p / MANIFEST).is_file():
        try:
            doc = _manifest(p / MANIFEST)
            run.manifest = doc if isinstance(doc, dict) else {}
        except ConfigError as exc:
            run.problems.append(str(exc))
    if (p / RESULT).is_file():
        try:
            run.result = _result(p / RESULT)
            run.result.run_dir = run.result.run_dir or str(p)
        except ConfigError as exc:
            run.problems.append(str(exc))
    else:
        run.problems.append(f"{p}: no {RESULT} (unfinished or not a run folder)")
    if with_records or subset is not None:
        ensure_records(run)
    if subset is not None:
        run.subset_applied = apply_subset(run, subset)
    n_error = int(run.result.counts.get("n_error") or 0) if run.result is not None else 0
    if n_error:  # a --limit / --shard run is partial, not failed: its coverage says so (report.coverage)
        run.problems.append(f"{p}: incomplete ({n_error} failed request{'s' * (n_error != 1)})")
    return run


def ensure_records(run: LoadedRun) -> list[SampleRecord] | None:
    """The run's records, read from ``samples.jsonl`` on first use (a run loaded without them);
    a reason they are unusable goes to ``problems``."""
    if not run.records_loaded and run.records is None:
        run.records_loaded = True
        if not (run.path / SAMPLES).is_file():
            run.problems.append(f"{run.path}: no {SAMPLES}")
        else:
            try:
                run.records = list(iter_samples(run.path))
            except ConfigError as exc:
                run.problems.append(str(exc))
    return run.records


def run_tables(run: LoadedRun) -> dict[str, UnitTable]:
    """The run's metric tables (its benchmark's :meth:`~lensbench.benchmarks.base.Benchmark.unit_tables` of
    its records), made once; ``{}`` for an unknown benchmark, no records, or records not in the shape the
    benchmark writes (a CI is then missing, with a note, never an error)."""
    if run._tables is None:
        facts, records = run.facts, ensure_records(run)
        try:
            run._tables = facts.unit_tables(records) if facts is not None and records else {}
        except (KeyError, TypeError, ValueError):
            run._tables = {}
    return run._tables


def run_intervals(run: LoadedRun, design: Design) -> dict[tuple[str, str], Interval]:
    """``{(table key, category): Interval}`` of every table and category of ``run`` under ``design``:
    from ``result.json`` when it holds CIs drawn that way, else resampled (once per design)."""
    if design not in run._intervals:
        stored = intervals_from_block(run.result.ci if run.result is not None else None, design)
        if stored is None:
            stored = intervals_from_block(tables_block(run_tables(run), design), design) or {}
        run._intervals[design] = stored
    return run._intervals[design]


def run_table_settings(run: LoadedRun) -> dict[str, tuple[str, dict[str, Any] | None]]:
    """``{table key: (metric, setting)}`` of the run's metric tables, from the CIs stored in
    ``result.json`` when there are any (no records read), else from the tables."""
    block = run.result.ci if run.result is not None else None
    if isinstance(block, dict) and isinstance(block.get("tables"), dict):
        try:
            return {k: (t["metric"], t.get("setting")) for k, t in block["tables"].items()}
        except (KeyError, TypeError):
            pass
    return {k: (t.metric, t.setting) for k, t in run_tables(run).items()}
