"""A report over many runs of several benchmarks: a leaderboard and one tidy CSV.

One row per model, one column per benchmark headline cell *and configuration*: every number says
what it covers (issue 19). A column is keyed by the benchmark, the run's protocol settings
(:func:`lensbench.report.runinfo.protocol_settings`: blind, input mode, judge, best-of-N, a
generation override, an ``eval`` variant tag, an IV-Bench sweep configuration) and its coverage
("22/1,686 queries", "first 3 of 29 samples (--limit)"), so differently configured runs are
separate columns (never one superseding another) and a partial-coverage cell is never ranked beside
complete ones. Two runs of one model in the same column are two rows (``model (folder)``).
Incomplete (failed requests) and killed (unsent requests) runs are marked ``*`` and listed.

Values come from ``result.json``; each with its 95% CI over the benchmark's clusters
(:mod:`lensbench.scoring.units`), read from ``result.json`` when it holds CIs drawn the same way,
else resampled from ``samples.jsonl`` (:func:`lensbench.report.runs.run_intervals`). Where the
records cannot reproduce the ``result.json`` value, the value is shown without a CI and a note
says why. Runs that did not finish, or whose files are unreadable, are listed; the report never
stops at a bad run. Rendering: :mod:`lensbench.report.leaderboard_render`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lensbench.report.runinfo import coverage_label, protocol_settings, run_state, settings_label
from lensbench.report.leaderboard_render import TIDY_COLUMNS, render
from lensbench.report.runs import LoadedRun, run_intervals, run_table_settings
from lensbench.report.tables import fmt_value
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES, Design, Interval
from lensbench.scoring.intervals import design_for
from lensbench.scoring.units import HEADLINES

__all__ = ["Cell", "Leaderboard", "build_leaderboard", "render_leaderboard", "TIDY_COLUMNS"]


@dataclass
class Cell:
    """One value of the tidy table.

    ``settings``: the named protocol settings of its run ("" = the paper's protocol);
    ``coverage``: "" (all the data) or ``"22/1,686 queries: ..."``; ``state``: "" (complete) or
    what is missing (``incomplete: 2 failed requests``); ``headline`` marks the leaderboard's
    columns; ``note`` says why there is no CI; ``n``: clusters counting in the category;
    ``cluster``: what the CI resampled; ``run``: the folder; ``row``: the row name (the model, or
    ``model (folder)`` when another run of the model already fills the column).
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

    @property
    def column(self) -> tuple[str, str, str, str, str]:
        """The leaderboard column this cell belongs to."""
        return self.benchmark, self.settings, self.coverage, self.metric, self.category


@dataclass
class Leaderboard:
    """All cells, the runs left out or not complete (``(folder, why)``), and each benchmark's CI design."""

    cells: list[Cell] = field(default_factory=list)
    unfinished: list[tuple[str, str]] = field(default_factory=list)
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES
    level: float = 0.95
    designs: dict[str, Design] = field(default_factory=dict)


def _result_value(metrics: dict[str, Any], key: str, col: str) -> float | None:
    block = metrics.get(key)
    if not isinstance(block, dict):
        return None
    v = block.get(col)
    if v is None and col == "mean":  # GOBench: mean over the SPS dimensions (VLMEvalKit's "Overall")
        v = block.get("Overall")
        if v is None:
            vals = [x for k, x in block.items() if isinstance(x, (int, float))]
            v = sum(vals) / len(vals) if vals else None
    return float(v) if isinstance(v, (int, float)) else None


def _variants(run: LoadedRun, key: str) -> list[tuple[str, dict[str, Any], str]]:
    """``(table key, metrics block, setting name)`` of a headline metric: one, or one per IV-Bench
    sweep configuration (``sweep`` entries matched to the tables by frames and resolution)."""
    assert run.result is not None
    sweep = run.result.metrics.get("sweep")
    if key != "accuracy" or not isinstance(sweep, list) or len(sweep) < 2:
        return [(key, run.result.metrics, "")]
    tables = run_table_settings(run)
    out = []
    for entry in sweep:
        want = {"frames": entry.get("frames"), "resolution": entry.get("resolution")}
        tkey = next((k for k, (metric, setting) in tables.items() if metric == key and setting == want), "")
        out.append((tkey, {key: entry.get("accuracy") or {}}, str(entry.get("label") or want)))
    return out


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
        for tkey, block, setting in _variants(run, key):
            for cat, value in _leaves(block.get(key)):
                cell = Cell(**{**template, "settings": "; ".join(x for x in (template["settings"], setting) if x)},
                            metric=key, category=cat, value=value)
                if tkey in tables:
                    _cell_ci(cell, run, tkey, cat, design)
                cells.append(cell)
    counts = {k: v for k, v in run.result.counts.items() if v is not None}
    cells += [Cell(**template, metric="counts", category=cat, value=v) for cat, v in _leaves(counts)]
    return cells


def _run_cells(run: LoadedRun, design: Design, all_categories: bool, settings: str,
               every_metric: bool = False) -> list[Cell]:
    """The cells of one run (headline cells first), each with its CI or a note; ``every_metric``: then
    every other metric and count of ``result.json`` (:func:`_more_cells`)."""
    assert run.result is not None
    cov, state = coverage_label(run), run_state(run)
    cells: list[Cell] = []
    for key, col, cat in HEADLINES.get(run.benchmark, []):
        for tkey, block, setting in _variants(run, key):
            extra = [c for c in (block.get(key) or {}) if c != col] if all_categories else []
            for c_name, tcat, headline in [(col, cat, True)] + [(c, c, False) for c in extra]:
                cell = Cell(run.model, run.benchmark, key, c_name, _result_value(block, key, c_name), headline=headline,
                            complete=run.result.complete, settings="; ".join(x for x in (settings, setting) if x),
                            coverage=cov, state=state, run=str(run.path))
                _cell_ci(cell, run, tkey, tcat, design)
                cells.append(cell)
    if every_metric:
        template = {"model": run.model, "benchmark": run.benchmark, "complete": run.result.complete,
                    "settings": settings, "coverage": cov, "state": state, "run": str(run.path)}
        cells += _more_cells(run, design, template, {k for k, _c, _t in HEADLINES.get(run.benchmark, [])})
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
        if run.benchmark not in HEADLINES:
            lb.unfinished.append((str(run.path), f"unknown benchmark {run.benchmark!r}"))
            continue
        design = lb.designs.setdefault(run.benchmark, design_for(run.benchmark, n_resamples=n_resamples, seed=seed,
                                                                 level=level))
        tag = str(run.result.extra.get("tag") or "")
        named = settings_label(protocol_settings(run), None if defaults is None else defaults.get(run.benchmark),
                               sorted(shown.get(run.benchmark, ())))
        try:
            cells = _run_cells(run, design, all_categories, "; ".join(x for x in (tag, named) if x), every_metric)
        except Exception as exc:  # a bad run never stops the report
            lb.unfinished.append((str(run.path), f"could not be read: {type(exc).__name__}: {exc}"))
            continue
        heads = {c.column for c in cells if c.headline}
        row = run.model if not any((run.model, k) in taken for k in heads) else f"{run.model} ({run.path.name})"
        taken.update((row, k) for k in heads)
        for c in cells:
            c.row = row
        if cells and (cells[0].state or cells[0].coverage):
            lb.unfinished.append((str(run.path), "; ".join(x for x in (cells[0].state, cells[0].coverage) if x)))
        lb.cells.extend(cells)
    return lb


def render_leaderboard(lb: Leaderboard, fmt: str = "md") -> str:
    """``md``: the leaderboard table and its notes; ``csv``: the tidy table (:data:`TIDY_COLUMNS`);
    ``json``: everything. Raises ValueError for another format."""
    return render(lb, fmt)
