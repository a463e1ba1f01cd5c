"""Closed-answer scoring shared by the benchmarks that ask for one choice (DESIGN: ``scoring/choice``): reading a
reply that is just one option letter, and the outcome of a chosen answer against the target.

Protocol-specific readings stay with their benchmark (IF-Bench's first-character rule and LLM parser,
IV-Bench's cue and echoed-option rules, RGB-Th-Bench's whole-word yes/no in :mod:`lensbench.scoring.text`);
what they share is here, once.
"""

from __future__ import annotations

import functools
import re

from lensbench.core.records import Outcome

__all__ = ["exact_letter", "choice_outcome"]


@functools.lru_cache(maxsize=16)
def _exact(letters: str) -> re.Pattern[str]:
    cls = "".join(re.escape(c) for c in letters)
    return re.compile(rf"^\s*(?:\*\*)?\s*[(\[]?\s*([{cls}])\s*[)\]]?\s*\.?\s*(?:\*\*)?\s*\.?\s*$")


def exact_letter(text: str | None, letters: str = "ABCD") -> str | None:
    """The letter when ``text`` (already stripped of reasoning) is exactly one of ``letters``, else None.

    Allowed around the letter: whitespace, brackets ``(A)`` / ``[A]``, bold ``**A**``, a trailing period
    (IF-Bench's hybrid judgment, SPEC §1 / paper Sec. 3.3). Case-sensitive: ``letters="ABCD"`` takes no
    ``a``. ``letters``: one character per option (e.g. ``"ABCDF"`` for a parser that may answer F).
    """
    if not text:
        return None
    m = _exact(letters).match(text)
    return m.group(1) if m else None


def choice_outcome(answer: str | None, target: str, *, empty: bool = False) -> Outcome:
    """The outcome of a chosen ``answer`` (a letter, "yes" / "no", ...) against ``target``: ``"correct"`` /
    ``"wrong"``; ``"unparseable"`` when no answer was read (None). ``empty``: the reply held nothing at all and
    the protocol scores that as wrong (IF-Bench, as its official code: SPEC General rules), not unparseable."""
    if empty:
        return "wrong"
    if answer is None:
        return "unparseable"
    return "correct" if answer == target else "wrong"
