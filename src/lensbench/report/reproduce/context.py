"""The runs of one reproduction as the artifacts, claims and baselines see them.

:class:`Context` holds the paper, one :class:`RunView` per readable run of the paper's benchmarks (its
protocol settings, state, coverage and the paper names it is matched to), the resampling design, and
each run's metric tables (computed once, :func:`lensbench.report.reproduce.tables.metric_tables`).
Comparability of a run with a published row (:meth:`Context.blockers`): the same model (matched), the
same protocol settings (the paper's defaults, the artifact's and the row's settings; options the paper
declares free never count), the whole release (not demo data) and a complete run, or one missing only a few
failed requests (:mod:`lensbench.report.coverage`). Judge and generation overrides are noted
beside the verdict (:meth:`Context.caveats`), not blockers, unless an artifact names them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.report.reproduce.spec import ANY, Grid, Paper, Row
from lensbench.report.reproduce.tables import metric_tables
from lensbench.report.coverage import run_coverage
from lensbench.report.runinfo import protocol_settings, run_state
from lensbench.report.runs import LoadedRun, ensure_records
from lensbench.scoring.agreement import MARGIN_POINTS
from lensbench.scoring.bootstrap import DEFAULT_RESAMPLES, Design, UnitTable
from lensbench.scoring.intervals import design_for

__all__ = ["RunView", "Context", "same_value", "show"]


def show(v: Any) -> str:
    """A setting's value as text (strings bare, everything else as JSON)."""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def same_value(a: Any, b: Any) -> bool:
    """Setting values equal up to their JSON spelling (``"32"`` and ``32`` are the same frame count)."""
    if a is ANY or b is ANY:
        return True
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a == b
    return show(a).lower() == show(b).lower()


@dataclass
class RunView:
    """One run as a reproduction sees it: ``run`` (the loaded folder), ``settings`` (protocol settings),
    ``names`` (paper names it is matched to), ``explicit`` (matched by ``--match``), ``state`` (``""`` =
    complete) and ``coverage`` (``""`` = the whole release, else what it covers and why:
    :attr:`lensbench.report.coverage.Coverage.text`)."""

    run: LoadedRun
    settings: dict[str, Any]
    names: list[str]
    explicit: bool
    state: str
    coverage: str
    _tables: dict[str, UnitTable] | None = field(default=None, repr=False)

    @property
    def benchmark(self) -> str:
        """The run's benchmark CLI name."""
        return self.run.benchmark

    @property
    def model(self) -> str:
        """The run's model name."""
        return self.run.model

    @property
    def label(self) -> str:
        """``model (folder name)``."""
        return self.run.label

    @property
    def path(self) -> Path:
        """The run folder."""
        return self.run.path

    @property
    def baseline(self) -> str:
        """``"random"`` / ``"constant"`` for a run of a baseline backend (its recorded model spec ``random``,
        ``random:SEED`` or ``constant:ANSWER``, or the display name those backends give), else ``""``."""
        spec = str(self.run.manifest.get("model_spec") or "")
        for kind, name in (("random", "random ("), ("constant", "Constant '")):
            if spec == kind or spec.startswith(kind + ":") or self.model.startswith(name):
                return kind
        return ""


class Context:
    """See the module docstring. ``design(benchmark)`` gives the resampling of every CI and p (over the
    benchmark's cluster, :meth:`cluster`); ``margin``: the equivalence margin of every verdict, points of a
    percentage (:mod:`lensbench.scoring.agreement`)."""

    def __init__(self, paper: Paper, runs: Sequence[LoadedRun], matches: Mapping[str, tuple[list[str], bool]], *,
                 n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0, level: float = 0.95,
                 prices: Mapping[str, tuple[float, float]] | None = None, claim_resamples: int | None = None,
                 margin: float = MARGIN_POINTS):
        self.paper = paper
        self.n_resamples, self.seed, self.level = n_resamples, seed, level
        self.margin = margin
        self.claim_resamples = claim_resamples or 10 * n_resamples
        self.prices = dict(prices or {})
        self.views: list[RunView] = []
        for r in runs:
            names, explicit = matches.get(str(r.path.resolve()), ([], False))
            self.views.append(RunView(r, protocol_settings(r), list(names), explicit, run_state(r),
                                      run_coverage(r).text))

    def design(self, benchmark: str, claims: bool = False) -> Design:
        """The resampling design of ``benchmark``'s CIs and p-values (its cluster, count, seed, level); ``claims``:
        that of the claim tests, with ``claim_resamples`` (default 10x: a resampled p is at least 2 / (B + 1),
        and Holm multiplies the smallest p by the number of tests)."""
        return design_for(self.cluster(benchmark), n_resamples=self.claim_resamples if claims else self.n_resamples,
                          seed=self.seed, level=self.level)

    def cluster(self, benchmark: str) -> str:
        """What one resampled cluster of ``benchmark`` is, in words (``"scene"``): the paper's declaration
        (:attr:`Paper.clusters`), else the unit tables of a run of it, else ``"unit"``."""
        if benchmark in self.paper.clusters:
            return self.paper.clusters[benchmark]
        for v in self.of(benchmark):
            for t in self.tables(v).values():
                return t.cluster
        return "unit"

    def tables(self, view: RunView) -> dict[str, UnitTable]:
        """The run's metric tables (unit tables + the paper's extra tables), computed once."""
        if view._tables is None:
            view._tables = metric_tables(view.run.facts, view.benchmark, ensure_records(view.run) or [],
                                         self.paper.tables)
        return view._tables

    def records(self, view: RunView) -> list:
        """The run's sample records (``[]`` when unreadable)."""
        return ensure_records(view.run) or []

    def of(self, benchmark: str, settings: Mapping[str, Any] | None = None) -> list[RunView]:
        """Runs of ``benchmark`` (in the order given) whose settings agree with ``settings`` (on top of the
        paper's defaults); all of them when ``settings`` is None."""
        out = [v for v in self.views if v.benchmark == benchmark]
        if settings is None:
            return out
        return [v for v in out if not self.mismatches(v, settings)]

    def required(self, benchmark: str, *layers: Mapping[str, Any]) -> dict[str, Any]:
        """The paper's default options of ``benchmark`` overlaid by ``layers`` (artifact, row ...)."""
        req = dict(self.paper.defaults.get(benchmark, {}))
        for layer in layers:
            req.update(layer)
        return req

    def mismatches(self, view: RunView, settings: Mapping[str, Any], ignore: Sequence[str] = ()) -> list[str]:
        """``["input=thermal-only (the paper: rgb+thermal)", ...]``: settings of the run that differ from the
        paper's defaults overlaid by ``settings``. Options the paper declares free, options in ``ignore``
        (a setting a claim varies) and options the run did not record never count."""
        free = set(self.paper.free.get(view.benchmark, frozenset())) | set(ignore)
        req = self.required(view.benchmark, settings)
        out = []
        for k, want in req.items():
            if k in free or k not in view.settings or want is ANY:
                continue
            if not same_value(view.settings[k], want):
                out.append(f"{k}={show(view.settings[k])} (the paper: {show(want)})")
        return out

    def caveats(self, view: RunView, settings: Mapping[str, Any] | None = None) -> list[str]:
        """Settings of the run the paper's rows do not fix (judge, generation overrides): named, not blocking."""
        req = self.required(view.benchmark, settings or {})
        free = self.paper.free.get(view.benchmark, frozenset())
        return [f"{k}: {show(v)}" if k == "judge" else f"{k}={show(v)}"
                for k, v in view.settings.items() if k not in req and k not in free]

    def blockers(self, view: RunView, settings: Mapping[str, Any]) -> list[str]:
        """Why the run's numbers are not the paper's measurement: other settings, part of the data, an
        incomplete or killed run (``[]`` when none)."""
        return self.mismatches(view, settings) + self.run_blockers(view)

    def run_blockers(self, view: RunView) -> list[str]:
        """The blockers that do not depend on a row's settings: the paper's own, part of the release or demo
        data (:attr:`lensbench.report.coverage.Coverage.blocker`: "covers 10/29 scenes, ...", "demo data, not
        the benchmark"), an incomplete or killed run, unless it misses only a few samples (at most
        :data:`~lensbench.report.coverage.MAX_MISSING_SHARE` of the release, every cluster scored): that run
        stays comparable, its coverage stated in the run list; a run under an input perturbation
        (``perturbed input (palette:iron)``, :mod:`lensbench.media.perturb`)."""
        out = list(self.paper.blockers(view)) if self.paper.blockers is not None else []
        if view.baseline:
            out.append(f"a {view.baseline} baseline, not a model")
        if p := view.settings.get("perturb"):
            out.append(f"perturbed input ({p})")
        cov = run_coverage(view.run)
        if cov.blocker:
            out.append(cov.blocker)
        if view.state and not cov.comparable:
            out.append(view.state)
        return out

    def row_for(self, view: RunView, grid: Grid) -> tuple[Row | None, list[str]]:
        """The published row of ``grid`` the run is compared with, or ``(None, reasons)``.

        Candidate rows: the row whose label (other than its model's name) the run is matched to, else the rows
        of a matched model (not ``by_label`` rows); among them the one whose settings the run has. Several -> ambiguous (match a
        label); none -> another model, or the settings of the nearest candidate.
        """
        names = set(view.names)
        cands = [r for r in grid.rows if r.label in names and r.label != r.model] or \
                [r for r in grid.rows if not r.by_label and r.model in names]
        if not cands:
            if not grid.rows:
                return None, []
            how = "matched to " + ", ".join(view.names) if view.names else f"model {view.model!r}"
            return None, [f"another model: {how} is not one of the {len(grid.rows)} rows of {grid.id} (if it is "
                          f"one, --match {view.path}=ROW)"]
        fits = [r for r in cands if not self.mismatches(view, {**grid.settings, **r.settings})]
        if len(fits) == 1:
            return fits[0], []
        if len(fits) > 1:
            return None, [f"matches several rows of {grid.id} ({', '.join(r.label for r in fits)}): "
                          f"--match {view.path}=LABEL picks one"]
        near = min(cands, key=lambda r: len(self.mismatches(view, {**grid.settings, **r.settings})))
        why = self.mismatches(view, {**grid.settings, **near.settings})
        return None, [f"another setting than {grid.id}'s {near.label!r}: " + "; ".join(why)]
