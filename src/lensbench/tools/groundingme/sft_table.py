"""GroundingME Sec. 5.3 tables from a sweep (``sweep.json`` + its run folders), our rows beside the
paper's (``benchmarks/groundingme/paper/table5.json``, ``table7.json``, ``fig6.json``):

* Tab. 5: in-domain Acc@0.5 on RefCOCOg_val, RefCOCOg_rej_val and their Macro_Average, one column
  per mixture ratio, ``Origin`` = before fine-tuning;
* Tab. 7: GroundingME Acc@0.5 Total / Dis. / Spa. / Lim. / Rej. per ratio;
* Fig. 6: GroundingME w/o Rejection (Acc@0.5 over the Discriminative, Spatial and Limited items)
  and Rejection vs the ratio, ``Baseline`` = before fine-tuning; as a table, and as a PNG
  (matplotlib, ``lensbench[plots]``) when a path is given.

Runs are read with :func:`lensbench.api.load_run`; a run that is missing is shown as empty cells.
Ratios are shown in the paper's order, by their neg:pos value (1:8, 1:4, 1:2, 1:1, 2:1), whatever
order the sweep ran them in; the figure's x axis is that order for our points and the paper's alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lensbench.core.resources import read_json
from lensbench.core.results import RunResult
from lensbench.report.plotstyle import pyplot, save_png
from lensbench.report.tables import render_table

__all__ = ["ratio_order", "sweep_runs", "without_rejection", "render_sweep", "plot_fig6"]

_PAPER = "lensbench.benchmarks.groundingme"
_L1 = ("Discriminative", "Spatial", "Limited")


def ratio_order(name: str) -> tuple[int, float, str]:
    """Sort key of a column: ``Origin`` / ``Baseline`` first, then ratios by neg / pos (``"1:8"`` =
    0.125 ... ``"2:1"`` = 2.0), anything else last by name."""
    if name in ("Origin", "Baseline"):
        return (0, 0.0, name)
    neg, sep, pos = name.partition(":")
    try:
        return (1, int(neg) / int(pos), name) if sep else (2, 0.0, name)
    except (ValueError, ZeroDivisionError):
        return (2, 0.0, name)


def sweep_runs(doc: dict[str, Any]) -> list[tuple[str, dict[str, RunResult | None]]]:
    """``[(column, {"in_domain": RunResult | None, "groundingme": ...})]``: ``Origin`` first, then
    the ratios by neg:pos value (:func:`ratio_order`), not in the order the sweep ran them."""
    from lensbench.api import load_run

    def load(p: str | None) -> RunResult | None:
        try:
            return load_run(p).result if p else None
        except Exception:  # noqa: BLE001 - an unreadable run is an empty column, never an abort
            return None

    ratios = sorted(doc.get("ratios", {}).items(), key=lambda kv: ratio_order(kv[0]))
    cols = [("Origin", doc.get("baseline", {}))] + ratios
    return [(name, {k: load(v.get("runs", {}).get(k)) for k in ("in_domain", "groundingme")}) for name, v in cols]


def without_rejection(r: RunResult | None) -> float | None:
    """GroundingME w/o Rejection: Acc@0.5 over the Discriminative, Spatial and Limited items (the
    L-1 accuracies weighted by their item counts); None without those items."""
    if r is None:
        return None
    acc = r.metrics.get("Acc@0.5", {})
    parts = [(acc.get(c), r.counts.get(f"n_{c}", 0)) for c in _L1]
    n = sum(k for v, k in parts if v is not None)
    return sum(v * k for v, k in parts if v is not None) / n if n else None


def _fig6_points(runs) -> list[tuple[str, float | None, float | None]]:
    out = []
    for name, rs in runs:
        g = rs["groundingme"]
        out.append(("Baseline" if name == "Origin" else name, without_rejection(g),
                    g.metrics.get("Acc@0.5", {}).get("Rejection") if g else None))
    return out


def render_sweep(doc: dict[str, Any], fmt: str = "md", with_paper: bool = True) -> str:
    """Tab. 5, Tab. 7 and Fig. 6 (as a table) of a sweep, ``md`` or ``csv``."""
    runs = sweep_runs(doc)
    model = Path(doc.get("base_model", "model")).name
    t5 = read_json(_PAPER, "paper", "table5.json")
    ours = dict(runs)
    names = [*t5["columns"], *[n for n in ours if n not in t5["columns"]]] if with_paper else list(ours)
    sets = list(dict.fromkeys(k for _, rs in runs if rs["in_domain"] for k in rs["in_domain"].counts.get("sets", {})))
    rows = []
    for key in [*sets, "Macro_Average"]:
        rows.append([f"{key} ({model})", *[ours[n]["in_domain"].metrics["Acc@0.5"].get(key)
                                          if n in ours and ours[n]["in_domain"] else None for n in names]])
    if with_paper:
        for key, vals in t5["rows"].items():
            by_col = dict(zip(t5["columns"], vals))
            rows.append([f"{key} ({t5['model']}, paper)", *[by_col.get(n) for n in names]])
    parts = [render_table(["Dataset", *names], rows, fmt, digits=1,
                          title="GroundingME Tab. 5: in-domain Acc@0.5 (%) by SFT neg:pos ratio (Origin = before SFT)")]
    t7 = read_json(_PAPER, "paper", "table7.json")
    cols7 = t7["columns"]
    rows7 = []
    for name, rs in runs:
        g = rs["groundingme"]
        rows7.append([f"{name} ({model})", *[g.metrics.get("Acc@0.5", {}).get(c) if g else None for c in cols7]])
    if with_paper:
        rows7 += [[f"{row['ratio']} ({t7['model']}, paper)", *[row["values"][c] for c in cols7]] for row in t7["rows"]]
    parts.append(render_table(["Neg.:Pos.", "Total", "Dis.", "Spa.", "Lim.", "Rej."], rows7, fmt, digits=1,
                              title="GroundingME Tab. 7: GroundingME Acc@0.5 (%) by SFT neg:pos ratio"))
    rows6 = [[f"{name} ({model})", wo, rej] for name, wo, rej in _fig6_points(runs)]
    if with_paper:
        f6 = read_json(_PAPER, "paper", "fig6.json")
        rows6 += [[f"{p['ratio']} ({f6['model']}, paper)", p["without_rejection"], p["rejection"]] for p in f6["points"]]
    parts.append(render_table(["Neg.:Pos.", "GroundingME w/o Rejection", "Rejection"], rows6, fmt, digits=1,
                              title="GroundingME Fig. 6 (data): Acc@0.5 (%) vs SFT neg:pos ratio "
                                    "(paper fine-tuned points derived from Tab. 7)"))
    return "\n".join(parts)


def plot_fig6(doc: dict[str, Any], path: Path, with_paper: bool = True) -> Path:
    """Fig. 6 as a PNG at ``path``: two panels (w/o Rejection, Rejection) vs ratio, ours and the
    paper's. Needs ``lensbench[plots]``."""
    plt = pyplot("the Fig. 6 plot")
    ours = _fig6_points(sweep_runs(doc))
    series = [(Path(doc.get("base_model", "ours")).name, [(n, w, r) for n, w, r in ours])]
    if with_paper:
        f6 = read_json(_PAPER, "paper", "fig6.json")
        series.append((f"{f6['model']} (paper)", [(p["ratio"], p["without_rejection"], p["rejection"])
                                                   for p in f6["points"]]))
    # one x axis for every series, ordered by ratio (a categorical axis would order by first appearance)
    cats = sorted({p[0] for _, pts in series for p in pts}, key=ratio_order)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, idx, title in ((axes[0], 1, "GroundingME w/o Rejection"), (axes[1], 2, "Rejection")):
        for label, pts in series:
            got = sorted((cats.index(p[0]), p[idx]) for p in pts if p[idx] is not None)
            ax.plot([x for x, _ in got], [y for _, y in got], marker="o", label=label)
        ax.set_xticks(range(len(cats)), cats)
        ax.set_title(title)
        ax.set_xlabel("SFT neg:pos ratio")
        ax.set_ylabel("Acc@0.5 (%)")
    axes[1].legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_png(fig, path)
