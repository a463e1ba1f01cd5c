"""GroundingME plots: the IoU distribution per L-1 category."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from lensbench.report.figures import finished, plot_labels, plt, png
from lensbench.report.runs import LoadedRun

__all__ = ["figures"]


def figures(runs: Sequence[LoadedRun]) -> list[tuple[str, str, bytes]]:
    """``[("histogram", title, PNG)]`` per run: records' ``scores.iou`` by ``labels["L-1"]``."""
    out = []
    rs = finished(runs)
    for name, r in zip(plot_labels(rs), rs):
        by: dict[str, list[float]] = defaultdict(list)
        for rec in r.records or []:
            v = rec.scores.get("iou")
            if isinstance(v, (int, float)):
                by[str(rec.labels.get("L-1"))].append(float(v))
        if not by:
            continue
        pyplot = plt()
        fig, axes = pyplot.subplots(1, len(by), figsize=(3 * len(by), 2.8), squeeze=False, sharey=True)
        for ax, (cat, vals) in zip(axes[0], by.items()):
            ax.hist(vals, bins=[i / 10 for i in range(11)])
            ax.axvline(0.5, color="grey", ls="--", lw=1)
            ax.set_title(f"{cat} (n={len(vals)})", fontsize=8)
            ax.set_xlabel("IoU")
        title = f"GroundingME IoU per L-1: {name}"
        fig.suptitle(title)
        out.append(("histogram", title, png(fig)))
    return out
