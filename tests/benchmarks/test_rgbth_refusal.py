"""Issue 29 part 5: one rule for "I am" and its contractions in the RGB-Th-Bench refusal rule
(benchmarks/rgbth/refusal.py): "I'm unable to ..." and "I'm not able to ..." are refusals, as
"I am unable to ..." is; inability to judge the image stays non-compliance in every spelling."""

from __future__ import annotations

import pytest

from lensbench.benchmarks.rgbth.refusal import NON_COMPLIANCE, REFUSAL, fail_kind
from lensbench.core.records import SampleRecord

SPELLINGS = ["I am", "I'm", "I\u2019m", "Im", "i AM", "I  am"]


def _fail(reply: str) -> SampleRecord:
    return SampleRecord(benchmark="rgb-th-bench", sample_id="s", request_id="r", reply=reply, outcome="unparseable")


@pytest.mark.parametrize("i_am", SPELLINGS)
@pytest.mark.parametrize("rest,kind", [
    ("unable to help with that request.", REFUSAL),
    ("not able to answer questions about this image.", REFUSAL),
    ("unable to assist.", REFUSAL),
    ("sorry, but this is not something to answer.", REFUSAL),
    ("really sorry.", REFUSAL),
    # inability to judge is not a refusal, whatever the spelling
    ("unable to determine the temperature from this image.", NON_COMPLIANCE),
    ("not able to tell which object is warmer.", NON_COMPLIANCE),
    ("looking at a thermal image of a wall.", NON_COMPLIANCE),
])
def test_one_rule_for_every_spelling_of_i_am(i_am, rest, kind):
    assert fail_kind(_fail(f"{i_am} {rest}")) == kind
    assert fail_kind(_fail(f"<think>the user asks about heat</think>\n{i_am} {rest}")) == kind


@pytest.mark.parametrize("reply", ["Aim unable to help", "Sim not able to answer", "I amunable to help",
                                   "The swim unable to assist"])
def test_words_ending_in_im_are_not_i_am(reply):
    assert fail_kind(_fail(reply)) == NON_COMPLIANCE
