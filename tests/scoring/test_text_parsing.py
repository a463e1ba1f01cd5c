"""Parsers: hand cases from the protocols, and fuzzing (hypothesis). No eval anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lensbench.scoring.text import extract_json_object, parse_yes_no, strip_reasoning


def test_yes_no_whole_word_cases():
    assert parse_yes_no("Yes") == "Yes"
    assert parse_yes_no(" no.") == "No"
    assert parse_yes_no("The answer is YES") == "Yes"
    assert parse_yes_no("\n<|begin_of_box|>No<|end_of_box|>") == "No"
    assert parse_yes_no("I don't know") is None          # 'know' is not 'no' (third-party bug)
    assert parse_yes_no("Nobody is there; yesterday") is None
    assert parse_yes_no("No, yes") == "No"                # the earlier one wins
    assert parse_yes_no("yes - no") == "Yes"
    assert parse_yes_no("<think>no no no</think>Yes") == "Yes"   # reasoning stripped first
    assert parse_yes_no("<think>yes, probably") is None   # truncated reasoning: nothing to parse
    assert parse_yes_no("") is None and parse_yes_no(None) is None


def test_strip_reasoning_forms():
    assert strip_reasoning("<think>a</think> B ") == "B"
    assert strip_reasoning("reasoning... </think>\nC") == "C"
    assert strip_reasoning("<|begin_of_box|>A<|end_of_box|>") == "A"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_yes_no_fuzz(s):
    out = parse_yes_no(s)
    assert out in ("Yes", "No", None)
    words = re.findall(r"\b(yes|no)\b", strip_reasoning(s), flags=re.I)
    assert (out is None) == (not words)
    if words:
        assert out.lower() == words[0].lower()


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(alphabet=st.sampled_from("yesnoYESNO ,.!")))
def test_yes_no_with_think_fuzz(reasoning, answer):
    assert parse_yes_no(f"<think>{reasoning.replace('<', '')}</think>{answer}") == parse_yes_no(answer)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_strip_reasoning_fuzz(s):
    out = strip_reasoning(s)
    assert isinstance(out, str) and out == out.strip()
    assert "</think>" not in out.lower()


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(), c, max_size=3), max_leaves=8),
       st.text(alphabet=st.characters(blacklist_characters="{}\"'")), st.text(alphabet=st.characters(blacklist_characters="{}\"'")))
def test_extract_json_object_fuzz(obj, before, after):
    doc = {"k": obj}
    got = extract_json_object(before + json.dumps(doc) + after)
    assert got is not None and json.loads(got) == doc


def test_no_eval_of_model_output():
    src = Path(__file__).resolve().parents[1] / "src" / "lensbench"
    offenders = [str(p) for p in src.rglob("*.py") if re.search(r"(?<![\w.])(eval|exec)\(", p.read_text())]
    assert offenders == []
