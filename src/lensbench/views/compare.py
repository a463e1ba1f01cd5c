"""Compare two runs of one benchmark: paired differences on the shared clusters, and flipped samples.

``lensbench compare RUN_A RUN_B`` and the viewer's comparison tab read this. Each run is scored
exactly as its own result scores it (its benchmark's unit tables, the ones its result comes from), on the
units both runs scored (docs/protocol.md, general rules); the statistics are those of
:mod:`lensbench.scoring.paired` over the benchmark's clusters (bootstrap CI of A - B,
permutation p-value, seeded). Runs that differ in a protocol setting are compared all the same,
with a note naming the settings; a perturbed run and its unperturbed twin (``--perturb``, only that setting
differs) get a note saying the differences are the perturbation's paired effect.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.report.coverage import run_coverage
from lensbench.views.catalog import describe
from lensbench.report.runinfo import protocol_settings, settings_differences
from lensbench.report.runs import LoadedRun, run_tables
from lensbench.report.tables import render_table
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES, MIN_CLUSTERS, plural, too_few_text
from lensbench.scoring.intervals import design_for
from lensbench.scoring.paired import paired_all

__all__ = ["Flip", "Comparison", "flipped_samples", "compare_runs", "render_comparison", "ci_note",
           "perturbation_twin"]


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
    """Run A vs run B: ``rows`` (one :class:`~lensbench.scoring.paired.PairedResult` per metric and
    category, with its ``metric``, ``setting`` and ``too_few_clusters``: ``n`` when fewer than
    :data:`~lensbench.scoring.bootstrap.MIN_CLUSTERS` clusters count, CI and p then null), ``flips``
    (A right & B not = ``"A"`` side first),
    shared/only-in counts, ``design`` (how every CI and p was drawn) and ``ci_note`` (it in words,
    the text every view prints)."""

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
    design: dict[str, Any] = field(default_factory=dict)
    ci_note: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict."""
        return asdict(self)


def ci_note(cluster: str, n_resamples: int, seed: int, level: float = 0.95) -> str:
    """The sentence saying how a comparison's CIs and p-values were drawn (md, csv notes and viewer alike);
    ``cluster``: what the benchmark resamples, in words."""
    d = design_for(cluster, n_resamples=n_resamples, seed=seed, level=level)
    return (f"{d.describe().replace('CI:', 'CI of A - B:', 1)}, the same clusters for both runs; p: two-sided "
            f"paired permutation test, A and B swapped within each {d.cluster} (exact over every swap of the "
            f"{plural(d.cluster)} whose swap moves A - B when there are at most {d.n_resamples} swaps, else "
            f"{d.n_resamples} random swaps, seed {d.seed}); neither CI nor p below {MIN_CLUSTERS} "
            f"{plural(d.cluster)}.")


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


def _setting_text(setting: dict[str, Any] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting.items()) if setting else ""


def perturbation_twin(a: LoadedRun, b: LoadedRun, sa: dict[str, Any], sb: dict[str, Any]) -> str:
    """The note of a perturbed run compared with its unperturbed twin (the same model and every protocol setting
    but ``perturb``, one side unperturbed): the paired differences are the perturbation's effect; ``""`` else."""
    keys = {k for k in {*sa, *sb} if sa.get(k) != sb.get(k)}
    if keys != {"perturb"} or a.model != b.model or (sa.get("perturb") and sb.get("perturb")):
        return ""
    side, p = ("A", sa["perturb"]) if sa.get("perturb") else ("B", sb["perturb"])
    sign = "unperturbed - perturbed" if side == "B" else "perturbed - unperturbed"
    return (f"Perturbation twins: run {side} is the same model under the same settings with a perturbed input ({p}); "
            f"A - B ({sign}) is the perturbation's paired effect on the same items.")


def compare_runs(a: LoadedRun, b: LoadedRun, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                 level: float = 0.95, categories: bool = True) -> Comparison:
    """Paired comparison of two runs of the same benchmark (A - B per metric and category).

    Tables are paired by metric and setting (an IV-Bench sweep: each frames/resolution
    configuration with the same one of the other run). Raises ValueError when the runs are of
    different benchmarks or either has no records.
    """
    if a.benchmark != b.benchmark:
        raise ValueError(f"cannot compare a {a.benchmark} run with a {b.benchmark} run")
    if a.records is None or b.records is None:
        raise ValueError(f"no sample records in {(a if a.records is None else b).path}")
    ids_a = {r.sample_id for r in a.records if r.outcome != "error"}
    ids_b = {r.sample_id for r in b.records if r.outcome != "error"}
    facts = describe(a.benchmark)
    cluster = facts.cluster if facts is not None else "unit"
    design = design_for(cluster, n_resamples=n_resamples, seed=seed, level=level)
    cmp = Comparison(a.benchmark, a.label, b.label, len(ids_a & ids_b), len(ids_a - ids_b), len(ids_b - ids_a),
                     seed=seed, n_resamples=n_resamples, design=design.to_json(),
                     ci_note=ci_note(cluster, n_resamples, seed, level))
    cmp.flips = flipped_samples(a.records, b.records)
    sa, sb = protocol_settings(a), protocol_settings(b)
    if twin := perturbation_twin(a, b, sa, sb):
        cmp.notes.append(twin)
    elif diffs := settings_differences(sa, sb):
        cmp.notes.append("The runs differ in protocol settings, so the differences mix the models with the settings: "
                         + "; ".join(diffs) + ".")
    for side, run in (("A", a), ("B", b)):  # what each run covers of the release (issue 29.2: every surface)
        if cov := run_coverage(run).text:
            cmp.notes.append(f"Coverage of {side} ({run.path}): {cov}.")
    ta, tb = run_tables(a), run_tables(b)
    if not ta:
        cmp.notes.append(f"no metric tables for {a.benchmark} records (not in the common record shape?)")
    for key, t in ta.items():
        other = next((u for u in tb.values() if u.metric == t.metric and u.setting == t.setting), None)
        if other is None:
            cmp.notes.append(f"{t.metric} {_setting_text(t.setting)}: not in B with the same setting; not compared."
                             .replace("  ", " "))
            continue
        cats = list(t.categories) if categories else [t.headline]
        for res in paired_all(t, other, cats, n_resamples=n_resamples, seed=seed, level=level):
            cmp.rows.append({"metric": t.metric, "setting": _setting_text(t.setting), **asdict(res),
                             "too_few_clusters": res.n if res.too_few else None})
    return cmp


def render_comparison(cmp: Comparison, fmt: str = "md") -> str:
    """The comparison as ``md`` (deltas table + flipped samples), ``csv`` (deltas) or ``json``."""
    if fmt == "json":
        return json.dumps(cmp.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"
    with_setting = any(r["setting"] for r in cmp.rows)
    cols = ["metric"] + (["setting"] if with_setting else []) + ["category", "A", "B", "A-B", "ci_low", "ci_high",
                                                                  "p", "n " + plural(cmp.design.get("cluster", "unit"))]
    rows = [[r["metric"]] + ([r["setting"]] if with_setting else []) +
            [r["category"], r["a"], r["b"], r["diff"], *_ci(r), _p(r), r["n"]] for r in cmp.rows]
    if fmt == "csv":
        return render_table(cols, [[_p(r, csv=True) if c == "p" else v for c, v in zip(cols, row)]
                                   for r, row in zip(cmp.rows, rows)], "csv", digits=4)
    head = (f"## {cmp.benchmark}: A = {cmp.a}, B = {cmp.b}\n\n{cmp.n_shared} shared samples "
            f"({cmp.n_only_a} only in A, {cmp.n_only_b} only in B); each run scored as its own result scores it, "
            f"on the units both scored. {cmp.ci_note}\n\n")
    body = render_table(cols, rows, "md", title="Paired differences")
    flips = render_table(["sample", "A", "B", "answer A", "answer B", "target"],
                         [[f.sample_id, f.outcome_a, f.outcome_b, _short(f.answer_a), _short(f.answer_b),
                           _short(f.target)] for f in cmp.flips], "md",
                         title=f"Flipped samples ({sum(f.outcome_a == 'correct' for f in cmp.flips)} A right, "
                               f"{sum(f.outcome_b == 'correct' for f in cmp.flips)} B right)")
    notes = "".join(f"\n{n}\n" for n in cmp.notes)
    return head + body + notes + "\n" + flips


def _ci(r: dict[str, Any]) -> tuple[Any, Any]:
    """The row's CI bounds, or "too few clusters (n)" and "" below the minimum (issue 29)."""
    if r.get("too_few_clusters") is not None:
        return too_few_text(r["too_few_clusters"]), ""
    return r["low"], r["high"]


def _p(r: dict[str, Any], csv: bool = False) -> str:
    """p to 3 decimals (``<0.001`` below), ``(exact)`` when every swap was enumerated; csv: to 4 decimals
    (``<0.0001`` below, never ``0.0000``), "" when there is none; "too few clusters (n)" below the minimum."""
    p = r["p_value"]
    if r.get("too_few_clusters") is not None:
        return too_few_text(r["too_few_clusters"])
    if p is None:
        return "" if csv else "-"
    if csv:
        return "<0.0001" if p < 0.0001 else f"{p:.4f}"
    return ("<0.001" if p < 0.001 else f"{p:.3f}") + (" (exact)" if r.get("exact") else "")


def _short(v: Any) -> str:
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    s = s.replace("|", "/").replace("\n", " ")
    return s if len(s) <= 40 else s[:39] + "…"
