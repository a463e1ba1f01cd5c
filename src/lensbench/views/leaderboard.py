"""A report over many runs of several benchmarks: a leaderboard and one tidy CSV.

One row per model, one column per benchmark headline cell *and configuration*: every number says
what it covers (issue 19). A column is keyed by the benchmark, the run's protocol settings
(:func:`lensbench.report.runinfo.protocol_settings`: blind, input mode, judge, best-of-N, a
generation override, an ``eval`` variant tag, an IV-Bench sweep configuration) and its coverage
counted against the benchmark's release, never the run's folder (:mod:`lensbench.report.coverage`:
"10/29 scenes, 560/1,624 questions: ...", "demo data, not the benchmark: ..."), so differently configured
runs are separate columns (never one superseding another) and a partial-coverage or demo-data cell is never
ranked beside the benchmark's measurement (its cells are marked ``†``). Two runs of one model in the
same column are two rows (``model (folder)``).
Incomplete (failed requests) and killed (unsent requests) runs are marked ``*`` and listed.

Each benchmark states its cells (:meth:`~lensbench.benchmarks.base.Benchmark.headline_cells`, asked
through :func:`lensbench.views.catalog.describe`). Values come from ``result.json``; each with its
95% CI over the benchmark's clusters (its unit tables, the same ones its result was computed from),
read from ``result.json`` when it holds CIs drawn the same way, else resampled from
``samples.jsonl`` (:func:`lensbench.report.runs.run_intervals`). Where the records do not give the
``result.json`` value (a hand-edited file, records of another version), the value is shown without
a CI and a note says why. Runs that did not finish, or whose files are unreadable, are listed; the report never
stops at a bad run. Rendering: :mod:`lensbench.views.leaderboard_render`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lensbench.core.errors import LensbenchError
from lensbench.views.catalog import BenchmarkFacts, describe
from lensbench.report.coverage import run_coverage
from lensbench.report.runinfo import coverage_label, protocol_settings, run_state, settings_label
from lensbench.views.leaderboard_render import TIDY_COLUMNS, render
from lensbench.report.runs import LoadedRun, run_intervals, run_table_settings
from lensbench.report.tables import fmt_value
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES, Design, Interval
from lensbench.scoring.intervals import design_for

__all__ = ["Cell", "Leaderboard", "build_leaderboard", "render_leaderboard", "TIDY_COLUMNS"]


@dataclass
class Cell:
    """One value of the tidy table.

    ``settings``: the named protocol settings of its run ("" = the paper's protocol);
    ``coverage``: "" (the benchmark's measurement) or what the run covers of the release and why
    (:attr:`lensbench.report.coverage.Coverage.label`); ``state``: "" (complete) or
    what is missing (``incomplete: 2 failed requests``); ``headline`` marks the leaderboard's
    columns; ``note`` says why there is no CI; ``n``: clusters counting in the category;
    ``cluster``: what the CI resampled; ``too_few_clusters``: ``n`` when the value has fewer than
    :data:`~lensbench.scoring.bootstrap.MIN_CLUSTERS` clusters (no CI: text prints "too few clusters (n)"),
    else None; ``run``: the folder; ``row``: the row name (the model, or ``model (folder)`` when another run
    of the model already fills the column).
    """

    model: str
    benchmark: str
    metric: str
    category: str
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    headline: bool = False
    complete: bool = True
    note: str | None = None
    settings: str = ""
    coverage: str = ""
    state: str = ""
    cluster: str = ""
    run: str = ""
    row: str = ""
    too_few_clusters: int | None = None

    @property
    def column(self) -> tuple[str, str, str, str, str]:
        """The leaderboard column this cell belongs to."""
        return self.benchmark, self.settings, self.coverage, self.metric, self.category


@dataclass
class Leaderboard:
    """All cells, the runs left out or not complete (``(folder, why)``), each benchmark's CI design, and the
    runs whose model gave empty replies (``(row, folder, n)``: kept and scored, counted in the values)."""

    cells: list[Cell] = field(default_factory=list)
    unfinished: list[tuple[str, str]] = field(default_factory=list)
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES
    level: float = 0.95
    designs: dict[str, Design] = field(default_factory=dict)
    empty: list[tuple[str, str, int]] = field(default_factory=list)


def _result_value(facts: BenchmarkFacts, metrics: dict[str, Any], key: str, col: str) -> float | None:
    block = metrics.get(key)
    if not isinstance(block, dict):
        return None
    v = facts.headline_value(block, col)
    return float(v) if isinstance(v, (int, float)) else None


def _cell_ci(cell: Cell, run: LoadedRun, tkey: str, tcat: str, design: Design) -> None:
    """Attach the CI of table ``tkey`` category ``tcat`` to ``cell`` (or a note saying why not)."""
    ivs = run_intervals(run, design)
    iv: Interval | None = ivs.get((tkey, tcat))
    if iv is None:
        if not any(k == tkey for k, _c in ivs):
            why = next((p.split(": ", 1)[-1] for p in run.problems if "samples.jsonl" in p), None)
            cell.note = "no sample records in the common shape" + (f" ({why})" if why else "")
        else:
            cell.note = "category not in records"
    elif cell.value is None:
        cell.note = "no value"
    elif iv.value is None or abs(iv.value - cell.value) > 1e-6 * max(1.0, abs(cell.value)):
        cell.note = f"records give {fmt_value(iv.value)}, result.json {fmt_value(cell.value)}: no CI"
    else:
        cell.ci_low, cell.ci_high, cell.n, cell.cluster = iv.low, iv.high, iv.n, iv.cluster
        cell.too_few_clusters = iv.n if iv.too_few else None


def _leaves(value: Any, prefix: str = "") -> list[tuple[str, float | None]]:
    """``(category, value)`` of every number (or null) in a metrics block, nested keys joined with ``/``;
    text, flags and lists are left out (they describe a run, they are not its numbers)."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{prefix}/{k}" if prefix else str(k))]
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return [(prefix, None if value is None else float(value))]
    return []


def _more_cells(run: LoadedRun, design: Design, template: dict[str, Any], done: set[str]) -> list[Cell]:
    """Cells of every metric of ``result.json`` not in ``done`` (with a CI where the records give one)
    and of its numeric counts (metric ``counts``): the rest of what the benchmark's tables show."""
    assert run.result is not None
    tables = run_table_settings(run)
    cells = []
    for key in [k for k in run.result.metrics if k not in done]:
        for cat, value in _leaves(run.result.metrics.get(key)):  # one block: sweeps are headline metrics
            cell = Cell(**template, metric=key, category=cat, value=value)
            if key in tables:
                _cell_ci(cell, run, key, cat, design)
            cells.append(cell)
    counts = {k: v for k, v in run.result.counts.items() if v is not None}
    cells += [Cell(**template, metric="counts", category=cat, value=v) for cat, v in _leaves(counts)]
    return cells


def _run_cells(run: LoadedRun, facts: BenchmarkFacts, design: Design, all_categories: bool,
               settings: str, every_metric: bool = False) -> list[Cell]:
    """The cells of one run (headline cells first), each with its CI or a note; ``every_metric``: then
    every other metric and count of ``result.json`` (:func:`_more_cells`)."""
    assert run.result is not None
    cov, state = coverage_label(run), run_state(run)
    cells: list[Cell] = []
    for h, tkey, block, setting in facts.headline_cells(run.result.metrics, lambda: run_table_settings(run)):
        extra = [c for c in (block.get(h.metric) or {}) if c != h.column] if all_categories else []
        for c_name, tcat, headline in [(h.column, h.category, True)] + [(c, c, False) for c in extra]:
            cell = Cell(run.model, run.benchmark, h.metric, c_name, _result_value(facts, block, h.metric, c_name),
                        headline=headline, complete=run.result.complete,
                        settings="; ".join(x for x in (settings, setting) if x), coverage=cov, state=state,
                        run=str(run.path))
            _cell_ci(cell, run, tkey, tcat, design)
            cells.append(cell)
    if every_metric:
        template = {"model": run.model, "benchmark": run.benchmark, "complete": run.result.complete,
                    "settings": settings, "coverage": cov, "state": state, "run": str(run.path)}
        cells += _more_cells(run, design, template, {h.metric for h in facts.headlines})
    return cells


def _shown(runs: Sequence[LoadedRun]) -> dict[str, set[str]]:
    """Per benchmark, the settings whose values differ between its runs (named when no defaults are known)."""
    per: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        if r.result is not None:
            per.setdefault(r.benchmark, []).append(protocol_settings(r))
    return {b: {k for k in set().union(*sets) if len({repr(s.get(k, "(not set)")) for s in sets}) > 1}
            for b, sets in per.items()}


def build_leaderboard(runs: list[LoadedRun], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                      level: float = 0.95, all_categories: bool = True,
                      defaults: Mapping[str, Mapping[str, Any]] | None = None, every_metric: bool = False) -> Leaderboard:
    """The leaderboard of ``runs`` (any mix of benchmarks, models and settings); never raises for a bad run.

    ``defaults``: benchmark -> its default options (settings equal to them are not named); without
    them, the settings that differ between the runs of a benchmark are named. ``every_metric``: after the
    headline metric's categories, a cell for every other number of each ``result.json`` (the tidy
    one-benchmark table of ``report --format csv``). Runs without
    result.json go to ``unfinished``; runs that are not complete are marked and listed there too.
    """
    lb = Leaderboard(seed=seed, n_resamples=n_resamples, level=level)
    shown = _shown(runs)
    taken: set[tuple] = set()
    for run in runs:
        if run.result is None:
            lb.unfinished.append((str(run.path), "; ".join(run.problems) or "no result.json"))
            continue
        try:
            facts = describe(run.benchmark)
        except LensbenchError as exc:  # a plugin that cannot be loaded
            lb.unfinished.append((str(run.path), str(exc)))
            continue
        if facts is None or not facts.headlines:
            why = "unknown benchmark" if facts is None else "no headline metric declared by benchmark"
            lb.unfinished.append((str(run.path), f"{why} {run.benchmark!r}"))
            continue
        design = lb.designs.setdefault(run.benchmark, design_for(facts.cluster, n_resamples=n_resamples, seed=seed,
                                                                 level=level))
        tag = str(run.result.extra.get("tag") or "")
        named = settings_label(protocol_settings(run), None if defaults is None else defaults.get(run.benchmark),
                               sorted(shown.get(run.benchmark, ())))
        try:
            cells = _run_cells(run, facts, design, all_categories, "; ".join(x for x in (tag, named) if x),
                               every_metric)
        except Exception as exc:  # a bad run never stops the report
            lb.unfinished.append((str(run.path), f"could not be read: {type(exc).__name__}: {exc}"))
            continue
        heads = {c.column for c in cells if c.headline}
        row = run.model if not any((run.model, k) in taken for k in heads) else f"{run.model} ({run.path.name})"
        taken.update((row, k) for k in heads)
        for c in cells:
            c.row = row
        if n_empty := run.result.counts.get("n_empty"):
            lb.empty.append((row, str(run.path), int(n_empty)))
        cov = run_coverage(run).text
        if cells and (cells[0].state or cov):
            lb.unfinished.append((str(run.path), "; ".join(x for x in (cells[0].state, cov) if x)))
        lb.cells.extend(cells)
    return lb


def render_leaderboard(lb: Leaderboard, fmt: str = "md") -> str:
    """``md``: the leaderboard table and its notes; ``csv``: the tidy table (:data:`TIDY_COLUMNS`);
    ``json``: everything. Raises ValueError for another format."""
    return render(lb, fmt)
