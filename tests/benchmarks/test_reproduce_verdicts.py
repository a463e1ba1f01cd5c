"""benchmarks/reproduce_verdicts.py in small: the verdict rule's error rates on the RGB-Th-Bench shape (29 scenes x
14 skills x 4 questions, scene and unit effects) meet issue 29's goals, with a tolerance for the few replicates
(binomial SD of a 5% rate over 150 replicates: 1.8 points)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce_verdicts.py"


@pytest.fixture(scope="module")
def rv():
    spec = importlib.util.spec_from_file_location("reproduce_verdicts", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rates(rv):
    shape, source = rv.real_shape(None)  # the generated shape: the suite never needs the shared data
    assert "29 x 14 x 4" in source and len(shape) == 29 * 14
    return rv.simulate(rv.Sim(shape, 0.25, 0.8, seed=7), reps=150, shift_reps=20)


def test_shift_calibration_moves_the_cell_by_the_stated_points(rv):
    sim = rv.Sim(rv.real_shape(None)[0], 0.25, 0.8, seed=1)
    deltas, vals = sim.expected_grid()
    for cell in (("Overall", "QAcc"), ("RGB-Th-Txt", "SAcc")):
        d = sim.shift_for(cell, 4.0)
        base = float(vals[cell][list(deltas).index(0.0)])
        assert float(np.interp(d, deltas, vals[cell])) - base == pytest.approx(4.0, abs=0.05)


def test_perfect_replication_rarely_differs(rates):
    assert rates["differs_table"] <= 0.05 + 0.04  # goal <= 5% per table family (Holm over its 6 cells)
    assert max(rates["differs_cell"]) <= 0.05


def test_three_or_four_points_away_is_not_consistent_at_margin_two(rates):
    assert max(rates["consistent_3"]) <= 0.05 + 0.04 and max(rates["consistent_4"]) <= 0.05 + 0.04


def test_ten_points_is_found_on_qacc(rates):
    q = [r for (g, m), r in zip([(g, m) for g in ("RGB-Txt", "RGB-Th-Txt", "Overall") for m in ("QAcc", "SAcc")],
                                rates["differs_10"]) if m == "QAcc"]
    assert min(q) >= 0.5 and q[-1] >= 0.8  # Overall QAcc: SD about 1.5 points per evaluation
