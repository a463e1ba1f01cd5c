"""A report over many runs of several benchmarks: a leaderboard and one tidy CSV.

One row per model, one column per benchmark headline metric (value from ``result.json`` with
its bootstrap 95% CI over the benchmark's independent units, from ``samples.jsonl``). Runs that
did not finish, or whose files are unreadable, are listed below the table; the report never
stops at a bad run. Where the records cannot reproduce the ``result.json`` value (records not in
the common shape yet, another configuration), the value is shown without a CI and a note says why.

Headline metrics (:data:`lensbench.scoring.units.HEADLINES`): RGB-Th-Bench Overall QAcc and
SAcc, IF-Bench Score Avg, IV-Bench accuracy Overall, GOBench mean SPS, GroundingME Acc@0.5 Total.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from lensbench.core.extras import MissingExtraError
from lensbench.report.runs import LoadedRun
from lensbench.report.tables import fmt_value, render_table
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES, bootstrap_ci
from lensbench.scoring.units import HEADLINES, unit_tables

__all__ = ["Cell", "Leaderboard", "build_leaderboard", "render_leaderboard", "TIDY_COLUMNS"]

TIDY_COLUMNS = ["model", "benchmark", "metric", "category", "value", "ci_low", "ci_high", "n"]
_TITLES = {"rgb-th-bench": "RGB-Th-Bench", "if-bench": "IF-Bench", "iv-bench": "IV-Bench", "gobench": "GOBench",
           "groundingme": "GroundingME"}


@dataclass
class Cell:
    """One value of the tidy table; ``headline`` marks the leaderboard's columns; ``note`` says why no CI."""

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
    #: the run's tag (``lensbench eval`` variant, ``--tag``): runs of one model and benchmark that differ in it
    #: are separate columns
    variant: str = ""


@dataclass
class Leaderboard:
    """All cells, the runs left out or incomplete (``(folder, why)``), and the bootstrap settings."""

    cells: list[Cell] = field(default_factory=list)
    unfinished: list[tuple[str, str]] = field(default_factory=list)
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES


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


def _run_cells(run: LoadedRun, n_resamples: int, seed: int, all_categories: bool) -> tuple[list[Cell], str | None]:
    """Cells of one finished run and a note for the unfinished list (None when all is well)."""
    assert run.result is not None
    bench, model, metrics = run.benchmark, run.model, run.result.metrics
    tables = unit_tables(bench, run.records or [])
    cells: list[Cell] = []
    note = None
    for key, col, cat in HEADLINES.get(bench, []):
        value = _result_value(metrics, key, col)
        t = tables.get(key)
        extra_cats = [c for c in (metrics.get(key) or {}) if c != col] if all_categories else []
        for c_name, tcat, headline in [(col, cat, True)] + [(c, c, False) for c in extra_cats]:
            v = value if headline else _result_value(metrics, key, c_name)
            cell = Cell(model, bench, key, c_name, v, headline=headline, complete=run.result.complete,
                        variant=str(run.result.extra.get("tag") or ""))
            if t is None or tcat not in t.categories:
                why = next((p.split(": ", 1)[-1] for p in run.problems if "samples.jsonl" in p), None)
                cell.note = ("category not in records" if t is not None else
                             "no sample records in the common shape" + (f" ({why})" if why else ""))
            elif v is None:
                cell.note = "no value"
            else:
                mine = t.value(tcat)
                if mine is None or abs(mine - v) > 1e-6 * max(1.0, abs(v)):
                    cell.note = f"records give {fmt_value(mine)}, result.json {fmt_value(v)}: no CI"
                else:
                    try:
                        ci = bootstrap_ci(t, tcat, n_resamples=n_resamples, seed=seed)
                    except MissingExtraError as exc:  # no scipy: values without CIs
                        cell.note, cell.n = str(exc), len(t.units)
                    else:
                        cell.ci_low, cell.ci_high, cell.n = ci.low, ci.high, ci.n
            cells.append(cell)
    if not HEADLINES.get(bench):
        note = f"unknown benchmark {bench!r}"
    return cells, note


def build_leaderboard(runs: list[LoadedRun], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                      all_categories: bool = True) -> Leaderboard:
    """The leaderboard of ``runs`` (any mix of benchmarks and models); never raises for a bad run.

    Runs without result.json go to ``unfinished``; incomplete runs are reported (marked) and
    also listed there. A model with two runs of one benchmark keeps the last one given (the
    other is listed as superseded).
    """
    lb = Leaderboard(seed=seed, n_resamples=n_resamples)
    seen: dict[tuple[str, str, str], str] = {}
    for run in runs:
        if run.result is None:
            lb.unfinished.append((str(run.path), "; ".join(run.problems) or "no result.json"))
            continue
        if not run.result.complete:
            lb.unfinished.append((str(run.path), f"incomplete: {run.result.counts.get('n_error', '?')} failed "
                                                 "requests (values marked *)"))
        tag = str(run.result.extra.get("tag") or "")
        key = (run.model, run.benchmark, tag)
        if key in seen:
            lb.unfinished.append((seen[key], f"superseded by {run.path} (same model, benchmark and tag)"))
            lb.cells = [c for c in lb.cells if (c.model, c.benchmark, c.variant) != key]
        seen[key] = str(run.path)
        try:
            cells, note = _run_cells(run, n_resamples, seed, all_categories)
        except Exception as exc:  # a bad run never stops the report
            lb.unfinished.append((str(run.path), f"could not be read: {type(exc).__name__}: {exc}"))
            continue
        lb.cells.extend(cells)
        if note:
            lb.unfinished.append((str(run.path), note))
    return lb


def _fmt_ci(c: Cell) -> str:
    s = fmt_value(c.value, 1) + ("" if c.complete else "*")
    if c.ci_low is not None and c.ci_high is not None:
        s += f" [{c.ci_low:.1f}, {c.ci_high:.1f}]"
    return s


def render_leaderboard(lb: Leaderboard, fmt: str = "md") -> str:
    """``md``: the leaderboard table + unfinished runs; ``csv``: the tidy table
    (:data:`TIDY_COLUMNS`, one header line); ``json``: everything. Raises ValueError for another format."""
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(TIDY_COLUMNS)
        for c in lb.cells:
            w.writerow([c.model, c.benchmark + (f"--{c.variant}" if c.variant else ""), c.metric, c.category] +
                       ["" if v is None else (f"{v:.6g}" if isinstance(v, float) else v)
                        for v in (c.value, c.ci_low, c.ci_high, c.n)])
        return buf.getvalue()
    if fmt == "json":
        return json.dumps({"cells": [asdict(c) for c in lb.cells], "unfinished": lb.unfinished,
                           "seed": lb.seed, "n_resamples": lb.n_resamples}, indent=2, default=str) + "\n"
    if fmt != "md":
        raise ValueError(f"unknown format {fmt!r} (md, csv or json)")
    heads = [c for c in lb.cells if c.headline]
    columns: list[tuple[str, str, str, str]] = []
    for c in heads:
        k = (c.benchmark, c.variant, c.metric, c.category)
        if k not in columns:
            columns.append(k)
    order = list(_TITLES)
    columns.sort(key=lambda k: order.index(k[0]) if k[0] in order else 99)
    models = list(dict.fromkeys(c.model for c in heads))
    by = {(c.model, c.benchmark, c.variant, c.metric, c.category): c for c in heads}
    rows = [[m] + [_fmt_ci(by[(m, *k)]) if (m, *k) in by else "-" for k in columns] for m in models]
    names = [f"{_TITLES.get(b, b)}{f' [{v}]' if v else ''} {metric if metric not in ('accuracy', 'Score') else ''} "
             f"{cat}".replace("  ", " ") for b, v, metric, cat in columns]
    out = render_table(["Model"] + names, rows, "md", title="Leaderboard (value [95% CI], %)")
    out += (f"\nCIs: percentile bootstrap over each benchmark's independent units, {lb.n_resamples} resamples, "
            f"seed {lb.seed}. * = incomplete run.\n")
    notes = sorted({f"{c.model} / {c.benchmark} {c.metric} {c.category}: {c.note}" for c in heads if c.note})
    if notes:
        out += "\nNo CI:\n" + "".join(f"- {n}\n" for n in notes)
    if lb.unfinished:
        out += "\nUnfinished or left-out runs:\n" + "".join(f"- {p}: {why}\n" for p, why in lb.unfinished)
    return out
