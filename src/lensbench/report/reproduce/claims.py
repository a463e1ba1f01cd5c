"""The tests a paper's claims are checked with, and the verdicts after Holm's correction.

Each test kind evaluates on the :class:`~lensbench.report.reproduce.context.Context` and returns
``(tests, untestable, notes)``; runs whose protocol settings differ from the claim's (the paper's
defaults overlaid by ``settings``) are left out and named in the notes.

* :class:`Contrast`: within each run, category set A minus category set B of one metric table (e.g.
  RGB-Txt minus RGB-Th-Txt), CI and p from the same resampled clusters (:func:`.stats.contrast_stats`,
  p by inversion at 0).
* :class:`Versus`: each run's value against a constant the paper states (e.g. "below 18%"), p by
  inversion at the constant.
* :class:`Between`: paired runs, A minus B on the clusters both scored
  (:func:`lensbench.scoring.paired.paired_difference`: bootstrap CI, permutation p): the same model
  with one setting varied (``vary``), or runs matched to two paper names (``rows``).
* :class:`Trend`: runs of one model ordered by a setting (or by the paper names ``rows``), or the
  configurations of one sweep run: Page's L test over the shared clusters (:func:`.stats.trend`).
* :class:`Check`: any function ``ctx -> (tests, untestable, notes)``.

:func:`apply_holm` adjusts every p of the paper together (one family) and sets each verdict:
``supported`` (Holm p < alpha, effect in the claimed direction), ``contradicted`` (Holm p < alpha,
opposite direction), ``not shown`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lensbench.report.reproduce.context import Context, RunView, same_value, show
from lensbench.report.reproduce.model import ClaimResult, TestResult
from lensbench.report.reproduce.spec import Claim
from lensbench.report.reproduce.stats import (cluster_rates, contrast_stats, holm, inversion_p, trend,
                                              with_category)
from lensbench.scoring.bootstrap import bootstrap_ci, bootstrap_stats, percentile_interval, plural
from lensbench.scoring.paired import paired_difference

__all__ = ["Contrast", "Versus", "Between", "Trend", "Check", "evaluate_claim", "apply_holm", "ALPHA"]

ALPHA = 0.05
Outcome = tuple[list[TestResult], str, list[str]]


def _eligible(ctx: Context, benchmark: str, settings: Mapping[str, Any], ignore: Sequence[str] = (),
              rows: Sequence[str] = ()) -> tuple[list[RunView], list[str]]:
    """Runs of ``benchmark`` with the claim's settings (and matched to one of ``rows`` when given). Runs of a
    baseline backend (``random``, ``constant:``) are left out with a note: baselines, never evidence for a
    claim about models."""
    ok, notes = [], []
    for v in ctx.of(benchmark):
        if v.baseline:
            note = f"{v.label} left out: a {v.baseline} baseline, never evidence for a claim about models"
            if note not in notes:
                notes.append(note)
            continue
        if rows and not set(rows) & set(v.names):
            continue
        why = ctx.mismatches(v, settings, ignore)
        (notes.append(f"{v.label} left out: {'; '.join(why)}") if why else ok.append(v))
    return ok, notes


@dataclass(frozen=True)
class Contrast:
    """Within each run: pooled categories ``a`` minus pooled categories ``b`` of ``table``; ``expect``
    ``">"`` (A higher) or ``"<"``; ``rows``: only runs matched to these paper names (a claim about them).
    ``table_b``: side B is this other table of the run on the same units (e.g. the strict score beside the
    soft one), compared per category of ``a`` as paired tables (:func:`lensbench.scoring.paired.paired_difference`)."""

    benchmark: str
    table: str
    a: Sequence[str]
    b: Sequence[str]
    expect: str = ">"
    settings: Mapping[str, Any] = field(default_factory=dict)
    rows: Sequence[str] = ()
    table_b: str = ""

    def evaluate(self, ctx: Context) -> Outcome:
        runs, notes = _eligible(ctx, self.benchmark, self.settings, rows=self.rows)
        d = ctx.design(self.benchmark, claims=True)
        tests = []
        name_a, name_b = " + ".join(self.a), " + ".join(self.b)
        if self.table_b:
            for v in runs:
                got, why = _paired(ctx, self.benchmark, self.table, self.a, v, v, self.expect,
                                   f"{self.table} vs {self.table_b}", self.table_b)
                tests += got
                notes += why
            return tests, "" if tests else _needs(self.benchmark, self.rows), notes
        for v in runs:
            t = ctx.tables(v).get(self.table)
            if t is None or any(c not in t.categories for c in (*self.a, *self.b)):
                notes.append(f"{v.label}: no {self.table} {name_a} / {name_b} in its records")
                continue
            t = with_category(with_category(t, "\0a", self.a), "\0b", self.b)
            est, stats, n = contrast_stats(t, "\0a", "\0b", n_resamples=d.n_resamples, seed=d.seed)
            lo, hi = percentile_interval(stats, d.level) if stats is not None else (None, None)
            tests.append(TestResult(f"{v.label}: {self.table} {name_a} - {name_b}", est, lo, hi,
                                    inversion_p(stats, 0.0) if stats is not None else None, self.expect,
                                    f"within-run contrast, {d.describe()}; p: bootstrap inversion at 0", n))
        return tests, "" if tests else _needs(self.benchmark, self.rows), notes


def _needs(benchmark: str, rows: Sequence[str]) -> str:
    if rows:
        return f"needs {benchmark} runs matched to {' or '.join(rows)} (--match RUN=ROW) with the paper's settings"
    return f"needs a {benchmark} run with the paper's settings"


@dataclass(frozen=True)
class Versus:
    """Each run's ``table`` / ``category`` against the constant ``value`` the paper states; ``expect``
    ``"<"``: the claim says below it; ``rows``: only runs matched to these paper names."""

    benchmark: str
    table: str
    category: str
    value: float
    expect: str = "<"
    settings: Mapping[str, Any] = field(default_factory=dict)
    rows: Sequence[str] = ()

    def evaluate(self, ctx: Context) -> Outcome:
        runs, notes = _eligible(ctx, self.benchmark, self.settings, rows=self.rows)
        d = ctx.design(self.benchmark, claims=True)
        tests = []
        for v in runs:
            t = ctx.tables(v).get(self.table)
            if t is None or self.category not in t.categories:
                notes.append(f"{v.label}: no {self.table} {self.category} in its records")
                continue
            iv = bootstrap_ci(t, self.category, n_resamples=d.n_resamples, seed=d.seed, level=d.level)
            stats = bootstrap_stats(t, self.category, n_resamples=d.n_resamples, seed=d.seed)
            sub = lambda x: None if x is None else x - self.value  # noqa: E731
            tests.append(TestResult(f"{v.label}: {self.table} {self.category} - {self.value:g}", sub(iv.value),
                                    sub(iv.low), sub(iv.high),
                                    inversion_p(stats, self.value) if stats is not None else None, self.expect,
                                    f"one run against {self.value:g}, {d.describe()}; p: bootstrap inversion", iv.n))
        return tests, "" if tests else _needs(self.benchmark, self.rows), notes


def _paired(ctx: Context, benchmark: str, table: str, cats: Sequence[str], va: RunView, vb: RunView, expect: str,
            what: str, table_b: str = "") -> tuple[list[TestResult], list[str]]:
    d = ctx.design(benchmark, claims=True)
    ta, tb = ctx.tables(va).get(table), ctx.tables(vb).get(table_b or table)
    if ta is None or tb is None:
        return [], [f"{va.label} / {vb.label}: no {table} / {table_b or table} table"]
    out = []
    for c in cats:
        if c not in ta.categories or c not in tb.categories:
            continue
        r = paired_difference(ta, tb, c, n_resamples=d.n_resamples, seed=d.seed, level=d.level)
        who = va.label if va is vb else f"{va.label} - {vb.label}"
        out.append(TestResult(f"{who} ({what}): {table} {c}", r.diff, r.low, r.high, r.p_value,
                              expect, f"paired runs, {d.describe()}; p: permutation over {plural(d.cluster)}"
                                      + (" (exact)" if r.exact else ""), r.n))
    return out, []


def _pairs_text(rows: Sequence[tuple[str, str]], limit: int = 4) -> str:
    """``"A and one of B, C, D and 12 more"`` per first name of the pairs."""
    by: dict[str, list[str]] = {}
    for a, b in rows:
        by.setdefault(a, []).append(b)
    parts = []
    for a, bs in by.items():
        shown = ", ".join(bs[:limit]) + (f" and {len(bs) - limit} more" if len(bs) > limit else "")
        parts.append(f"{a} and {shown}" if len(bs) == 1 else f"{a} and one of {shown}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Between:
    """Paired runs, A minus B, per category of ``categories``: the same model (its model name) with setting
    ``vary = (key, value of A, value of B)`` (None = not set), or a run matched to each paper name of a
    pair in ``rows``. ``among``: only runs matched to these paper names (a claim about some models).
    ``run``: how to make the runs (for the untestable line)."""

    benchmark: str
    table: str
    categories: Sequence[str]
    expect: str = ">"
    vary: tuple[str, Any, Any] | None = None
    rows: Sequence[tuple[str, str]] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    run: str = ""
    among: Sequence[str] = ()

    def evaluate(self, ctx: Context) -> Outcome:
        runs, notes = _eligible(ctx, self.benchmark, self.settings, [self.vary[0]] if self.vary else [],
                                rows=self.among)
        tests: list[TestResult] = []
        pairs: list[tuple[RunView, RunView, str]] = []
        if self.vary is not None:
            key, a, b = self.vary
            has = lambda v, x: same_value(v.settings.get(key), x) if x is not None else key not in v.settings  # noqa
            for va in runs:
                pairs += [(va, vb, f"{key}={show(a)} vs {show(b)}") for vb in runs
                          if vb is not va and vb.model == va.model and has(va, a) and has(vb, b)]
        for name_a, name_b in self.rows:
            pairs += [(va, vb, f"{name_a} vs {name_b}") for va in runs if name_a in va.names
                      for vb in runs if name_b in vb.names and vb is not va]
        for va, vb, what in pairs:
            got, why = _paired(ctx, self.benchmark, self.table, self.categories, va, vb, self.expect, what)
            tests += got
            notes += why
        need = ("runs of one model with " + f"{self.vary[0]}={show(self.vary[1])} and {show(self.vary[2])}"
                if self.vary else "runs matched to " + _pairs_text(self.rows))
        if self.among:
            need += " matched to " + " or ".join(self.among)
        return tests, "" if tests else f"needs {need}" + (f": {self.run}" if self.run else ""), notes


@dataclass(frozen=True)
class Trend:
    """A monotone trend of ``table`` / ``category`` (``expect`` ``">"`` rising, ``"<"`` falling) along the
    values ``order`` of setting ``key``: one sweep run's configurations (``UnitTable.setting``), or runs
    of one model differing in ``key``; or along runs matched to the paper names ``rows`` in order."""

    benchmark: str
    table: str
    category: str
    key: str = ""
    order: Sequence[Any] = ()
    rows: Sequence[str] = ()
    expect: str = ">"
    settings: Mapping[str, Any] = field(default_factory=dict)
    run: str = ""

    def _series(self, ctx: Context, runs: list[RunView]) -> list[tuple[str, list]]:
        series: list[tuple[str, list]] = []
        if self.rows:
            picked = [next((v for v in runs if r in v.names), None) for r in self.rows]
            if all(p is not None for p in picked):
                series.append((" < ".join(self.rows), [ctx.tables(p).get(self.table) for p in picked]))
            return series
        for v in runs:  # one sweep run: its configurations
            tabs = [t for t in ctx.tables(v).values() if t.metric == self.table and t.setting]
            by = {show(t.setting.get(self.key)): t for t in tabs if self.key in t.setting}
            if all(show(x) in by for x in self.order):
                series.append((f"{v.label}: {self.key} " + ", ".join(show(x) for x in self.order),
                               [by[show(x)] for x in self.order]))
        for model in dict.fromkeys(v.model for v in runs):  # runs of one model along the setting
            mine = [v for v in runs if v.model == model]
            seq = [next((v for v in mine if same_value(v.settings.get(self.key), x)), None) for x in self.order]
            if all(s is not None for s in seq) and len({id(s) for s in seq}) == len(seq):
                series.append((f"{model}: runs with {self.key} " + ", ".join(show(x) for x in self.order),
                               [ctx.tables(s).get(self.table) for s in seq]))
        return series

    def evaluate(self, ctx: Context) -> Outcome:
        runs, notes = _eligible(ctx, self.benchmark, self.settings, [self.key] if self.key else [])
        tests = []
        for subject, tables in self._series(ctx, runs):
            if any(t is None or self.category not in t.categories for t in tables):
                notes.append(f"{subject}: no {self.table} {self.category} in every configuration")
                continue
            clusters, rates = cluster_rates(tables, self.category)
            try:
                stat, p, method = trend(rates, increasing=self.expect == ">")
            except ValueError as exc:
                notes.append(f"{subject}: {exc}")
                continue
            tests.append(TestResult(f"{subject} ({self.category})", stat, None, None, p, self.expect,
                                    f"Page's L trend test over {len(clusters)} shared clusters, one-sided, {method}",
                                    len(clusters)))
        what = f"{self.key} = {', '.join(show(x) for x in self.order)}" if self.key else " < ".join(self.rows)
        return tests, "" if tests else f"needs runs (or one sweep run) of one model over {what}" + (
            f": {self.run}" if self.run else ""), notes


@dataclass(frozen=True)
class Check:
    """A test written by the paper's module: ``fn(ctx) -> (tests, untestable, notes)``."""

    fn: Callable[[Context], Outcome]

    def evaluate(self, ctx: Context) -> Outcome:
        return self.fn(ctx)


def evaluate_claim(ctx: Context, claim: Claim) -> ClaimResult:
    """The claim's tests on the runs (no correction yet: :func:`apply_holm`); ``claim.test`` may be a list of
    tests, all run (the claim is untestable only when none ran)."""
    parts = claim.test if isinstance(claim.test, (list, tuple)) else [claim.test]
    tests, why, notes = [], [], []
    for part in parts:
        t, u, n = part.evaluate(ctx)
        tests += t
        notes += [x for x in n if x not in notes]
        if u and u not in why:
            why.append(u)
    return ClaimResult(claim.id, claim.statement, claim.cite, tests, "" if tests else "; ".join(why), notes)


def apply_holm(results: Sequence[ClaimResult], alpha: float = ALPHA) -> int:
    """Holm-adjust every test p of ``results`` as one family and set the verdicts (module docstring);
    returns the family size."""
    tests = [t for r in results for t in r.tests if t.p is not None]
    for t, adj in zip(tests, holm([t.p for t in tests])):
        t.p_holm = adj
        if adj < alpha and t.estimate is not None:
            right = t.estimate > 0 if t.expect == ">" else t.estimate < 0
            one_sided = "one-sided" in t.method
            t.verdict = "supported" if right or one_sided else "contradicted"
        else:
            t.verdict = "not shown"
    return len(tests)
