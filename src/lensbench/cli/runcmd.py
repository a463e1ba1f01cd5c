"""``lensbench run <benchmark>`` commands, built from pydantic models.

The shared flags come from :class:`lensbench.runtime.runner.RunSettings` and each benchmark's own
flags from its ``Options`` model, so a benchmark adds a flag by adding a pydantic field. Every
flag is validated before anything is loaded or sent.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from pydantic import BaseModel, ValidationError

from lensbench.benchmarks.base import Benchmark
from lensbench.core.console import err_console, fail, guard, warn
from lensbench.runtime.runner import run_benchmark
from lensbench.runtime.settings import RunSettings
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES

__all__ = ["REPORT_FORMATS", "check_report_format", "make_run_command", "print_report", "print_tidy",
           "validation_message"]

REPORT_FORMATS = ("md", "csv", "json")


def _unwrap(ann: Any) -> tuple[Any, bool]:
    """(inner type, is_optional) of a field annotation."""
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return ann, False


def _metavar(name: str, inner: Any) -> str:
    if inner is Path:
        return "DIR" if name.endswith("dir") or name == "out" else "PATH"
    if inner is int:
        return "N"
    if inner is float:
        return "X"
    if name in ("model_arg", "judge_model_arg"):
        return "KEY=VALUE"
    if name == "log_to":
        return "wandb|mlflow"
    return name.split("_")[-1].upper() if name in ("model", "judge_model", "base_url", "judge_base_url") else "TEXT"


def _help(text: str | None) -> str:
    """Field description as help text: reST double backticks become plain quotes."""
    return re.sub(r"``([^`]+)``", r"'\1'", text or "")


def params_from_model(model: type[BaseModel], skip: frozenset[str] | set[str] = frozenset()) -> list[inspect.Parameter]:
    """Keyword-only typer parameters, one per field of ``model`` (``--field-name``; bools as ``--x/--no-x``)."""
    params = []
    for name, f in model.model_fields.items():
        if name in skip:
            continue
        inner, optional = _unwrap(f.annotation)
        required = f.is_required()
        default = ... if required else (f.default_factory() if f.default_factory else f.default)
        flag = "--" + name.replace("_", "-")
        extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        decls = [flag] + ([str(extra["short"])] if extra.get("short") else [])
        help_ = _help(f.description)
        if typing.get_origin(inner) is list:
            item = typing.get_args(inner)[0]
            ann = Optional[list[item]]
            default = None if not required else ...
            opt = typer.Option(*decls, help=help_ + " (repeatable)", metavar=_metavar(name, item))
        elif inner is bool:
            ann = Optional[bool] if optional else bool
            # a flag that is off by default needs no --no- form; unset (None) or on-by-default ones do
            decl = flag if default is False else f"{flag}/--no-{flag[2:]}"
            opt = typer.Option(decl, help=help_)
        else:
            if typing.get_origin(inner) is typing.Literal:
                choices = typing.get_args(inner)
                help_ += f" [{'|'.join(map(str, choices))}]"
                inner = str
            ann = Optional[inner] if (optional or default is None) else inner
            opt = typer.Option(flag, help=help_, metavar=_metavar(name, inner))
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=Annotated[ann, opt]))
    return params


def validation_message(exc: ValidationError) -> str:
    """One line naming each bad flag: ``--flag: what is wrong``."""
    msgs = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e["loc"])
        msgs.append(f"--{loc.replace('_', '-')}: {e['msg']}")
    return "; ".join(msgs)


def check_report_format(fmt: str, with_paper: bool) -> None:
    """Refuse (exit 2) a report format other than :data:`REPORT_FORMATS`, and ``--with-paper`` with csv
    (the csv is the tidy table of the runs' own numbers; the paper's rows are in the md tables)."""
    if fmt not in REPORT_FORMATS:
        fail(f"--format must be one of {', '.join(REPORT_FORMATS)}, got {fmt!r}")
    if with_paper and fmt == "csv":
        fail("--with-paper shows the paper's rows in the md tables; --format csv is one tidy table of these runs' "
             "own numbers (use --format md --with-paper for the paper's rows)")


def print_tidy(run_dirs: Sequence[Path], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, subset=None) -> None:
    """Write the tidy CSV of runs of one benchmark to stdout: a row per number of each ``result.json``
    (model, benchmark, settings, metric, category, value, 95% CI, n, how the CI was drawn; the
    leaderboard CSV's columns), headline metric first; ``subset``: an item subset the runs are restricted to."""
    from lensbench.cli.view import leaderboard_report

    sys.stdout.write(leaderboard_report(run_dirs, "csv", n_resamples=n_resamples, seed=seed, every_metric=True,
                                        subset=subset))
    sys.stdout.flush()


def print_report(bench: Benchmark, results, fmt: str, with_paper: bool, subset=None) -> None:
    """Write the benchmark's tables (md/csv) or the result JSON to stdout; md tables are headed by what each
    run covers of the benchmark's release when it is not all of it (:func:`lensbench.report.coverage.coverage_header`:
    part of the release, demo data, failed requests) and by the input perturbation of a perturbed run
    (:func:`lensbench.report.runinfo.perturbation_header`); ``subset``: the item subset the results were cut to
    (the coverage is then the subset's)."""
    if fmt == "md":
        from lensbench.report.coverage import coverage_header
        from lensbench.views.runs import read_run

        from lensbench.report.runinfo import perturbation_header

        loaded = [read_run(r.run_dir, with_records=False, subset=subset) for r in results if r.run_dir]
        sys.stdout.write(coverage_header(loaded) + perturbation_header(loaded))
    if fmt == "json":
        docs = [r.to_json() for r in results]
        sys.stdout.write(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, ensure_ascii=False, default=str)
                         + "\n")
    else:
        sys.stdout.write(bench.tables(results, fmt=fmt, with_paper=with_paper))
    sys.stdout.flush()


def make_run_command(bench_cls: type[Benchmark]):
    """The typer command function for ``lensbench run <bench_cls.name>``."""
    common = params_from_model(RunSettings)
    own = params_from_model(bench_cls.Options, skip=set(RunSettings.model_fields))
    extra = [
        inspect.Parameter("format", inspect.Parameter.KEYWORD_ONLY, default="md", annotation=Annotated[
            str, typer.Option("--format", metavar="FORMAT", help="table format printed at the end: md, csv or json")]),
        inspect.Parameter("with_paper", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[
            bool, typer.Option("--with-paper", help="show the paper's published rows beside ours")]),
    ]

    @guard
    def command(**kwargs):
        fmt = kwargs.pop("format")
        with_paper = kwargs.pop("with_paper")
        check_report_format(fmt, with_paper)
        common_kw = {k: kwargs.pop(k) for k in list(kwargs) if k in RunSettings.model_fields}
        common_kw = {k: v for k, v in common_kw.items() if v is not None or k in ("thinking",)}
        try:
            settings = RunSettings(**common_kw)
            options = bench_cls.Options(**{k: v for k, v in kwargs.items() if v is not None})
        except ValidationError as exc:
            fail(validation_message(exc))
        bench = bench_cls(options)
        result = run_benchmark(bench, settings, console=err_console)
        if fmt == "csv":
            print_tidy([settings.out])
        else:
            print_report(bench, [result], fmt, with_paper)
        err_console.print(f"run folder: {settings.out}", highlight=False)
        for note in result.extra.get("predictions") or ():  # another harness's file: what was read (docs/interop.md)
            err_console.print(f"predictions: {note}", highlight=False, markup=False)
        if result.extra.get("partial"):
            err_console.print(f"partial run: {result.extra['partial']}; reports mark it partial", highlight=False,
                              markup=False)
        if result.counts.get("n_error"):
            first = result.extra.get("first_error") or ""
            warn(f"incomplete run: {result.counts.get('n_error')} request(s) failed (first: {first}); "
                 + settings.failed_hint("run again with the same --out"))
            raise typer.Exit(3)

    command.__signature__ = inspect.Signature(common + own + extra)
    command.__doc__ = f"Run {bench_cls.title}. " + _help(inspect.getdoc(bench_cls.Options))
    command.__name__ = bench_cls.name.replace("-", "_")
    return command
