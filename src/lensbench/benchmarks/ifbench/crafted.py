"""Crafted IF-Bench records (:mod:`lensbench.benchmarks.crafting`): 4 rotations x 2 languages per question,
two questions per image; labels as :meth:`IFBench.records` writes."""

from __future__ import annotations

from lensbench.benchmarks.crafting import Crafter
from lensbench.benchmarks.ifbench.data import ABBREVS
from lensbench.core.records import SampleRecord

__all__ = ["craft_records"]

_DIMS = ABBREVS[:4]


def craft_records(c: Crafter) -> list[SampleRecord]:
    """``c.n // 8`` questions (at least one), 8 records each."""
    out = []
    for q in range(max(1, c.n // 8)):
        img = c.image(f"ir{q // 2}.png", 50 + q // 2)  # two questions per image, as in the release
        dim = _DIMS[q % len(_DIMS)]
        for lang in ("en", "zh"):
            for rot in range(4):
                target = "ABCD"[(q + rot) % 4]
                o = c.outcome()
                ans = target if o == "correct" else (None if o in ("unparseable", "error") else "ABCD"[(q + rot + 1) % 4])
                text = f"[{lang}] Question {q} about {dim}? Options rotated {rot}:\nA. a\nB. b\nC. c\nD. d"
                out.append(c.record(f"q{q}/{lang}/r{rot}", [img, {"type": "text", "text": text}], o,
                                    answer=ans, target=target, reply=f"The answer is {ans}",
                                    labels={"qid": f"q{q}", "dimension": dim, "language": lang, "rotation": rot,
                                            "input": "if", "blind": False},
                                    extra={"options": ["a", "b", "c", "d"], "image": f"ir{q // 2}.png",
                                           "judged_by": None if o in ("unparseable", "error") else "exact",
                                           "judge_mode": "hybrid", "parser_available": False},
                                    judge=[{"kind": "parser", "request_id": f"parse/q{q}/{lang}/{rot}",
                                            "reply": ans, "verdict": ans}] if o == "unparseable" else []))
    return out
