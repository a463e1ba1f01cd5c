"""The ``lensbench`` command line (typer + rich): run, report, list, export, show, and the tool groups.

``lensbench run <benchmark>`` commands are built in :mod:`.runcmd`; the papers' side pipelines
(``lensbench genvip ...``) are mounted from the one list in :mod:`.tools`. Every command reports
failures the same way (:func:`lensbench.core.console.guard`): ``error: ...``, exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Optional

import typer

from lensbench.core.version import __version__
from lensbench.cli.lazy import lazy_group, run_command_loader, tool_group_loader
from lensbench.cli.evalcmd import register as register_eval
from lensbench.cli.mergecmd import register as register_merge
from lensbench.cli.helpfmt import MARKUP_MODE, install as install_help_format
from lensbench.cli.tools import TOOL_GROUPS
from lensbench.cli.listcmd import register as register_list
from lensbench.cli.view import RESAMPLES_HELP, SEED_HELP, SUBSET_HELP, read_subset
from lensbench.cli.view import register as register_view
from lensbench.cli.reproduce import register as register_reproduce
from lensbench.scoring.defaults import DEFAULT_RESAMPLES
from lensbench.core.console import err_console, fail, guard, make_console

# What a command does not use is imported inside it (issue 32.11: 'lensbench --help' imported numpy, pydantic's
# records, the runner and the benchmark registry, 0.5 s of its 1.1 s): the registry, the run machinery, the
# report and export code are imported by the commands that use them.


def _benchmark_names() -> list[str]:
    """Every benchmark name, built-in and plugin (imports the registry: called only when a name is looked up)."""
    from lensbench.benchmarks.registry import BENCHMARKS, plugins

    return [*BENCHMARKS, *plugins()]


class _RunLoaders(Mapping):
    """``lensbench run NAME`` loaders: built-in benchmarks (sorted), then plugins. Looking up a built-in name
    does not scan the installed distributions for plugins (~60 ms); listing them all does."""

    def __init__(self):
        from lensbench.benchmarks.registry import BENCHMARKS

        self._builtin = sorted(BENCHMARKS)

    def _names(self) -> list[str]:
        from lensbench.benchmarks.registry import plugins

        return [*self._builtin, *(n for n in plugins() if n not in self._builtin)]

    def __getitem__(self, name: str):
        if name in self._builtin or name in self._names():
            return run_command_loader(name)
        raise KeyError(name)

    def __iter__(self):
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


#: the top-level commands in help, group by group, in this order (the papers' tool groups close the list)
PANELS: list[tuple[str, list[str]]] = [
    ("Run", ["run", "eval", "merge", "list"]),
    ("Results", ["report", "view", "compare", "reproduce", "analyze", "show", "export", "log"]),
    ("Data", ["data"]),
    ("Tools", ["repair", "copy"] + [name for name, _target in TOOL_GROUPS if name not in ("data", "analyze")]),
]
app = typer.Typer(help="Evaluate multimodal LLMs on IF-Bench, RGB-Th-Bench, IV-Bench, GOBench and GroundingME "
                       "with their published protocols.", no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode=MARKUP_MODE,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  cls=lazy_group({name: tool_group_loader(target) for name, target in TOOL_GROUPS}, PANELS,
                                 benchmarks=_benchmark_names))
# run commands and tool groups are built on first use (cli/lazy.py): a run imports its own benchmark only
run_app = typer.Typer(help="Run a benchmark: lensbench run BENCHMARK --data-dir DIR --model SPEC --out RUN_DIR",
                      no_args_is_help=True, rich_markup_mode=MARKUP_MODE, cls=lazy_group({}, more=_RunLoaders))
app.add_typer(run_app, name="run")
out_console = make_console(stderr=False)


def _register_all() -> None:
    install_help_format()
    register_view(app)
    register_reproduce(app)
    register_eval(app)
    register_merge(app)
    register_list(app)


@app.command("report")
@guard
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="run folder(s), one or several benchmarks", metavar="RUN_DIR")],
    format: Annotated[str, typer.Option("--format", metavar="FORMAT", help="md (the paper's tables), csv (one tidy "
                                                                      "table: a row per number, with its 95% CI) or "
                                                                      "json")] = "md",
    with_paper: Annotated[bool, typer.Option("--with-paper", help="show the paper's published rows beside ours")] = False,
    leaderboard: Annotated[bool, typer.Option("--leaderboard", help="one row per model, each benchmark's headline "
                                                                    "metric with its 95% CI (default for several "
                                                                    "benchmarks)")] = False,
    resamples: Annotated[int, typer.Option("--resamples", min=1, help=RESAMPLES_HELP)] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", help=SEED_HELP)] = 0,
    subset: Annotated[Optional[Path], typer.Option("--subset", metavar="FILE", help=SUBSET_HELP)] = None,
) -> None:
    """Tables in the paper's layout for runs of one benchmark; a leaderboard across benchmarks.

    A run folder that cannot be read is listed, never stops the report (exit code 3 then); so is one
    whose store is missing or damaged (its numbers are shown, marked as the result last written).
    """
    from lensbench.benchmarks.registry import get_benchmark
    from lensbench.cli.runcmd import check_report_format, print_report, print_tidy
    from lensbench.core.errors import LensbenchError
    from lensbench.runtime.rebuild import load_for_report

    check_report_format(format, with_paper)
    item_subset = read_subset(subset)
    if item_subset is not None and with_paper:
        fail(f"--subset {subset}: a subset is not the paper's measurement; --with-paper compares only full runs")
    results, bad, warned, good = [], [], [], []
    for d in run_dirs:
        try:
            result, problem = load_for_report(d, err_console)
        except LensbenchError as exc:
            bad.append(f"{d}: {exc}")
            continue
        if item_subset is not None:
            from lensbench.views.runs import read_run

            try:
                result = read_run(d, subset=item_subset).result or result
            except LensbenchError as exc:
                fail(str(exc))
        results.append(result)
        good.append(d)
        if problem:
            warned.append(f"{d}: {problem}")
    names = {r.benchmark for r in results}
    if leaderboard or len(names) > 1:
        from lensbench.cli.view import leaderboard_report

        sys.stdout.write(leaderboard_report(run_dirs, format, n_resamples=resamples, seed=seed, subset=item_subset))
    elif results and format == "csv":
        print_tidy(good, n_resamples=resamples, seed=seed, subset=item_subset)
    elif results:
        if item_subset is not None and format == "md":
            sys.stdout.write("".join(f"> {r.run_dir}: {r.extra['subset']['label']}: not the paper's measurement, "
                                     "not comparable with the full set\n" for r in results if "subset" in r.extra)
                             + "\n")
        print_report(get_benchmark(names.pop())(None), results, format, with_paper, subset=item_subset)
    for d, r in zip(good, results):
        if r.extra.get("not_stored"):
            err_console.print(f"note: {d}: {r.extra['not_stored']}", highlight=False, markup=False)
    for line in bad:
        err_console.print(f"not reported: {line}", highlight=False, markup=False)
    for line in warned:
        err_console.print(f"warning: {line}", highlight=False, markup=False)
    if bad or warned:
        raise typer.Exit(3)


@app.command("show")
@guard
def show(run_dir: Annotated[Path, typer.Argument(help="a finished run folder", metavar="RUN_DIR")],
         id: Annotated[str, typer.Option("--id", metavar="SAMPLE_ID", help="sample id (as in samples.jsonl)")],
         out: Annotated[Optional[Path], typer.Option("--out", metavar="PNG",
                                                     help="PNG path (default: RUN_DIR/show/<id>.png)")] = None) -> None:
    """Draw what the model did on one sample (e.g. GroundingME: ground-truth and predicted boxes) as a PNG."""
    from lensbench.benchmarks.registry import get_benchmark
    from lensbench.report.runs import iter_samples, load_result
    from lensbench.runtime.folder import check_out_file

    bench = get_benchmark(load_result(run_dir).benchmark)(None)
    if not bench.can_draw:
        fail(f"{run_dir}: 'lensbench show' has nothing to draw for {bench.name} (its samples have no boxes or "
             "marks); 'lensbench view' shows every sample")
    record = next((r for r in iter_samples(run_dir) if r.sample_id == id), None)
    if record is None:
        fail(f"{run_dir}: no sample with id {id!r} in samples.jsonl")
    if out is None:
        out = run_dir / "show" / (id.replace("/", "_") + ".png")
    check_out_file(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out_console.print(str(bench.draw(record, out)), highlight=False)


@app.command("log")
@guard
def log_cmd(run_dir: Annotated[Path, typer.Argument(help="a finished run folder", metavar="RUN_DIR")],
            to: Annotated[list[str], typer.Option("--log-to", metavar="wandb|mlflow", help="tracker (repeatable)")],
            project: Annotated[Optional[str], typer.Option("--log-project", metavar="NAME",
                                                           help="W&B project / MLflow experiment (default: "
                                                                "lensbench)")] = None) -> None:
    """Log a finished run to Weights & Biases or MLflow: settings, metrics with 95% CIs, the per-sample table.

    This is what 'run --log-to' does at the end of a run (the same flags: --log-to, --log-project). MLflow
    with MLFLOW_TRACKING_URI unset: the local store ./mlruns (MLflow's database store when installed)."""
    from pydantic import ValidationError

    from lensbench.cli.runcmd import validation_message
    from lensbench.core.extras import check_requirements
    from lensbench.runtime.settings import RunSettings
    from lensbench.runtime.tracking import check_trackers, log_run, tracker_requirements

    try:
        trackers = RunSettings.model_validate({"model": "-", "out": run_dir, "log_to": to}).log_to
    except ValidationError as exc:
        fail(validation_message(exc))
    check_requirements(tracker_requirements(trackers))
    check_trackers(trackers)
    for t in trackers:
        out_console.print(f"logged to {log_run(run_dir, t, project=project)}", highlight=False)


@app.command("export")
@guard
def export(run_dir: Annotated[Path, typer.Argument(help="run folder", metavar="RUN_DIR")],
           out: Annotated[Optional[Path], typer.Option("--out", metavar="FILE",
                                                       help="file to write (default: stdout)")] = None,
           judge: Annotated[bool, typer.Option("--judge/--no-judge", help="also export judge/parser replies")] = False,
           fmt: Annotated[str, typer.Option("--format", metavar="jsonl|vlmevalkit-tsv|vlmevalkit-xlsx|lmms-eval",
                                            help="jsonl: lensbench's replayable JSONL; the others: VLMEvalKit "
                                                 "predictions or lmms-eval samples (docs/interop.md)")] = "jsonl"
           ) -> None:
    """Write a run's requests and replies (errors included) as replayable JSONL ('--model replay:FILE' reads it),
    or as VLMEvalKit predictions / lmms-eval samples ('--model predictions:FILE' reads those)."""
    from lensbench.core.jsonl import dumps_line
    from lensbench.core.writes import write_atomically
    from lensbench.runtime.export import export_records
    from lensbench.runtime.folder import check_out_file

    if out is not None:
        check_out_file(out)
    if fmt != "jsonl":
        from lensbench.runtime.export_formats import FORMATS, export_foreign

        if fmt in FORMATS and out is None:
            fail(f"--format {fmt} needs --out FILE{FORMATS[fmt]}")
        n = export_foreign(run_dir, fmt, out)
        err_console.print(f"wrote {n} rows to {out}", highlight=False, markup=False)
        return

    def write(fh) -> None:
        for rec in export_records(run_dir, roles=("model", "judge") if judge else ("model",)):
            fh.write(dumps_line(rec) + "\n")

    if out is None:
        write(sys.stdout)
    else:
        write_atomically(out, write)


@app.command("repair")
@guard
def repair(run_dir: Annotated[Path, typer.Argument(help="run folder with a damaged store", metavar="RUN_DIR")]) -> None:
    """Salvage every readable reply of a damaged responses.sqlite into a fresh store (the old file is kept)."""
    from lensbench.runtime.repair import repair_store

    rep = repair_store(run_dir)
    if rep.damaged_copy is None:
        out_console.print(f"{run_dir}: the store is healthy ({rep.salvaged} replies); nothing to repair, nothing "
                          "changed", highlight=False, markup=False)
        return
    out_console.print(f"salvaged {rep.salvaged} replies ({rep.unreadable} unreadable rows lost); the damaged store "
                      f"is kept as {rep.damaged_copy}. Run the same 'lensbench run' command again to finish the run.",
                      highlight=False, markup=False)


@app.command("copy")
@guard
def copy(run_dir: Annotated[Path, typer.Argument(help="run folder to copy", metavar="RUN_DIR")],
         dest: Annotated[Path, typer.Argument(help="new folder (refused if it exists)", metavar="DEST")]) -> None:
    """Copy a run folder safely: its store through SQLite's backup API, its other files byte for byte.

    Never 'cp -al' a run folder: the two would share one store, and writing either loses replies of both."""
    from lensbench.runtime.copy import copy_run

    rep = copy_run(run_dir, dest)
    out_console.print(f"copied {run_dir} to {rep.dest}: {rep.replies} replies ({rep.rows} stored rows), "
                      f"{rep.files} other files", highlight=False, markup=False)


@app.callback(invoke_without_command=True)
def _main(version: Annotated[bool, typer.Option("--version", help="print the version")] = False) -> None:
    if version:
        out_console.print(__version__)
        raise typer.Exit()


_register_all()
