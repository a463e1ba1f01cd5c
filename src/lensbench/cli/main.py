"""The ``lensbench`` command line (typer + rich).

``lensbench run <benchmark>`` commands are built from :class:`lensbench.runner.RunSettings`
(the shared flags) and each benchmark's ``Options`` model (its own flags), so a benchmark adds a
flag by adding a pydantic field. The papers' side pipelines (``lensbench genvip ...``) are mounted
from the one list in :mod:`lensbench.cli.tools`.
"""

from __future__ import annotations

import inspect
import json
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console

from lensbench import __version__
from lensbench.backends.providers import PROVIDERS
from lensbench.benchmarks import base as bench_base
from lensbench.benchmarks.registry import all_benchmarks, get_benchmark
from lensbench.cli.tools import mount_tools
from lensbench.core.errors import LensbenchError
from lensbench.run.runner import RunSettings, load_result, run_benchmark

app = typer.Typer(help="Evaluate multimodal LLMs on IF-Bench, RGB-Th-Bench, IV-Bench, GOBench and GroundingME "
                       "with their published protocols.", no_args_is_help=True, pretty_exceptions_enable=False)
run_app = typer.Typer(help="Run a benchmark: lensbench run BENCHMARK --data-dir DIR --model SPEC --out RUN_DIR",
                      no_args_is_help=True)
app.add_typer(run_app, name="run")
console = Console(stderr=True, soft_wrap=True)
out_console = Console()

_SHORT = {"concurrency": None}


def _fail(msg: str, code: int = 2) -> typing.NoReturn:
    console.print(f"[bold red]error:[/] {msg}", highlight=False)
    raise typer.Exit(code)


def _unwrap(ann: Any) -> tuple[Any, bool]:
    """(inner type, is_optional) of a field annotation."""
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return ann, False


def _params_from_model(model: type[BaseModel], skip: set[str] = frozenset(), positional: set[str] = frozenset()):
    params = []
    for name, f in model.model_fields.items():
        if name in skip:
            continue
        inner, optional = _unwrap(f.annotation)
        required = f.is_required()
        default = ... if required else (f.default_factory() if f.default_factory else f.default)
        flag = "--" + name.replace("_", "-")
        help_ = f.description or ""
        if typing.get_origin(inner) is list:
            ann = Optional[list[typing.get_args(inner)[0]]]
            default = None if not required else ...
            opt = typer.Option(flag, help=help_)
        elif inner is bool:
            ann = Optional[bool] if optional else bool
            decls = [f"{flag}/--no-{flag[2:]}"]
            opt = typer.Option(*decls, help=help_)
        else:
            if typing.get_origin(inner) is typing.Literal:
                inner = str
            ann = Optional[inner] if (optional or default is None) else inner
            opt = typer.Option(flag, help=help_)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=Annotated[ann, opt]))
    return params


def _make_run_command(bench_cls: type[bench_base.Benchmark]):
    common = _params_from_model(RunSettings)
    own = _params_from_model(bench_cls.Options, skip=set(RunSettings.model_fields))
    extra = [
        inspect.Parameter("format", inspect.Parameter.KEYWORD_ONLY, default="md",
                          annotation=Annotated[str, typer.Option("--format", help="table format printed at the end: md, csv or json")]),
        inspect.Parameter("with_paper", inspect.Parameter.KEYWORD_ONLY, default=False,
                          annotation=Annotated[bool, typer.Option("--with-paper", help="show the paper's published rows beside ours")]),
    ]

    def command(**kwargs):
        fmt = kwargs.pop("format")
        with_paper = kwargs.pop("with_paper")
        common_kw = {k: kwargs.pop(k) for k in list(kwargs) if k in RunSettings.model_fields}
        common_kw = {k: v for k, v in common_kw.items() if v is not None or k in ("thinking",)}
        try:
            settings = RunSettings(**common_kw)
            options = bench_cls.Options(**{k: v for k, v in kwargs.items() if v is not None})
        except ValidationError as exc:
            _fail(_validation_message(exc))
        try:
            bench = bench_cls(options)
            result = run_benchmark(bench, settings, console=console)
        except LensbenchError as exc:
            _fail(str(exc))
        except FileNotFoundError as exc:
            _fail(str(exc))
        _print_report(bench, [result], fmt, with_paper)
        console.print(f"run folder: {settings.out}", highlight=False)
        if not result.complete:
            first = result.extra.get("first_error") or ""
            console.print(f"[yellow]incomplete run: {result.counts.get('n_error')} request(s) failed "
                          f"(first: {first}); run again with the same --out to retry them[/]", highlight=False)
            raise typer.Exit(3)

    command.__signature__ = inspect.Signature(common + own + extra)
    command.__doc__ = f"Run {bench_cls.title}. " + (inspect.getdoc(bench_cls.Options) or "")
    command.__name__ = bench_cls.name.replace("-", "_")
    return command


def _validation_message(exc: ValidationError) -> str:
    msgs = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e["loc"])
        msgs.append(f"--{loc.replace('_', '-')}: {e['msg']}")
    return "; ".join(msgs)


def _print_report(bench, results, fmt: str, with_paper: bool) -> None:
    if fmt == "json":
        docs = [r.to_json() for r in results]
        out_console.print_json(json.dumps(docs[0] if len(docs) == 1 else docs, default=str))
    elif fmt in ("md", "csv"):
        sys.stdout.write(bench.tables(results, fmt=fmt, with_paper=with_paper))
        sys.stdout.flush()
    else:
        _fail(f"--format must be md, csv or json, got {fmt!r}")


def _register_all() -> None:
    for name, cls in sorted(all_benchmarks().items()):
        run_app.command(name, help=(cls.__doc__ or cls.title).strip().splitlines()[0])(_make_run_command(cls))
    mount_tools(app)


@app.command("report")
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="run folder(s) of one benchmark")],
    format: Annotated[str, typer.Option("--format", help="md, csv or json")] = "md",
    with_paper: Annotated[bool, typer.Option("--with-paper", help="show the paper's published rows beside ours")] = False,
) -> None:
    """Tables in the paper's layout for one or more finished runs."""
    try:
        results = [load_result(d) for d in run_dirs]
    except LensbenchError as exc:
        _fail(str(exc))
    names = {r.benchmark for r in results}
    if len(names) != 1:
        _fail(f"runs of several benchmarks given ({', '.join(sorted(names))}); report one benchmark at a time")
    bench = get_benchmark(names.pop())(None)
    _print_report(bench, results, format, with_paper)


@app.command("show")
def show(run_dir: Annotated[Path, typer.Argument(help="a finished run folder")],
         id: Annotated[str, typer.Option("--id", help="sample id (as in samples.jsonl)")],
         out: Annotated[Optional[Path], typer.Option("--out", help="PNG path (default: RUN_DIR/show/<id>.png)")] = None) -> None:
    """Draw what the model did on one sample (e.g. GroundingME: ground-truth and predicted boxes) as a PNG."""
    try:
        name = load_result(run_dir).benchmark
        path = get_benchmark(name)(None).show(run_dir, id, out)
    except (LensbenchError, KeyError) as exc:
        _fail(str(exc))
    out_console.print(str(path), highlight=False)


@app.command("list")
def list_cmd() -> None:
    """Benchmarks and model backends."""
    from rich.table import Table

    t = Table(title="benchmarks")
    t.add_column("name")
    t.add_column("title")
    for name, cls in sorted(all_benchmarks().items()):
        t.add_row(name, cls.title)
    out_console.print(t)
    t = Table(title="model backends (--model PREFIX[:ARG])")
    t.add_column("prefix")
    t.add_column("what")
    for name, (_target, help_) in sorted(PROVIDERS.items()):
        t.add_row(name, help_)
    out_console.print(t)


@app.command("export")
def export(run_dir: Annotated[Path, typer.Argument(help="run folder")],
           out: Annotated[Optional[Path], typer.Option("--out", help="file to write (default: stdout)")] = None) -> None:
    """Write a run's replies as lensbench replay JSONL (``--model replay:FILE`` reads it)."""
    from lensbench.run.store import RunStore

    if not (run_dir / RunStore.FILENAME).is_file():
        _fail(f"{run_dir}: no {RunStore.FILENAME} (not a lensbench run folder)")
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8")) if (run_dir / "run.json").is_file() else {}
    fh = out.open("w", encoding="utf-8") if out else sys.stdout
    with RunStore(run_dir) as store:
        for row in store.iter_rows():
            if row["role"] != "model":
                continue
            rec = {"request_id": row["request_id"], "model": manifest.get("model_name")}
            rec.update({"text": row["text"]} if row["status"] == "ok" else {"error": row["error"]})
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    if out:
        fh.close()


@app.callback(invoke_without_command=True)
def _main(version: Annotated[bool, typer.Option("--version", help="print the version")] = False) -> None:
    if version:
        out_console.print(__version__)
        raise typer.Exit()


_register_all()
