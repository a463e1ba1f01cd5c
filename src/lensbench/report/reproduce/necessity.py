"""Modality-necessity baselines: per item, "answerable without X", beside the model's score.

A baseline run (a :class:`~lensbench.report.reproduce.spec.Baseline`'s settings: no image, no video, no
thermal image, blind) is paired with each run of the same model under the paper's own settings. An item
(``sample_id``, restricted to the baseline's ``where`` labels) is *answerable without X* when the baseline
run answered it right (outcome ``correct``). For each pair the section shows both scores with their 95%
CIs, how many items are answerable without X, and the model's share of right answers on those items and
on the rest: a model that owes its score to items a blind model also gets right shows it here. The flags
themselves go to the report's ``flags`` (``--json``).
"""

from __future__ import annotations

from typing import Any

from lensbench.core.records import SampleRecord
from lensbench.report.reproduce.context import Context, RunView, same_value
from lensbench.report.reproduce.model import Section
from lensbench.report.reproduce.spec import Baseline
from lensbench.scoring.bootstrap import bootstrap_ci

__all__ = ["necessity_section", "flags_of", "is_baseline"]


def _concerned(r: SampleRecord, b: Baseline) -> bool:
    return all(str(r.labels.get(k, r.extra.get(k))) == str(v) for k, v in b.where.items())


def is_baseline(ctx: Context, view: RunView, b: Baseline) -> bool:
    """The run recorded every setting of ``b`` with ``b``'s value (a run that did not record one is never a
    baseline) and the paper's defaults otherwise."""
    return (all(k in view.settings and same_value(view.settings[k], v) for k, v in b.settings.items())
            and not ctx.mismatches(view, b.settings))


def _hit(b: Baseline):
    return b.hit or (lambda r: r.outcome == "correct")


def flags_of(records: list[SampleRecord], b: Baseline) -> dict[str, bool]:
    """``{sample_id: answerable without X}`` over the baseline run's scored items that ``b`` concerns."""
    hit = _hit(b)
    return {r.sample_id: bool(hit(r)) for r in records if r.outcome != "error" and _concerned(r, b)}


def _share(records: list[SampleRecord], ids: set[str], b: Baseline) -> tuple[float | None, int]:
    rs = [r for r in records if r.sample_id in ids and r.outcome != "error"]
    hit = _hit(b)
    return (100.0 * sum(bool(hit(r)) for r in rs) / len(rs) if rs else None), len(rs)


def _score(ctx: Context, v: RunView, b: Baseline) -> str:
    t = ctx.tables(v).get(b.table)
    if t is None or b.category not in t.categories:
        return "-"
    d = ctx.design(v.benchmark)
    iv = bootstrap_ci(t, b.category, n_resamples=d.n_resamples, seed=d.seed, level=d.level)
    if iv.value is None:
        return "-"
    return f"{iv.value:.2f}" + ("" if iv.low is None else f" [{iv.low:.2f}, {iv.high:.2f}]")


def necessity_section(ctx: Context) -> tuple[Section, list[dict[str, Any]]]:
    """The baselines section and the per-item flags ``[{baseline, without, run, sample_id, answerable}]``."""
    sec = Section("Necessity", "Modality-necessity baselines: items answerable without the modality")
    sec.columns = ["baseline", "model run", "baseline run", "score", "model", "baseline", "items",
                   "answerable without", "model right on those (%)", "model right on the rest (%)"]
    flags: list[dict[str, Any]] = []
    for b in ctx.paper.baselines:
        base_runs = [v for v in ctx.of(b.benchmark) if is_baseline(ctx, v, b)]
        full_runs = [v for v in ctx.of(b.benchmark) if not ctx.mismatches(v, {})
                     and not any(is_baseline(ctx, v, x) for x in ctx.paper.baselines)]
        if not base_runs:
            sec.needs.append(f"{b.name} (without {b.without}): no baseline run" + (f": {b.run}" if b.run else ""))
            continue
        for bv in base_runs:
            f = flags_of(ctx.records(bv), b)
            flags += [{"baseline": b.name, "without": b.without, "run": bv.label, "sample_id": k, "answerable": a}
                      for k, a in f.items()]
            mine = [v for v in full_runs if v.model == bv.model]
            if not mine:
                sec.notes.append(f"{b.name}: {bv.label} has no run of the same model with the paper's settings to "
                                 "compare with; its flags are in --json")
            yes = {k for k, a in f.items() if a}
            for v in mine:
                recs = ctx.records(v)
                on_yes, _n = _share(recs, yes, b)
                on_no, _n = _share(recs, set(f) - yes, b)
                sec.rows.append([b.name, v.label, bv.label, f"{b.table} {b.category}", _score(ctx, v, b),
                                 _score(ctx, bv, b), len(f), f"{len(yes)} ({100.0 * len(yes) / len(f):.1f}%)"
                                 if f else "0", on_yes, on_no])
    if not ctx.paper.baselines:
        sec.notes.append("This paper's benchmark has no modality baseline setting.")
    return sec, flags
