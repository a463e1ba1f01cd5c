"""The default ("paper") reader of GOBench critic replies: answers and ratings, by meaning.

The paper (Sec. 2.3) asks for one JSON object (``realityAnswers_Eval``, ``aestheticsRating_Eval``,
``consistencyRating_Eval``; official ``code/Gemini2.5.py``); its score rules (Sec. 2.2) are applied
to what is read: authenticity = the points of the five answers (a stated total only when the
answers are missing), ratings must lie in 1-5, reasoning traces are dropped first. What cannot be
read stays None and the reply is ``unparseable`` (never guessed).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from lensbench.benchmarks.gobench.sps import authenticity_score
from lensbench.scoring.text import extract_json_object, strip_reasoning

__all__ = ["normalize_answer", "ParsedReply", "parse_reply"]

_CANNOT = re.compile(r"^(cannot|can ?not|can't|cant|unable|undetermin|not determin|indetermin|not sure|unsure|uncertain|"
                     r"unknown|unclear|n/?a\b|not applicable|can't be determined|cd\b)")


def normalize_answer(value: Any) -> str | None:
    """One of :data:`~lensbench.benchmarks.gobench.records.ANSWERS` from a reply's answer (``"yes"``, ``"No."``, ``"**Cannot Determine**"``,
    ``"Cannot be determined"``, ``True``/``False``), or None when it is none of them."""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if not isinstance(value, str):
        return None
    s = value.strip().strip("*_`\"'[](){}\u201c\u201d\u2018\u2019").strip().lower()
    s = re.sub(r"^(a\d*|answer\s*\d*|q\d+)\s*[:.)-]\s*", "", s)
    if not s:
        return None
    if _CANNOT.match(s):
        return "Cannot determine"
    if re.match(r"^(yes|y|true)\b", s):
        return "Yes"
    if re.match(r"^(no|n|false)\b", s):
        return "No"
    return None


@dataclass
class ParsedReply:
    """A critic reply read into answers and ratings.

    ``answers`` 5 entries (one of ``ANSWERS`` or None); ``aesthetics`` / ``fidelity`` 1-5 or
    None; ``total`` a stated authenticity total (VLMEvalKit-style "Total Score: x", used only when
    the answers are missing); ``method`` ``"json"`` | ``"json-repaired"`` | ``"regex"`` | None;
    ``problems`` human-readable notes on what was missing or odd.
    """

    answers: list[str | None]
    aesthetics: float | None = None
    fidelity: float | None = None
    total: float | None = None
    method: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """All three dimension scores can be computed."""
        return self.authenticity is not None and self.aesthetics is not None and self.fidelity is not None

    @property
    def authenticity(self) -> float | None:
        """Sum of the answers' points (0-5) when all 5 are valid, else the stated total, else None."""
        if self.answers and all(a is not None for a in self.answers):
            return authenticity_score(self.answers)  # type: ignore[arg-type]
        return self.total


def _key_kind(key: str) -> str | None:
    k = re.sub(r"[^a-z]", "", key.lower())
    if "reason" in k or "model" in k:
        return None
    if "aesthetic" in k:
        return "aesthetics"
    if "consisten" in k or "fidelity" in k or "instruction" in k:
        return "fidelity"
    if "reality" in k or "answer" in k or "authentic" in k or "question" in k:
        return "answers"
    return None


def _rating(v: Any) -> float | None:
    """A 1-5 rating from an int/float/string ("4", "4/5", "4 (Good)"); None when absent or out of range."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        x = float(v)
    elif isinstance(v, str):
        m = re.search(r"\d+(?:\.\d+)?", v)
        if not m:
            return None
        x = float(m.group(0))
    else:
        return None
    if math.isnan(x) or not 1.0 <= x <= 5.0:
        return None
    return x


def _answers_from(v: Any) -> list[Any] | None:
    if isinstance(v, list):
        out = []
        for a in v:
            if isinstance(a, dict):
                cand = [a[k] for k in a if re.sub(r"[^a-z]", "", k.lower()) in ("answer", "a", "response", "value")]
                out.append(cand[0] if cand else None)
            else:
                out.append(a)
        return out
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: int(m.group(0)) if (m := re.search(r"\d+", kv[0])) else 10 ** 6)
        return [a for _k, a in items]
    if isinstance(v, str):
        parts = [p for p in re.split(r"[,;\n]+", v) if p.strip()]
        return parts
    return None


def _repair_json(s: str) -> str:
    s = s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    s = re.sub(r",\s*([}\]])", r"\1", s)  # trailing commas
    s = re.sub(r"//[^\n\"]*\n", "\n", s)  # line comments outside strings (best effort)
    if '"' not in s:
        s = s.replace("'", '"')
    s = re.sub(r"\bTrue\b", "true", s)
    s = re.sub(r"\bFalse\b", "false", s)
    s = re.sub(r"\bNone\b", "null", s)
    return s


_NUMBERED_KEY = re.compile(r"^(?:q|question|reality|realityquestion|realityanswer|answer|a)(\d)$")


def _from_obj(obj: dict, n: int, pr: ParsedReply) -> None:
    numbered: dict[int, Any] = {}
    for k in obj:
        m = _NUMBERED_KEY.match(re.sub(r"[^a-z0-9]", "", str(k).lower()))
        if m:
            numbered[int(m.group(1))] = obj[k]
    if numbered and not any(a is not None for a in pr.answers):
        if sorted(numbered) == list(range(1, n + 1)):
            pr.answers = [normalize_answer(numbered[i]) for i in range(1, n + 1)]
        else:
            pr.problems.append(f"numbered answers {sorted(numbered)} do not cover 1-{n}")
    for k, v in obj.items():
        if re.sub(r"[^a-z0-9]", "", str(k).lower()) and _NUMBERED_KEY.match(re.sub(r"[^a-z0-9]", "", str(k).lower())):
            continue
        kind = _key_kind(str(k))
        if kind == "answers" and not any(a is not None for a in pr.answers):
            raw = _answers_from(v)
            if raw is not None:
                pr.answers = _fit([normalize_answer(a) for a in raw], n, pr)
        elif kind == "aesthetics" and pr.aesthetics is None:
            pr.aesthetics = _rating(v)
        elif kind == "fidelity" and pr.fidelity is None:
            pr.fidelity = _rating(v)
        elif isinstance(v, dict):
            _from_obj(v, n, pr)


def _fit(answers: list[str | None], n: int, pr: ParsedReply) -> list[str | None]:
    if len(answers) != n:
        pr.problems.append(f"{len(answers)} answers for {n} questions")
        return [None] * n
    return answers


_ANS_WORD = r"(yes|no|cannot\s+(?:be\s+)?determined?|can't\s+(?:be\s+)?determined?|can\s*not\s+(?:be\s+)?determined?)"


def _regex_fill(text: str, n: int, pr: ParsedReply) -> None:
    if not any(a is not None for a in pr.answers):
        m = re.search(r"realityAnswers?[_\w]*\W{0,6}\[(.*?)\]", text, re.IGNORECASE | re.DOTALL)
        if m:
            found = re.findall(r"[\"']([^\"']*)[\"']", m.group(1)) or m.group(1).split(",")
            pr.answers = _fit([normalize_answer(a) for a in found], n, pr)
        else:
            got: dict[int, str | None] = {}
            for mm in re.finditer(r"(?im)^\W*(?:q(?:uestion)?\s*)?([1-9])\s*[.:)\]-]\s*(?:.*?[?:]\s*)?\W*" + _ANS_WORD + r"\b",
                                  text):
                i = int(mm.group(1))
                if 1 <= i <= n and i not in got:
                    got[i] = normalize_answer(mm.group(2))
            if len(got) == n:
                pr.answers = [got[i] for i in range(1, n + 1)]
    if pr.aesthetics is None:
        m = re.search(r"aesthetics?(?:\s*quality)?(?:\s*rating)?(?:_eval)?\W{0,8}(\d(?:\.\d+)?)(?:\s*/\s*5)?", text, re.IGNORECASE)
        if m:
            pr.aesthetics = _rating(m.group(1))
    if pr.fidelity is None:
        m = re.search(r"(?:instruction\s*consistency|consistency|instruction\s*fidelity|fidelity)(?:\s*rating)?(?:_eval)?"
                      r"\W{0,8}(\d(?:\.\d+)?)(?:\s*/\s*5)?", text, re.IGNORECASE)
        if m:
            pr.fidelity = _rating(m.group(1))
    if pr.total is None:
        m = re.search(r"Total Score(?: for Reality Assessment)?\W{0,8}(\d+(?:\.\d+)?)", text, re.IGNORECASE)
        if m:
            x = float(m.group(1))
            pr.total = x if 0.0 <= x <= 5.0 else None


_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def parse_reply(text: str | None, n_questions: int = 5) -> ParsedReply:
    """Read a critic reply: strict JSON first, then a repaired JSON object, then regexes.

    Steps: strip reasoning traces (:func:`lensbench.scoring.text.strip_reasoning`) and code fences;
    take the first balanced ``{...}``; ``json.loads`` it (else after repairs: smart quotes,
    trailing commas, single quotes, Python literals); keys are matched by meaning
    (``realityAnswers_Eval`` / ``answers`` ..., ``aestheticsRating_Eval`` / ``aesthetics``,
    ``consistencyRating_Eval`` / ``fidelity`` ...). Missing pieces are then looked for with
    regexes on the text (a ``realityAnswers_Eval`` list, numbered ``1. Yes`` lines,
    ``Aesthetics Rating: 4``, ``Instruction Consistency Rating: 3/5``, ``Total Score: 3.5``).
    Ratings must lie in 1-5 and an answer list must have exactly ``n_questions`` entries; what
    is not found stays None (see :attr:`ParsedReply.complete`). Never evaluates reply text.
    """
    pr = ParsedReply(answers=[None] * n_questions)
    s = strip_reasoning(text)
    s = re.sub(r"```(?:json|JSON)?", "", s).strip()
    s = s.translate(_SMART_QUOTES)
    if not s:
        pr.problems.append("empty reply")
        return pr
    blob = extract_json_object(s)
    if blob is not None:
        obj = None
        try:
            obj = json.loads(blob)
            pr.method = "json"
        except json.JSONDecodeError:
            try:
                obj = json.loads(_repair_json(blob))
                pr.method = "json-repaired"
            except json.JSONDecodeError:
                pr.problems.append("JSON object did not parse")
        if isinstance(obj, dict):
            _from_obj(obj, n_questions, pr)
    before = (tuple(pr.answers), pr.aesthetics, pr.fidelity)
    if not pr.complete:
        _regex_fill(s, n_questions, pr)
        if (tuple(pr.answers), pr.aesthetics, pr.fidelity) != before or pr.method is None:
            pr.method = "regex" if pr.complete else pr.method
    if any(a is None for a in pr.answers) and pr.total is None:
        bad = [i + 1 for i, a in enumerate(pr.answers) if a is None]
        pr.problems.append(f"no valid answer for question(s) {bad}")
    if pr.aesthetics is None:
        pr.problems.append("no aesthetics rating in 1-5")
    if pr.fidelity is None:
        pr.problems.append("no instruction-consistency rating in 1-5")
    return pr
