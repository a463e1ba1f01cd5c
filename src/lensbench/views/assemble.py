"""Reports over run folders, assembled: the leaderboard text (``lensbench report``, ``eval``) and the viewer
page (``lensbench view``): runs read, the benchmarks' summary tables, the headline leaderboard, comparisons
and plots put together.

What only a benchmark knows (its summary tables, its default options) is asked of the benchmark's class
through :func:`lensbench.views.catalog.describe`: report code never imports a benchmark.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lensbench.core.errors import LensbenchError
from lensbench.core.results import RunResult
from lensbench.views.catalog import describe
from lensbench.report.subset import ItemSubset
from lensbench.views.runs import LoadedRun, read_run
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES

__all__ = ["leaderboard_text", "viewer_page", "tables_html", "option_defaults", "subset_header"]


def option_defaults(runs: Sequence[LoadedRun]) -> dict[str, dict[str, Any]]:
    """benchmark -> its default options (JSON values), for the benchmarks of ``runs`` that are registered
    and load (a plugin that cannot be imported is listed by the report as a bad run, not raised here)."""
    out: dict[str, dict[str, Any]] = {}
    for name in {r.benchmark for r in runs}:
        try:
            cls = describe(name)
        except LensbenchError:
            cls = None
        if cls is not None:
            out[name] = cls.Options().model_dump(mode="json")
    return out


def _loadable(runs: list[LoadedRun]) -> list[LoadedRun]:
    """``runs``, each run whose benchmark plugin cannot be loaded turned into a left-out run naming the
    plugin's problem (its result and records dropped), so the other runs are reported (issue 30 item 5)."""
    for r in runs:
        if r.result is None:
            continue
        try:
            describe(r.benchmark)
        except LensbenchError as exc:
            r.problems.append(str(exc))
            r.result, r.records = None, None
    return runs


def leaderboard_text(run_dirs: Sequence[str | Path], fmt: str, *, n_resamples: int = DEFAULT_RESAMPLES,
                     seed: int = 0, every_metric: bool = False, subset: ItemSubset | None = None) -> str:
    """The multi-benchmark leaderboard of ``run_dirs`` as ``md``, ``csv`` (tidy) or ``json`` text;
    ``every_metric``: every number of each result, not only the headline metrics (``report --format csv``
    of one benchmark); ``subset``: every run restricted to those items (:mod:`lensbench.report.subset`; the md
    text is headed by what was kept, each row's model says ``[subset <name>]``).

    Never stops at a bad run (listed under "Unfinished or left-out runs"). Raises ValueError
    for an unknown ``fmt``.
    """
    from lensbench.views.leaderboard import build_leaderboard, render_leaderboard

    if fmt not in ("md", "csv", "json"):
        raise ValueError(f"unknown format {fmt!r} (md, csv or json)")
    runs = _loadable([read_run(d, with_records=False, subset=subset) for d in run_dirs])  # records read where needed
    text = render_leaderboard(build_leaderboard(runs, n_resamples=n_resamples, seed=seed,
                                                defaults=option_defaults(runs), every_metric=every_metric), fmt)
    return subset_header(runs) + text if fmt == "md" else text


def subset_header(runs: Sequence[LoadedRun]) -> str:
    """Markdown lines naming the item subset each restricted run was cut to (``""`` when none was): the numbers
    are not the paper's measurement."""
    lines = [f"> {r.path.name}: {r.subset_applied.label}: not the paper's measurement, not comparable with the "
             "full set" for r in runs if r.subset_applied is not None]
    return "\n".join(lines) + "\n\n" if lines else ""


def viewer_page(run_dirs: Sequence[Path], *, embed: bool = True, figures: bool = True,
                compare: bool = True, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, max_thumbs: int = 3000,
                chunk: int | None = None, warn: Callable[[str], None] = lambda _msg: None,
                subset: ItemSubset | None = None):
    """``(html, image registry, runs)``: the viewer over ``run_dirs`` (any benchmarks): the benchmarks'
    tables, the headline leaderboard (with CIs), every pair of runs of a benchmark compared
    (``compare``), the plots (``figures``; skipped with a warning when they cannot be drawn), the Items tab
    (item analysis of a benchmark with 3+ runs) and the Judge tab (stored ``analyze judge`` reports). A run's
    problems, and comparisons that cannot be made, go to ``warn``; a bad run never stops the page. ``subset``:
    every run restricted to those items (:mod:`lensbench.report.subset`; labelled in the page's title and models)."""
    from lensbench.views.viewer import build_viewer

    runs = _loadable([read_run(d, subset=subset) for d in run_dirs])
    for r in runs:
        for p in r.problems:
            warn(str(p))
    figs: list[dict[str, str]] = []
    if figures:
        try:
            from lensbench.views.figures import make_figures

            figs = [{"title": t, "src": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}
                    for t, png in make_figures(runs)]
        except Exception as exc:  # plots are extras: never lose the viewer for them
            warn(f"plots skipped: {type(exc).__name__}: {exc}")
    comps = _comparisons(runs, n_resamples, seed, warn) if compare else []
    from lensbench.views.viewer.analysis import items_data, judge_data

    items, judge = items_data(runs, n_resamples=n_resamples, seed=seed, warn=warn), judge_data(runs, warn)
    tables = tables_html(runs)
    tables["_leaderboard"] = _leaderboard_html(runs, n_resamples, seed)
    html, images = build_viewer(runs, tables=tables, comparisons=comps, figures=figs,
                                embed=embed, max_thumbs=max_thumbs, **({"chunk": chunk} if chunk else {}),
                                items=items, judge=judge,
                                title="lensbench: " + ", ".join(sorted({r.benchmark for r in runs}))
                                + "".join(sorted({f" ({r.subset_applied.label})" for r in runs
                                                  if r.subset_applied is not None})))
    return html, images, runs


def tables_html(runs: Sequence[LoadedRun]) -> dict[str, str]:
    """benchmark -> HTML of its summary tables (the benchmark's own ``tables(..., with_paper=True)``); a
    plain metrics listing when the benchmark is not registered or cannot render these results."""
    from lensbench.views.viewer import md_to_html

    out: dict[str, str] = {}
    by_bench: dict[str, list] = {}
    for r in runs:
        if r.result is not None:
            by_bench.setdefault(r.benchmark, []).append(r.result)
    for name, results in by_bench.items():
        try:
            cls = describe(name)
            if cls is None:
                raise LookupError(f"no registered benchmark {name!r}")
            md = cls(None).tables(results, "md", with_paper=True)
        except Exception as exc:  # a benchmark mid-change must not stop the viewer
            md = f"(the benchmark's tables could not be rendered: {type(exc).__name__}: {exc})\n\n" + _metrics_md(results)
        out[name] = md_to_html(md)
    return out


def _metrics_md(results: list[RunResult]) -> str:
    lines = []
    for r in results:
        lines.append(f"### {r.model}")
        lines.append("| metric | column | value |")
        lines.append("|---|---|---|")
        for k, v in r.metrics.items():
            if isinstance(v, dict):
                for c, x in v.items():
                    if isinstance(x, (int, float)):
                        lines.append(f"| {k} | {c} | {x:.2f} |")
            elif isinstance(v, (int, float)):
                lines.append(f"| {k} |  | {v:.2f} |")
    return "\n".join(lines) + "\n"


def _leaderboard_html(runs: Sequence[LoadedRun], n_resamples: int, seed: int) -> str:
    """The headline leaderboard (with CIs) as HTML for the viewer's summary tab."""
    from lensbench.views.leaderboard import build_leaderboard, render_leaderboard
    from lensbench.views.viewer import md_to_html

    lb = build_leaderboard(list(runs), n_resamples=n_resamples, seed=seed, all_categories=False,
                           defaults=option_defaults(runs))
    return md_to_html(render_leaderboard(lb, "md"))


#: the most runs of one benchmark whose every pair is compared on the page (beyond it, each later run with the first)
MAX_PAIRED_RUNS = 12


def _comparisons(runs: Sequence[LoadedRun], n_resamples: int, seed: int,
                 warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """Every pair of runs of a benchmark (A = the one given first), so the viewer can compare any two; a
    benchmark with more than :data:`MAX_PAIRED_RUNS` runs: each later run against its first (the page
    compares other pairs on outcomes alone, without CIs)."""
    from itertools import combinations

    from lensbench.views.compare import compare_runs

    by_bench: dict[str, list[int]] = {}
    for i, r in enumerate(runs):
        if r.records is not None:
            by_bench.setdefault(r.benchmark, []).append(i)
    out = []
    for idx in by_bench.values():
        pairs = combinations(idx, 2) if len(idx) <= MAX_PAIRED_RUNS else ((idx[0], j) for j in idx[1:])
        for a, b in pairs:
            try:
                cmp = compare_runs(runs[a], runs[b], n_resamples=n_resamples, seed=seed)
            except (ValueError, LensbenchError) as exc:
                warn(f"no comparison of {runs[a].path} and {runs[b].path}: {exc}")
                continue
            out.append({**cmp.to_json(), "ia": a, "ib": b})
    return out
