"""GOBench plots: model vs human score per image and dimension, with PLCC / SRCC."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from lensbench.report.figures import finished, plot_labels, plt, png
from lensbench.report.runs import LoadedRun
from lensbench.scoring.metrics import correlation

__all__ = ["figures"]


def figures(runs: Sequence[LoadedRun]) -> list[tuple[str, str, bytes]]:
    """``[("scatter", title, PNG)]`` per run: records' ``scores[dim]`` vs ``target[dim]``."""
    out = []
    rs = finished(runs)
    for name, r in zip(plot_labels(rs), rs):
        pts: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for rec in r.records or []:
            if rec.outcome != "scored" or not isinstance(rec.target, dict):
                continue
            for d, h in rec.target.items():
                m = rec.scores.get(d)
                if isinstance(m, (int, float)) and isinstance(h, (int, float)):
                    pts[d].append((float(h), float(m)))
        if not pts:
            continue
        pyplot = plt()
        fig, axes = pyplot.subplots(1, len(pts), figsize=(3.4 * len(pts), 3.2), squeeze=False)
        for ax, (d, xy) in zip(axes[0], pts.items()):
            c = correlation([p[1] for p in xy], [p[0] for p in xy])
            ax.scatter([p[0] for p in xy], [p[1] for p in xy], s=8, alpha=0.5)
            plcc = "-" if c["PLCC"] is None else f"{c['PLCC']:.3f}"
            srcc = "-" if c["SRCC"] is None else f"{c['SRCC']:.3f}"
            ax.set_title(f"{d}: PLCC {plcc}, SRCC {srcc}, n={c['n']}", fontsize=8)
            ax.set_xlabel("human")
            ax.set_ylabel("model")
        title = f"GOBench model vs human: {name}"
        fig.suptitle(title)
        out.append(("scatter", title, png(fig)))
    return out
