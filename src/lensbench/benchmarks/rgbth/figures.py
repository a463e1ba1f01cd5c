"""RGB-Th-Bench plots: QAcc and SAcc heat maps, models x skills (paper Fig. 4-5 layout)."""

from __future__ import annotations

from collections.abc import Sequence

from lensbench.benchmarks.rgbth.data import RGB_TH_TXT, RGB_TXT
from lensbench.report.figures import finished, plot_labels, plt, png
from lensbench.report.runs import LoadedRun

__all__ = ["figures"]

_SUMMARY = {"Overall", RGB_TXT, RGB_TH_TXT}


def figures(runs: Sequence[LoadedRun]) -> list[tuple[str, str, bytes]]:
    """``[("heat map", title, PNG)]``: QAcc and SAcc per skill (columns) and run (rows, named by
    :func:`lensbench.report.figures.plot_labels`: two runs of one model carry their tag/settings)."""
    import numpy as np

    rs = finished(runs)
    out = []
    for metric, fig_no in (("QAcc", "Fig. 4"), ("SAcc", "Fig. 5")):
        rows = [(name, r.result.metrics.get(metric) or {})  # type: ignore[union-attr]
                for name, r in zip(plot_labels(rs), rs)]
        cols: list[str] = []
        for _m, b in rows:
            cols += [c for c in b if c not in _SUMMARY and c not in cols]
        if not rows or not cols:
            continue
        pyplot = plt()
        z = np.array([[b.get(c) if isinstance(b.get(c), (int, float)) else np.nan for c in cols] for _m, b in rows])
        fig, ax = pyplot.subplots(figsize=(1 + 0.55 * len(cols), 1.2 + 0.4 * len(rows)))
        im = ax.imshow(z, vmin=0, vmax=100, cmap="viridis", aspect="auto")
        ax.grid(False)  # no grid lines across the cells
        ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
        ax.set_yticks(range(len(rows)), [m for m, _b in rows])
        for i in range(z.shape[0]):
            for j in range(z.shape[1]):
                if not np.isnan(z[i, j]):
                    ax.text(j, i, f"{z[i, j]:.0f}", ha="center", va="center", fontsize=7,
                            color="white" if z[i, j] < 60 else "black")
        fig.colorbar(im, ax=ax, label="%")
        title = f"RGB-Th-Bench {metric} per skill ({fig_no} layout)"
        ax.set_title(title)
        out.append(("heat map", title, png(fig)))
    return out
