"""``lensbench reproduce``: a paper's computed tables and figures, claims and baselines, on run folders.

:func:`reproduce` reads only run folders (:func:`lensbench.views.runs.read_run`) and the paper's
declaration (:class:`~lensbench.report.reproduce.spec.Paper`, from the benchmark's own ``reproduce``
module through :meth:`lensbench.benchmarks.base.Benchmark.reproduction`); it sends nothing to a model and
writes nothing into a run folder. Steps: read the runs (unreadable ones are listed, never abort), match
each to the paper's rows (:mod:`lensbench.report.reproduce.match`), build every artifact (:mod:`lensbench.report.reproduce.grid` or the paper's own builder),
the accounting (:mod:`lensbench.report.reproduce.accounting`) and modality baselines (:mod:`lensbench.report.reproduce.necessity`), decide the verdicts of each
table or figure as one family (:func:`lensbench.report.reproduce.cells.decide_family`: Holm over its tested cells), test every claim
(:mod:`lensbench.report.reproduce.claims`, Holm over all of them), and collect what the runs cannot support.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from lensbench.report.reproduce.accounting import accounting_section
from lensbench.report.reproduce.cells import decide_family
from lensbench.report.reproduce.claims import apply_holm, evaluate_claim
from lensbench.report.reproduce.context import Context
from lensbench.report.reproduce.grid import build_grid
from lensbench.report.reproduce.match import resolve_matches
from lensbench.report.reproduce.model import Report, Section
from lensbench.report.reproduce.necessity import necessity_section
from lensbench.report.reproduce.spec import Grid, Paper
from lensbench.views.runs import LoadedRun, read_run
from lensbench.scoring.agreement import ALPHA, BOSCHLOO_MAX_N, MARGIN_POINTS, MIN_CLUSTERS, SMALL_COUNT
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES

__all__ = ["reproduce", "load_runs", "verdict_rule"]


def verdict_rule(margin: float, alpha: float = ALPHA) -> str:
    """The verdict rule in words (printed in every format), with the margin in points of a percentage."""
    return (f"Verdicts (alpha {alpha:g}): each cell tests ours = paper counting both estimates' sampling noise "
            "(the paper's value is an estimate over the same items: twice our cluster variance, delete-one-cluster "
            f"jackknife, t test with clusters - 1 df; exact at small counts and at 0%/100%: Boschloo's test of the "
            f"unit counts, Fisher's above {BOSCHLOO_MAX_N} units, Newcombe's interval, when fewer than "
            f"{SMALL_COUNT} successes or failures). consistent = equivalent within +-{margin:g} points (two one-sided "
            f"tests: the {round(100 * (1 - 2 * alpha))}% interval of ours - paper inside the margin; a count gets the "
            "same share of its units); differs = p < alpha after Holm's correction over the tested cells of "
            "the same table or figure (p (Holm) column); inconclusive = neither; not comparable = untested, "
            f"with the reason (another model or setting, part of the data, fewer than {MIN_CLUSTERS} clusters, "
            "no published value).")


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
              prices: Mapping[str, tuple[float, float]] | None = None, claim_resamples: int | None = None,
              margin: float = MARGIN_POINTS) -> Report:
    """The :class:`~lensbench.report.reproduce.model.Report` of ``paper`` on ``run_dirs``.

    ``matches``: ``--match RUN=ROW`` values; ``prices``: {run folder: (USD per 1M input, per 1M output
    tokens)}; ``claim_resamples``: resamples of the claim tests (default 10 x ``n_resamples``); ``margin``: the
    equivalence margin of every verdict, points of a percentage (:mod:`lensbench.scoring.agreement`). Raises
    ConfigError for an unknown run or row in ``matches`` (before anything is computed), ValueError for a
    margin <= 0.
    """
    if not margin > 0:
        raise ValueError(f"the equivalence margin must be > 0 points, got {margin}")
    runs, problems = load_runs(run_dirs, paper)
    row_models = [r.model for a in paper.artifacts for r in getattr(a, "rows", ()) if not r.by_label]
    row_models += list(paper.models)
    resolved = resolve_matches(matches, run_dirs, {str(r.path.resolve()): r.model for r in runs},
                               list(dict.fromkeys(row_models)), paper.model_names())
    keyed_prices = {str(Path(k).resolve()): v for k, v in (prices or {}).items()}
    ctx = Context(paper, runs, resolved, n_resamples=n_resamples, seed=seed, level=level, prices=keyed_prices,
                  claim_resamples=claim_resamples, margin=margin)
    rep = Report(paper.title, paper.cite, problems=problems, notes=list(paper.notes))
    for v in ctx.views:
        rep.runs.append({"run": str(v.path), "label": v.label, "benchmark": v.benchmark, "model": v.model,
                         "matched": v.names, "explicit": v.explicit,
                         "settings": ctx.mismatches(v, {}) + ctx.caveats(v), "options": v.settings,
                         "state": v.state or "complete", "coverage": v.coverage or "all"})
    rep.sections = [_section(ctx, a) for a in paper.artifacts]
    for s in rep.sections:
        if k := decide_family(s.cells):
            s.notes.append(f"differs: Holm's correction over the {k} tested cells of {s.id} (alpha {ALPHA:g}); "
                           f"consistent: equivalent within +-{margin:g} points (TOST).")
    rep.sections.append(accounting_section(ctx))
    nec, rep.flags = necessity_section(ctx)
    rep.sections.append(nec)
    rep.claims = [evaluate_claim(ctx, c) for c in paper.claims]
    apply_holm(rep.claims)
    rep.needs = [n for s in rep.sections for n in s.needs]
    rep.needs += [f"{c.id} ({c.cite}): {c.untestable}" for c in rep.claims if not c.tests and c.untestable]
    rep.rule = verdict_rule(margin)
    rep.design = " ".join(f"{b}: {ctx.design(b).describe()} (claim tests: {ctx.claim_resamples} resamples)."
                          for b in paper.benchmarks)
    return rep
