"""``lensbench view`` (the run viewer), ``lensbench compare`` (paired comparison of two runs) and
the multi-benchmark leaderboard behind ``lensbench report`` (:func:`leaderboard_report`).

Mounted on the main app by :func:`register`. The reports are assembled in :mod:`lensbench.views.assemble`;
this module writes or serves the result.
Everything is read from run folders; nothing is sent to a model.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.console import fail, guard, make_console, warn
from lensbench.scoring.defaults import DEFAULT_RESAMPLES

RESAMPLES_HELP = "resamples of every CI and p-value (the same count in report, view and compare)"
SEED_HELP = "seed of the resampling (recorded beside every CI)"

__all__ = ["register", "leaderboard_report", "view", "compare", "write_viewer", "RESAMPLES_HELP",
           "SEED_HELP"]

console = make_console(soft_wrap=True)

SUBSET_HELP = ("restrict every run to the items of a subset file ('lensbench analyze items --out'); labelled, not "
               "the paper's measurement")


def read_subset(path: Path | None):
    """The checked subset file ``path`` (:func:`lensbench.report.subset.load_subset`), or None; a bad file is
    :func:`fail` (one line, exit 2)."""
    if path is None:
        return None
    from lensbench.report.subset import load_subset

    try:
        return load_subset(path)
    except LensbenchError as exc:
        fail(str(exc))


def write_viewer(run_dirs: Sequence[Path], out: Path | None = None, *, embed: bool = True, figures: bool = True,
                 compare: bool = True, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, max_thumbs: int = 3000,
                 chunk: int | None = None, subset=None):
    """Build the viewer for ``run_dirs`` (:func:`lensbench.views.assemble.viewer_page`); writes ``out`` when
    given (refused at once, before anything is built, when it is a run folder's own file). Returns
    ``(html, image registry, runs)``; ``subset``: an :class:`~lensbench.report.subset.ItemSubset` every run is
    restricted to."""
    from lensbench.core.writes import write_atomically
    from lensbench.views.assemble import viewer_page
    from lensbench.runtime.folder import check_out_file

    if out is not None:
        check_out_file(out)
    html, images, runs = viewer_page(run_dirs, embed=embed, figures=figures, compare=compare,
                                     n_resamples=n_resamples, seed=seed, max_thumbs=max_thumbs, chunk=chunk,
                                     warn=lambda msg: warn(msg, console), subset=subset)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, lambda fh: fh.write(html))
    return html, images, runs


def check_view_inputs(run_dirs: Sequence[Path], figures_dir: Path | None, locks: ExitStack) -> None:
    """Refuse, before anything is built or written: a run folder that does not exist (or is a file), a
    ``--figures-dir`` that is an existing file, and a run folder another process is writing (its lock is
    taken shared, held by ``locks`` while the page is built). Raises ConfigError naming the path."""
    from lensbench.runtime.lock import RunLock

    if figures_dir is not None and figures_dir.exists() and not figures_dir.is_dir():
        raise ConfigError(f"--figures-dir {figures_dir} is a file; give a folder for the PNG plots")
    for d in run_dirs:
        if not d.is_dir():
            raise ConfigError(f"{d}: no such run folder" if not d.exists() else f"{d}: not a folder; give a run folder")
    for d in run_dirs:
        try:
            locks.enter_context(RunLock(d, shared=True))
        except ConfigError:
            raise ConfigError(f"{d}: a run is still being written there by another lensbench process; view it once "
                              "that run has finished") from None


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
    subset: Annotated[Optional[Path], typer.Option("--subset", metavar="FILE", help=SUBSET_HELP)] = None,
) -> None:
    """See what the model did: one self-contained HTML page (tables, samples, comparisons, plots)."""
    from lensbench.core.console import err_console
    from lensbench.runtime.progress import Activity

    item_subset = read_subset(subset)
    with ExitStack() as locks:
        check_view_inputs(run_dirs, figures_dir, locks)
        locks.enter_context(Activity(err_console, f"view: building the page of {len(run_dirs)} run folder(s)"))
        html, images, runs = write_viewer(run_dirs, None if serve else out, embed=not serve, figures=figures,
                                          n_resamples=resamples, seed=seed, max_thumbs=max_thumbs,
                                          subset=item_subset)
    if figures_dir is not None:
        from lensbench.views.figures import make_figures

        figures_dir.mkdir(parents=True, exist_ok=True)
        for i, (title, png) in enumerate(make_figures(runs)):
            name = "".join(ch if ch.isalnum() else "_" for ch in title)[:60]
            (figures_dir / f"{i:02d}_{name}.png").write_bytes(png)
        console.print(f"plots: {figures_dir}", highlight=False)
    if serve:
        from lensbench.views.viewer.serve import serve as run_server
        from lensbench.views.viewer.serve import serve_roots

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
    subset: Annotated[Optional[Path], typer.Option("--subset", metavar="FILE", help=SUBSET_HELP)] = None,
) -> None:
    """Paired difference A - B on the shared samples, per metric and category (CI, p-value), and flipped samples."""
    from lensbench.views.compare import compare_runs, render_comparison
    from lensbench.views.runs import read_run

    item_subset = read_subset(subset)
    try:
        a, b = read_run(run_a, subset=item_subset), read_run(run_b, subset=item_subset)
        cmp = compare_runs(a, b, n_resamples=resamples, seed=seed)
        text = render_comparison(cmp, format)
    except (ValueError, LensbenchError) as exc:
        fail(str(exc))
    if format == "md":
        from lensbench.views.assemble import subset_header

        text = subset_header([a, b]) + text
    sys.stdout.write(text)


def leaderboard_report(run_dirs: Sequence[str | Path], fmt: str = "md", *, n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = 0, every_metric: bool = False, subset=None) -> str:
    """The multi-benchmark leaderboard of ``run_dirs`` (:func:`lensbench.views.assemble.leaderboard_text`;
    ``every_metric``: every number of each result). Raises ValueError for an unknown ``fmt``."""
    from lensbench.views.assemble import leaderboard_text

    return leaderboard_text(run_dirs, fmt, n_resamples=n_resamples, seed=seed, every_metric=every_metric,
                            subset=subset)


def register(app: typer.Typer) -> None:
    """Mount ``view`` and ``compare`` on ``app``."""
    app.command("view")(guard(view))  # a refused --out or a full disk: one line, no traceback
    app.command("compare")(compare)
