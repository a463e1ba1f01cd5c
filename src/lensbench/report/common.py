"""Report pieces every benchmark shares: the Counts table, the incomplete-run, skipped-media and empty-reply notes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from lensbench.core.results import RunResult
from lensbench.report.tables import render_table

__all__ = ["counts_table", "incomplete_notes", "retry_hint", "failed_and_unsent", "run_label", "run_tags", "skipped_notes",
           "empty_notes"]


def run_tags(r: RunResult) -> list[str]:
    """Tags every benchmark's row names carry: the judge/parser model, a partial (--limit) run, an incomplete run."""
    tags = [str(r.extra["tag"])] if r.extra.get("tag") else []
    if r.extra.get("judge"):
        tags.append(f"judge: {r.extra['judge']}")
    if r.extra.get("partial"):
        tags.append(f"partial: {r.extra['partial']}")
    failed, unsent = failed_and_unsent(r)
    if failed or unsent:
        tags.append("incomplete: " + ", ".join(([f"{failed} errors"] if failed else [])
                                               + ([f"{unsent} not sent"] if unsent else [])))
    return tags


def failed_and_unsent(r: RunResult) -> tuple[int, int]:
    """``(failed, not sent)``: of the run's ``n_error`` error records, those whose request failed (transport,
    server) and those never sent because the run was stopped first (``extra["not_sent"]``, set by a rebuild)."""
    n_error = int(r.counts.get("n_error") or 0)
    unsent = min(int(r.extra.get("not_sent") or 0), n_error)
    return n_error - unsent, unsent


def run_label(r: RunResult, extra_tags: list[str] | None = None) -> str:
    """A run's row name: the model, then ``[tag; tag]`` (benchmark settings first, then :func:`run_tags`),
    so two runs that differ in anything that changes scores never share a row name."""
    tags = list(extra_tags or []) + run_tags(r)
    return r.model + (f" [{'; '.join(tags)}]" if tags else "")


def counts_table(results: Sequence[RunResult], columns: Sequence[tuple[str, str]], fmt: str = "md",
                 title: str = "Counts") -> str:
    """One row per run: ``Model`` then ``counts[key]`` for each ``(header, key)`` of ``columns``."""
    rows = [[run_label(r)] + [r.counts.get(key) for _h, key in columns] for r in results]
    return render_table(["Model"] + [h for h, _k in columns], rows, fmt, title=title)


def skipped_notes(results: Sequence[RunResult], what: str = "item(s)") -> str:
    """One sentence per run that ``--skip-missing`` shortened: ``counts["n_skipped_missing"]`` items
    left out for missing media (not scored, not in any mean). Empty when none was skipped."""
    return "".join(f"Run {r.run_dir or r.model}: {r.counts['n_skipped_missing']} {what} skipped for missing media "
                   "(--skip-missing); not scored.\n" for r in results if r.counts.get("n_skipped_missing"))


def retry_hint(r: RunResult) -> str:
    """How a run's failed requests are retried: ``re-run with the same --out to retry them``, or, where every
    backend was a replay file (``extra.failures_recorded``), that the file holds them and re-running replays
    the same (issue 32.3: the run is used as it is)."""
    return r.extra.get("failures_recorded") or "re-run with the same --out to retry them"


def incomplete_notes(results: Sequence[RunResult], body: Callable[[RunResult], str]) -> str:
    """One sentence per run with failed or unsent requests (a --limit run is partial, not failed):
    ``Run <folder> is incomplete: <body(r)>`` — ``body`` says what the benchmark left out and how to retry
    (it is given the run with ``n_error`` counting failed requests only); requests a stopped run never sent
    are said to be not sent, never "failed"."""
    out = []
    for r in results:
        failed, unsent = failed_and_unsent(r)
        text = body(replace(r, counts={**r.counts, "n_error": failed})) if failed else ""
        if unsent:
            text += (" " if text else "") + (f"{unsent} request(s) were not sent: the run was stopped before sending "
                                             "them; run the same command again to send them.")
        if text:
            out.append(f"Run {r.run_dir or r.model} is incomplete: {text}\n")
    return "".join(out)


def empty_notes(results: Sequence[RunResult], scored_as: str) -> str:
    """One sentence per run whose model answered with an empty string (``counts["n_empty"]``;
    docs/protocol.md, general rules): counted apart, kept as the model's answer and scored as ``scored_as`` says
    (e.g. "Fail (non-compliance)"), never dropped. Empty when no run has one."""
    return "".join(f"Run {r.run_dir or r.model}: {n} empty repl{'y' if n == 1 else 'ies'} (the model answered with "
                   f"an empty string; an API reply is re-asked once first): kept as the model's answer and "
                   f"{scored_as}.\n" for r in results if (n := r.counts.get("n_empty")))
