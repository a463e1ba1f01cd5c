"""Reading GroundingME replies (GroundingME README, Protocol (Parse)) and the best-of-N judges' verdicts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lensbench.core.types import StoredResponse
from lensbench.scoring.bbox import Box, find_key_boxes
from lensbench.scoring.text import strip_reasoning

__all__ = ["ParsedBox", "FENCE", "parse_bbox_reply", "parse_judge_verdict", "full_response"]

#: A Markdown code-fence opener (with its language tag).
FENCE = re.compile(r"```[a-zA-Z0-9_-]*")
_BOXED = re.compile(r"\\boxed\s*\{\s*\\?(?:text\{)?\s*([AB])\s*\}?\s*\}")


@dataclass(frozen=True)
class ParsedBox:
    """A parsed reply: ``kind`` ``"box"`` (``box`` = 4 floats as written by the model),
    ``"null"`` (a rejection) or ``"unparseable"`` (no ``bbox_2d`` found); ``n_found`` = how many
    ``bbox_2d`` values the reply held (the last one is used)."""

    kind: Literal["box", "null", "unparseable"]
    box: Box | None = None
    n_found: int = 0


def parse_bbox_reply(text: str | None) -> ParsedBox:
    """Parse a GroundingME reply (GroundingME README, Protocol (Parse); our strict rule).

    Strips the reasoning trace (:func:`lensbench.scoring.text.strip_reasoning`) and code fences,
    then finds every ``bbox_2d`` key (JSON, single-quoted or unquoted keys; ``null``/``None``;
    :func:`lensbench.scoring.bbox.find_key_boxes`) and keeps the LAST well-formed value:
    ``null`` = rejection, 4 numbers (or one nested list of 4) = a box. No ``bbox_2d`` value at
    all = ``unparseable`` (never a rejection, and no bare-number fallback: that is the official
    scorers' rule, see :mod:`lensbench.benchmarks.groundingme.compat`). Never evaluates model output.
    """
    found = find_key_boxes(FENCE.sub("", strip_reasoning(text)), "bbox_2d")
    if not found:
        return ParsedBox("unparseable")
    last = found[-1]
    return ParsedBox("null" if last is None else "box", last, len(found))


def parse_judge_verdict(text: str | None) -> str | None:
    """``"A"``, ``"B"`` or ``None`` from a judge reply (Tables 10/11 ask for ``\\boxed{A}`` or
    ``\\boxed{B}``): reasoning stripped first; the LAST ``\\boxed{}`` wins (Table 10 asks the
    judge to conclude with it); none found = None (a failed verdict)."""
    found = _BOXED.findall(strip_reasoning(text))
    return found[-1] if found else None


def full_response(resp: StoredResponse) -> str:
    """A reply with its reasoning, as the text-only judge sees it (Sec. 5.2 "full responses"):
    a separate reasoning channel is put back in ``<think>`` tags before the answer."""
    text = resp.text or ""
    if resp.reasoning and "<think>" not in text:
        return f"<think>\n{resp.reasoning}\n</think>\n\n{text}"
    return text
