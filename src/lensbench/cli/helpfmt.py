"""Help text that reads well at 80 columns: metavars instead of Python types, plain usage lines,
options with their help beside them (or below, for long names), commands in named groups.

typer >= 0.16 renders an option without a metavar as ``<python type>`` (flags get ``<bool>``),
writes a required argument in the usage line as ``{RUN_DIR}`` (``{run_dirs}...`` without a
metavar), and lays options out in five table columns (name, short name, ``--no-`` form, type,
help), which at 80 columns left ~20 characters for the help of ``lensbench run``'s options.
:func:`install` replaces, once, for every lensbench command:

* the type display: the option's own metavar, nothing for flags, else ``N`` / ``X`` / ``TEXT`` /
  ``PATH`` / the choices;
* the usage line of an argument: ``RUN_DIR`` (required), ``[RUN_DIR]`` (optional), with ``...``
  once when it takes several (``RUN_DIR...``);
* the options panel: two columns, names + metavar (``--thinking / --no-thinking``,
  ``--model-arg, -M KEY=VALUE``) at most :data:`NAME_WIDTH` wide and the help in the rest of the
  line; a longer name gets its own line with the help below it, indented.

Command groups: a command's ``rich_help_panel`` names its group (set by
:func:`lensbench.cli.lazy.lazy_group` from the main app's table).

Paragraphs: typer's ``"rich"`` markup mode keeps a docstring's single line breaks inside a paragraph
(a sentence then broke mid-line at 80 columns) and reads ``[a|b]`` in help as rich markup (the
choices vanished); its ``"markdown"`` mode reflows every paragraph to the terminal. Every lensbench
command is shown in markdown mode (:func:`markdown_help`, applied by the lazy groups to each command
they hand out): a literal ``<`` (``<id>.png``) is escaped so that markdown does not take it for HTML.
"""

from __future__ import annotations

import typing

import typer.core

__all__ = ["install", "markdown_help", "NAME_WIDTH", "MARKUP_MODE"]

_NAMES = {int: "N", float: "X", str: "TEXT"}
#: widest name column (characters); longer names put their help on the next line
NAME_WIDTH = 30
#: typer's markup mode of every lensbench command (``typer.Typer(rich_markup_mode=...)``)
MARKUP_MODE = "markdown"


def _md_text(text: str | None) -> str | None:
    """Help text as markdown that shows as written: ``<`` escaped (else ``<id>`` is an HTML tag and vanishes)."""
    return text.replace("<", "\\<") if text else text


def markdown_help(cmd) -> None:
    """Show ``cmd`` (a click command or group) and everything under it in typer's markdown mode: paragraphs
    reflowed to the terminal width, ``<`` in help texts escaped. Idempotent; loaded subcommands only (a lazy
    group applies it to each command it loads)."""
    if getattr(cmd, "_lensbench_md", False):
        return
    cmd._lensbench_md = True
    cmd.rich_markup_mode = MARKUP_MODE
    cmd.help, cmd.short_help = _md_text(cmd.help), _md_text(cmd.short_help)
    for p in getattr(cmd, "params", []):
        if getattr(p, "help", None):
            p.help = _md_text(p.help)
    for sub in (getattr(cmd, "commands", None) or {}).values():
        markdown_help(sub)


def _display(self, ctx) -> str | None:
    if self.metavar is not None:
        return self.metavar.removesuffix("...") + ("..." if getattr(self, "nargs", 1) != 1 else "")
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


def _arg_name(self) -> str:
    """An argument's name as written in help: its metavar (or upper-cased name) without a trailing ``...``."""
    return (self.metavar or self.name.upper()).removesuffix("...")


def _usage_name(self) -> str:
    name = _arg_name(self)
    if not self.required:
        name = f"[{name}]"
    return name + ("..." if self.nargs != 1 else "")


def _rich_name(self) -> str:
    return _arg_name(self) + ("..." if self.nargs != 1 else "")


def _name_text(param, ctx):
    """``* --model MODEL`` / ``  --thinking / --no-thinking`` / ``  RUN_DIR...`` (arguments), a rich Text."""
    import typer.rich_utils as ru
    from rich.text import Text

    t = Text("* " if param.required else "  ", style=ru.STYLE_REQUIRED_SHORT)
    if isinstance(param, typer.core.TyperArgument):
        t.append(_rich_name(param), style=ru.STYLE_OPTION)
        return t
    longs = [o for o in param.opts if o.startswith("--")] + [o for o in param.opts if not o.startswith("--")]
    t.append(", ".join(longs), style=ru.STYLE_OPTION)
    if param.secondary_opts:
        t.append(" / ")
        t.append(", ".join(param.secondary_opts), style=ru.STYLE_NEGATIVE_OPTION)
    kind = param.display_type_rich(ctx=ctx)
    rng = param._get_number_range_help_str()
    if kind or rng:
        t.append(" " + " ".join(x for x in (kind, ru.RANGE_STRING.format(rng).strip() if rng else None) if x),
                 style=ru.STYLE_TYPES)
    return t


def _options_panel(*, name: str, params, ctx, markup_mode, console) -> None:
    """typer's options panel, laid out in two columns that fit 80 columns (see the module docstring)."""
    import typer.rich_utils as ru
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table

    if not params:
        return
    names = [_name_text(p, ctx) for p in params]
    width = min(NAME_WIDTH, max(n.cell_len for n in names))
    parts = []
    for p, n in zip(params, names):
        help_ = ru._get_parameter_help(param=p, ctx=ctx, markup_mode=markup_mode)
        if n.cell_len <= width:
            row = Table.grid(padding=(0, 2), expand=True)
            row.add_column(width=width, no_wrap=True)
            row.add_column(ratio=1)
            row.add_row(n, help_)
            parts.append(row)
        else:
            parts.append(n)
            parts.append(Padding(help_, (0, 0, 0, min(width + 2, 8))))
    console.print(Panel(Group(*parts), border_style=ru.STYLE_OPTIONS_PANEL_BORDER, title=name,
                        title_align=ru.ALIGN_OPTIONS_PANEL))


def _patch_panel() -> None:
    import typer.rich_utils as ru  # ~60 ms of imports: only when help is shown

    ru._print_options_panel = _options_panel


def _with_panel(format_help):
    def wrapper(self, ctx, formatter):
        _patch_panel()
        return format_help(self, ctx, formatter)

    wrapper._lensbench = True
    return wrapper


def install() -> None:
    """Patch typer's type display, argument usage names and options panel (idempotent; the panel is
    patched when help is first formatted, so commands that show no help never import typer's rich help)."""
    for cls in (typer.core.TyperOption, typer.core.TyperArgument):
        if hasattr(cls, "display_type_rich"):
            cls.display_type_rich = _display
    typer.core.TyperArgument._usage_display_name = _usage_name
    typer.core.TyperArgument._rich_display_name = _rich_name
    for cls in (typer.core.TyperCommand, typer.core.TyperGroup):
        if not getattr(cls.format_help, "_lensbench", False):
            cls.format_help = _with_panel(cls.format_help)
