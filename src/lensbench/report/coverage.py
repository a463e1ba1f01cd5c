"""What a run covers of its benchmark's release, computed once per run and read by every surface.

docs/protocol.md, general rules: "A run's coverage is counted against the release (scenes, images, videos, samples of
the full benchmark), never against its own folder; demo data is never the benchmark." The release's size is
the benchmark's (``Benchmark.layout.release``, :class:`lensbench.benchmarks.layout.Release`, e.g.
RGB-Th-Bench 29 scenes / 1,624 questions); a run's scored clusters and samples are counted from its records
through the benchmark's :meth:`~lensbench.benchmarks.base.Benchmark.release_key` (a sample counts when none
of its requests failed; a cluster when one of its samples counts).

:func:`run_coverage` gives a :class:`Coverage`: the counts, why the run is partial (demo data, ``--limit``,
``--shard``, a data folder holding part of the release, media skipped as missing) and its failed / unsent
requests. Read by the leaderboard (column and cell marker), the header of ``lensbench report``
(:func:`coverage_header`), the viewer's run table (:func:`run_status`) and ``reproduce``'s comparability check
(:attr:`Coverage.blocker`). A run whose only gap is failed or unsent requests, at most
:data:`MAX_MISSING_SHARE` of the release's samples with every cluster scored, stays comparable, its
coverage stated (``29/29 scenes, 1,623/1,624 questions``).

A folder whose ``run.json`` does not record what was loaded (no ``n_samples``: crafted by a test or by hand,
not written by ``lensbench run`` / ``merge``) states no coverage (:attr:`Coverage.stated` False): nothing
is claimed for it either way. A benchmark that states no release size gets "release size unknown".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lensbench.core.errors import NOT_SENT, LensbenchError
from lensbench.report.runs import LoadedRun, ensure_records

__all__ = ["Coverage", "run_coverage", "run_status", "coverage_header", "error_split", "MAX_MISSING_SHARE",
           "DEMO", "UNKNOWN"]

#: the largest share of the release's samples a run may miss through failed (or unsent) requests alone and
#: still be compared with the paper (its coverage stated): 1% (16 of RGB-Th-Bench's 1,624 questions)
MAX_MISSING_SHARE = 0.01
#: what a run on generated demo data is, wherever it is shown
DEMO = "demo data, not the benchmark"
#: the coverage of a run of a benchmark that states no release size
UNKNOWN = "release size unknown"
#: the error text a rebuilt run gave a request it never sent before lensbench 0.2 wrote
#: :data:`lensbench.core.errors.NOT_SENT` (folders written then are still read)
UNSENT = "no stored reply"


def _unsent(error: str) -> bool:
    return NOT_SENT in error or error.startswith(UNSENT)


def error_split(run: LoadedRun) -> tuple[int, int]:
    """``(failed, unsent)`` requests of a run: unsent = never asked (a killed run rebuilt from its store)."""
    res = run.result
    n_error = int(res.counts.get("n_error") or 0) if res is not None else 0
    records = ensure_records(run) if n_error else None
    if records is None:
        return n_error, 0
    unsent = sum(1 for r in records if r.outcome == "error" and _unsent(r.error or ""))
    return n_error - unsent, unsent


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' * (n != 1)}"


@dataclass(frozen=True)
class Coverage:
    """What one run covers of its benchmark's release (module docstring).

    ``release``: the benchmark's :class:`~lensbench.benchmarks.layout.Release` (None: not stated);
    ``stated``: the run's ``run.json`` records what was loaded; ``clusters`` / ``samples``: scored, counted
    against the release (None when not counted); ``reasons``: why the run is partial by design (``--limit 20``,
    ``--shard 0/3``, ``the data folder holds 140 of the release's 406 question units``, media skipped), demo
    data apart in ``demo``; ``failed`` / ``unsent``: its requests without a reply.
    """

    release: Any = None
    stated: bool = False
    clusters: int | None = None
    samples: int | None = None
    reasons: tuple[str, ...] = ()
    demo: bool = False
    failed: int = 0
    unsent: int = 0

    @property
    def counted(self) -> bool:
        """True when the run's clusters and samples were counted against a known release."""
        return self.release is not None and self.clusters is not None and self.samples is not None

    @property
    def full(self) -> bool:
        """The whole release, every sample scored, not demo data."""
        r = self.release
        return (self.counted and not self.demo and not self.reasons and self.clusters == r.clusters
                and self.samples == r.samples)

    @property
    def comparable(self) -> bool:
        """The benchmark's measurement: full, or short only by failed / unsent requests, at most
        :data:`MAX_MISSING_SHARE` of the release's samples, every cluster scored. False when not stated."""
        if not self.stated or self.demo or self.reasons:
            return False
        if self.release is None:
            return True  # nothing to count against; nothing says the run is partial
        if not self.counted or self.clusters != self.release.clusters or self.samples > self.release.samples:
            return False  # part of the release, or other data than the release (more than it holds)
        missing = self.release.samples - self.samples
        return missing <= 0 or (missing <= MAX_MISSING_SHARE * self.release.samples and self.failed + self.unsent > 0)

    def counts(self) -> str:
        """``"10/29 scenes, 560/1,624 questions"`` (one count when cluster and sample are one thing),
        :data:`UNKNOWN`, or ``"coverage not counted (no readable records)"``."""
        r = self.release
        if r is None:
            return UNKNOWN
        if not self.counted:
            return "coverage not counted (no readable records)"
        tail = f"{self.samples:,}/{r.samples:,} {r.samples_what}"
        return tail if r.one_count else f"{self.clusters:,}/{r.clusters:,} {r.cluster_what}, {tail}"

    def _why(self) -> list[str]:
        gaps = [_plural(self.failed, "failed request")] if self.failed else []
        return [*self.reasons, *gaps, *([_plural(self.unsent, "unsent request")] if self.unsent else [])]

    @property
    def label(self) -> str:
        """The leaderboard's coverage of the run's column: ``""`` for a comparable run (or one that states
        nothing), else ``"demo data, not the benchmark: 6/29 scenes, ..."`` or ``"10/29 scenes, 560/1,624
        questions: the data folder holds 140 of the release's 406 question units"``."""
        if not self.stated or (self.comparable and self.release is not None):
            return ""
        head = f"{DEMO}: {self.counts()}" if self.demo else self.counts()
        return head + (f": {'; '.join(self.reasons)}" if self.reasons else "")

    @property
    def text(self) -> str:
        """The run's coverage in one phrase for a report or the viewer: ``""`` for a full run (or one that states
        nothing), else its counts and why (``"29/29 scenes, 1,623/1,624 questions (1 failed request)"``)."""
        if not self.stated or self.full:
            return ""
        why = self._why()
        return (f"{DEMO}: " if self.demo else "") + self.counts() + (f" ({'; '.join(why)})" if why else "")

    @property
    def blocker(self) -> str | None:
        """Why the run's numbers are not the benchmark's measurement (``reproduce``: "not comparable"), or None:
        :data:`DEMO`, ``"covers 10/29 scenes, 560/1,624 questions (the data folder holds 140 of ...)"``."""
        if not self.stated or self.comparable:
            return None
        if self.demo:
            return DEMO
        r = self.release
        if r is None or not self.counted:
            return "; ".join([self.counts(), *self.reasons])
        if self.samples > r.samples or self.clusters > r.clusters:
            return (f"other data than the release: {self.clusters:,} {r.cluster_what} / {self.samples:,} "
                    f"{r.samples_what} scored, the release holds {r.clusters:,} / {r.samples:,}")
        head = (f"covers {self.samples:,}/{r.samples:,} {r.samples_what}" if r.one_count else
                f"covers {self.clusters:,}/{r.clusters:,} {r.cluster_what}, {self.samples:,}/{r.samples:,} "
                f"{r.samples_what}")
        why = self._why()
        return head + (f" ({'; '.join(why)})" if why else "")


def _facts(run: LoadedRun) -> Any:
    try:
        return run.facts
    except LensbenchError:  # a plugin that cannot be loaded: nothing known of its release
        return None


def _reasons(run: LoadedRun, facts: Any, layout: Any) -> list[str]:
    """Why the run covers part of the release by design, from its run.json and counts (demo data apart)."""
    m, res = run.manifest, run.result
    out = []
    n, loaded = int(m.get("n_samples") or 0), int(m.get("n_samples_loaded") or m.get("n_samples") or 0)
    if m.get("limit") is not None and n < loaded:
        out.append(f"--limit {m['limit']}")
    shard = m.get("shard")
    if isinstance(shard, dict):
        out.append(f"--shard {shard.get('index', '?')}/{shard.get('count', '?')}")
        loaded = int(shard.get("n_samples_unsharded") or loaded)
    if not out and n < loaded and res is not None and res.extra.get("partial"):  # a folder written without them
        out.append(str(res.extra["partial"]))
    skipped = int(res.counts.get(facts.skipped_key) or 0) if res is not None and facts is not None else 0
    if skipped:
        out.append(f"{facts.load_unit} skipped for missing media: {skipped:,}")
    size = getattr(layout, "n_samples", None)
    if size and not m.get("demo_data") and loaded + skipped < size:
        out.append(f"the data folder holds {loaded + skipped:,} of the release's {size:,} "
                   f"{getattr(layout, 'samples_what', 'samples')}")
    return out


def _count(run: LoadedRun, facts: Any) -> tuple[int, int] | None:
    """``(clusters, samples)`` of the release the run scored (a sample: none of its records failed), or None
    when its records cannot be read."""
    records = ensure_records(run)
    if records is None:
        return None
    ok: dict[str, bool] = {}
    cluster_of: dict[str, str] = {}
    for r in records:
        key = facts.release_key(r)
        if key is None:
            continue
        cluster_of[key[1]] = key[0]
        ok[key[1]] = ok.get(key[1], True) and r.outcome != "error"
    done = [s for s, good in ok.items() if good]
    return len({cluster_of[s] for s in done}), len(done)


def run_coverage(run: LoadedRun) -> Coverage:
    """The :class:`Coverage` of ``run`` (computed once per run; records are read only when the run's files do
    not show it covers the whole release)."""
    if run._coverage is not None:
        return run._coverage
    m, res = run.manifest, run.result
    facts = _facts(run)
    layout = getattr(facts, "layout", None)
    release = getattr(layout, "release", None)
    failed, unsent = error_split(run)
    demo = bool(m.get("demo_data")) or bool(res is not None and res.extra.get("demo_data"))
    stated = "n_samples" in m
    reasons = tuple(_reasons(run, facts, layout)) if stated else ()
    clusters = samples = None
    if stated and release is not None:
        whole = (not demo and not reasons and not failed and not unsent
                 and int(m["n_samples"]) == getattr(layout, "n_samples", None))
        counted = (release.clusters, release.samples) if whole else _count(run, facts)
        if counted is not None:
            clusters, samples = counted
    run._coverage = Coverage(release, stated, clusters, samples, reasons, demo, failed, unsent)
    return run._coverage


def run_status(run: LoadedRun) -> str:
    """The run's status in the viewer's run table: ``complete``, ``partial: --limit 20, 2/29 scenes, 80/1,624
    questions``, ``demo data, not the benchmark: ...``, ``incomplete: 1 failed request; 29/29 scenes,
    1,623/1,624 questions`` (``killed: N unsent requests`` first for a stopped run), ``release size unknown``
    (a benchmark that states none), or ``unfinished: no result.json``."""
    if run.result is None:
        return "unfinished: no result.json"
    cov = run_coverage(run)
    gaps = [f"killed: {_plural(cov.unsent, 'unsent request')}"] if cov.unsent else []
    gaps += [f"incomplete: {_plural(cov.failed, 'failed request')}"] if cov.failed else []
    gap = ", ".join(gaps)
    if cov.demo or cov.reasons:
        head = f"{DEMO}: " if cov.demo else "partial: "
        return head + ", ".join([*cov.reasons, cov.counts()]) + (f"; {gap}" if gap else "")
    if gap:
        return gap + (f"; {cov.counts()}" if cov.stated else "")
    if cov.stated and not cov.full:
        return f"partial: {cov.counts()}" if cov.counted else cov.counts()
    return "complete"


def coverage_header(runs: Sequence[LoadedRun]) -> str:
    """The lines ``lensbench report`` prints above a benchmark's tables: one per run that is not the whole
    release (``Coverage of <folder>: 10/29 scenes, 560/1,624 questions (...): not comparable with the paper or
    with full runs.``); ``""`` when every run covers it all (or states nothing)."""
    out = []
    for run in runs:
        cov = run_coverage(run)
        if not cov.text:
            continue
        tail = ("comparable, its missing samples stated" if cov.comparable and cov.release is not None else
                "not comparable with the paper or with full runs" if cov.release is not None else
                "its share of the benchmark is not counted")
        out.append(f"Coverage of {run.path}: {cov.text}: {tail}.\n")
    return "".join(out) + ("\n" if out else "")
