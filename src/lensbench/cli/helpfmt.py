"""Help text shows metavars (``N``, ``PATH``, ``TEXT``), never Python types (``<list[str]>``, ``<bool>``).

typer >= 0.16 renders an option without a metavar as ``<python type>``; flags get ``<bool>``.
:func:`install` replaces that rendering, once, for every lensbench command: the option's own
metavar when it has one, nothing for flags, else click's plain name for its type.
"""

from __future__ import annotations

import typing

import typer.core

__all__ = ["install"]

_NAMES = {int: "N", float: "X", str: "TEXT"}


def _display(self, ctx) -> str | None:
    if self.metavar is not None:
        return self.metavar
    if getattr(self, "is_flag", False) or getattr(self, "count", False):
        return None
    desc = getattr(self, "type_descriptor", None)
    if desc is None:
        return None
    if desc.is_choice and desc.choices:
        name = "|".join(map(str, desc.choices))
    elif desc.is_path:
        name = "PATH"
    else:
        ann = desc.annotation
        if desc.is_list:
            args = typing.get_args(ann)
            ann = args[0] if args else str
        name = _NAMES.get(ann, "TEXT") if ann is not bool else None
        if name is None:
            return None
    return name + ("..." if desc.is_list or self.nargs != 1 else "")


def install() -> None:
    """Patch typer's option/argument type display (idempotent)."""
    for cls in (typer.core.TyperOption, typer.core.TyperArgument):
        if hasattr(cls, "display_type_rich"):
            cls.display_type_rich = _display
