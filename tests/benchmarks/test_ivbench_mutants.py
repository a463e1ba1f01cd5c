"""IV-Bench option building, reply parsing and Table 2 accuracy edge cases that mutation testing
(devtools/mutate.py) found unguarded. Expected values are counted by hand (SPEC §3; paper Table 2)."""

from __future__ import annotations

import pytest

from lensbench.benchmarks.ivbench.aggregate import table2_accuracy
from lensbench.benchmarks.ivbench.data import Query
from lensbench.benchmarks.ivbench.options import build_options
from lensbench.benchmarks.ivbench.parse import parse_choice
from lensbench.core.records import SampleRecord


def _query(distractors, answer="a red car") -> Query:
    return Query(video_id="v1", data_id=7, image_name="i.jpg", question="What is shown?", question_type="NLI",
                 granularity="g", answer=answer, answer_location="", distractors=tuple(distractors), line=1)


def test_options_drop_blank_answer_copies_and_repeats_and_count_them():
    q = _query(["", "  ", "a blue car", " a red car ", "a blue car", "a bike", "a bike "])
    ch = build_options(q, seed=0)
    # kept: "a blue car", "a bike" + the answer; dropped: 2 blank, 1 answer copy, 2 repeats
    assert (ch.empty, ch.dup_answer, ch.dup_other) == (2, 1, 2)
    assert sorted(t for _l, t in ch.options) == ["a bike", "a blue car", "a red car"]
    assert [letter for letter, _t in ch.options] == ["a", "b", "c"]
    assert ch.as_dict[ch.correct] == "a red car"


def test_options_without_duplicates_count_nothing():
    ch = build_options(_query(["x", "y", "z"]), seed=3)
    assert (ch.empty, ch.dup_answer, ch.dup_other) == (0, 0, 0)
    assert len(ch.options) == 4


OPTS = {"a": "a dog running", "b": "a cat sleeping", "c": "two birds"}


@pytest.mark.parametrize("reply,want", [
    ("B. I am fairly sure of it", "b"),           # rule 3: leading letter + punctuation
    ("B. a cat sleeping on the sofa", "b"),
    ("(c) is my pick, not (x)", "c"),            # rule 4: one parenthesised valid letter
    ("I think a cat sleeping is shown", "b"),   # rule 5: echoed option text
    ("a cat sleeping", "b"),                      # rule 5: exact option text
    ("a dog", None),                              # lower-case 'a' not standing alone, no option text
    ("Answer: c", "c"),
])
def test_parse_choice_rules(reply, want):
    assert parse_choice(reply, OPTS) == want


def _rec(task: str, outcome: str, n_options: int = 4) -> SampleRecord:
    return SampleRecord(benchmark="iv-bench", sample_id=f"{task}-{outcome}", outcome=outcome,
                        labels={"task": task}, extra={"n_options": n_options})


def test_table2_errors_left_out_of_accuracy_and_chance():
    recs = [_rec("Existence", "correct"), _rec("Existence", "wrong", 2), _rec("Counting", "correct"),
            _rec("Counting", "error"), _rec("Counting", "error")]
    acc, chance, n = table2_accuracy(recs)
    assert n["Overall"] == 3 and n["Exist."] == 2 and n["Cnt."] == 1
    assert acc["Overall"] == pytest.approx(200 / 3)       # 2 correct of 3 scored
    assert acc["Exist."] == 50.0 and acc["Cnt."] == 100.0
    # chance: 100 * mean(1/4, 1/2, 1/4) = 33.33
    assert chance["Overall"] == pytest.approx(100 * (0.25 + 0.5 + 0.25) / 3)
    assert acc["P-Avg"] == 50.0 and acc["R-Avg"] == 100.0
    assert acc["SR"] is None and chance["SR"] is None and n["SR"] == 0


def test_parenthesised_letter_outside_the_options_is_ignored():
    # rule 4: "(x)" is no option letter, so the one valid parenthesised letter is c
    assert parse_choice("I pick (c) here, not (x)", OPTS) == "c"
    assert parse_choice("I pick (x) here", OPTS) is None


def test_a_sweep_names_its_tables_accuracy_then_accuracy_2_3_with_their_settings():
    """The unit tables of a frames sweep (module docstring of ivbench/units.py): the first configuration's
    is ``accuracy``, the others ``accuracy#2``, ``accuracy#3`` in first-seen order, each naming its setting."""
    from lensbench.benchmarks.ivbench.units import accuracy_tables

    recs = []
    for k, frames in enumerate((8, 16, 32)):
        for i in range(2):
            r = _rec("Existence", "correct" if (i + k) % 2 else "wrong", i)
            recs.append(r.model_copy(update={"sample_id": f"{r.sample_id}@{frames}",
                                             "labels": {**r.labels, "frames": frames, "resolution": None}}))
    tables = accuracy_tables(recs)
    assert list(tables) == ["accuracy", "accuracy#2", "accuracy#3"]
    assert [t.setting for t in tables.values()] == [{"frames": f, "resolution": None} for f in (8, 16, 32)]
    assert list(accuracy_tables(recs[:2])) == ["accuracy"] and accuracy_tables(recs[:2])["accuracy"].setting is None
