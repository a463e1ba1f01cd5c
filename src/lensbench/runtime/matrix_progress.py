"""One progress display for many runs in one process (``lensbench eval``): each running cell and the whole matrix.

Every cell's engine reports to its own :class:`CellProgress` (the engine's display contract,
:class:`~lensbench.runtime.progress.NullProgress`); the :class:`MatrixProgress` they belong to shows

* on a terminal: a rich bar per running cell and one for the whole matrix (done / total,
  errors, rate, elapsed, ETA); a finished cell's bar is replaced by one line;
* elsewhere (SLURM logs, ``nohup``, a pipe): every ``every_s`` seconds one plain line for the
  matrix and one per running cell, plus a line whenever a cell starts or ends.

Totals: a cell's total is known once its phase starts (a benchmark may add phases, e.g. a judge
round), so the matrix line counts the requests of started cells and says how many cells have
not started yet; the ETA covers the started cells (``ETA unknown`` before the first reply).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.console import Console

from lensbench.runtime.progress import NullProgress, bar_display, eta_text

__all__ = ["MatrixProgress", "CellProgress"]


@dataclass
class _CellState:
    name: str
    state: str = "waiting"  # waiting | running | done
    label: str = ""
    closed_total: int = 0  # requests of finished phases
    closed_done: int = 0
    closed_cached: int = 0
    total: int = 0  # current phase
    done: int = 0
    cached: int = 0
    errors: int = 0
    closed_errors: int = 0
    t0: float = field(default_factory=time.monotonic)
    note: str = ""

    @property
    def all_total(self) -> int:
        return self.closed_total + self.total

    @property
    def all_done(self) -> int:
        return self.closed_done + self.done

    @property
    def all_cached(self) -> int:
        return self.closed_cached + self.cached

    @property
    def all_errors(self) -> int:
        return self.closed_errors + self.errors


class CellProgress(NullProgress):
    """The display one cell's engine reports to (see :class:`MatrixProgress`)."""

    def __init__(self, parent: "MatrixProgress", cell: _CellState):
        self.parent, self.cell = parent, cell

    def start(self, label: str, total: int, cached: int) -> None:
        c = self.cell
        c.closed_total += c.total
        c.closed_done += c.done
        c.closed_cached += c.cached
        c.closed_errors += c.errors
        c.label, c.total, c.done, c.cached, c.errors, c.note = label, total, cached, cached, 0, ""
        if c.state == "waiting":
            c.t0 = time.monotonic()
        c.state = "running"
        self.parent._changed(c, started=True)

    def add(self, total: int, cached: int) -> None:
        c = self.cell
        c.total, c.done, c.cached = c.total + total, c.done + cached, c.cached + cached
        self.parent._changed(c)

    def advance(self, errors: int) -> None:
        self.cell.done += 1
        self.cell.errors = errors
        self.parent._changed(self.cell)

    def note(self, message: str) -> None:
        self.cell.note = message
        self.parent._changed(self.cell)

    def stop(self) -> None:
        self.cell.note = ""
        self.parent._changed(self.cell)


class MatrixProgress:
    """Progress of the cells ``names`` (in order) on ``console``; use :meth:`cell` for each cell's display,
    :meth:`finish_cell` when a cell ends, and as a context manager around the whole matrix.

    ``every_s``: seconds between plain status lines off a terminal (> 0). ``enabled=False``: nothing
    is shown (the cell displays are still valid objects).
    """

    def __init__(self, names: list[str], console: Console, *, every_s: float = 30.0, enabled: bool = True,
                 terminal: bool | None = None):
        self.console = console
        self.every_s = every_s
        self.enabled = enabled
        self.terminal = console.is_terminal if terminal is None else terminal
        self.cells = {n: _CellState(n) for n in names}
        self.t0 = self._last = time.monotonic()
        self._bar = None
        self._tasks: dict[str, int] = {}

    # ------------------------------------------------------------ public
    def cell(self, name: str) -> NullProgress:
        """The display cell ``name``'s engine reports to."""
        return CellProgress(self, self.cells[name]) if self.enabled else NullProgress()

    def finish_cell(self, name: str, status: str) -> None:
        """Mark cell ``name`` done and say so in one line (``status``: ``complete``, ``3 errors`` ...)."""
        c = self.cells[name]
        c.state = "done"
        if not self.enabled:
            return
        if self._bar is not None and name in self._tasks:
            self._bar.remove_task(self._tasks.pop(name))
            self._update_total()
        self.console.print(f"{name}: {status} ({c.all_done}/{c.all_total} requests, "
                           f"{time.monotonic() - c.t0:.0f} s)", highlight=False, markup=False)

    def summary(self) -> str:
        """The whole matrix in one line: cells done / running / waiting, requests, rate, errors, ETA."""
        states = [c.state for c in self.cells.values()]
        started = [c for c in self.cells.values() if c.state != "waiting"]
        total = sum(c.all_total for c in started)
        done = sum(c.all_done for c in started)
        cached = sum(c.all_cached for c in started)
        errors = sum(c.all_errors for c in started)
        rate = (done - cached) / max(time.monotonic() - self.t0, 1e-9)
        waiting = states.count("waiting")
        tail = f" (+{waiting} cell(s) not started)" if waiting else ""
        return (f"matrix: {states.count('done')}/{len(states)} cells done, {states.count('running')} running; "
                f"requests {done}/{total} ({cached} cached), {rate:.1f} req/s, {errors} errors, "
                f"{eta_text(total - done, rate)}{tail}")

    def cell_line(self, c: _CellState) -> str:
        """One running cell in one line."""
        rate = (c.all_done - c.all_cached) / max(time.monotonic() - c.t0, 1e-9)
        note = f" [{c.note}]" if c.note else ""
        return (f"  {c.name} ({c.label}): {c.all_done}/{c.all_total}, {rate:.1f} req/s, {c.all_errors} errors, "
                f"{eta_text(c.all_total - c.all_done, rate)}{note}")

    def __enter__(self) -> "MatrixProgress":
        if self.enabled and self.terminal:
            self._bar = bar_display(self.console, "errors {task.fields[errors]}", "{task.fields[rate]}")
            self._bar.start()
            self._tasks["_matrix"] = self._bar.add_task("matrix", total=None, errors=0, rate="")
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        if self.enabled:
            self.console.print(self.summary(), highlight=False, markup=False)

    # ------------------------------------------------------------ internal
    def _changed(self, c: _CellState, started: bool = False) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            desc = f"{c.name} ({c.label})" + (f" [{c.note}]" if c.note else "")
            rate = (c.all_done - c.all_cached) / max(time.monotonic() - c.t0, 1e-9)
            if c.name not in self._tasks:
                self._tasks[c.name] = self._bar.add_task(desc, total=c.all_total, completed=c.all_done,
                                                         errors=c.all_errors, rate="")
            self._bar.update(self._tasks[c.name], description=desc, total=c.all_total, completed=c.all_done,
                             errors=c.all_errors, rate=f"{rate:.1f} req/s")
            self._update_total()
            return
        if started:
            self.console.print(f"{c.name}: started {c.label} ({c.total} requests, {c.cached} cached)",
                               highlight=False, markup=False)
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self.console.print(self.plain_block(), highlight=False, markup=False)

    def plain_block(self) -> str:
        """The matrix line and one line per running cell (what is printed off a terminal)."""
        lines = [self.summary()] + [self.cell_line(c) for c in self.cells.values() if c.state == "running"]
        return "\n".join(lines)

    def _update_total(self) -> None:
        started = [c for c in self.cells.values() if c.state != "waiting"]
        total = sum(c.all_total for c in started)
        done = sum(c.all_done for c in started)
        errors = sum(c.all_errors for c in started)
        rate = (done - sum(c.all_cached for c in started)) / max(time.monotonic() - self.t0, 1e-9)
        waiting = sum(c.state == "waiting" for c in self.cells.values())
        cells_done = sum(c.state == "done" for c in self.cells.values())
        desc = f"matrix: {cells_done}/{len(self.cells)} cells" + (f", {waiting} waiting" if waiting else "")
        self._bar.update(self._tasks["_matrix"], description=desc, total=total, completed=done, errors=errors,
                         rate=f"{rate:.1f} req/s")
