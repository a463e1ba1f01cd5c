"""GOBench reply reading and scoring edge cases that mutation testing (devtools/mutate.py) found unguarded.

Expected values are read off the replies by hand (GOBench paper Sec. 2.2: Yes 1, No 0, Cannot determine
0.5; ratings 1-5; Eq. 1 SPS), and VLMEvalKit's reading from its documented behaviour."""

from __future__ import annotations

import json

import pytest

from lensbench.benchmarks.gobench.parse_paper import normalize_answer, parse_reply
from lensbench.benchmarks.gobench.parse_vlmevalkit import parse_reply_vlmevalkit, vlmevalkit_gt_complete
from lensbench.benchmarks.gobench.records import HumanGT
from lensbench.benchmarks.gobench.sps import authenticity_score, sps


def _json_reply(answers, aesthetics, fidelity) -> str:
    return json.dumps({"realityAnswers_Eval": answers, "aestheticsRating_Eval": aesthetics,
                       "consistencyRating_Eval": fidelity})


def test_normalize_answer_words():
    assert normalize_answer("No.") == "No"
    assert normalize_answer("n") == "No"
    assert normalize_answer(False) == "No"
    assert normalize_answer("**Yes**") == "Yes"
    assert normalize_answer("A1: yes") == "Yes"
    assert normalize_answer("cannot be determined") == "Cannot determine"
    assert normalize_answer("maybe") is None
    assert normalize_answer(3) is None


def test_complete_json_reply_and_rating_bounds():
    pr = parse_reply(_json_reply(["Yes", "No", "Yes", "Cannot determine", "Yes"], 5, 1))
    assert pr.method == "json"
    assert pr.answers == ["Yes", "No", "Yes", "Cannot determine", "Yes"]
    assert pr.authenticity == 3.5           # 1 + 0 + 1 + 0.5 + 1
    assert (pr.aesthetics, pr.fidelity) == (5.0, 1.0)   # both ends of 1-5 are valid
    assert pr.complete is True
    assert pr.problems == []


@pytest.mark.parametrize("bad", [0, 6, 5.5, 0.99])
def test_ratings_outside_one_to_five_are_not_read(bad):
    pr = parse_reply(_json_reply(["Yes"] * 5, bad, 3))
    assert pr.aesthetics is None and pr.fidelity == 3.0
    assert pr.complete is False
    assert pr.problems == ["no aesthetics rating in 1-5"]
    pr = parse_reply(_json_reply(["Yes"] * 5, 3, bad))
    assert pr.fidelity is None
    assert pr.problems == ["no instruction-consistency rating in 1-5"]


def test_numbered_lines_are_read_by_regex():
    text = ("1. Is the light plausible? Yes\n2. No\n3. Yes\n4. Cannot determine\n5. no\n"
            "Aesthetics Rating: 4\nInstruction Consistency Rating: 3/5")
    pr = parse_reply(text)
    assert pr.answers == ["Yes", "No", "Yes", "Cannot determine", "No"]
    assert pr.authenticity == 2.5
    assert (pr.aesthetics, pr.fidelity) == (4.0, 3.0)
    assert pr.method == "regex"
    assert pr.complete is True


def test_json_completed_by_regex_is_marked_regex():
    # the JSON object holds the answers; the ratings only appear as text after it
    text = json.dumps({"realityAnswers_Eval": ["Yes"] * 5}) + "\nAesthetics Rating: 2\nConsistency Rating: 4"
    pr = parse_reply(text)
    assert pr.answers == ["Yes"] * 5
    assert (pr.aesthetics, pr.fidelity) == (2.0, 4.0)
    assert pr.method == "regex"
    # JSON that stays incomplete keeps its method
    pr = parse_reply(json.dumps({"realityAnswers_Eval": ["Yes"] * 5}))
    assert pr.method == "json" and pr.complete is False


def test_stated_total_used_only_without_answers():
    pr = parse_reply("Total Score: 3.5\nAesthetics Rating: 4\nConsistency Rating: 2")
    assert pr.answers == [None] * 5
    assert pr.authenticity == 3.5 and pr.complete is True
    assert parse_reply("Total Score: 5.0\nAesthetics Rating: 4\nConsistency Rating: 2").authenticity == 5.0
    assert parse_reply("Total Score: 6\nAesthetics Rating: 4\nConsistency Rating: 2").authenticity is None


def test_vlmevalkit_reads_totals_and_fractions():
    pr = parse_reply_vlmevalkit("Total Score: 4\nAesthetics Rating: 3/5\nInstruction Consistency Rating: 2/5")
    assert (pr.total, pr.aesthetics, pr.fidelity) == (4.0, 3.0, 2.0)
    assert pr.complete is True
    pr = parse_reply_vlmevalkit("Aesthetics Rating: 3\nInstruction Consistency Rating: 2")
    assert pr.complete is False and pr.total is None


def test_vlmevalkit_ground_truth_complete_only_with_all_three():
    assert vlmevalkit_gt_complete(HumanGT(3.0, 4.0, 2.0)) is True
    assert vlmevalkit_gt_complete(HumanGT(3.0, None, 2.0)) is False
    assert vlmevalkit_gt_complete(None) is False


def test_sps_equation_one():
    assert authenticity_score(["Yes", "No", "Cannot determine"]) == 1.5
    assert sps(3.0, 3.0, 2.0) == 1.0
    assert sps(3.0, 2.0, 2.0) == 0.5            # 1 - 1/2
    assert sps(1.0, 3.0, 2.0) == 0.0            # |d| = delta_max -> 0
    assert sps(0.0, 3.0, 2.0) == 0.0            # beyond delta_max
    with pytest.raises(ValueError):
        sps(1.0, 1.0, 0.0)


def test_problems_name_the_missing_pieces():
    # question 2's answer is unreadable: the note names question 2 (1-based)
    pr = parse_reply(_json_reply(["Yes", "maybe", "Yes", "No", "Yes"], 3, 4))
    assert pr.answers == ["Yes", None, "Yes", "No", "Yes"]
    assert pr.problems == ["no valid answer for question(s) [2]"]
    pr = parse_reply_vlmevalkit("Aesthetics Rating: 3\nInstruction Consistency Rating: 2")
    assert pr.problems == ["no total line as VLMEvalKit reads them"]
    pr = parse_reply_vlmevalkit("Total Score: 3")
    assert pr.problems == ["no aesthetics, fidelity line as VLMEvalKit reads them"]


# ------------------------------------------- issue 26, second pass: survivors of the held-out draw (seed 20261126)
def test_plain_answers_key_and_reasoning_keys():
    # "answers" is an answers key; "reason_for_aesthetics" / "model_answer" are commentary, never read as scores
    text = json.dumps({"reason_for_aesthetics": "5 stars", "model_answer": ["No"] * 5,
                       "answers": ["Yes", "No", "Cannot determine", "No", "Yes"],
                       "aesthetics": 3, "fidelity": 4})
    pr = parse_reply(text)
    assert pr.answers == ["Yes", "No", "Cannot determine", "No", "Yes"] and pr.method == "json"
    assert (pr.aesthetics, pr.fidelity, pr.problems) == (3.0, 4.0, [])


def test_numbered_keys_are_not_read_as_an_answer_list():
    # two numbered answers for five questions: noted once, and neither value is taken as the whole list
    pr = parse_reply(json.dumps({"answer1": "Yes", "answer2": "No", "aesthetics": 3, "fidelity": 4}))
    assert pr.answers == [None] * 5
    assert pr.problems == ["numbered answers [1, 2] do not cover 1-5", "no valid answer for question(s) [1, 2, 3, 4, 5]"]


def test_vlmevalkit_unreadable_number_is_named_in_the_problem():
    pr = parse_reply_vlmevalkit("Total Score: 4..\nAesthetics Rating: 3\nInstruction Consistency Rating: 4")
    assert not pr.complete
    assert pr.problems == ["total: '4..' is not a number (VLMEvalKit fails the whole row)"]


# ------------------------------------------------- survivors of the held-out draw of seed 20261127
def test_answers_as_a_list_of_question_answer_objects():
    # {"question": ..., "answer": ...} objects: the "answer" value is the answer (the question text is not)
    items = [{"question": f"Is light {i} real?", "answer": a} for i, a in enumerate(["yes", "no", "yes", "no", "yes"])]
    pr = parse_reply(json.dumps({"realityAnswers": items, "aesthetics": 4, "fidelity": 3}))
    assert pr.answers == ["Yes", "No", "Yes", "No", "Yes"]
    assert (pr.aesthetics, pr.fidelity, pr.problems) == (4.0, 3.0, [])


@pytest.mark.parametrize("line, total", [("Total Score: 0", 0.0), ("Total Score for Reality Assessment: 5", 5.0),
                                         ("Total Score: 5.5", None)])
def test_total_score_bounds_are_inclusive(line, total):
    # the reality total lies in 0-5 (five yes/no questions): both ends are totals, 5.5 is not
    assert parse_reply(line + "\nAesthetics Rating: 4").total == total


def test_sps_is_a_percentage_of_the_mean_score_to_the_last_bit():
    """SPS = 100 x (mean of the per-image terms): the mean first, then the percentage (the paper's
    arithmetic); ``100 * sum / n`` differs in the last bit for these terms (16.666666666666668)."""
    from lensbench.benchmarks.gobench.units import sps_table
    from lensbench.core.records import SampleRecord

    terms = [0.1, 0.1, 0.3]
    recs = [SampleRecord(benchmark="gobench", sample_id=f"s{i}", outcome="correct",
                         labels={"image": f"img{i}"}, scores={"sps_aesthetics": v}) for i, v in enumerate(terms)]
    t = sps_table(recs)
    expected = 100 * (sum(terms) / len(terms))
    assert expected != 100 * sum(terms) / len(terms)  # the two orders really differ here
    assert t.value("Aesthetics") == expected and t.value("mean") == expected
