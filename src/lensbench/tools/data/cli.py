"""``lensbench data download | check | where | stats`` (typer)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from lensbench.core.console import err_console, fail, guard
from lensbench.core.datahome import ENV_VAR, default_data_dir

__all__ = ["data_app"]

data_app = typer.Typer(help="Benchmark data: download the official releases into the layout the loaders read "
                            f"(default folder ~/.cache/lensbench/data/BENCH, moved by ${ENV_VAR}), check a folder, and "
                            "print the papers' dataset statistics of a folder.",
                       no_args_is_help=True)

_BENCH_HELP = "benchmark name ('lensbench list' shows them)"


def _say(msg: str) -> None:
    err_console.print(escape(msg), highlight=False)


def _layout_or_fail(bench: str):
    from lensbench.tools.data.layouts import get_layout

    try:
        return get_layout(bench)
    except KeyError as exc:
        fail(str(exc.args[0]))


@data_app.command("download")
@guard
def download_cmd(
    bench: Annotated[str, typer.Argument(help=_BENCH_HELP, metavar="BENCH")],
    dest: Annotated[Optional[Path], typer.Option("--dest", metavar="DIR",
                                                 help="target folder (default: the data home, see 'lensbench data where')")] = None,
    revision: Annotated[Optional[str], typer.Option("--revision", metavar="REV",
                                                    help="hub revision / git commit (default: the pinned one); with --from: the "
                                                         "revision of the local copy, recorded in the manifest")] = None,
    from_dir: Annotated[Optional[Path], typer.Option("--from", metavar="DIR",
                                                     help="lay out a local mirror or an existing copy instead of "
                                                          "downloading (the data folder is found inside DIR; files "
                                                          "with a pinned sha256 are checked first)")] = None,
) -> None:
    """Fetch a benchmark's official release (pinned revision, resumable, counts verified, manifest written)."""
    from lensbench.tools.data.download import download

    layout = _layout_or_fail(bench)
    from lensbench.core.console import err_console
    from lensbench.runtime.progress import Activity

    doc = download(bench, dest, revision=revision, from_dir=from_dir, log=_say,
                   activity=lambda label: Activity(err_console, label, unit="B"))
    where = dest or default_data_dir(bench)
    rev = doc.get("revision") or "unrecorded revision"
    _say(f"{bench}: {doc['n_files']} files in {where} ({rev}; fingerprint {doc['fingerprint']})")
    for note in layout.notes:
        _say(f"note: {note}")
    typer.echo(str(where))


@data_app.command("check")
@guard
def check_cmd(
    bench: Annotated[str, typer.Argument(help=_BENCH_HELP, metavar="BENCH")],
    data_dir: Annotated[Optional[Path], typer.Argument(help="data folder (default: the data home's)", metavar="DIR")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="no content hashing: sizes only, no fingerprint")] = False,
) -> None:
    """Validate a data folder (expected files, counts, missing media, manifest) without running anything."""
    from lensbench.tools.data.check import check

    _layout_or_fail(bench)
    root = data_dir or default_data_dir(bench)
    rep = check(bench, root, hash_content=not quick)
    for line in rep.lines():
        typer.echo(line)
    if not rep.ok:
        fail(f"{root}: {sum(not i.ok for i in rep.items)} check(s) failed for {bench}", code=1)


@data_app.command("where")
def where_cmd(bench: Annotated[Optional[str], typer.Argument(help=_BENCH_HELP, metavar="BENCH")] = None) -> None:
    """Print the default data folder of BENCH (or the data home)."""
    from lensbench.core.datahome import data_home

    typer.echo(str(default_data_dir(bench) if bench else data_home()))


@data_app.command("stats")
@guard
def stats_cmd(
    bench: Annotated[str, typer.Argument(help=_BENCH_HELP, metavar="BENCH")],
    data_dir: Annotated[Optional[Path], typer.Argument(help="data folder, a release or one a pipeline built "
                                                            "(default: the data home's)", metavar="DIR")] = None,
    fmt: Annotated[str, typer.Option("--format", help="md | csv | json")] = "md",
    plots: Annotated[Optional[Path], typer.Option("--plots", metavar="DIR",
                                                  help="also draw the tables and distributions as PNGs "
                                                       "(needs lensbench[plots])")] = None,
) -> None:
    """The paper's dataset statistics (figures and tables) computed on a data folder, beside the paper's numbers."""
    from lensbench.tools.data.stats import benchmark_stats, check_plots_dir

    from lensbench.report.datastats import plot_stats, render_stats

    check_plots_dir(plots)
    st = benchmark_stats(bench, data_dir or default_data_dir(bench))
    if fmt not in ("md", "csv", "json"):
        fail(f"--format must be md, csv or json, got {fmt!r}")
    typer.echo(render_stats(st, fmt), nl=False)
    if plots is not None:
        for p in plot_stats(st, plots):
            _say(f"wrote {p}")


_DEMO_NOTE = ("GENERATED DEMO DATA - NOT THE BENCHMARK.\n\nWritten by 'lensbench data demo {bench}' (lensbench {version}) "
              "in the release layout so every command can be tried offline. Its images, questions and answers are "
              "made up; scores on it mean nothing. Runs on this folder are labelled as demo runs (run.json: "
              "demo_data). The real data: lensbench data download {bench}\n")


@data_app.command("demo")
@guard
def demo_cmd(
    bench: Annotated[str, typer.Argument(help=_BENCH_HELP, metavar="BENCH")],
    dest: Annotated[Path, typer.Argument(help="folder to write (created; never the data home)", metavar="DIR")],
) -> None:
    """Write a small generated data set in BENCH's release layout (NOT the benchmark) to try every command offline.

    Prints the folder to give to --data-dir. The folder is labelled (DEMO-DATA-NOT-THE-BENCHMARK.txt) and runs on
    it record demo_data in run.json."""
    from lensbench.benchmarks.registry import get_benchmark
    from lensbench.core.datahome import DEMO_MARKER
    from lensbench.core.version import __version__

    try:
        cls = get_benchmark(bench)
    except KeyError as exc:
        fail(str(exc.args[0]))
    if dest.exists() and any(dest.iterdir()):
        fail(f"{dest} is not empty: give a new folder for the demo data")
    folder = cls.write_demo(dest)
    (folder / DEMO_MARKER).write_text(_DEMO_NOTE.format(bench=bench, version=__version__), encoding="utf-8")
    _say(f"{bench}: demo data (generated, NOT the benchmark) in {folder}")
    typer.echo(str(folder))
