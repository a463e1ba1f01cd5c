"""``lensbench view`` (the run viewer), ``lensbench compare`` (paired comparison of two runs) and
the multi-benchmark leaderboard behind ``lensbench report`` (:func:`leaderboard_report`).

Mounted on the main app by :func:`register`. Everything is read from run folders
(``run.json``, ``samples.jsonl``, ``result.json``); nothing is sent to a model.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from lensbench.core.errors import LensbenchError
from lensbench.report.runs import LoadedRun, load_run
from lensbench.core.console import fail, guard, make_console, warn
from lensbench.core.writes import write_atomically
from lensbench.runtime.folder import check_out_file
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES

RESAMPLES_HELP = "resamples of every CI and p-value (the same count in report, view and compare)"
SEED_HELP = "seed of the resampling (recorded beside every CI)"

__all__ = ["register", "leaderboard_report", "view", "compare", "benchmark_tables_html", "write_viewer",
           "option_defaults", "RESAMPLES_HELP", "SEED_HELP"]

console = make_console(soft_wrap=True)


def benchmark_tables_html(runs: Sequence[LoadedRun]) -> dict[str, str]:
    """benchmark -> HTML of its summary tables (the benchmark's own ``tables(..., with_paper=True)``;
    a plain metrics listing when the benchmark cannot render these results)."""
    from lensbench.benchmarks.registry import get_benchmark
    from lensbench.report.viewer import md_to_html

    out: dict[str, str] = {}
    by_bench: dict[str, list] = {}
    for r in runs:
        if r.result is not None:
            by_bench.setdefault(r.benchmark, []).append(r.result)
    for name, results in by_bench.items():
        try:
            md = get_benchmark(name)(None).tables(results, "md", with_paper=True)
        except Exception as exc:  # a benchmark mid-change must not stop the viewer
            md = f"(the benchmark's tables could not be rendered: {type(exc).__name__}: {exc})\n\n" + _metrics_md(results)
        out[name] = md_to_html(md)
    return out


def _metrics_md(results) -> str:
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


def option_defaults(runs: Sequence[LoadedRun]) -> dict[str, dict[str, Any]]:
    """benchmark -> its default options (JSON values), for the benchmarks of ``runs`` that are known."""
    from lensbench.benchmarks.registry import BENCHMARKS, get_benchmark

    out = {}
    for b in {r.benchmark for r in runs}:
        if b in BENCHMARKS:
            out[b] = get_benchmark(b).Options().model_dump(mode="json")
    return out


def _leaderboard_html(runs: Sequence[LoadedRun], n_resamples: int, seed: int) -> str:
    """The headline leaderboard (with CIs) as HTML for the viewer's summary tab."""
    from lensbench.report.leaderboard import build_leaderboard, render_leaderboard
    from lensbench.report.viewer import md_to_html

    lb = build_leaderboard(list(runs), n_resamples=n_resamples, seed=seed, all_categories=False,
                           defaults=option_defaults(runs))
    return md_to_html(render_leaderboard(lb, "md"))


def _comparisons(runs: Sequence[LoadedRun], n_resamples: int, seed: int) -> list[dict[str, Any]]:
    """Every later run of a benchmark against its first run (A = first)."""
    from lensbench.report.compare import compare_runs

    out = []
    first: dict[str, int] = {}
    for i, r in enumerate(runs):
        if r.records is None:
            continue
        if r.benchmark not in first:
            first[r.benchmark] = i
            continue
        a = first[r.benchmark]
        try:
            cmp = compare_runs(runs[a], r, n_resamples=n_resamples, seed=seed)
        except (ValueError, LensbenchError) as exc:
            warn(f"no comparison of {runs[a].path} and {r.path}: {exc}", console)
            continue
        out.append({**cmp.to_json(), "ia": a, "ib": i})
    return out


def write_viewer(run_dirs: Sequence[Path], out: Path | None = None, *, embed: bool = True, figures: bool = True,
                 compare: bool = True, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, max_thumbs: int = 3000,
                 chunk: int | None = None):
    """Build the viewer for ``run_dirs``; writes ``out`` when given (refused at once, before anything is
    built, when it is a run folder's own file). Returns ``(html, image registry, runs)``."""
    from lensbench.report.viewer import build_viewer

    if out is not None:
        check_out_file(out)
    runs = [load_run(d) for d in run_dirs]
    for r in runs:
        for p in r.problems:
            warn(str(p), console)
    figs: list[dict[str, str]] = []
    if figures:
        try:
            from lensbench.report.figures import make_figures

            figs = [{"title": t, "src": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}
                    for t, png in make_figures(runs)]
        except Exception as exc:  # plots are extras: never lose the viewer for them
            warn(f"plots skipped: {type(exc).__name__}: {exc}", console)
    comps = _comparisons(runs, n_resamples, seed) if compare else []
    tables = benchmark_tables_html(runs)
    tables["_leaderboard"] = _leaderboard_html(runs, n_resamples, seed)
    html, images = build_viewer(runs, tables=tables, comparisons=comps, figures=figs,
                                embed=embed, max_thumbs=max_thumbs, **({"chunk": chunk} if chunk else {}),
                                title="lensbench: " + ", ".join(sorted({r.benchmark for r in runs})))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, lambda fh: fh.write(html))
    return html, images, runs


def view(
    run_dirs: Annotated[list[Path], typer.Argument(help="run folder(s), any benchmarks", metavar="RUN_DIR")],
    out: Annotated[Path, typer.Option("--out", help="HTML file to write")] = Path("report.html"),
    serve: Annotated[bool, typer.Option("--serve", help="serve from a local server instead (images not embedded)")] = False,
    port: Annotated[int, typer.Option("--port", help="port for --serve")] = 8765,
    figures: Annotated[bool, typer.Option("--figures/--no-figures", help="include the plots")] = True,
    figures_dir: Annotated[Optional[Path], typer.Option("--figures-dir", help="also write the plots as PNG files here")] = None,
    resamples: Annotated[int, typer.Option("--resamples", min=1, help=RESAMPLES_HELP)] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help=SEED_HELP)] = 0,
    max_thumbs: Annotated[int, typer.Option("--max-thumbs", help="embed thumbnails for at most this many images")] = 3000,
) -> None:
    """See what the model did: one self-contained HTML page (tables, samples, comparisons, plots)."""
    html, images, runs = write_viewer(run_dirs, None if serve else out, embed=not serve, figures=figures,
                                      n_resamples=resamples, seed=seed, max_thumbs=max_thumbs)
    if figures_dir is not None:
        from lensbench.report.figures import make_figures

        figures_dir.mkdir(parents=True, exist_ok=True)
        for i, (title, png) in enumerate(make_figures(runs)):
            name = "".join(ch if ch.isalnum() else "_" for ch in title)[:60]
            (figures_dir / f"{i:02d}_{name}.png").write_bytes(png)
        console.print(f"plots: {figures_dir}", highlight=False)
    if serve:
        from lensbench.report.viewer.serve import serve as run_server
        from lensbench.report.viewer.serve import serve_roots

        try:
            run_server(html, images.paths, port=port, roots=serve_roots(runs),
                       announce=lambda url: console.print(f"serving {url} (Ctrl-C to stop)", highlight=False))
        except LensbenchError as exc:
            fail(str(exc))
        return
    console.print(f"wrote {out} ({len(html) / 1e6:.1f} MB, {sum(len(r.records or []) for r in runs)} samples)",
                  highlight=False)


def compare(
    run_a: Annotated[Path, typer.Argument(help="run folder A", metavar="RUN_A")],
    run_b: Annotated[Path, typer.Argument(help="run folder B (same benchmark)", metavar="RUN_B")],
    format: Annotated[str, typer.Option("--format", help="md, csv or json")] = "md",
    resamples: Annotated[int, typer.Option("--resamples", min=1, help=RESAMPLES_HELP)] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help=SEED_HELP)] = 0,
) -> None:
    """Paired difference A - B on the shared samples, per metric and category (CI, p-value), and flipped samples."""
    from lensbench.report.compare import compare_runs, render_comparison

    a, b = load_run(run_a), load_run(run_b)
    try:
        cmp = compare_runs(a, b, n_resamples=resamples, seed=seed)
        text = render_comparison(cmp, format)
    except (ValueError, LensbenchError) as exc:
        fail(str(exc))
    sys.stdout.write(text)


def leaderboard_report(run_dirs: Sequence[str | Path], fmt: str = "md", *, n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = 0, every_metric: bool = False) -> str:
    """The multi-benchmark leaderboard of ``run_dirs`` as ``md``, ``csv`` (tidy) or ``json`` text;
    ``every_metric``: every number of each result, not only the headline metrics (``report --format csv``
    of one benchmark).

    Never stops at a bad run (listed under "Unfinished or left-out runs"). Raises ValueError
    for an unknown ``fmt``.
    """
    from lensbench.report.leaderboard import build_leaderboard, render_leaderboard

    if fmt not in ("md", "csv", "json"):
        raise ValueError(f"unknown format {fmt!r} (md, csv or json)")
    runs = [load_run(d, with_records=False) for d in run_dirs]  # records are read only where needed
    return render_leaderboard(build_leaderboard(runs, n_resamples=n_resamples, seed=seed,
                                                defaults=option_defaults(runs), every_metric=every_metric), fmt)


def register(app: typer.Typer) -> None:
    """Mount ``view`` and ``compare`` on ``app``."""
    app.command("view")(guard(view))  # a refused --out or a full disk: one line, no traceback
    app.command("compare")(compare)
