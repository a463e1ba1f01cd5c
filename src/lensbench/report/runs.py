"""Read run folders for reports and the viewer, never aborting on a bad one.

A run folder holds ``run.json`` (manifest), ``samples.jsonl`` (one
:class:`~lensbench.core.records.SampleRecord` per line) and ``result.json``
(:class:`~lensbench.core.results.RunResult`). :func:`load_run` reads what is there and lists
what is missing or unreadable in ``problems`` instead of raising, so a report over many runs
lists the bad ones and goes on.

:func:`run_tables` and :func:`run_intervals` compute a run's metric tables and CIs once per
process (the leaderboard, ``compare`` and the viewer share them); CIs drawn with the design a
report asks for are read from ``result.json`` when the run stored them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.core.results import RunResult
from lensbench.scoring.bootstrap import Design, Interval, UnitTable
from lensbench.report.catalog import describe
from lensbench.scoring.intervals import intervals_from_block, tables_block

__all__ = ["LoadedRun", "load_run", "load_records", "ensure_records", "run_tables", "run_intervals",
           "run_table_settings"]


@dataclass
class LoadedRun:
    """One run folder as read: ``result`` / ``records`` are None when missing or unreadable.

    ``benchmark`` and ``model`` come from ``result.json``, else from ``run.json``, else ``"?"``.
    ``finished``: result.json present and complete; ``problems``: one sentence per defect;
    ``records_note``: why records are unusable (e.g. an old-format line), or None.
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


def load_records(path: Path) -> tuple[list[SampleRecord] | None, str | None]:
    """The records of ``path`` (a samples.jsonl) or ``(None, why)`` when any line is not a record."""
    if not path.is_file():
        return None, f"no {path.name}"
    out = []
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(SampleRecord.model_validate_json(line))
            except ValueError as exc:
                return None, f"{path.name} line {i} is not a sample record ({str(exc).splitlines()[0]})"
    return out, None


def load_run(run_dir: str | Path, with_records: bool = True) -> LoadedRun:
    """Read ``run_dir``; never raises for a missing or broken file (see :class:`LoadedRun`)."""
    p = Path(run_dir)
    run = LoadedRun(p)
    if not p.is_dir():
        run.problems.append(f"{p}: not a folder")
        return run
    m = p / "run.json"
    if m.is_file():
        try:
            doc = json.loads(m.read_text(encoding="utf-8"))
            run.manifest = doc if isinstance(doc, dict) else {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            run.problems.append(f"{m}: unreadable manifest ({exc})")
    r = p / "result.json"
    if r.is_file():
        try:
            run.result = RunResult.from_json(json.loads(r.read_text(encoding="utf-8")))
            run.result.run_dir = run.result.run_dir or str(p)
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
            run.problems.append(f"{r}: unreadable result ({exc})")
    else:
        run.problems.append(f"{p}: no result.json (unfinished or not a run folder)")
    if with_records:
        ensure_records(run)
    if run.result is not None and not run.result.complete:
        run.problems.append(f"{p}: incomplete ({run.result.counts.get('n_error', '?')} failed requests)")
    return run


def ensure_records(run: LoadedRun) -> list[SampleRecord] | None:
    """The run's records, read from ``samples.jsonl`` on first use (a run loaded without them);
    a reason they are unusable goes to ``problems``."""
    if not run.records_loaded and run.records is None:
        run.records_loaded = True
        run.records, why = load_records(run.path / "samples.jsonl")
        if why:
            run.problems.append(f"{run.path}: {why}")
    return run.records


def run_tables(run: LoadedRun) -> dict[str, UnitTable]:
    """The run's metric tables (its benchmark's :meth:`~lensbench.benchmarks.base.Benchmark.unit_tables` of
    its records), made once; ``{}`` for an unknown benchmark, no records, or records not in the shape the
    benchmark writes (a CI is then missing, with a note, never an error)."""
    if run._tables is None:
        facts, records = describe(run.benchmark), ensure_records(run)
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
