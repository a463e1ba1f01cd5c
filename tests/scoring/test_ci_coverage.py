"""A small run of benchmarks/ci_coverage.py (the coverage simulation behind the CI method; README figures).

The full run (2,000+ replicates) takes minutes; here 200 replicates of RGB-Th-Bench's shape check that the
simulation's estimand is right (the estimates average to it) and that every interval covers about 95%.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ci_coverage.py"


@pytest.fixture(scope="module")
def sim():
    spec = importlib.util.spec_from_file_location("ci_coverage", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ci_coverage"] = mod  # its dataclass needs its module registered
    spec.loader.exec_module(mod)
    return mod


def test_truth_without_random_effects_is_the_mean_of_the_skill_accuracies(sim):
    shape = sim.Shape(np.array([[4, 3], [5, 4]]), "2 x 2")
    sim_logits, sim.SKILL_LOGITS = sim.SKILL_LOGITS, np.array([0.0, np.log(3.0)])  # accuracies 1/2 and 3/4
    try:
        tr = sim.truth(shape, 0.0, 0.0, 0.0)
    finally:
        sim.SKILL_LOGITS = sim_logits
    assert tr["QAcc"] == pytest.approx(100 * (0.5 + 0.75) / 2)
    # SAcc: per skill the mean over its units of p ** (questions): skill 0 units of 4 and 5, skill 1 of 3 and 4
    assert tr["SAcc"] == pytest.approx(100 * ((0.5 ** 4 + 0.5 ** 5) / 2 + (0.75 ** 3 + 0.75 ** 4) / 2) / 2)


def test_small_simulation_estimand_and_coverage(sim):
    shape = sim.real_shape()  # the release's design when present, else 29 x 14 x 4
    assert shape.n_q.shape == (29, 14) and shape.n_q.sum() == 1624
    res = sim.coverage(shape, replicates=200, resamples=500, seed=5)
    for m in ("QAcc", "SAcc"):
        est = np.array(res["estimates"][m])
        # each estimate is unbiased for the truth (fixed denominators): the mean lies within 4 standard errors
        assert abs(est.mean() - res["truth"][m]) < 4 * est.std() / np.sqrt(len(est)), m
        for k in sim.METHODS:
            r = res[m][k]
            assert r["cover"] + r["below"] + r["above"] == pytest.approx(100.0)
            # 200 replicates: Monte-Carlo standard error ~1.5 points around a true coverage near 95%
            assert 87.0 <= r["cover"] <= 100.0, (m, k, r)
            assert 0 < r["width"] < 40, (m, k, r)
    # the same seed gives the same figures
    again = sim.coverage(shape, replicates=20, resamples=200, seed=5)
    assert again["QAcc"] == sim.coverage(shape, replicates=20, resamples=200, seed=5)["QAcc"]
