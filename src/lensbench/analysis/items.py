"""``lensbench analyze items``: item analysis over many runs of one benchmark, as markdown, CSV or JSON.

:func:`analyze_items` reads the runs (:mod:`.matrix`), computes classical difficulty and discrimination
(:mod:`.classical`), a 2PL fit (:mod:`.irt`), the flags (:mod:`.flags`), how the headline and ranking move
without the flagged items and a smaller subset that ranks the runs as the full set does (:mod:`.impact`).
The writers are pure functions of the :class:`ItemReport`.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from lensbench.core.csvsafe import csv_cell
from lensbench.scoring.bootstrap import Design
from lensbench.views.runs import LoadedRun
from lensbench.analysis.classical import ItemStats, classical_stats
from lensbench.analysis.flags import FLAGS, ItemFlags, flag_items
from lensbench.analysis.impact import Ranking, Shift, Subset, compare_sets, suggest_subset
from lensbench.analysis.irt import TwoPL, fit_2pl
from lensbench.analysis.matrix import ResponseMatrix, describe_run, load_matrix

__all__ = ["ItemReport", "analyze_items", "to_markdown", "to_csv", "to_json", "ranked_items", "write_outputs"]


@dataclass
class ItemReport:
    """Everything ``analyze items`` computed: the matrix, :class:`ItemStats`, the :class:`TwoPL` fit (None with
    ``irt=False``), :class:`ItemFlags`, per-run :class:`Shift` and the :class:`Ranking` agreement without the
    flagged items, the suggested :class:`Subset` (None with ``subset=False``), and the bootstrap :class:`Design`."""

    matrix: ResponseMatrix
    stats: ItemStats
    irt: TwoPL | None
    flags: ItemFlags
    shifts: list[Shift]
    ranking: Ranking
    subset: Subset | None
    design: Design


def analyze_items(run_dirs: Sequence[str | Path | LoadedRun], *, n_resamples: int = 2000, seed: int = 0,
                  irt: bool = True, subset: bool = True) -> ItemReport:
    """Analyse the items of ``run_dirs`` (one benchmark; folders or runs read with records); ``irt=False`` skips
    the 2PL fit and ``subset=False`` the subset search (the two slow parts: the viewer's Items tab). Raises
    ConfigError for unreadable or mixed runs, MissingExtraError without scipy."""
    m = load_matrix(run_dirs)
    stats = classical_stats(m.x)
    fit = fit_2pl(m.x) if irt else None
    flags = flag_items(m, stats)
    design = Design(m.cluster, n_resamples, seed)
    dropped = set(flags.flagged())
    keep = lambda u: u not in dropped and not any(i.startswith(u + "/") for i in dropped)  # noqa: E731
    shifts, ranking = compare_sets(m, keep, design)
    sub = suggest_subset(m, stats.r_pb, dropped, design) if subset else None
    return ItemReport(m, stats, fit, flags, shifts, ranking, sub, design)


def ranked_items(rep: ItemReport) -> list[int]:
    """Item indices, most suspect first: more flags first, then lower point-biserial (undefined counts as 0),
    then id."""
    m, st = rep.matrix, rep.stats
    return sorted(range(len(m.items)), key=lambda k: (-len(rep.flags.flags[m.items[k]]),
                                                      0.0 if math.isnan(st.r_pb[k]) else st.r_pb[k], m.items[k]))


def _num(v: Any, nd: int = 3) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return round(float(v), nd)


def _row(rep: ItemReport, k: int) -> dict[str, Any]:
    m, st, item = rep.matrix, rep.stats, rep.matrix.items[k]
    return {"item": item, "cluster": m.clusters[item], "key": m.targets[item], "n_runs": int(st.n[k]),
            "difficulty": _num(st.p[k]), "point_biserial": _num(st.r_pb[k]), "p_value": _num(st.p_value[k], 4),
            "q_value": _num(rep.flags.q_value[k], 4),
            "irt_a": _num(rep.irt.a[k]) if rep.irt else None, "irt_b": _num(rep.irt.b[k]) if rep.irt else None,
            "flags": ";".join(rep.flags.flags[item]), "why": " | ".join(rep.flags.why[item]),
            "question": m.text[item]}


def to_csv(rep: ItemReport) -> str:
    """One row per item, most suspect first (:func:`ranked_items`); text a spreadsheet would evaluate is
    quoted (:func:`lensbench.core.csvsafe.csv_cell`)."""
    buf = io.StringIO()
    rows = [{k: csv_cell(v) for k, v in _row(rep, k).items()} for k in ranked_items(rep)]
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _triple(t: tuple[float, float | None, float | None]) -> list[Any]:
    return [_num(x, 4) for x in t]


def to_json(rep: ItemReport) -> dict[str, Any]:
    """The whole report as a JSON-able dict."""
    m = rep.matrix
    return {
        "benchmark": m.benchmark, "design": rep.design.to_json(),
        "runs": [{**describe_run(r), "label": lab, "proportion_correct": _num(a, 4),
                  "irt_theta": _num(rep.irt.theta[i]) if rep.irt else None}
                 for i, (r, lab, a) in enumerate(zip(m.runs, m.labels, m.ability))],
        "blind_runs": m.blind_runs, "capable_runs": rep.flags.capable,
        "irt": None if rep.irt is None else {"model": "2PL, marginal MAP (scipy.optimize L-BFGS-B)",
                                             "converged": rep.irt.converged, "iterations": rep.irt.n_iter},
        "flag_counts": {f: sum(f in fs for fs in rep.flags.flags.values()) for f in FLAGS},
        "without_flagged": {"n_items_left_out": len(rep.flags.flagged()),
                            "runs": [{"label": s.label, "full": _triple(s.full), "reduced": _triple(s.reduced),
                                      "change": _triple(s.change)} for s in rep.shifts],
                            "kendall_tau": _triple((rep.ranking.tau, rep.ranking.low, rep.ranking.high)),
                            "order_full": rep.ranking.order_full, "order_reduced": rep.ranking.order_reduced},
        "subset": None if rep.subset is None else {**rep.subset.to_json(),
                                                   "tried": [list(t) for t in rep.subset.tried]},
        "items": [_row(rep, k) for k in ranked_items(rep)],
    }


def _ci(t: tuple[float, float | None, float | None], nd: int = 2) -> str:
    v, lo, hi = t
    return f"{v:.{nd}f}" + ("" if lo is None else f" [{lo:.{nd}f}, {hi:.{nd}f}]")


def to_markdown(rep: ItemReport, top: int = 20) -> str:
    """A readable report: runs, flag counts, flagged items, the most suspect others, headline shifts, ranking
    agreement and the suggested subset."""
    m, fl = rep.matrix, rep.flags
    out = [f"# Item analysis: {m.benchmark}, {len(m.items)} items x {len(m.runs)} runs", "",
           f"{rep.design.describe()}. Capable runs (proportion correct >= median): {len(fl.capable)}."
           + (f" Blind runs: {', '.join(m.blind_runs)}." if m.blind_runs else " No blind run given: "
              "'blind-answerable' cannot be tested."), ""]
    if rep.irt is not None:
        out += [f"2PL (marginal MAP, scipy): {'converged' if rep.irt.converged else 'NOT converged: ' + rep.irt.message}"
                f" in {rep.irt.n_iter} iterations.", ""]
    out += ["## Flags", "", "| flag | items |", "|---|---|"]
    out += [f"| {f} | {sum(f in fs for fs in fl.flags.values())} |" for f in FLAGS]
    order = ranked_items(rep)
    flagged = [k for k in order if fl.flags[m.items[k]]]
    out += ["", f"## Flagged items ({len(flagged)})", "", "| item | key | difficulty | point-biserial | flags | why |",
            "|---|---|---|---|---|---|"]
    for k in flagged:
        r = _row(rep, k)
        out.append(f"| {r['item']} | {r['key']} | {r['difficulty']} | {r['point_biserial']} | {r['flags']} | "
                   f"{r['why']} |")
    rest = [k for k in order if not fl.flags[m.items[k]]][:top]
    out += ["", f"## Most suspect unflagged items (lowest point-biserial, first {len(rest)})", "",
            "| item | difficulty | point-biserial | p | 2PL a | 2PL b |", "|---|---|---|---|---|---|"]
    for k in rest:
        r = _row(rep, k)
        out.append(f"| {r['item']} | {r['difficulty']} | {r['point_biserial']} | {r['p_value']} | {r['irt_a']} | "
                   f"{r['irt_b']} |")
    rk = rep.ranking
    out += ["", f"## Headline without the {len(flagged)} flagged items", "", "| run | full | without flagged | change |",
            "|---|---|---|---|"]
    out += [f"| {s.label} | {_ci(s.full)} | {_ci(s.reduced)} | {_ci(s.change)} |" for s in rep.shifts]
    out += ["", f"Ranking agreement (Kendall tau-b, full vs without flagged): {_ci((rk.tau, rk.low, rk.high), 3)}"
                f" over {rk.n_clusters} {m.cluster} clusters."]
    moved = [f"{lab}: {rk.order_full.index(lab) + 1} -> {rk.order_reduced.index(lab) + 1}"
             for lab in rk.order_full if rk.order_full.index(lab) != rk.order_reduced.index(lab)]
    out.append("Rank changes: " + ("; ".join(moved) if moved else "none") + ".")
    sb = rep.subset
    if sb is None:
        return "\n".join(out) + "\n"
    out += ["", f"## Suggested subset `{sb.name}`", "", f"{len(sb.items)} items; rule: {sb.rule}. Kendall tau-b with "
            f"the full ranking: {_ci((sb.ranking.tau, sb.ranking.low, sb.ranking.high), 3)} (in-sample). "
            f"sha256 of the ids: {sb.sha256}.", "", "| fraction | rule | items | tau [95% CI] |", "|---|---|---|---|"]
    out += [f"| {f:.0%} | {rule} | {n} | {_ci((t, lo, hi), 3)} |" for f, n, t, lo, hi, rule in sb.tried]
    return "\n".join(out) + "\n"


def write_outputs(rep: ItemReport, out_dir: Path) -> list[Path]:
    """Write ``items.md``, ``items.csv``, ``items.json`` and ``subset-<name>.json`` (when the report has a subset)
    under ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"items.md": to_markdown(rep), "items.csv": to_csv(rep),
             "items.json": json.dumps(to_json(rep), indent=1, ensure_ascii=False) + "\n"}
    if rep.subset is not None:
        files[f"subset-{rep.subset.name}.json"] = json.dumps(rep.subset.to_json(), indent=1) + "\n"
    for name, text in files.items():
        (out_dir / name).write_text(text, encoding="utf-8")
    return [out_dir / n for n in files]


