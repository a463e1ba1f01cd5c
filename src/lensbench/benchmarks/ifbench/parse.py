"""Reading an IF-Bench answer letter from a model reply, and the parser's verdict from its reply.

Two judgment modes (``--answer-parsing``; IF-Bench README, Protocol, paper Sec. 3.3 "Hybrid Correctness Judgment"):

* ``hybrid`` (default): strip the reasoning trace; a reply that is exactly one letter A-D is the
  answer; anything else goes to the Fig. 11 LLM parser, whose verdict (A-D or F) is read by
  :func:`parse_parser_reply`.
* ``official-first-char``: the official code's rule (``evaluate/bench_evaluate.py`` and
  ``evaluate/qwen3_infer.py`` of github.com/casiatao/IF-Bench, commit 8c49d8b): the reply is
  ``strip()``-ed and cut after its last ``</think>``; its FIRST character counts when it is A-D
  ("Answer: C" scores as A); otherwise that text goes to the parser, and the parser's reply
  (content after its last ``</think>``, ``strip("\\n")``) counts by its first character too
  (a parser reply "Answer: B" counts as A): :func:`official_parser_verdict`.

In both modes a reply with nothing in it (after ``strip()`` and the reasoning: ``""``, or
``<think>...</think>`` then nothing) is wrong without a parser call, as in the official code (its parser is
called only when ``len(output) >= 1``): a parser could make up a letter for it.

A reply whose reasoning was cut off (an opening ``<think>`` with no closing tag, e.g. at the token
limit) is never an exact letter: in both modes it goes to the parser, which gets the text the
official code sends it, i.e. :func:`official_clean` of the raw reply (the cut-off reasoning and its
``<think>`` tag kept). :func:`lensbench.scoring.text.strip_reasoning` would leave nothing of it
(other benchmarks keep that rule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lensbench.benchmarks.ifbench.prompts import LETTERS
from lensbench.scoring import choice
from lensbench.scoring.text import strip_reasoning

__all__ = ["MODES", "exact_letter", "official_clean", "official_first_char", "parse_parser_reply",
           "official_parser_verdict", "reasoning_cut_off", "Reading", "read_reply", "read_parser_reply", "EMPTY_REPLY"]

#: judgment modes (``--answer-parsing``) -> the ``judged_by`` tag of a letter read without the parser.
MODES: dict[str, str] = {"hybrid": "exact", "official-first-char": "first-char"}

#: the note of a reply with nothing in it after the reasoning is stripped (scored wrong, no parser call)
EMPTY_REPLY = "empty reply"

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def exact_letter(text: str | None) -> str | None:
    """The answer letter if the (already reasoning-stripped) reply is exactly one letter A-D.

    Allowed around the letter: whitespace, brackets ``(A)``/``[A]``, ``**A**``, a trailing
    period. Upper case only (the prompt asks for an uppercase letter). Otherwise None (IF-Bench README, Protocol).
    (:func:`lensbench.scoring.choice.exact_letter` over A-D.)
    """
    return choice.exact_letter(text, "".join(LETTERS))


def official_clean(text: str | None) -> str:
    """The official code's clean-up: ``strip()``, then the part after the last ``</think>``, stripped.

    This is also the text the official code hands to the parser (``llm_check_infer(..., output)``).
    """
    s = (text or "").strip()
    if "</think>" in s:
        s = s.split("</think>")[-1].strip()
    return s


def official_first_char(text: str | None) -> str | None:
    """``official-first-char``: the FIRST character of :func:`official_clean` if it is A-D, else None."""
    s = official_clean(text)
    return s[0] if s and s[0] in LETTERS else None


def reasoning_cut_off(text: str | None) -> bool:
    """True when the reply's reasoning was cut off: after complete ``<think>...</think>`` blocks and
    anything up to a dangling ``</think>``, an opening ``<think>`` remains (case-insensitive, as
    :func:`lensbench.scoring.text.strip_reasoning` reads tags)."""
    if not text:
        return False
    low = _THINK_BLOCK.sub("", text).lower()
    idx = low.rfind("</think>")
    tail = low[idx + len("</think>"):] if idx != -1 else low
    return "<think>" in tail


def parse_parser_reply(text: str | None) -> str | None:
    """Hybrid mode: the Fig. 11 parser's verdict ``"A"``-``"D"``, ``"F"`` (no option in the reply) or
    None (invalid).

    Reasoning stripped; an exact single letter (same tolerance as :func:`exact_letter`, plus F),
    else a leading A-D/F followed by a non-letter (``"B."``, ``"B: ..."``).
    """
    s = strip_reasoning(text)
    if not s:
        return None
    got = choice.exact_letter(s, "".join(LETTERS) + "F")
    if got:
        return got
    if s[0] in "ABCDF" and (len(s) == 1 or not s[1].isalpha()):
        return s[0]
    return None


def official_parser_verdict(text: str | None) -> str | None:
    """``official-first-char``: the parser reply read as the official code reads it.

    ``qwen3_infer.llm_check_infer`` returns the content after the last ``</think>`` with
    ``strip("\\n")``; ``bench_evaluate`` then takes its first character when it is A-D ("Answer: B"
    counts as A). Returns that letter, ``"F"`` when the first character is F (wrong, as any other
    character), else None (invalid: empty, or another first character, a leading space included).
    """
    s = (text or "").split("</think>")[-1].strip("\n")
    if not s:
        return None
    if s[0] in LETTERS or s[0] == "F":
        return s[0]
    return None


@dataclass(frozen=True)
class Reading:
    """What was read from one model reply before any parser call.

    ``letter``: the answer read directly (None = not read); ``judged_by``: ``"exact"`` /
    ``"first-char"`` when ``letter`` is set; ``parser_text``: the text to give the parser (None when
    no parser call is needed); ``note``: what was read (:data:`EMPTY_REPLY`: nothing, or nothing after the
    reasoning: wrong without a parser call).
    """

    letter: str | None
    judged_by: str | None = None
    parser_text: str | None = None
    note: str | None = None


def read_reply(text: str | None, mode: str) -> Reading:
    """Read one model reply under judgment ``mode`` (a key of :data:`MODES`); see the module docs.

    Raises KeyError for an unknown mode.
    """
    how = MODES[mode]
    if mode == "hybrid" and not reasoning_cut_off(text):
        cleaned = strip_reasoning(text)
        letter = exact_letter(cleaned)
    else:
        cleaned = official_clean(text)
        letter = official_first_char(text) if mode != "hybrid" else None
    if letter is not None:
        return Reading(letter, how)
    if not cleaned:
        # an empty reply (also nothing left after the reasoning) is the model's answer: wrong, and never sent to
        # the parser, which could make up a letter for it (docs/protocol.md; official bench_evaluate.py calls
        # llm_check_infer only when len(output) >= 1, and "" never equals the answer)
        return Reading(None, note=EMPTY_REPLY)
    return Reading(None, parser_text=cleaned)


def read_parser_reply(text: str | None, mode: str) -> str | None:
    """The parser's verdict under judgment ``mode``: A-D, F or None (invalid)."""
    return official_parser_verdict(text) if mode == "official-first-char" else parse_parser_reply(text)
