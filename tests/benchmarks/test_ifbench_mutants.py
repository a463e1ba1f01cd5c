"""IF-Bench reply reading edge cases that mutation testing (devtools/mutate.py) found unguarded
(SPEC §1; official evaluate/bench_evaluate.py first-character rule)."""

from __future__ import annotations

import pytest

from lensbench.benchmarks.ifbench.parse import (exact_letter, official_first_char, official_parser_verdict,
                                                 parse_parser_reply)


@pytest.mark.parametrize("reply,want", [
    ("B", "B"), ("(C).", "C"), ("F", "F"),
    ("B: the bird on the left", "B"),   # leading letter followed by a non-letter
    ("D) none", "D"),
    ("Bird", None),                     # a word starting with B is no verdict
    ("E", None), ("", None),
])
def test_parser_reply_verdicts(reply, want):
    assert parse_parser_reply(reply) == want


def test_official_first_char_rules():
    assert official_first_char("Answer: C") == "A"          # the official rule reads the first character
    assert official_first_char("<think>x</think> B") == "B"
    assert official_first_char("b") is None                  # lower case is not A-D
    assert official_first_char("") is None
    assert official_parser_verdict("F") == "F"
    assert official_parser_verdict("\nC is right") == "C"
    assert official_parser_verdict(" C") is None             # a leading space is another character
    assert official_parser_verdict("x") is None
    assert exact_letter("**A**") == "A" and exact_letter("A dog") is None
