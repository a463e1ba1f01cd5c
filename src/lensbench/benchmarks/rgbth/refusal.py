"""Refusals apart from other non-compliance (paper Sec. 4.3: "GPT4o applied content moderation by
refusing to answer 28 questions", beside models that "failed to comply with this instruction").

The rule (:func:`fail_kind`), applied only to a *Fail* (a scored reply with no whole-word yes/no after
the reasoning is stripped, :func:`lensbench.scoring.text.parse_yes_no`; a reply with a yes or no is
never a refusal, whatever else it says):

* ``refusal``: the stripped reply declines to answer: an apology (``I'm sorry`` / ``I am sorry`` /
  ``I apologize``), or ``I can't / cannot / won't / will not / am unable to / am not able to`` followed by
  ``help``, ``assist``, ``comply``, ``answer``, ``provide``, ``fulfil(l)``, ``support``, ``process``,
  ``engage``, ``respond`` or ``do that``, or ``I must decline`` / ``I (have to) refuse``, or a mention of
  a content / usage / safety policy or guidelines;
* ``non-compliance``: any other Fail (free text without yes/no, ``I cannot determine ...``, an empty
  reply).

Case-insensitive, curly apostrophes read as straight ones; "I am" is one rule in all its spellings
(``I am``, ``I'm``, ``Im``), for the apology and the inability alike (``I'm unable to help`` is a refusal as
``I am unable to help`` is). ``I cannot determine`` / ``tell`` / ``see``
are inability, not refusal: they stay non-compliance. tests/benchmarks/test_rgbth_reproduce.py checks the
rule on refusals in the wording of the major API models and on real non-compliant replies.
"""

from __future__ import annotations

import re

from lensbench.core.records import SampleRecord
from lensbench.scoring.text import parse_yes_no, strip_reasoning

__all__ = ["fail_kind", "REFUSAL", "NON_COMPLIANCE"]

REFUSAL, NON_COMPLIANCE = "refusal", "non-compliance"

_VERBS = r"(?:help|assist|comply|answer|provide|fulfill?|support|process|engage|respond|do\s+that)"
#: "I am" in every spelling a reply uses: "I am", "I'm", "Im" (curly apostrophes are made straight first);
#: the one rule for the contraction wherever the pattern says "I am"
_I_AM = r"\bi(?:\s+am|'?m)\s+"
_REFUSAL = re.compile(
    _I_AM + r"(?:so\s+|very\s+|really\s+)?sorry\b"
    r"|\bi\s+apologi[sz]e\b"
    r"|\bi\s+(?:can'?t|cannot|can\s+not|won'?t|will\s+not)\s+" + _VERBS +
    "|" + _I_AM + r"(?:unable|not\s+able)\s+to\s+" + _VERBS +
    r"|\bi\s+(?:must|have\s+to|need\s+to)\s+(?:decline|refuse)\b|\bi\s+(?:decline|refuse)\b"
    r"|\b(?:content|usage|safety)\s+(?:policy|policies|guidelines)\b",
    re.IGNORECASE)

def fail_kind(record: SampleRecord) -> str | None:
    """``"refusal"``, ``"non-compliance"`` for a Fail (see the module docstring), None for a record that is
    not a Fail (an answer was read, or a transport error)."""
    if record.outcome == "error" or parse_yes_no(record.reply) is not None:
        return None
    text = strip_reasoning(record.reply).replace("\u2019", "'").replace("\u2018", "'")
    return REFUSAL if _REFUSAL.search(text) else NON_COMPLIANCE
