"""Report pieces every benchmark shares: the Counts table and the incomplete-run note."""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.core.results import RunResult
from lensbench.report.tables import render_table

__all__ = ["counts_table", "incomplete_notes", "run_label"]


def run_label(r: RunResult) -> str:
    """A run's row name: the model, tagged ``[incomplete: N errors]`` when requests failed."""
    return r.model + ("" if r.complete else f" [incomplete: {r.counts.get('n_error', 0)} errors]")


def counts_table(results: Sequence[RunResult], columns: Sequence[tuple[str, str]], fmt: str = "md",
                 title: str = "Counts") -> str:
    """One row per run: ``Model`` then ``counts[key]`` for each ``(header, key)`` of ``columns``."""
    rows = [[r.model] + [r.counts.get(key) for _h, key in columns] for r in results]
    return render_table(["Model"] + [h for h, _k in columns], rows, fmt, title=title)


def incomplete_notes(results: Sequence[RunResult], what: str = "request(s)", extra: str = "") -> str:
    """One sentence per incomplete run: how many units failed in transport and how to retry them."""
    lines = []
    for r in results:
        if not r.complete:
            lines.append(f"Run {r.run_dir or r.model} is incomplete: {r.counts.get('n_error')} {what} failed in "
                         f"transport and are left out{extra}; re-run with the same --out to retry them.\n")
    return "".join(lines)
