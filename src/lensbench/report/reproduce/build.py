"""``lensbench reproduce``: a paper's computed tables and figures, claims and baselines, on run folders.

:func:`reproduce` reads only run folders (:func:`lensbench.report.runs.read_run`) and the paper's
declaration (:class:`~lensbench.report.reproduce.spec.Paper`, from the benchmark's own ``reproduce``
module through :meth:`lensbench.benchmarks.base.Benchmark.reproduction`); it sends nothing to a model and
writes nothing into a run folder. Steps: read the runs (unreadable ones are listed, never abort), match
each to the paper's rows (:mod:`.match`), build every artifact (:mod:`.grid` or the paper's own builder),
the accounting (:mod:`.accounting`) and modality baselines (:mod:`.necessity`), test every claim
(:mod:`.claims`, Holm over all of them), and collect what the runs cannot support.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from lensbench.report.reproduce.accounting import accounting_section
from lensbench.report.reproduce.claims import apply_holm, evaluate_claim
from lensbench.report.reproduce.context import Context
from lensbench.report.reproduce.grid import build_grid
from lensbench.report.reproduce.match import resolve_matches
from lensbench.report.reproduce.model import Report, Section
from lensbench.report.reproduce.necessity import necessity_section
from lensbench.report.reproduce.spec import Grid, Paper
from lensbench.report.runs import LoadedRun, read_run
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES

__all__ = ["reproduce", "load_runs"]


def load_runs(run_dirs: Sequence[str | Path], paper: Paper) -> tuple[list[LoadedRun], list[str]]:
    """The readable runs of the paper's benchmarks among ``run_dirs`` and one line per folder left out."""
    runs, problems = [], []
    for d in run_dirs:
        r = read_run(d)
        if r.result is None or r.records is None:
            problems.append(f"{d}: not read ({'; '.join(r.problems) or 'no result'})")
        elif r.benchmark not in paper.benchmarks:
            problems.append(f"{d}: a {r.benchmark} run, not one of this paper's ({', '.join(paper.benchmarks)})")
        else:
            runs.append(r)
    return runs, problems


def _section(ctx: Context, artifact) -> Section:
    if isinstance(artifact, Grid):
        return build_grid(ctx, artifact)
    try:
        return artifact.build(ctx)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:  # odd records: say so, keep the report
        return Section(artifact.id, artifact.title, notes=[f"could not be built: {type(exc).__name__}: {exc}"])


def reproduce(paper: Paper, run_dirs: Sequence[str | Path], matches: Sequence[str] = (), *,
              n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95,
              prices: Mapping[str, tuple[float, float]] | None = None, claim_resamples: int | None = None) -> Report:
    """The :class:`~lensbench.report.reproduce.model.Report` of ``paper`` on ``run_dirs``.

    ``matches``: ``--match RUN=ROW`` values; ``prices``: {run folder: (USD per 1M input, per 1M output
    tokens)}; ``claim_resamples``: resamples of the claim tests (default 10 x ``n_resamples``). Raises ConfigError for an unknown run or row in ``matches`` (before anything is computed).
    """
    runs, problems = load_runs(run_dirs, paper)
    row_models = [r.model for a in paper.artifacts for r in getattr(a, "rows", ()) if not r.by_label]
    row_models += list(paper.models)
    resolved = resolve_matches(matches, run_dirs, {str(r.path.resolve()): r.model for r in runs},
                               list(dict.fromkeys(row_models)), paper.model_names())
    keyed_prices = {str(Path(k).resolve()): v for k, v in (prices or {}).items()}
    ctx = Context(paper, runs, resolved, n_resamples=n_resamples, seed=seed, level=level, prices=keyed_prices,
                  claim_resamples=claim_resamples)
    rep = Report(paper.title, paper.cite, problems=problems, notes=list(paper.notes))
    for v in ctx.views:
        rep.runs.append({"run": str(v.path), "label": v.label, "benchmark": v.benchmark, "model": v.model,
                         "matched": v.names, "explicit": v.explicit,
                         "settings": ctx.mismatches(v, {}) + ctx.caveats(v), "options": v.settings,
                         "state": v.state or "complete", "coverage": v.coverage or "all"})
    rep.sections = [_section(ctx, a) for a in paper.artifacts]
    rep.sections.append(accounting_section(ctx))
    nec, rep.flags = necessity_section(ctx)
    rep.sections.append(nec)
    rep.claims = [evaluate_claim(ctx, c) for c in paper.claims]
    apply_holm(rep.claims)
    rep.needs = [n for s in rep.sections for n in s.needs]
    rep.needs += [f"{c.id} ({c.cite}): {c.untestable}" for c in rep.claims if not c.tests and c.untestable]
    rep.design = " ".join(f"{b}: {ctx.design(b).describe()} (claim tests: {ctx.claim_resamples} resamples)."
                          for b in paper.benchmarks)
    return rep
