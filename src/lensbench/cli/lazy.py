"""Subcommands built on first use, so ``lensbench run rgb-th-bench ...`` imports one benchmark.

Building every ``lensbench run <benchmark>`` command and every tool group at start-up imported
all five benchmark packages (loaders, scorers, report modules) and all tool groups before the
first request of any run (issue 11: the whole command must cost <= 1.2 s beyond its busy
window). A :func:`lazy_group` is a typer group class whose named subcommands are made by a
loader only when click asks for them: a run imports its own benchmark; ``--help`` (which lists
every subcommand) still builds them all, so the help text is unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import typer
from typer.core import TyperGroup

__all__ = ["lazy_group", "run_command_loader", "tool_group_loader"]

Loader = Callable[[], object]


def lazy_group(loaders: dict[str, Loader], panels: list[tuple[str, list[str]]] | None = None,
               more: Callable[[], dict[str, Loader]] | None = None) -> type[TyperGroup]:
    """A :class:`TyperGroup` subclass (for ``typer.Typer(cls=...)``) with extra subcommands
    ``name -> loader()`` (a loader returns a click command or group).

    ``panels``: ``[(group title, [command names])]``: help lists the commands group by group in
    this order (each command's ``rich_help_panel`` is set to its group); commands in no group come
    after them. Without ``panels``: eagerly registered commands first, the lazy ones after, in
    ``loaders`` order. ``more``: further loaders asked for only when a name is not among them or
    the whole list is shown (e.g. benchmarks of installed plugins: finding them costs a scan)."""
    order = [n for _title, names in (panels or []) for n in names]
    panel_of = {n: title for title, names in (panels or []) for n in names}

    class LazyGroup(TyperGroup):
        _loaders = dict(loaders)

        def list_commands(self, ctx) -> list[str]:
            found = {**(more() if more is not None else {}), **self._loaders}
            names = list(self.commands) + [n for n in found if n not in self.commands]
            rank = {n: i for i, n in enumerate(order)}
            return sorted(names, key=lambda n: rank.get(n, len(rank)))

        def get_command(self, ctx, cmd_name: str):
            cmd = self.commands.get(cmd_name)
            if cmd is None and cmd_name not in self._loaders and more is not None:
                self._loaders.update((n, f) for n, f in more().items() if n not in self._loaders)
            if cmd is None and cmd_name in self._loaders:
                cmd = self._loaders[cmd_name]()
                cmd.name = cmd_name
                self.commands[cmd_name] = cmd
            if cmd is not None and cmd_name in panel_of:
                cmd.rich_help_panel = panel_of[cmd_name]
            return cmd

    return LazyGroup


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


def tool_group_loader(target: str) -> Loader:
    """Loader of a tool group given as ``"module:typer_app"``."""

    def load():
        mod, _, attr = target.partition(":")
        return typer.main.get_group(getattr(importlib.import_module(mod), attr))

    return load
