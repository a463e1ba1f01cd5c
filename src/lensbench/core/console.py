"""The one way every command reports a failure: ``error: <message>`` on stderr, exit code 2.

Commands raise :class:`~lensbench.core.errors.LensbenchError` (or call :func:`fail`); the
:func:`guard` decorator turns those into the one-line message. Every console of the command line
is made with :func:`make_console` (rich markup off), so text is printed literally: an install
hint like ``pip install 'lensbench[video]'`` keeps its brackets wherever it appears (an error,
a failed request's message, a skipped plot). Styled lines go through :func:`warn` / :func:`fail`,
which style the whole line instead of parsing markup.
"""

from __future__ import annotations

import functools
import typing

import typer
from rich.console import Console
from rich.text import Text

from lensbench.core.errors import Interrupted, LensbenchError
from lensbench.core.writes import is_write_failure, write_reason

__all__ = ["err_console", "fail", "guard", "make_console", "warn"]


def make_console(stderr: bool = True, **kwargs) -> Console:
    """A rich Console that prints text literally (markup off, no highlighting): ``[video]`` stays ``[video]``."""
    return Console(stderr=stderr, markup=False, highlight=False, **kwargs)


#: stderr console for progress, warnings and errors (stdout carries reports only).
err_console = make_console(soft_wrap=True)


def warn(message: str, console: Console | None = None, style: str = "yellow") -> None:
    """Print ``message`` literally, in ``style`` (yellow), on ``console`` (default: stderr)."""
    (console or err_console).print(Text(str(message), style=style), soft_wrap=True)


def fail(message: str, code: int = 2) -> typing.NoReturn:
    """Print ``error: message`` (literally) and exit with ``code`` (2 = bad input or configuration)."""
    err_console.print(Text.assemble(("error:", "bold red"), " ", str(message)), soft_wrap=True)
    raise typer.Exit(code)


def guard(fn):
    """Decorator for typer commands: a LensbenchError, a missing file or a write the disk refused (full,
    read-only) becomes :func:`fail`, not a traceback; an :class:`~lensbench.core.errors.Interrupted`
    run prints its one line (replies stored, how to resume) and exits with its code (130 / 143)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Interrupted as exc:
            err_console.print(Text.assemble(("stopped:", "bold yellow"), " ", str(exc)), soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except LensbenchError as exc:
            fail(str(exc))
        except FileNotFoundError as exc:
            fail(str(exc))
        except OSError as exc:
            if not is_write_failure(exc):
                raise
            fail(f"cannot write {exc.filename or 'a file'}: {write_reason(exc)}")

    return wrapper
