"""The shared letter-choice pieces (issue 35.4): a reply that is just one option letter, and the outcome of a
chosen answer; IF-Bench reads its exact letters and its parser's verdicts through them, IV-Bench and RGB-Th-Bench
their outcomes."""

from __future__ import annotations

import pytest

from lensbench.benchmarks.ifbench.parse import exact_letter as if_exact, parse_parser_reply
from lensbench.scoring.choice import choice_outcome, exact_letter


@pytest.mark.parametrize("reply, expected", [
    ("B", "B"), ("  C \n", "C"), ("(A)", "A"), ("[D]", "D"), ("**B**", "B"), ("B.", "B"), ("**B**.", "B"),
    ("( B )", "B"), ("b", None), ("E", None), ("F", None), ("Answer: B", None), ("B C", None), ("BB", None),
    ("", None), (None, None), ("B!", None), ('"B"', None),
])
def test_exact_letter_takes_one_wrapped_letter_only(reply, expected):
    assert exact_letter(reply) == expected
    assert if_exact(reply) == expected  # IF-Bench's hybrid judgment is this reading over A-D


def test_the_letters_are_the_callers():
    assert exact_letter("F", "ABCDF") == "F" and exact_letter("F") is None
    assert exact_letter("a", "abc") == "a" and exact_letter("A", "abc") is None
    assert exact_letter("-", "-+") == "-" and exact_letter("]", "A]") == "]"  # regex characters are escaped
    assert exact_letter("B", "A-C") is None  # "A-C" is three letters, not a range
    # the parser's verdict: an exact letter or F first, then a leading letter
    assert [parse_parser_reply(t) for t in ("F", "(F)", "**C**", "B: because", "Fine", "")] == \
        ["F", "F", "C", "B", None, None]


@pytest.mark.parametrize("answer, target, empty, expected", [
    ("B", "B", False, "correct"), ("A", "B", False, "wrong"), (None, "B", False, "unparseable"),
    (None, "B", True, "wrong"), ("yes", "yes", False, "correct"), ("no", "yes", False, "wrong"),
])
def test_choice_outcome(answer, target, empty, expected):
    assert choice_outcome(answer, target, empty=empty) == expected
