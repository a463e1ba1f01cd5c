"""Plots over runs of every benchmark, in one fixed order: :func:`make_figures` puts each benchmark's
:func:`headline_bars` (headline values with their CIs) first, then its own plots
(:meth:`~lensbench.benchmarks.base.Benchmark.figures`, drawn with :mod:`lensbench.report.figures`): figures of
one kind side by side (:data:`~lensbench.report.figures.KINDS`), benchmarks by name within a kind."""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.report.figures import CI_NOTE, KINDS, error_bars, finished, plot_labels, plt, png, run_cis
from lensbench.report.runs import LoadedRun
from lensbench.views.catalog import describe

__all__ = ["make_figures", "headline_bars"]


def headline_bars(runs: Sequence[LoadedRun], benchmark: str) -> bytes | None:
    """One panel per headline of the benchmark (its leaderboard cells, e.g. QAcc and SAcc Overall): the value per
    run (named by :func:`plot_labels`), horizontal bars with the 95% CI as error bars where :func:`run_cis` has
    one (none below 10 clusters); None when no run has a headline value."""
    rs = finished(runs)
    facts = describe(benchmark)
    if not rs or facts is None:
        return None
    names, cis = plot_labels(rs), [run_cis(r) for r in rs]
    panels = []
    for hl in facts.headlines:
        blocks = [r.result.metrics.get(hl.metric) for r in rs]  # type: ignore[union-attr]
        vals = [b.get(hl.column) if isinstance(b, dict) and isinstance(b.get(hl.column), (int, float)) else None
                for b in blocks]
        if any(v is not None for v in vals):
            cells = [c.get((hl.metric, hl.category)) for c in cis]
            panels.append((hl.metric if hl.named else "", hl.column, vals, cells))
    if not panels:
        return None
    pyplot = plt()
    fig, axes = pyplot.subplots(1, len(panels), figsize=(3.2 + 2.6 * len(panels), 0.9 + 0.32 * len(rs)),
                                sharey=True, squeeze=False)
    ys = list(range(len(rs)))[::-1]
    for ax, (m, col, vals, ci) in zip(axes[0], panels):
        v = [x if x is not None else 0.0 for x in vals]
        err = error_bars(v, [c if x is not None else None for x, c in zip(vals, ci)])
        ax.barh(ys, v, 0.6, xerr=err, color="#0969da", error_kw={"elinewidth": 1, "capsize": 3, "ecolor": "#1f2328"})
        for y, x, c in zip(ys, vals, ci):
            if x is not None:
                ax.text(c[1] if c else x, y, f" {x:.1f}" if x > 1.5 else f" {x:.3f}", va="center", fontsize=7)
        top = max([c[1] if c else 0.0 for c in ci] + [x for x in vals if x is not None] + [0.0])
        ax.set_title(f"{m} {col}".strip())
        ax.set_xlim(0, 105 if top > 1.5 else 1.05)  # percent, or a 0-1 score
        ax.grid(axis="x")
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("%" if top > 1.5 else "score")
    axes[0][0].set_yticks(ys, names)
    fig.suptitle(f"{benchmark}: headline metrics per run")
    fig.text(0, 0, CI_NOTE, fontsize=7, color="#57606a", ha="left", va="top")
    return png(fig)


def make_figures(runs: Sequence[LoadedRun]) -> list[tuple[str, bytes]]:
    """Every plot the runs allow, as ``(title, PNG bytes)``: by kind (:data:`KINDS`), then benchmark name."""
    drawn: list[tuple[int, str, str, bytes]] = []
    for name in sorted({r.benchmark for r in runs}):
        facts = describe(name)
        if facts is None:
            continue
        own = [r for r in runs if r.benchmark == name]
        head = headline_bars(own, name)
        if head is not None:
            drawn.append((-1, name, f"{name}: headline metrics per run (95% CI)", head))
        drawn += [(KINDS.index(kind), name, title, data) for kind, title, data in facts.figures(own)]
    return [(title, data) for _k, _n, title, data in sorted(drawn, key=lambda d: d[:2])]
