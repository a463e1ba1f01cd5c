"""A :class:`~lensbench.report.reproduce.spec.Grid` artifact computed on the runs: one cell per run and
column, each beside the published value of the row the run is matched to (:meth:`Context.row_for`),
with its CI and verdict (:func:`lensbench.report.reproduce.cells.judge_cell`). Published rows no run
reproduces are listed as needs, with the command that makes such a run.
"""

from __future__ import annotations

from lensbench.report.reproduce.cells import judge_cell
from lensbench.report.reproduce.context import Context, RunView
from lensbench.report.reproduce.model import Section
from lensbench.report.reproduce.spec import Grid, Row

__all__ = ["build_grid", "rows_needed"]


def rows_needed(grid: Grid, done: set[str], limit: int = 6) -> str:
    """The needs line of ``grid``'s published rows not in ``done`` (``""`` when every row is reproduced)."""
    left = [r.label for r in grid.rows if r.label not in done]
    if not left:
        return ""
    shown = ", ".join(left[:limit]) + (f" and {len(left) - limit} more" if len(left) > limit else "")
    how = f": {grid.run}" if grid.run else ""
    return f"{grid.id}: no comparable run for {len(left)} of {len(grid.rows)} published rows ({shown}){how}"


def _row_name(view: RunView, row: Row | None) -> str:
    return view.label if row is None else f"{view.label} = {row.label}"


def build_grid(ctx: Context, grid: Grid) -> Section:
    """The section of ``grid`` (see the module docstring)."""
    sec = Section(grid.id, grid.title)
    design = ctx.design(grid.benchmark)
    done: set[str] = set()
    extra_cols: list[str] = []
    for view in ctx.of(grid.benchmark):
        row, why = ctx.row_for(view, grid)
        settings = {**grid.settings, **(row.settings if row is not None else {})}
        if row is not None:
            blockers = ctx.blockers(view, settings)
        else:  # a settings mismatch with the nearest row of the run's model is already in ``why``
            named = any(w.startswith("another setting") for w in why)
            blockers = why + ([] if named else ctx.mismatches(view, settings)) + ctx.run_blockers(view)
        if row is not None and not blockers:
            done.add(row.label)
        caveats = ctx.caveats(view, settings)
        tables = ctx.tables(view)
        for col in grid.columns:
            published = row.values.get(col.name) if row is not None else None
            sec.cells.append(judge_cell(_row_name(view, row), col.name, tables.get(col.table or grid.table),
                                        col.category, published, design,
                                        paper_row=row.label if row is not None else None, blockers=blockers,
                                        unpublished=grid.unpublished, decimals=grid.decimals, caveats=caveats,
                                        margin=ctx.margin))
        if grid.describe is not None:
            info = grid.describe(view)
            extra_cols += [k for k in info if k not in extra_cols]
            sec.rows.append([view.label, info])
    if extra_cols:
        sec.rows = [[label, *[info.get(k, "") for k in extra_cols]] for label, info in sec.rows]
        sec.columns = ["run", *extra_cols]
    if grid.unpublished:
        sec.notes.append(f"No published values: {grid.unpublished}.")
    elif not ctx.of(grid.benchmark):
        sec.notes.append(f"No {grid.benchmark} run given.")
    if need := rows_needed(grid, done):
        sec.needs.append(need)
    if not ctx.of(grid.benchmark) and grid.run and not grid.rows:
        sec.needs.append(f"{grid.id}: needs a {grid.benchmark} run: {grid.run}")
    return sec
