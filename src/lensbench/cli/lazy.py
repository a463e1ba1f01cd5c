"""Subcommands built on first use, so ``lensbench run rgb-th-bench ...`` imports one benchmark.

Building every ``lensbench run <benchmark>`` command and every tool group at start-up imported
all five benchmark packages (loaders, scorers, report modules) and all tool groups before the
first request of any run (issue 11: the whole command must cost <= 1.2 s beyond its busy
window). A :func:`lazy_group` is a typer group class whose named subcommands are made by a
loader only when click asks for them: a run imports its own benchmark; ``--help`` (which lists
every subcommand) still builds them all, so the help text is unchanged.

A group's own help lists its subcommands with one line each; for a tool group that line is read from
the ``typer.Typer(help=...)`` literal in its module's source (:func:`static_help`), so ``lensbench
--help`` imports none of the tool modules (issue 32.11: listing them imported aiohttp, numpy and the
image backends, ~0.25 s of CPU). A group whose help is not such a literal is imported as before.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path

import typer
from typer.core import TyperGroup

from lensbench.cli.helpfmt import markdown_help
from lensbench.cli.hints import command_hint, option_hint, squash

try:  # the click typer runs on: its own vendored copy in newer typer releases, else the click package
    from typer import _click as click
except ImportError:  # pragma: no cover - typer releases before the vendored copy
    import click

__all__ = ["lazy_group", "run_command_loader", "tool_group_loader", "static_help"]

Loader = Callable[[], object]


def lazy_group(loaders: dict[str, Loader], panels: list[tuple[str, list[str]]] | None = None,
               more: Callable[[], dict[str, Loader]] | None = None,
               benchmarks: Callable[[], list[str]] | None = None) -> type[TyperGroup]:
    """A :class:`TyperGroup` subclass (for ``typer.Typer(cls=...)``) with extra subcommands
    ``name -> loader()`` (a loader returns a click command or group).

    ``panels``: ``[(group title, [command names])]``: help lists the commands group by group in
    this order (each command's ``rich_help_panel`` is set to its group); commands in no group come
    after them. Without ``panels``: eagerly registered commands first, the lazy ones after, in
    ``loaders`` order. ``more``: further loaders asked for only when a name is not among them or
    the whole list is shown (e.g. benchmarks of installed plugins: finding them costs a scan).

    Unknown names and options get the lensbench spelling (:mod:`lensbench.cli.hints`, issue 32.2): an unknown
    subcommand the closest command (``lensbench run rgbth`` -> ``rgb-th-bench``); ``benchmarks`` (the
    benchmark names) lets the top-level group send ``lensbench rgb-th-bench`` to ``lensbench run
    rgb-th-bench`` and a tool group named like a benchmark (``lensbench ifbench --model ...``) to its run
    command; another harness's option (``--output-path``) names ours (``--out``)."""
    order = [n for _title, names in (panels or []) for n in names]
    panel_of = {n: title for title, names in (panels or []) for n in names}

    class LazyGroup(TyperGroup):
        _loaders = dict(loaders)
        _listing = False  # True while this group formats its own help (a stub may stand for a tool group)

        def format_help(self, ctx, formatter):
            self._listing = True
            try:
                return super().format_help(ctx, formatter)
            finally:
                self._listing = False

        def list_commands(self, ctx) -> list[str]:
            found = {**(more() if more is not None else {}), **self._loaders}
            names = list(self.commands) + [n for n in found if n not in self.commands]
            rank = {n: i for i, n in enumerate(order)}
            return sorted(names, key=lambda n: rank.get(n, len(rank)))

        def get_command(self, ctx, cmd_name: str):
            cmd = self.commands.get(cmd_name)
            # plugin loaders are looked up afresh, never kept on the class: a plugin uninstalled since (or in
            # another in-process invocation) must not stay listed
            load = self._loaders.get(cmd_name) or (more().get(cmd_name) if cmd is None and more is not None else None)
            summary = getattr(load, "summary", None) if cmd is None and self._listing else None
            if summary is not None and (text := summary()) is not None:  # listed in help: not imported
                stub = typer.core.TyperCommand(cmd_name, help=text)
                stub.rich_help_panel = panel_of.get(cmd_name)
                markdown_help(stub)
                return stub
            if cmd is None and load is not None:
                cmd = load()
                cmd.name = cmd_name
                self.commands[cmd_name] = cmd
            if cmd is not None and cmd_name in panel_of:
                cmd.rich_help_panel = panel_of[cmd_name]
            if cmd is not None:
                markdown_help(cmd)
            return cmd

        def resolve_command(self, ctx, args):
            try:
                return super().resolve_command(ctx, args)
            except click.exceptions.UsageError as exc:
                name = str(args[0]) if args else ""
                bench = _bench_like(name)
                near = f"{ctx.command_path} run {bench}" if bench else None
                near = near or (f"{ctx.command_path} {hit}" if (hit := command_hint(name, self.list_commands(ctx)))
                                else None)
                if near and not name.startswith("-"):
                    exc.message = f"No such command {name!r}; did you mean '{near}'?"
                raise

        def invoke(self, ctx):
            try:
                return super().invoke(ctx)
            except click.exceptions.NoSuchOption as exc:
                if not getattr(exc, "hinted", False):
                    exc.hinted = True
                    hint = option_hint(exc.option_name)
                    sub = ctx.invoked_subcommand or ""
                    if hint is None and exc.option_name in RUN_OPTIONS and (bench := _bench_like(sub)):
                        hint = f"'{ctx.command_path} {sub}' is a tool group; to run the benchmark: " \
                               f"'{ctx.command_path} run {bench} ...'"
                    if hint:
                        exc.message, exc.possibilities = f"No such option: {exc.option_name}; {hint}", None
                raise

    def _bench_like(name: str) -> str | None:
        """The benchmark a name means (loosely: ``rgbth``, ``IF-Bench``), when this group knows benchmarks."""
        return next((b for b in benchmarks() if squash(b) == squash(name)), None) if benchmarks and name else None

    return LazyGroup


#: options of ``lensbench run BENCHMARK`` that, given to a tool group named like a benchmark, mean a forgotten ``run``
RUN_OPTIONS = ("--model", "--data-dir", "--out")


def run_command_loader(name: str) -> Loader:
    """Loader of the ``lensbench run NAME`` command (imports that benchmark only)."""

    def load():
        from lensbench.benchmarks.registry import get_benchmark
        from lensbench.cli.runcmd import make_run_command
        from lensbench.core.errors import LensbenchError

        single = typer.Typer()
        try:
            cls = get_benchmark(name)
        except LensbenchError as exc:  # a broken plugin: its command says so in one line (exit 2)
            return typer.main.get_command(_broken(single, name, str(exc)))
        single.command(name, help=(cls.__doc__ or cls.title).strip().splitlines()[0])(make_run_command(cls))
        return typer.main.get_command(single)

    return load


def _broken(single: typer.Typer, name: str, message: str) -> typer.Typer:
    """``single`` with one command ``name`` that takes any arguments and fails with ``message``."""
    from lensbench.core.console import fail

    @single.command(name, help=f"(cannot be loaded) {message}",
                    context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def broken() -> None:
        fail(message)

    return single


def static_help(target: str) -> str | None:
    """The ``help=`` string literal of ``attr = typer.Typer(help="...")`` in the source of ``module`` (``target`` =
    ``"module:attr"``, a module inside lensbench), read without importing it or its packages; None when the file
    or such a literal is not found (the group is then imported to list it)."""
    mod, _, attr = target.partition(":")
    top, *parts = mod.split(".")
    if top != "lensbench" or not parts:  # a package's parents would be imported to find it
        return None
    try:  # the file's path from lensbench's own folder: find_spec would import the parent packages
        source = Path(__file__).resolve().parents[1].joinpath(*parts[:-1], parts[-1] + ".py").read_text(encoding="utf-8")
    except OSError:
        return None
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in node.targets)
                and isinstance(node.value, ast.Call)):
            for kw in node.value.keywords:
                if kw.arg == "help" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    return kw.value.value
    return None


def tool_group_loader(target: str) -> Loader:
    """Loader of a tool group given as ``"module:typer_app"``; its ``summary()`` is :func:`static_help` (the
    group's help without importing it)."""

    def load():
        mod, _, attr = target.partition(":")
        return typer.main.get_group(getattr(importlib.import_module(mod), attr))

    load.summary = lambda: static_help(target)
    return load
