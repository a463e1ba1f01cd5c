"""RGB-Th-Bench aggregation edge cases that mutation testing (devtools/mutate.py) found unguarded:
failed calls left out of QAcc and of their unit's SAcc (checked on metrics and counts), unequal skill
sizes, and the significance rows. Expected values by hand (paper Sec. 3.4, Table 3)."""

from __future__ import annotations

import math

import pytest

from lensbench.benchmarks.rgbth.aggregate import aggregate_records
from lensbench.benchmarks.rgbth.data import PAPER_ABBREVS, RGB_TH_TXT, RGB_TXT, SKILLS
from lensbench.core.records import SampleRecord

AB = {ab: grp for ab, grp in SKILLS.values()}
S1 = next(a for a in PAPER_ABBREVS if AB[a] == RGB_TXT)
S2 = next(a for a in PAPER_ABBREVS if AB[a] == RGB_TH_TXT)


def _rec(i: int, scene: str, ab: str, outcome: str) -> SampleRecord:
    return SampleRecord(benchmark="rgb-th-bench", sample_id=f"q{i}", outcome=outcome,
                        labels={"abbrev": ab, "skill": ab, "group": AB[ab], "scene": scene, "extra": False})


def _threshold(n: int, p: float) -> float:
    """Least k with P(X >= k) < 0.05 (exact, math.comb), in percent."""
    for k in range(n + 1):
        if sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1)) < 0.05:
            return 100.0 * k / n
    return 100.0 * (n + 1) / n


def test_errors_leave_qacc_and_sacc_and_are_counted():
    recs = [
        # S1, scene A: 2/2 correct -> unit right; scene B: 1 correct + 1 error -> unit missing
        _rec(0, "A", S1, "correct"), _rec(1, "A", S1, "correct"),
        _rec(2, "B", S1, "correct"), _rec(3, "B", S1, "error"),
        # S2, scene A: 1 correct + 1 wrong -> unit wrong; scene C: unparseable + correct -> wrong
        _rec(4, "A", S2, "correct"), _rec(5, "A", S2, "wrong"),
        _rec(6, "C", S2, "unparseable"), _rec(7, "C", S2, "correct"),
    ]
    m, c = aggregate_records(recs)
    assert m["QAcc"][S1] == 100.0                        # 3/3 scored (the error left out)
    assert m["QAcc"][S2] == 50.0                         # 2/4
    assert m["SAcc"][S1] == 100.0                        # 1 unit scored, right
    assert m["SAcc"][S2] == 0.0
    assert m["QAcc"]["Overall"] == 75.0                  # mean over skills, not over questions (5/7)
    assert m["QAcc"][RGB_TXT] == 100.0 and m["QAcc"][RGB_TH_TXT] == 50.0
    assert m["SAcc"]["Overall"] == 50.0
    assert (c["n"], c["n_questions"], c["n_error"], c["n_unparseable"]) == (7, 8, 1, 1)
    assert (c["n_units"], c["n_units_scored"], c["n_units_missing"]) == (4, 3, 1)
    assert c["per_skill"][S1] == {"questions": 3, "units": 1}
    assert list(m["QAcc"])[:3] == ["Overall", RGB_TXT, RGB_TH_TXT]
    sig = m["significance"]
    assert sig["QAcc"]["Overall"] == pytest.approx(_threshold(7, 0.5))
    assert sig["QAcc"][RGB_TXT] == pytest.approx(_threshold(3, 0.5))
    assert sig["SAcc"]["Overall"] == pytest.approx(_threshold(3, 0.5 ** 4))
    assert sig["SAcc"][RGB_TH_TXT] == pytest.approx(_threshold(2, 0.5 ** 4))


def test_a_group_with_nothing_asked_has_no_threshold_and_adds_nothing_to_overall():
    """A run of RGB-Txt questions only (``--limit``, a subset): RGB-Th-Txt has no significance threshold
    and the Overall threshold counts only the questions / units that were asked."""
    recs = [_rec(0, "A", S1, "correct"), _rec(1, "A", S1, "wrong"),
            _rec(2, "B", S1, "correct"), _rec(3, "B", S1, "correct")]
    m, _ = aggregate_records(recs)
    sig = m["significance"]
    assert sig["QAcc"][RGB_TH_TXT] is None and sig["SAcc"][RGB_TH_TXT] is None
    assert m["QAcc"][RGB_TH_TXT] is None
    assert sig["QAcc"]["Overall"] == pytest.approx(_threshold(4, 0.5))       # 4 questions, not 5
    assert sig["SAcc"]["Overall"] == pytest.approx(_threshold(2, 0.5 ** 4))  # 2 units, not 3
