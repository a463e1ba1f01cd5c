"""IV-Bench answer parser: the chosen option letter of a reply, or None (never a guess).

The official ``check_answer`` falls back to a random letter when nothing is found; the general rules
(docs/protocol.md) forbid that: an unreadable reply is ``unparseable`` (scored wrong and counted).
"""

from __future__ import annotations

import re

from lensbench.scoring.text import strip_reasoning

__all__ = ["parse_choice"]

_NORM_RE = re.compile(r"[^\w]+", re.UNICODE)


def _norm(s: str) -> str:
    return " ".join(_NORM_RE.sub(" ", s.lower()).split())


def _letter_ok(m: re.Match, s: str, letters: set[str]) -> str | None:
    ch = m.group(1)
    if ch.lower() not in letters:
        return None
    if ch.islower():
        # a lower-case letter must stand alone (punctuation or end after it): "a dog" is no answer
        rest = s[m.end(1):]
        if rest and not re.match(r"\s*(?:$|[.):,;\]}>*\n])", rest):
            return None
    return ch.lower()


_CUE = re.compile(r"\b(?:answer|option|choice)\b>?\s*(?:is|would be|:|=|-)?\s*[:\-]?\s*[\(\[\*]*([A-Za-z])(?![A-Za-z0-9])",
                  re.IGNORECASE)
_LEAD = re.compile(r"^[\s\*\(\[]*([A-Za-z])\s*[\.\):\]](?:\s|$)")
_PAREN = re.compile(r"\(([A-Za-z])\)")


def parse_choice(text: str | None, options: dict[str, str]) -> str | None:
    """The chosen option letter (lower case) of a reply, or None (unparseable).

    After :func:`lensbench.scoring.text.strip_reasoning`, first rule that gives a valid letter wins:

    1. the reply is just a letter, optionally wrapped: ``b``, ``(b)``, ``B.``, ``**B**``;
    2. a cue: ``Answer: B``, ``the answer is (b)``, ``<answer>: b``, ``Option C``;
    3. a leading ``b.`` / ``(b)`` / ``B)`` / ``b:`` followed by text;
    4. exactly one distinct parenthesised letter ``(b)`` anywhere;
    5. option text echoed: the normalised reply equals one option's text, or contains exactly one
       option text of >= 4 characters as whole words (options inside a longer matched option
       are ignored).

    Lower-case letters count only when standing alone (``a dog`` is no answer). Letters must be
    among ``options``' keys. No guessing.
    """
    s = strip_reasoning(text)
    if not s:
        return None
    letters = set(options)
    m = re.fullmatch(r"[\s\*\(\[\"'<]*([A-Za-z])[\s\*\)\]\"'>.:,;!]*", s)
    if m and m.group(1).lower() in letters:
        return m.group(1).lower()
    for m in _CUE.finditer(s):
        got = _letter_ok(m, s, letters)
        if got:
            return got
    m = _LEAD.match(s)
    if m and m.group(1).lower() in letters:
        return m.group(1).lower()
    par = {c.lower() for c in _PAREN.findall(s) if c.lower() in letters}
    if len(par) == 1:
        return par.pop()
    ns = _norm(s)
    normed = {k: _norm(v) for k, v in options.items()}
    exact = [k for k, v in normed.items() if v and v == ns]
    if len(exact) == 1:
        return exact[0]
    padded = f" {ns} "
    hits = [k for k, v in normed.items() if len(v) >= 4 and f" {v} " in padded]
    hits = [k for k in hits if not any(k2 != k and normed[k] in normed[k2] for k2 in hits)]
    return hits[0] if len(hits) == 1 else None
