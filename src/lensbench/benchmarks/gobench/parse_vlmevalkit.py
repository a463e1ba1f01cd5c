"""VLMEvalKit's reading of GOBench replies and ground truth (``--parser vlmevalkit``).

Source: ``GOBenchDataset.parse_prediction`` / ``parse_ground_truth`` / ``evaluate`` in
``vlmeval/dataset/gobench.py`` of github.com/open-compass/VLMEvalKit (commit 57a59b0), re-written
here from its behaviour (no judge model: VLMEvalKit's optional GPT extraction is off unless a
judge is configured there, and is not reproduced). For side-by-side reproduction of VLMEvalKit's
numbers; the paper's rules (:mod:`lensbench.benchmarks.gobench.parse_paper`) stay the default.

How it differs from the paper reader, on the same reply:

* Authenticity is the number after ``Total Score:`` (or ``Total Score for Reality Assessment:``,
  ``*`` and spaces allowed before it), never the sum of the listed answers; a reply that lists
  answers but states no total cannot be read (``unparseable``).
* A rating is the first number anywhere after ``Aesthetics Rating`` / ``Instruction Consistency
  Rating`` (any non-digits in between, newlines included: ``"Aesthetics Rating: I would rate it
  a 3"`` -> 3); no range check (0 and 7 are kept).
* Nothing is stripped: a number inside a ``<think>`` trace counts when it comes first.
* A number such as ``"4..."`` that Python's ``float`` refuses makes the whole reply unreadable
  (VLMEvalKit's ``except`` marks the row failed).
* A reply containing ``Failed to obtain answer`` (VLMEvalKit's FAIL_MSG) is unreadable.
* Ground truth: all three of ``Reality Assessment Score:``, ``Aesthetics Rating:`` and
  ``Instruction Consistency Rating:`` must be present, else the row is excluded from every
  dimension (:func:`vlmevalkit_gt_complete`).
"""

from __future__ import annotations

import re

from lensbench.benchmarks.gobench.parse_paper import ParsedReply
from lensbench.benchmarks.gobench.records import HumanGT

__all__ = ["FAIL_MSG", "parse_reply_vlmevalkit", "vlmevalkit_gt_complete"]

#: VLMEvalKit's marker of a failed generation (``GOBenchDataset.FAIL_MSG``).
FAIL_MSG = "Failed to obtain answer"

_TOTAL = re.compile(r"Total Score(?: for Reality Assessment)?:[\s*]*([\d.]+)", re.IGNORECASE)
_AESTHETICS = re.compile(r"Aesthetics Rating\D*([\d.]+)", re.IGNORECASE)
_CONSISTENCY = re.compile(r"Instruction Consistency Rating\D*([\d.]+)", re.IGNORECASE)


def parse_reply_vlmevalkit(text: str | None, n_questions: int = 5) -> ParsedReply:
    """Read a reply as VLMEvalKit's ``parse_prediction`` does (see the module docstring).

    Returns a :class:`ParsedReply` with ``answers`` all None (VLMEvalKit does not read them),
    ``total`` = the stated authenticity total, ``aesthetics`` / ``fidelity`` as found (any
    non-negative number), ``method`` ``"vlmevalkit"``; ``complete`` is True exactly when
    VLMEvalKit would score the reply. Never raises.
    """
    pr = ParsedReply(answers=[None] * n_questions, method="vlmevalkit")
    if text is None:
        pr.problems.append("no reply")
        return pr
    if FAIL_MSG in text:
        pr.problems.append(f"reply contains VLMEvalKit's failure marker {FAIL_MSG!r}")
        return pr
    found: dict[str, float] = {}
    for key, pat in (("total", _TOTAL), ("aesthetics", _AESTHETICS), ("fidelity", _CONSISTENCY)):
        m = pat.search(text)
        if m is None:
            continue
        try:
            found[key] = float(m.group(1).split("/")[0])
        except ValueError:
            pr.problems.append(f"{key}: {m.group(1)!r} is not a number (VLMEvalKit fails the whole row)")
            return pr
    if len(found) < 3:
        missing = [k for k in ("total", "aesthetics", "fidelity") if k not in found]
        pr.problems.append(f"no {', '.join(missing)} line as VLMEvalKit reads them")
        return pr
    pr.total, pr.aesthetics, pr.fidelity = found["total"], found["aesthetics"], found["fidelity"]
    return pr


def vlmevalkit_gt_complete(gt: HumanGT | None) -> bool:
    """Whether VLMEvalKit would score against ``gt``: all three human scores present
    (``parse_ground_truth`` returns None for a row missing any of them)."""
    return gt is not None and all(v is not None for v in (gt.authenticity, gt.aesthetics, gt.fidelity))
