"""A paper's per-pair differences (e.g. the gain from thinking per model): runs paired by the paper's names
(a run matched to A, one matched to B) or by one model with a setting toggled (``enable_thinking`` on and
off), each column a paired difference with its CI beside the published difference
(:func:`lensbench.report.reproduce.cells.judge_difference`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lensbench.report.reproduce.cells import judge_difference
from lensbench.report.reproduce.context import Context, RunView
from lensbench.report.reproduce.model import Section

__all__ = ["THINKING", "run_pairs", "difference_cells"]

#: the protocol setting ``--thinking`` / ``--no-thinking`` records
THINKING = "extra_body.chat_template_kwargs.enable_thinking"


def run_pairs(ctx: Context, benchmark: str, named: Sequence[tuple[str, str, Any]], settings: Mapping[str, Any],
              key: str = THINKING) -> list[tuple[RunView, RunView, Any]]:
    """``[(run A, run B, tag)]``: for each ``(name A, name B, tag)`` the runs matched to them, then runs of one
    model with ``key`` True (A) and False or unset (B), tag None. Runs with other settings than ``settings``
    (``key`` aside) are left out."""
    runs = [v for v in ctx.of(benchmark) if not ctx.mismatches(v, settings, [key])]
    out = [(a, b, tag) for na, nb, tag in named for a in runs if na in a.names for b in runs
           if nb in b.names and b is not a]
    out += [(a, b, None) for a in runs for b in runs if a is not b and a.model == b.model
            and a.settings.get(key) is True and b.settings.get(key) in (False, None)]
    return out


def difference_cells(ctx: Context, sec: Section, benchmark: str, table: str, columns: Sequence[str],
                     pairs: Sequence[tuple[RunView, RunView, Any]], settings: Mapping[str, Any],
                     published: Callable[[Any, str], float | None], paper_row: Callable[[Any], str],
                     unpaired: str, need: str, key: str = THINKING) -> None:
    """Append one cell per pair and column to ``sec``: A - B of ``table`` / column, beside ``published(tag,
    column)`` (None for a toggled pair: ``unpaired`` says why); no pair: ``need`` goes to the section's needs."""
    if not pairs:
        sec.needs.append(need)
    d = ctx.design(benchmark)
    for a, b, tag in pairs:
        block = [x for v in (a, b) for x in ctx.blockers(v, settings) if not x.startswith(key)]
        for c in columns:
            pub = None if tag is None else published(tag, c)
            cell = judge_difference(f"{a.label} - {b.label}", c, ctx.tables(a).get(table), ctx.tables(b).get(table), c,
                                    pub, d, blockers=block, paper_row=None if tag is None else paper_row(tag),
                                    margin=ctx.margin)
            if pub is None and not cell.reason:
                cell.reason = unpaired
            sec.cells.append(cell)
