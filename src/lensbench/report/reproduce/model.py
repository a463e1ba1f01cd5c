"""What ``lensbench reproduce`` computes: cells with verdicts, sections, claim tests, the report.

Verdict words (:data:`VERDICTS`, docs/protocol.md, general rules; :mod:`lensbench.scoring.agreement`):
``consistent`` (equivalent within the stated margin: the 90% interval of run - paper, both estimates'
noise counted, lies inside [-margin, +margin], two one-sided tests), ``differs`` (run = paper rejected
after Holm's correction within the table or figure), ``inconclusive`` (neither), ``not comparable``
(``reason`` says why: another model, another setting, part of the data, too few clusters, no published
value ...). Claim tests end ``supported``,
``contradicted`` or ``not shown`` after Holm's correction over all the paper's tests, or ``not
testable`` with what run would make them testable.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["VERDICTS", "CONSISTENT", "DIFFERS", "INCONCLUSIVE", "NOT_COMPARABLE", "Cell", "Section", "TestResult",
           "ClaimResult", "Report"]

CONSISTENT, DIFFERS, INCONCLUSIVE, NOT_COMPARABLE = "consistent", "differs", "inconclusive", "not comparable"
VERDICTS = (CONSISTENT, DIFFERS, INCONCLUSIVE, NOT_COMPARABLE)


@dataclass
class Cell:
    """One computed cell beside the published one.

    ``row``: our row (a run, or a run against a paper row: ``"GLM-4.5V (runs/glm)"``); ``paper_row``:
    the published row compared with (None: none); ``column``: as printed; ``value`` / ``low`` / ``high``:
    ours with its 95% CI (None when not computed); ``n``: clusters resampled; ``published``; ``verdict``
    one of :data:`VERDICTS`; ``p``: two-sided p of "our value equals the published one", both estimates'
    noise counted (None when untested or deterministic); ``p_holm``: ``p`` after Holm's correction over
    the tested cells of the section; ``margin``: the equivalence margin (metric units); ``d_low`` /
    ``d_high``: the 90% interval of ours - published (TOST); ``method``: the test in words; ``reason``:
    why not comparable, or a note.
    """

    row: str
    column: str
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    published: float | None = None
    paper_row: str | None = None
    verdict: str = NOT_COMPARABLE
    p: float | None = None
    reason: str = ""
    p_holm: float | None = None
    margin: float | None = None
    d_low: float | None = None
    d_high: float | None = None
    method: str = ""


@dataclass
class Section:
    """One artifact as computed: ``cells`` (verdict cells) and/or a free ``table`` (``columns`` + ``rows`` of
    plain values) with ``notes``; ``needs``: what the runs cannot support and which run would;
    ``figure``: PNG bytes (HTML only), or None."""

    id: str
    title: str
    cells: list[Cell] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    figure: bytes | None = None

    def counts(self) -> dict[str, int]:
        """``{verdict: number of cells}`` over :data:`VERDICTS`."""
        return {v: sum(c.verdict == v for c in self.cells) for v in VERDICTS}


@dataclass
class TestResult:
    """One test of a claim on one run or pair of runs: ``subject`` (which runs, which categories),
    ``estimate`` (the effect in the claim's direction of reading: A - B, a trend statistic ...) with its
    CI, ``expect`` (``">"``: the claim says positive, ``"<"`` negative), ``p`` (raw, two-sided unless
    ``method`` says one-sided), ``p_holm`` (Holm-adjusted over every test of the paper), ``verdict``
    (``supported`` / ``contradicted`` / ``not shown``), ``method`` in words."""

    subject: str
    estimate: float | None
    low: float | None
    high: float | None
    p: float | None
    expect: str
    method: str
    n: int = 0
    p_holm: float | None = None
    verdict: str = "not shown"


@dataclass
class ClaimResult:
    """A claim as stated (``statement``, ``cite``) with its ``tests``, or ``untestable`` (why, and which
    run would test it)."""

    id: str
    statement: str
    cite: str
    tests: list[TestResult] = field(default_factory=list)
    untestable: str = ""
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """``"supported by 3 of 4 tests"``-style line (``not testable: ...`` when none ran)."""
        if not self.tests:
            return f"not testable: {self.untestable}" if self.untestable else "not testable"
        k = {v: sum(t.verdict == v for t in self.tests) for v in ("supported", "contradicted", "not shown")}
        return (f"supported by {k['supported']} of {len(self.tests)} tests, contradicted by {k['contradicted']}, "
                f"not shown by {k['not shown']}")


@dataclass
class Report:
    """Everything ``lensbench reproduce`` prints: ``paper`` / ``cite``, the ``runs`` read (one dict per
    run: label, model, benchmark, matched rows, settings, state), ``sections`` (artifacts, then
    accounting and modality baselines), ``claims``, ``needs`` (what no run supports), ``design`` (how
    every CI and p was drawn, in words), ``rule`` (how a verdict is reached: tests, margin, Holm), ``flags``
    (per-item "answerable without X" flags), ``problems`` (runs that could not be read)."""

    paper: str
    cite: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    claims: list[ClaimResult] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    design: str = ""
    rule: str = ""
    notes: list[str] = field(default_factory=list)
    flags: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict (figures left out)."""
        doc = asdict(self)
        for s in doc["sections"]:
            s.pop("figure", None)
        return doc
