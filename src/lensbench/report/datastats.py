"""Dataset statistics (``lensbench data stats BENCH``): the shared shapes, writers and plots.

Each benchmark computes its own statistics (``Benchmark.dataset_stats``, in the benchmark's
``stats.py``) as a :class:`DatasetStats`: tables whose rows put this data's figures beside the
paper's (a ``Paper`` column, ``None`` where the paper gives no number), and raw value lists for
histograms. This module renders them (md / csv / json) and draws them (matplotlib, the ``plots``
extra): a bar chart per count table with the paper's bars beside ours, a histogram per
distribution.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lensbench.report.plotstyle import pyplot, save_png
from lensbench.report.tables import render_table

__all__ = ["StatTable", "DatasetStats", "quartiles", "count_table", "render_stats", "plot_stats"]


@dataclass
class StatTable:
    """One table. ``key``: file-name stem; ``title``; ``source``: the paper's figure / table it
    mirrors; ``columns`` / ``rows``: cells (numbers, strings, None); ``plot``: ``"bar"`` to draw
    column 0 as labels and the numeric columns as bar series, None for no plot; ``notes``."""

    key: str
    title: str
    source: str
    columns: list[str]
    rows: list[list[Any]]
    plot: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class DatasetStats:
    """A benchmark's statistics on one data folder: ``tables``, ``distributions`` (name -> values
    for histograms), ``notes`` (what the data lacks, how figures were read)."""

    benchmark: str
    data: str
    tables: list[StatTable] = field(default_factory=list)
    distributions: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def table(self, key: str) -> StatTable:
        """The table called ``key``. Raises KeyError."""
        for t in self.tables:
            if t.key == key:
                return t
        raise KeyError(key)


def quartiles(values: Sequence[float]) -> tuple[float, float, float] | None:
    """(Q1, median, Q3) of ``values`` by linear interpolation (numpy's default percentile); None
    when empty."""
    if not len(values):
        return None
    q = np.percentile(np.asarray(values, dtype=float), [25, 50, 75])
    return float(q[0]), float(q[1]), float(q[2])


def count_table(key: str, title: str, source: str, label: str, counts: Mapping[str, int],
                paper: Mapping[str, Any] | None = None, order: Sequence[str] | None = None,
                what: str = "Count", paper_total: float | None = None) -> StatTable:
    """A count table drawn as bars: one row per label (``order`` first, then the rest sorted),
    this data's count and the paper's (None where it gives none), then a Total row (the paper's
    total: ``paper_total``, else the sum of its per-label numbers when it gives one for every label)."""
    paper = dict(paper or {})
    labels = [k for k in (order or []) if k in counts or k in paper]
    labels += sorted(k for k in set(counts) | set(paper) if k not in labels)
    rows = [[k, counts.get(k, 0), paper.get(k)] for k in labels]
    if paper_total is None and paper and all(paper.get(k) is not None for k in labels):
        paper_total = sum(paper[k] for k in labels)
    rows.append(["Total", sum(counts.values()), paper_total])
    return StatTable(key, title, source, [label, what, "Paper"], rows, plot="bar")


def render_stats(stats: DatasetStats, fmt: str = "md") -> str:
    """The statistics as ``md`` (headed tables and notes), ``csv`` (the tables one after another,
    each after a ``# key: title`` line) or ``json``. Raises ValueError for another format."""
    if fmt == "json":
        return json.dumps(asdict(stats), indent=1, ensure_ascii=False, default=str) + "\n"
    if fmt not in ("md", "csv"):
        raise ValueError(f"unknown format {fmt!r} (md, csv or json)")
    parts = []
    if fmt == "md":
        parts.append(f"## {stats.benchmark}: dataset statistics of {stats.data}\n")
    for t in stats.tables:
        rows = [[_cell(v) for v in r] for r in t.rows]
        if fmt == "csv":
            parts.append(f"# {t.key}: {t.title}\n" + render_table(t.columns, rows, fmt="csv"))
        else:
            parts.append(render_table(t.columns, rows, fmt="md", title=f"{t.title} ({t.source})")
                         + "".join(f"\n{n}\n" for n in t.notes))
    if fmt == "md" and stats.notes:
        parts.append("\n".join(f"- {n}" for n in stats.notes) + "\n")
    return "\n".join(parts)


def _cell(v: Any) -> Any:
    if isinstance(v, float) and not math.isnan(v) and v == int(v) and abs(v) < 1e15:
        return int(v)
    return v


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")


def plot_stats(stats: DatasetStats, out_dir: str | Path) -> list[Path]:
    """PNG files under ``out_dir`` (created): ``<benchmark>_<key>.png`` per bar table (this data
    and the paper side by side; the Total row left out) and ``<benchmark>_hist_<name>.png`` per
    distribution. Returns the paths written. Raises MissingExtraError without matplotlib."""
    plt = pyplot("dataset statistics plots")

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for t in stats.tables:
        if t.plot != "bar":
            continue
        rows = [r for r in t.rows if r[0] != "Total"]
        series = [(j, c) for j, c in enumerate(t.columns) if j > 0 and any(isinstance(r[j], (int, float)) for r in rows)]
        if not rows or not series:
            continue
        fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(rows) * len(series)), 4.0))
        width = 0.8 / len(series)
        x = np.arange(len(rows))
        for s, (j, name) in enumerate(series):
            vals = [r[j] if isinstance(r[j], (int, float)) else 0 for r in rows]
            bars = ax.bar(x + (s - (len(series) - 1) / 2) * width, vals, width,
                          label=name if name == "Paper" else f"{name} (this data)")
            ax.bar_label(bars, labels=[str(_cell(r[j])) if isinstance(r[j], (int, float)) else "" for r in rows],
                         fontsize=7)
        ax.set_xticks(x, [str(r[0]) for r in rows], rotation=45, ha="right")
        ax.set_title(f"{stats.benchmark}: {t.title} ({t.source})")
        ax.legend()
        written.append(save_png(fig, out / f"{_safe(stats.benchmark)}_{_safe(t.key)}.png"))
    for name, vals in stats.distributions.items():
        if not vals:
            continue
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.hist(vals, bins=min(50, max(5, len(vals) // 5)))
        q = quartiles(vals)
        for v in q:
            ax.axvline(v, color="#57606a", linestyle="--", linewidth=0.8)
        ax.set_title(f"{stats.benchmark}: {name} (n={len(vals)}; quartiles dashed)")
        written.append(save_png(fig, out / f"{_safe(stats.benchmark)}_hist_{_safe(name)}.png"))
    return written
