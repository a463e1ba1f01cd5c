"""Plots of runs (matplotlib, imported lazily, Agg backend): PNG bytes for the viewer and as files.

Each benchmark draws its own plots (:meth:`~lensbench.benchmarks.base.Benchmark.figures`, asked
through :func:`lensbench.report.catalog.describe`) with the helpers here: :func:`plt` / :func:`png`
(the figure life cycle), :func:`finished` and :func:`dimension_bars` (one group of bars per column
of a metrics block, one bar per model). :func:`make_figures` puts them in one fixed order: figures
of one kind side by side (:data:`KINDS`), benchmarks by name within a kind. A plot whose inputs
are absent is skipped (never an error).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from lensbench.report.catalog import describe
from lensbench.report.plotstyle import png_bytes, pyplot
from lensbench.report.runs import LoadedRun

__all__ = ["KINDS", "make_figures", "plt", "png", "finished", "dimension_bars"]

#: the kinds of plot, in the order the viewer shows them
KINDS = ("bars", "heat map", "curve", "scatter", "histogram")


def plt():
    """``matplotlib.pyplot`` in the one lensbench plot style (:mod:`lensbench.report.plotstyle`). Raises
    MissingExtraError without the ``plots`` extra."""
    return pyplot("figures")


def png(fig) -> bytes:
    """The figure as PNG bytes in the style's resolution; the figure is closed."""
    return png_bytes(fig)


def finished(runs: Sequence[LoadedRun]) -> list[LoadedRun]:
    """The runs that have a result."""
    return [r for r in runs if r.result is not None]


def dimension_bars(runs: Sequence[LoadedRun], metric: str, title: str, skip: Collection[str]) -> bytes | None:
    """Grouped bars: one group per column of ``metrics[metric]`` (the columns in ``skip``, averages, left
    out), one bar per model; None when there is nothing to draw."""
    rs = finished(runs)
    blocks = [(r.model, r.result.metrics.get(metric) or {}) for r in rs]  # type: ignore[union-attr]
    cols: list[str] = []
    for _m, b in blocks:
        cols += [c for c, v in b.items() if c not in skip and isinstance(v, (int, float)) and c not in cols]
    if not blocks or not cols:
        return None
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(max(6, 0.6 * len(cols) * max(1, len(blocks)) ** 0.5 + 2), 3.6))
    w = 0.8 / len(blocks)
    for k, (model, b) in enumerate(blocks):
        xs = [i + (k - (len(blocks) - 1) / 2) * w for i in range(len(cols))]
        ax.bar(xs, [b.get(c) if isinstance(b.get(c), (int, float)) else 0 for c in cols], w, label=model)
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
    ax.set_ylabel("%")
    ax.set_title(title)
    ax.legend()
    return png(fig)


def make_figures(runs: Sequence[LoadedRun]) -> list[tuple[str, bytes]]:
    """Every plot the runs allow, as ``(title, PNG bytes)``: by kind (:data:`KINDS`), then benchmark name."""
    drawn: list[tuple[int, str, str, bytes]] = []
    for name in sorted({r.benchmark for r in runs}):
        facts = describe(name)
        if facts is None:
            continue
        own = [r for r in runs if r.benchmark == name]
        drawn += [(KINDS.index(kind), name, title, data) for kind, title, data in facts.figures(own)]
    return [(title, data) for _k, _n, title, data in sorted(drawn, key=lambda d: d[:2])]
