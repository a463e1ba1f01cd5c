"""Reply clean-up and answer parsers shared by benchmarks. No ``eval`` of model output anywhere.

docs/protocol.md, general rules: reasoning traces (``<think>...</think>``, GLM's
``<|begin_of_box|>...<|end_of_box|>``) are kept raw in the per-sample log and stripped before
parsing.
"""

from __future__ import annotations

import re

__all__ = ["strip_reasoning", "parse_yes_no", "extract_json_object"]

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_BOX_TOKENS = re.compile(r"<\|(?:begin|end)_of_box\|>")


def strip_reasoning(text: str | None) -> str:
    """Reply without its reasoning trace, stripped of surrounding whitespace.

    Removes complete ``<think>...</think>`` blocks, then everything up to a dangling
    ``</think>`` (servers that send the opening tag in the prompt), then GLM box tokens (their
    content is kept). An unterminated ``<think>`` (truncated reasoning) leaves nothing to parse.
    ``None`` gives ``""``.
    """
    if not text:
        return ""
    s = _THINK_BLOCK.sub("", text)
    low = s.lower()
    idx = low.rfind("</think>")
    if idx != -1:
        s = s[idx + len("</think>"):]
    elif "<think>" in low:
        s = s[: low.find("<think>")]
    s = _BOX_TOKENS.sub("", s)
    return s.strip()


_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(text: str | None) -> str | None:
    """``"Yes"``, ``"No"`` or ``None`` (no answer = Fail) from a reply.

    RGB-Th-Bench Sec. 3.3 / RGB-Th-Bench README, Protocol: case-insensitive WHOLE-WORD match after
    :func:`strip_reasoning`; when both words occur, the earlier one wins. "know" or "Nobody"
    do not count as "no" (the third-party scorer's substring rule is not copied).
    """
    m = _YES_NO.search(strip_reasoning(text))
    if m is None:
        return None
    return "Yes" if m.group(1).lower() == "yes" else "No"


def extract_json_object(text: str) -> str | None:
    """The first balanced ``{...}`` substring of ``text`` (braces inside strings respected), or None.

    Used by tolerant JSON parsers: callers try ``json.loads`` on it, then their own fallbacks.
    """
    start = text.find("{")
    while start != -1:
        depth = 0
        in_str: str | None = None
        esc = False
        for i in range(start, len(text)):
            c = text[i]
            if in_str:
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == in_str:
                    in_str = None
            elif c in "\"'":
                in_str = c
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return text[start: i + 1]
        start = text.find("{", start + 1)
    return None
