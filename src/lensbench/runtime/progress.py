"""Progress of the engine: a rich bar on a terminal, plain lines every N seconds elsewhere (SLURM, nohup).

Both show done/total, rate, errors and ETA; :meth:`NullProgress.note` shows a passing status such as
``waiting 30 s (Retry-After from http://host/v1)``. Before the first reply of a phase there is
no rate, so the ETA reads ``ETA unknown`` (never ``nan``). Many runs in one process (``lensbench
eval``) share one display: :mod:`lensbench.runtime.matrix_progress`.
"""

from __future__ import annotations

import time

from rich.console import Console

__all__ = ["make_progress", "NullProgress", "PlainProgress", "BarProgress", "eta_text", "bar_display", "Activity"]


def bar_display(console: Console, *fields: str, transient: bool = False):
    """A rich ``Progress`` whose numbers never get cut: ``description | bar | done/total | *fields | elapsed |
    remaining``, where each of ``fields`` is a format string over the task (``"errors {task.fields[errors]}"``).

    The numeric columns keep their full width; the description (ellipsised) and the bar share what is left
    of the line (3:1), so at 80 columns a long cell name shrinks instead of the counts and the ETA
    (issue 32.4). Descriptions are plain text (a note such as ``[waiting 30 s]`` is not rich markup)."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)
    from rich.table import Column

    fixed = lambda: Column(no_wrap=True)  # noqa: E731 - a fresh column per use
    return Progress(TextColumn("{task.description}", markup=False,
                               table_column=Column(ratio=3, no_wrap=True, overflow="ellipsis")),
                    BarColumn(bar_width=None, table_column=Column(ratio=1, no_wrap=True)),
                    MofNCompleteColumn(table_column=fixed()),
                    *[TextColumn(f, markup=False, table_column=fixed()) for f in fields],
                    TimeElapsedColumn(table_column=fixed()), TimeRemainingColumn(table_column=fixed()),
                    console=console, transient=transient, expand=True)


def eta_text(remaining: int, rate: float) -> str:
    """``"ETA 42 s"`` (``remaining`` requests at ``rate`` req/s), ``"ETA 0 s"`` when nothing is left,
    ``"ETA unknown"`` while no request has finished (rate 0): never ``nan`` or ``inf``."""
    if remaining <= 0:
        return "ETA 0 s"
    if rate <= 0:
        return "ETA unknown"
    return f"ETA {remaining / rate:.0f} s"


class NullProgress:
    """No display (``--no-progress``)."""

    def start(self, label: str, total: int, cached: int) -> None:
        """Begin a phase of ``total`` requests of which ``cached`` were already stored."""

    def add(self, total: int, cached: int) -> None:
        """The phase grew (requests that arrive over time): ``total`` more requests, of which ``cached``
        were already stored (counted as done)."""

    def advance(self, errors: int) -> None:
        """One more request finished; ``errors`` = failed so far in this phase."""

    def note(self, message: str) -> None:
        """A passing status line (e.g. a Retry-After wait)."""

    def stop(self) -> None:
        """End the phase."""


class PlainProgress(NullProgress):
    """One plain line every ``every_s`` seconds (and at the end): ``label: done/total, rate, errors, ETA``."""

    def __init__(self, console: Console, every_s: float = 30.0):
        self.console, self.every_s = console, every_s

    def start(self, label: str, total: int, cached: int) -> None:
        self.label, self.total, self.done, self.cached, self.errors = label, total, cached, cached, 0
        self.t0 = self.last = time.monotonic()

    def _line(self) -> str:
        dt = max(time.monotonic() - self.t0, 1e-9)
        sent = self.done - self.cached
        rate = sent / dt
        return (f"{self.label}: {self.done}/{self.total} ({self.cached} cached), {rate:.1f} req/s, "
                f"{self.errors} errors, {eta_text(self.total - self.done, rate)}")

    def add(self, total: int, cached: int) -> None:
        self.total += total
        self.done += cached
        self.cached += cached

    def advance(self, errors: int) -> None:
        self.done += 1
        self.errors = errors
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            self.console.print(self._line(), highlight=False, markup=False)

    def note(self, message: str) -> None:
        self.console.print(f"{self.label}: {message}", highlight=False, markup=False)

    def stop(self) -> None:
        self.console.print(self._line(), highlight=False, markup=False)


class BarProgress(NullProgress):
    """A rich progress bar: done / total, cached, errors, elapsed, ETA; notes replace the label for a while."""

    def __init__(self, console: Console):
        self.console = console

    def start(self, label: str, total: int, cached: int) -> None:
        self.label, self.total, self.cached = label, total, cached
        self._p = bar_display(self.console, "cached {task.fields[cached]}", "errors {task.fields[errors]}")
        self._p.start()
        self._task = self._p.add_task(label, total=total, completed=cached, cached=cached, errors=0)

    def add(self, total: int, cached: int) -> None:
        self.total += total
        self.cached += cached
        self._p.update(self._task, total=self.total, advance=cached, cached=self.cached)

    def advance(self, errors: int) -> None:
        self._p.update(self._task, advance=1, errors=errors, description=self.label)

    def note(self, message: str) -> None:
        self._p.update(self._task, description=f"{self.label} [{message}]")

    def stop(self) -> None:
        self._p.stop()


def make_progress(enabled: "bool | NullProgress", console: Console, every_s: float = 30.0) -> NullProgress:
    """A bar when ``console`` is a terminal, plain lines otherwise, nothing when not ``enabled``; a
    display object given as ``enabled`` (e.g. one cell of a matrix display) is used as it is."""
    if isinstance(enabled, NullProgress):
        return enabled
    if not enabled:
        return NullProgress()
    return BarProgress(console) if console.is_terminal else PlainProgress(console, every_s)


class Activity:
    """Progress of one long step outside the engine (building the viewer, a reproduction, a download, a sweep's
    steps), as a context manager: ``with Activity(console, "view: building the page") as a: ... a.advance(n)``.

    On a terminal: a rich line with a spinner, the label, and done/total (bytes as sizes when ``unit="B"``) with a
    bar and ETA once a total is known, and the elapsed time. Elsewhere: the label when it starts, a plain line
    every ``every_s`` seconds while it advances, and ``label: done in N s`` at the end (``failed after N s`` when
    the block raised). ``total``: the amount expected (None: unknown); :meth:`note` replaces the trailing note.
    """

    def __init__(self, console: Console, label: str, total: float | None = None, unit: str = "",
                 every_s: float = 30.0):
        self.console, self.label, self.total, self.unit, self.every_s = console, label, total, unit, every_s
        self.done = 0.0
        self._p = None

    def __enter__(self) -> "Activity":
        self.t0 = self._last = time.monotonic()
        if self.console.is_terminal:
            from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                                       TextColumn, TimeElapsedColumn, TimeRemainingColumn)
            from rich.table import Column

            count = DownloadColumn() if self.unit == "B" else MofNCompleteColumn()
            self._p = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False,
                                                           table_column=Column(ratio=3, no_wrap=True,
                                                                               overflow="ellipsis")),
                               BarColumn(bar_width=None, table_column=Column(ratio=1)), count, TimeElapsedColumn(),
                               TimeRemainingColumn(), console=self.console, transient=False, expand=True)
            self._p.start()
            self._task = self._p.add_task(self.label, total=self.total)
        else:
            self.console.print(f"{self.label} ...", highlight=False, markup=False)
        return self

    def set_total(self, total: float | None) -> None:
        """The amount expected is now known (or changed)."""
        self.total = total
        if self._p is not None:
            self._p.update(self._task, total=total)

    def advance(self, amount: float = 1) -> None:
        """``amount`` more is done."""
        self.done += amount
        if self._p is not None:
            self._p.update(self._task, advance=amount)
        elif time.monotonic() - self._last >= self.every_s:
            self._last = time.monotonic()
            self.console.print(self._plain(), highlight=False, markup=False)

    def note(self, text: str) -> None:
        """Show ``text`` after the label (the step under way)."""
        if self._p is not None:
            self._p.update(self._task, description=f"{self.label}: {text}")
        else:
            self.console.print(f"{self.label}: {text}", highlight=False, markup=False)

    def _amount(self, n: float) -> str:
        if self.unit == "B":
            return f"{n / 2**20:.1f} MiB"
        return f"{n:g}{' ' + self.unit if self.unit else ''}"

    def _plain(self) -> str:
        elapsed = time.monotonic() - self.t0
        if self.total:
            rate = self.done / max(elapsed, 1e-9)
            return (f"{self.label}: {self._amount(self.done)} of {self._amount(self.total)}, "
                    f"{elapsed:.0f} s, {eta_text(int(self.total - self.done), rate)}")
        return f"{self.label}: {self._amount(self.done)} so far, {elapsed:.0f} s"

    def __exit__(self, exc_type, *exc) -> None:
        elapsed = time.monotonic() - self.t0
        if self._p is not None:
            self._p.stop()
            self._p = None
        if exc_type is None:
            self.console.print(f"{self.label}: done in {elapsed:.1f} s", highlight=False, markup=False)
        else:
            self.console.print(f"{self.label}: stopped after {elapsed:.1f} s", highlight=False, markup=False)
