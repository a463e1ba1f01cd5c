"""The one way every command reports a failure: ``error: <message>`` on stderr, exit code 2.

Commands raise :class:`~lensbench.core.errors.LensbenchError` (or call :func:`fail`); the
:func:`guard` decorator turns those into the one-line message. Messages are printed literally
(rich markup escaped), so an install hint like ``pip install 'lensbench[video]'`` keeps its
brackets.
"""

from __future__ import annotations

import functools
import typing

import typer
from rich.console import Console
from rich.markup import escape

from lensbench.core.errors import Interrupted, LensbenchError
from lensbench.core.writes import is_write_failure, write_reason

__all__ = ["err_console", "fail", "guard"]

#: stderr console for progress, warnings and errors (stdout carries reports only).
err_console = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 2) -> typing.NoReturn:
    """Print ``error: message`` (literally) and exit with ``code`` (2 = bad input or configuration)."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
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
            err_console.print(f"[bold yellow]stopped:[/] {escape(str(exc))}", highlight=False)
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
