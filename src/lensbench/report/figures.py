"""Plots of runs (matplotlib, imported lazily, Agg backend): PNG bytes for the viewer and as files.

* per-dimension bars across models: IF-Bench ``Score`` dimensions, IV-Bench ``accuracy`` tasks;
* RGB-Th-Bench skill heat maps (models x skills) of QAcc and SAcc (paper Fig. 4-5);
* IV-Bench accuracy over the frames/resolution sweep, with the chance line and n per point;
* GOBench model-vs-human scatter per dimension with PLCC/SRCC (scoring.metrics.correlation);
* GroundingME IoU histogram per L-1 category.

Each plot reads ``result.json`` metrics or the sample records; a plot whose inputs are absent
is skipped (never an error).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from lensbench.report.plotstyle import png_bytes, pyplot
from lensbench.report.runs import LoadedRun
from lensbench.scoring.metrics import correlation
from lensbench.scoring.units import label

__all__ = ["make_figures", "dimension_bars", "skill_heatmaps", "sweep_curve", "gobench_scatter", "iou_histograms"]

_SKIP_COLS = {"Overall", "Avg", "P-Avg", "R-Avg", "RGB-Txt", "RGB-Th-Txt"}


def _plt():
    return pyplot("figures")  # the one lensbench plot style (report/plotstyle.py)


def _png(fig) -> bytes:
    return png_bytes(fig)


def _finished(runs: Sequence[LoadedRun], bench: str) -> list[LoadedRun]:
    return [r for r in runs if r.benchmark == bench and r.result is not None]


def dimension_bars(runs: Sequence[LoadedRun], bench: str, metric: str, title: str) -> bytes | None:
    """Grouped bars: one group per column of ``metrics[metric]`` (averages left out), one bar per model."""
    rs = _finished(runs, bench)
    blocks = [(r.model, r.result.metrics.get(metric) or {}) for r in rs]
    cols = []
    for _m, b in blocks:
        cols += [c for c, v in b.items() if c not in _SKIP_COLS and isinstance(v, (int, float)) and c not in cols]
    if not blocks or not cols:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(cols) * max(1, len(blocks)) ** 0.5 + 2), 3.6))
    w = 0.8 / len(blocks)
    for k, (model, b) in enumerate(blocks):
        xs = [i + (k - (len(blocks) - 1) / 2) * w for i in range(len(cols))]
        ax.bar(xs, [b.get(c) if isinstance(b.get(c), (int, float)) else 0 for c in cols], w, label=model)
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
    ax.set_ylabel("%")
    ax.set_title(title)
    ax.legend()
    return _png(fig)


def skill_heatmaps(runs: Sequence[LoadedRun]) -> list[tuple[str, bytes]]:
    """RGB-Th-Bench QAcc and SAcc per skill (columns) and model (rows), as in Fig. 4-5."""
    rs = _finished(runs, "rgb-th-bench")
    out = []
    for metric, fig_no in (("QAcc", "Fig. 4"), ("SAcc", "Fig. 5")):
        rows = [(r.model, r.result.metrics.get(metric) or {}) for r in rs]
        cols = []
        for _m, b in rows:
            cols += [c for c in b if c not in _SKIP_COLS and c not in cols]
        if not rows or not cols:
            continue
        plt = _plt()
        import numpy as np

        z = np.array([[b.get(c) if isinstance(b.get(c), (int, float)) else np.nan for c in cols] for _m, b in rows])
        fig, ax = plt.subplots(figsize=(1 + 0.55 * len(cols), 1.2 + 0.4 * len(rows)))
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
        out.append((title, _png(fig)))
    return out


def sweep_curve(runs: Sequence[LoadedRun]) -> bytes | None:
    """IV-Bench Overall accuracy across its frames/resolution configurations, chance line, n per point."""
    rs = [r for r in _finished(runs, "iv-bench") if r.result.metrics.get("sweep")]
    if not rs:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    chance = None
    for r in rs:
        sw = r.result.metrics["sweep"]
        labels = [str(p.get("label") or f"{p.get('frames')}f/{p.get('resolution')}") for p in sw]
        ys = [(p.get("accuracy") or {}).get("Overall") for p in sw]
        ax.plot(range(len(sw)), [y if y is not None else float("nan") for y in ys], marker="o", label=r.model)
        for i, p in enumerate(sw):
            if ys[i] is not None:
                ax.annotate(f"n={p.get('n')}", (i, ys[i]), fontsize=6, textcoords="offset points", xytext=(0, 5))
        ax.set_xticks(range(len(sw)), labels, rotation=30, ha="right")
        chance = chance or (r.result.metrics.get("chance") or {}).get("Overall")
    if chance is not None:
        ax.axhline(chance, color="grey", ls="--", lw=1, label=f"chance {chance:.1f}%")
    ax.set_ylabel("Overall accuracy (%)")
    ax.set_title("IV-Bench: accuracy by frames / resolution")
    ax.legend()
    return _png(fig)


def gobench_scatter(runs: Sequence[LoadedRun]) -> list[tuple[str, bytes]]:
    """GOBench model vs human score per image and dimension (records: ``scores[dim]`` vs ``target[dim]``)."""
    out = []
    for r in _finished(runs, "gobench"):
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
        plt = _plt()
        fig, axes = plt.subplots(1, len(pts), figsize=(3.4 * len(pts), 3.2), squeeze=False)
        for ax, (d, xy) in zip(axes[0], pts.items()):
            c = correlation([p[1] for p in xy], [p[0] for p in xy])
            ax.scatter([p[0] for p in xy], [p[1] for p in xy], s=8, alpha=0.5)
            plcc = "-" if c["PLCC"] is None else f"{c['PLCC']:.3f}"
            srcc = "-" if c["SRCC"] is None else f"{c['SRCC']:.3f}"
            ax.set_title(f"{d}: PLCC {plcc}, SRCC {srcc}, n={c['n']}", fontsize=8)
            ax.set_xlabel("human")
            ax.set_ylabel("model")
        title = f"GOBench model vs human: {r.model}"
        fig.suptitle(title)
        out.append((title, _png(fig)))
    return out


def iou_histograms(runs: Sequence[LoadedRun]) -> list[tuple[str, bytes]]:
    """GroundingME IoU distribution per L-1 category (records' ``scores.iou``)."""
    out = []
    for r in _finished(runs, "groundingme"):
        by: dict[str, list[float]] = defaultdict(list)
        for rec in r.records or []:
            v = rec.scores.get("iou")
            if isinstance(v, (int, float)):
                by[str(label(rec, "l1"))].append(float(v))
        if not by:
            continue
        plt = _plt()
        fig, axes = plt.subplots(1, len(by), figsize=(3 * len(by), 2.8), squeeze=False, sharey=True)
        for ax, (cat, vals) in zip(axes[0], by.items()):
            ax.hist(vals, bins=[i / 10 for i in range(11)])
            ax.axvline(0.5, color="grey", ls="--", lw=1)
            ax.set_title(f"{cat} (n={len(vals)})", fontsize=8)
            ax.set_xlabel("IoU")
        title = f"GroundingME IoU per L-1: {r.model}"
        fig.suptitle(title)
        out.append((title, _png(fig)))
    return out


def make_figures(runs: Sequence[LoadedRun]) -> list[tuple[str, bytes]]:
    """Every plot the runs allow, as ``(title, PNG bytes)``, in a fixed order."""
    out: list[tuple[str, bytes]] = []
    for bench, metric, title in (("if-bench", "Score", "IF-Bench score per dimension"),
                                 ("iv-bench", "accuracy", "IV-Bench accuracy per task")):
        png = dimension_bars(runs, bench, metric, title)
        if png:
            out.append((title, png))
    out += skill_heatmaps(runs)
    png = sweep_curve(runs)
    if png:
        out.append(("IV-Bench: accuracy by frames / resolution", png))
    out += gobench_scatter(runs)
    out += iou_histograms(runs)
    return out
