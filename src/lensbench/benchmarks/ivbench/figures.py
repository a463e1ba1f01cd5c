"""IV-Bench plots: accuracy per task (one bar per model) and accuracy over a frames/resolution sweep."""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.benchmarks.ivbench.sweep import sweep_in_order
from lensbench.report.figures import dimension_bars, finished, plot_labels, plt, png
from lensbench.report.runs import LoadedRun

__all__ = ["figures", "sweep_curve"]


def sweep_curve(runs: Sequence[LoadedRun]) -> bytes | None:
    """Overall accuracy across the frames/resolution configurations of sweep runs, chance line, n per point."""
    rs = [r for r in finished(runs) if r.result.metrics.get("sweep")]  # type: ignore[union-attr]
    if not rs:
        return None
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(7, 3.6))
    chance = None
    for name, r in zip(plot_labels(rs), rs):
        sw = sweep_in_order(r.result.metrics["sweep"])  # type: ignore[union-attr]
        labels = [str(p.get("label") or f"{p.get('frames')}f/{p.get('resolution')}") for p in sw]
        ys = [(p.get("accuracy") or {}).get("Overall") for p in sw]
        ax.plot(range(len(sw)), [y if y is not None else float("nan") for y in ys], marker="o", label=name)
        for i, p in enumerate(sw):
            if ys[i] is not None:
                ax.annotate(f"n={p.get('n')}", (i, ys[i]), fontsize=6, textcoords="offset points", xytext=(0, 5))
        ax.set_xticks(range(len(sw)), labels, rotation=30, ha="right")
        chance = chance or (r.result.metrics.get("chance") or {}).get("Overall")  # type: ignore[union-attr]
    if chance is not None:
        ax.axhline(chance, color="grey", ls="--", lw=1, label=f"chance {chance:.1f}%")
    ax.set_ylabel("Overall accuracy (%)")
    ax.set_title("IV-Bench: accuracy by frames / resolution")
    ax.legend()
    return png(fig)


def figures(runs: Sequence[LoadedRun]) -> list[tuple[str, str, bytes]]:
    """Task bars and the sweep curve, those the runs allow."""
    out = []
    title = "IV-Bench accuracy per task"
    data = dimension_bars(runs, "accuracy", title, {"Overall", "P-Avg", "R-Avg"})
    if data:
        out.append(("bars", title, data))
    data = sweep_curve(runs)
    if data:
        out.append(("curve", "IV-Bench: accuracy by frames / resolution", data))
    return out
