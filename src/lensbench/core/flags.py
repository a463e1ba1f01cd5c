"""Renamed command-line options: the old spelling stays accepted, hidden from help, with one line saying so.

Issue 32.9: ``lensbench run`` names a data folder ``--data-dir`` and a model spec ``--model`` (a judge's
``--judge-model``); tool commands that said ``--data`` or ``--llm`` now use those names. A command keeps the
old name as a second, hidden option (:func:`old_option`) and reads both through :func:`renamed`, which prints
``--data is now --data-dir`` on stderr when the old name was used. :data:`RENAMED` lists every such pair, so a
test can check that no command shows an old name.
"""

from __future__ import annotations

from typing import Any, TypeVar

import typer

from lensbench.core.console import fail, warn

__all__ = ["RENAMED", "old_option", "renamed"]

T = TypeVar("T")

#: old option name -> the canonical names it may have become (data folder, model spec, judge spec, examples file)
RENAMED: dict[str, tuple[str, ...]] = {"--data": ("--data-dir", "--examples"), "--llm": ("--model",),
                                       "--judge": ("--judge-model",)}


def old_option(old: str, new: str) -> Any:
    """A hidden ``typer.Option`` for the old spelling ``old`` of the option ``new``, for an ``Annotated[Optional[T],
    old_option(...)] = None`` parameter; pass its value with the new option's to :func:`renamed`."""
    return typer.Option(old, hidden=True, help=f"deprecated spelling of {new}")


def renamed(value: T | None, old_value: T | None, old: str, new: str, required: bool = False) -> T | None:
    """The option's value: ``value`` (given as ``new``) or ``old_value`` (given as the hidden ``old``, with the
    line ``"{old} is now {new}"`` on stderr).

    Exits with code 2 (one ``error:`` line) when both names are given, or when ``required`` and neither is."""
    if old_value is not None:
        if value is not None:
            fail(f"{old} and {new} are the same option ({old} is its old name): give {new} only")
        warn(f"{old} is now {new}")
        return old_value
    if value is None and required:
        fail(f"Missing option '{new}'.")
    return value
