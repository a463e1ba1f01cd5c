"""Compare two runs of one benchmark: paired differences on the shared samples, and flipped samples.

``lensbench compare RUN_A RUN_B`` and the viewer's comparison tab read this. Only samples that
both runs scored (same ``sample_id``, outcome not ``error`` in either) enter the comparison;
the metric tables and resampling units are those of :mod:`lensbench.scoring.units`, the
statistics those of :func:`lensbench.scoring.bootstrap.paired_difference` (bootstrap CI of
A - B, permutation p-value, seeded).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.report.runs import LoadedRun
from lensbench.report.tables import render_table
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES, PairedResult, paired_difference
from lensbench.scoring.units import unit_tables

__all__ = ["Flip", "Comparison", "flipped_samples", "compare_runs", "render_comparison"]


@dataclass
class Flip:
    """A sample right in one run and not in the other: ids and both outcomes/answers."""

    sample_id: str
    outcome_a: str
    outcome_b: str
    answer_a: Any = None
    answer_b: Any = None
    target: Any = None


@dataclass
class Comparison:
    """Run A vs run B: ``rows`` (one :class:`PairedResult` per metric and category, with its
    ``metric``), ``flips`` (A right & B not = ``"A"`` side first), shared/only-in counts."""

    benchmark: str
    a: str
    b: str
    n_shared: int
    n_only_a: int
    n_only_b: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    flips: list[Flip] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict."""
        return asdict(self)


def _right(outcome: str) -> bool:
    return outcome == "correct"


def flipped_samples(a: list[SampleRecord], b: list[SampleRecord]) -> list[Flip]:
    """Samples of both runs (matched by ``sample_id``; neither ``error`` nor ``scored``) whose
    correctness differs, in A's order: A right first, then B right."""
    bmap = {r.sample_id: r for r in b}
    out_ab, out_ba = [], []
    for ra in a:
        rb = bmap.get(ra.sample_id)
        if rb is None or "error" in (ra.outcome, rb.outcome) or "scored" in (ra.outcome, rb.outcome):
            continue
        if _right(ra.outcome) != _right(rb.outcome):
            f = Flip(ra.sample_id, ra.outcome, rb.outcome, ra.answer, rb.answer, ra.target)
            (out_ab if _right(ra.outcome) else out_ba).append(f)
    return out_ab + out_ba


def compare_runs(a: LoadedRun, b: LoadedRun, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                 categories: bool = True) -> Comparison:
    """Paired comparison of two runs of the same benchmark (A - B per metric and category).

    Raises ValueError when the runs are of different benchmarks or either has no records.
    """
    if a.benchmark != b.benchmark:
        raise ValueError(f"cannot compare a {a.benchmark} run with a {b.benchmark} run")
    if a.records is None or b.records is None:
        raise ValueError(f"no sample records in {(a if a.records is None else b).path}")
    ids_a = {r.sample_id for r in a.records if r.outcome != "error"}
    ids_b = {r.sample_id for r in b.records if r.outcome != "error"}
    shared = ids_a & ids_b
    cmp = Comparison(a.benchmark, a.label, b.label, len(shared), len(ids_a - ids_b), len(ids_b - ids_a),
                     seed=seed, n_resamples=n_resamples)
    cmp.flips = flipped_samples(a.records, b.records)
    ra = [r for r in a.records if r.sample_id in shared]
    rb = [r for r in b.records if r.sample_id in shared]
    ta, tb = unit_tables(a.benchmark, ra), unit_tables(b.benchmark, rb)
    if not ta:
        cmp.notes.append(f"no metric tables for {a.benchmark} records (not in the common record shape?)")
    for metric, t in ta.items():
        if metric not in tb:
            continue
        for cat in (list(t.categories) if categories else [t.headline]):
            res: PairedResult = paired_difference(t, tb[metric], cat, n_resamples=n_resamples, seed=seed)
            cmp.rows.append({"metric": metric, **asdict(res)})
    return cmp


def render_comparison(cmp: Comparison, fmt: str = "md") -> str:
    """The comparison as ``md`` (deltas table + flipped samples), ``csv`` (deltas) or ``json``."""
    if fmt == "json":
        return json.dumps(cmp.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"
    cols = ["metric", "category", "A", "B", "A-B", "ci_low", "ci_high", "p", "n"]
    rows = [[r["metric"], r["category"], r["a"], r["b"], r["diff"], r["low"], r["high"], r["p_value"], r["n"]]
            for r in cmp.rows]
    if fmt == "csv":
        return render_table(cols, rows, "csv", digits=4)
    head = (f"## {cmp.benchmark}: A = {cmp.a}, B = {cmp.b}\n\n{cmp.n_shared} shared samples "
            f"({cmp.n_only_a} only in A, {cmp.n_only_b} only in B); 95% CI by paired bootstrap over units, "
            f"p by permutation (A/B swapped within units); seed {cmp.seed}, {cmp.n_resamples} resamples.\n\n")
    body = render_table(cols, rows, "md", title="Paired differences")
    flips = render_table(["sample", "A", "B", "answer A", "answer B", "target"],
                         [[f.sample_id, f.outcome_a, f.outcome_b, _short(f.answer_a), _short(f.answer_b),
                           _short(f.target)] for f in cmp.flips], "md",
                         title=f"Flipped samples ({sum(f.outcome_a == 'correct' for f in cmp.flips)} A right, "
                               f"{sum(f.outcome_b == 'correct' for f in cmp.flips)} B right)")
    notes = "".join(f"\n{n}\n" for n in cmp.notes)
    return head + body + "\n" + flips + notes


def _short(v: Any) -> str:
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    s = s.replace("|", "/").replace("\n", " ")
    return s if len(s) <= 40 else s[:39] + "…"
