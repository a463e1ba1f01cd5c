"""IV-Bench sweep plot (Sec. 4.3.2, Fig. 3(b), 4): accuracy against frames / resolution.

matplotlib is imported inside :func:`plot_sweep`, so importing the benchmark costs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lensbench.benchmarks.ivbench.sweep import sweep_in_order
from lensbench.report.plotstyle import pyplot, save_png

__all__ = ["plot_sweep"]


def plot_sweep(sweep: list[dict[str, Any]], path: Path, title: str = "IV-Bench sweep") -> Path | None:
    """Line plot of Overall / P-Avg / R-Avg accuracy against the sweep configs; PNG at ``path``.

    x axis: frames when only frames vary, short side when only resolution varies, else the
    config labels in order (frames, then short side: :func:`~lensbench.benchmarks.ivbench.sweep.sweep_in_order`).
    Returns ``path`` (None for fewer than 2 configs).
    """
    if len(sweep) < 2:
        return None
    sweep = sweep_in_order(sweep)
    plt = pyplot("the IV-Bench sweep plot")
    frames = {s["frames"] for s in sweep}
    res = {s["resolution"] for s in sweep}
    if len(res) == 1:
        xs, xlabel, log = [s["frames"] for s in sweep], "frames", True
    elif len(frames) == 1 and None not in res:
        xs, xlabel, log = [s["resolution"] for s in sweep], "short side (px)", False
    else:
        xs, xlabel, log = list(range(len(sweep))), "frames @ short side", False
    fig, ax = plt.subplots(figsize=(6, 4))
    for col in ("Overall", "P-Avg", "R-Avg"):
        ys = [s["accuracy"].get(col) for s in sweep]
        ax.plot(xs, [float("nan") if y is None else y for y in ys], marker="o", label=col)
    if log:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(x) for x in xs])
    elif xlabel.startswith("frames @"):
        ax.set_xticks(xs, [s["label"] for s in sweep], rotation=30)
    else:
        ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.legend()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_png(fig, path)
