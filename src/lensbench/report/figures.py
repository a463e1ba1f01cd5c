"""Plot helpers (matplotlib, imported lazily, Agg backend): PNG bytes for the viewer and as files.

Each benchmark draws its own plots (:meth:`~lensbench.benchmarks.base.Benchmark.figures`, asked
by :func:`lensbench.views.figures.make_figures`) with the helpers here: :func:`plt` / :func:`png`
(the figure life cycle), :func:`finished`, :func:`plot_labels` (one distinct name per run: the model, with
its tag and differing settings where model names repeat), :func:`run_cis` (a run's CIs, from its
``result.json``) and :func:`dimension_bars` (one group of bars per column of a metrics block, one bar per
run, with CI error bars). A plot whose inputs are absent is skipped (never an error).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from lensbench.report.common import run_tags
from lensbench.report.plotstyle import png_bytes, pyplot
from lensbench.report.runinfo import protocol_settings, settings_label
from lensbench.report.runs import LoadedRun, run_intervals
from lensbench.scoring.agreement import MIN_CLUSTERS
from lensbench.scoring.intervals import design_for

__all__ = ["KINDS", "plt", "png", "finished", "dimension_bars", "plot_labels", "run_cis", "error_bars", "CI_NOTE"]

#: the caption under every plot with error bars
CI_NOTE = ("error bars: 95% CI, percentile bootstrap over the benchmark's clusters (result.json's; none below "
           f"{MIN_CLUSTERS} clusters)")

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


def plot_labels(runs: Sequence[LoadedRun]) -> list[str]:
    """One name per run of ``runs`` (same order) for plot axes, legends and the viewer: the model name when
    no other run has it; else the model then ``[tag; settings; state]`` (its ``--tag``, the protocol settings in which
    it differs from the other runs of that model, e.g. ``input=thermal-only``, then the judge, a partial or
    incomplete run: :func:`lensbench.report.common.run_tags`); the run folder's name in parentheses
    when that still repeats. Two runs never share a label unless their folders share a name."""
    models = [r.model for r in runs]
    settings = [protocol_settings(r) for r in runs]
    out = []
    for i, r in enumerate(runs):
        if models.count(r.model) == 1:
            out.append(r.model)
            continue
        peers = [settings[j] for j, m in enumerate(models) if m == r.model]
        differ = [k for k in dict.fromkeys(k for s in peers for k in s) if len({repr(s.get(k)) for s in peers}) > 1]
        rest = run_tags(r.result) if r.result is not None else []
        own = rest[:1] if r.result is not None and r.result.extra.get("tag") else []
        tags = [t for t in dict.fromkeys(own + [settings_label(settings[i], shown=differ)] + rest) if t]
        out.append(r.model + (f" [{'; '.join(tags)}]" if tags else ""))
    return [x if out.count(x) == 1 else f"{x} ({r.path.name})" for x, r in zip(out, runs)]


def run_cis(run: LoadedRun) -> dict[tuple[str, str], tuple[float, float]]:
    """``{(metric, column): (low, high)}``: the run's 95% CIs as its ``result.json`` stores them (``ci``;
    tables with a setting, e.g. an IV-Bench sweep point, left out), else drawn once with the benchmark's
    default design (its cluster, 2,000 resamples, seed 0). A column resting on fewer than
    :data:`~lensbench.scoring.agreement.MIN_CLUSTERS` clusters has no entry (docs/protocol.md: too few clusters)."""
    block = run.result.ci if run.result is not None else None
    out: dict[tuple[str, str], tuple[float, float]] = {}
    if isinstance(block, dict) and isinstance(block.get("tables"), dict):
        for t in block["tables"].values():
            if not isinstance(t, dict) or t.get("setting"):
                continue
            for col, iv in (t.get("intervals") or {}).items():
                if isinstance(iv, list) and len(iv) >= 4 and None not in iv[1:4] and iv[3] >= MIN_CLUSTERS:
                    out.setdefault((str(t.get("metric")), col), (float(iv[1]), float(iv[2])))
        return out
    facts = run.facts
    if facts is None or not run.records:
        return out
    from lensbench.report.runs import run_tables

    tables = run_tables(run)
    for (key, col), iv in run_intervals(run, design_for(facts.cluster)).items():
        t = tables.get(key)
        if t is not None and not t.setting and iv.low is not None and iv.high is not None and iv.n >= MIN_CLUSTERS:
            out.setdefault((t.metric, col), (iv.low, iv.high))
    return out


def error_bars(values: Sequence[float | None], cis: Sequence[tuple[float, float] | None]):
    """matplotlib's ``yerr`` (2, n) from CIs around ``values`` (0 where a bar has no CI)."""
    lo = [v - c[0] if c and v is not None else 0.0 for v, c in zip(values, cis)]
    hi = [c[1] - v if c and v is not None else 0.0 for v, c in zip(values, cis)]
    return [[max(0.0, x) for x in lo], [max(0.0, x) for x in hi]]


def dimension_bars(runs: Sequence[LoadedRun], metric: str, title: str, skip: Collection[str]) -> bytes | None:
    """Grouped bars: one group per column of ``metrics[metric]`` (the columns in ``skip``, averages, left
    out), one bar per run (named by :func:`plot_labels`) with its 95% CI as an error bar where
    :func:`run_cis` has one; None when there is nothing to draw."""
    rs = finished(runs)
    blocks = [(name, r.result.metrics.get(metric) or {})  # type: ignore[union-attr]
              for name, r in zip(plot_labels(rs), rs)]
    cis = [run_cis(r) for r in rs]
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
        ys = [b.get(c) if isinstance(b.get(c), (int, float)) else 0 for c in cols]
        ax.bar(xs, ys, w, label=model, yerr=error_bars(ys, [cis[k].get((metric, c)) for c in cols]),
               error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "#1f2328"})
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
    ax.set_ylabel("%")
    ax.set_title(title)
    ax.legend()
    fig.text(0, 0, CI_NOTE, fontsize=7, color="#57606a", ha="left", va="top")
    return png(fig)
