"""IF-Bench plots: the score per dimension, one bar per model."""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.report.figures import dimension_bars
from lensbench.report.runs import LoadedRun

__all__ = ["figures"]


def figures(runs: Sequence[LoadedRun]) -> list[tuple[str, str, bytes]]:
    """``[("bars", "IF-Bench score per dimension", PNG)]`` when a run has a ``Score`` block."""
    title = "IF-Bench score per dimension"
    data = dimension_bars(runs, "Score", title, {"Avg"})
    return [("bars", title, data)] if data else []
