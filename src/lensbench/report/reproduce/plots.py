"""Figures of a reproduction (matplotlib, Agg, in the one lensbench plot style of
:mod:`lensbench.report.plotstyle`): PNG bytes for the HTML appendix, or None when matplotlib is not
installed (``lensbench[plots]``; the tables carry every number)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lensbench.core.extras import MissingExtraError
from lensbench.report.plotstyle import png_bytes, pyplot

__all__ = ["scatter", "boxes", "lines"]


def _pyplot():
    try:
        return pyplot("reproduction figures")
    except MissingExtraError:
        return None


def scatter(points: Sequence[tuple[str, float, float]], xlabel: str, ylabel: str, title: str) -> bytes | None:
    """Labelled points ``(label, x, y)``."""
    plt = _pyplot()
    if plt is None or not points:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, x, y in points:
        ax.scatter([x], [y])
        ax.annotate(label, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return png_bytes(fig)


def boxes(groups: Mapping[str, Mapping[str, Sequence[float]]], ylabel: str, title: str) -> bytes | None:
    """Box plots per category, one box per series side by side: ``{series: {category: values}}``."""
    plt = _pyplot()
    cats = list(dict.fromkeys(c for g in groups.values() for c in g))
    if plt is None or not cats:
        return None
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(cats) * max(1, len(groups))), 3.8))
    width = 0.8 / max(1, len(groups))
    for k, (series, data) in enumerate(groups.items()):
        pos = [i + (k - (len(groups) - 1) / 2) * width for i in range(len(cats))]
        vals = [list(data.get(c, [])) or [float("nan")] for c in cats]
        bp = ax.boxplot(vals, positions=pos, widths=width * 0.9, patch_artist=True, manage_ticks=False)
        for patch in bp["boxes"]:
            patch.set_facecolor(f"C{k}")
            patch.set_alpha(0.5)
        ax.plot([], [], color=f"C{k}", label=series)
    return _finish(fig, ax, cats, ylabel, title)


def lines(series: Mapping[str, Sequence[tuple[str, float | None]]], ylabel: str, title: str) -> bytes | None:
    """One line per series over shared categorical x values: ``{series: [(x, y or None), ...]}``."""
    plt = _pyplot()
    xs = list(dict.fromkeys(x for pts in series.values() for x, _y in pts))
    if plt is None or not xs:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for name, pts in series.items():
        d = dict(pts)
        ax.plot(range(len(xs)), [d.get(x) if d.get(x) is not None else float("nan") for x in xs], marker="o",
                label=name)
    return _finish(fig, ax, xs, ylabel, title)


def _finish(fig, ax, ticks: Sequence[str], ylabel: str, title: str) -> bytes:
    ax.set_xticks(range(len(ticks)))
    ax.set_xticklabels(ticks)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7)
    return png_bytes(fig)
