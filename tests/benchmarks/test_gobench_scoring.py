"""GOBench scoring gaps (issue 9): SPS at its boundaries, unparseable replies excluded and counted,
transport errors left out of every metric. Records are built by hand; expected figures are
worked out in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from lensbench.benchmarks.gobench.benchmark import GOBench
from lensbench.benchmarks.gobench.records import GORecord, HumanGT
from lensbench.benchmarks.gobench.sps import sps
from lensbench.core.results import RunResult
from lensbench.core.types import StoredResponse


# --------------------------------------------------------------------------- SPS boundaries
@pytest.mark.parametrize("model, human, delta, expected", [
    (3.0, 3.0, 0.5, 1.0),            # equal
    (3.0, 3.25, 0.5, 0.5),           # half of delta_max
    (3.0, 3.5, 0.5, 0.0),            # exactly delta_max: 1 - 0.5/0.5 = 0
    (3.0, 3.5000001, 0.5, 0.0),      # just over delta_max
    (3.1, 2.6, 0.5, 0.0),            # |d| = 0.5000000000000004 in floats: still 0, never negative
    (0.0, 5.0, 0.5, 0.0),            # the whole range apart
    (5.0, 4.9, 0.5, 1 - 0.1 / 0.5),  # symmetric in the sign of d
    (13 / 3, 4.0, 0.5, 1 - (1 / 3) / 0.5),  # a mean of 3 raters
    (2.0, 3.0, 1.0, 0.0),            # --delta-max 1.0: exactly at the bound
    (2.0, 2.5, 1.0, 0.5),
])
def test_sps_boundaries(model, human, delta, expected):
    got = sps(model, human, delta)
    assert got == pytest.approx(expected, abs=1e-12) and 0.0 <= got <= 1.0


@pytest.mark.parametrize("delta", [0.0, -0.5])
def test_sps_refuses_a_non_positive_delta(delta):
    with pytest.raises(ValueError):
        sps(1.0, 1.0, delta)


# --------------------------------------------------------------------------- outcomes and metrics
def _rec(i: int, cat: str, gt: HumanGT | None, folder: Path) -> GORecord:
    image = folder / f"{cat}_{i}.png"
    if not image.exists():
        Image.new("RGB", (8, 8)).save(image)
    return GORecord(index=f"{cat}_{i}.1", category=cat, image=f"{cat}/{i}.1.png", title="", prompt=f"p{i}",
                    questions=tuple(f"q{j}" for j in range(5)), scenario=f"{cat}/{i}", variant="1", gt=gt,
                    image_path=str(image))


def _ok(rid: str, text: str) -> StoredResponse:
    return StoredResponse(key=rid, request_id=rid, status="ok", text=text)


def _reply(answers, aes, fid) -> str:
    return json.dumps({"realityAnswers_Eval": answers, "aestheticsRating_Eval": aes, "consistencyRating_Eval": fid})


def test_unparseable_and_errors_are_counted_and_left_out(tmp_path):
    gt = HumanGT(authenticity=3.0, aesthetics=4.0, fidelity=2.0)
    samples = [_rec(1, "direct_light_images", gt, tmp_path), _rec(2, "direct_light_images", gt, tmp_path),
               _rec(3, "reflect_light_images", gt, tmp_path), _rec(4, "reflect_light_images", gt, tmp_path),
               _rec(5, "refracted_light_images", gt, tmp_path)]
    replies = {
        # scored: Y Y Y N N = 3 (SPS 1), aesthetics 4 (1), fidelity 2 (1)
        samples[0].index: _ok(samples[0].index, _reply(["Yes", "Yes", "Yes", "No", "No"], 4, 2)),
        # scored: Y Y Y Y C = 4.5 (|1.5| -> 0), aesthetics 5 (|1| -> 0), fidelity 2 (1)
        samples[1].index: _ok(samples[1].index, _reply(["Yes", "Yes", "Yes", "Yes", "Cannot Determine"], 5, 2)),
        # unparseable: no fidelity
        samples[2].index: _ok(samples[2].index, json.dumps({"realityAnswers_Eval": ["Yes"] * 5, "aestheticsRating_Eval": 1})),
        # transport error: would score 0 everywhere if it were (wrongly) scored
        samples[3].index: StoredResponse(key="k", request_id=samples[3].index, status="error", text=None,
                                         error="HTTP 500 after 6 retries"),
        # samples[4]: no reply at all (never sent) -> error too
    }
    b = GOBench()
    records = b.score(samples, b.expand(samples), replies)
    assert [r.outcome for r in records] == ["scored", "scored", "unparseable", "error", "error"]
    assert records[3].error == "HTTP 500 after 6 retries" and records[4].error
    assert records[3].scores == {} and records[2].scores == {}
    metrics, counts = b.aggregate(records)
    # only the two scored images enter: auth (1 + 0) / 2, aes (1 + 0) / 2, fid (1 + 1) / 2
    assert metrics["SPS"] == pytest.approx({"Authenticity": 50.0, "Aesthetics": 50.0, "Fidelity": 100.0})
    assert metrics["SPS_by_category"]["Direct"] == pytest.approx({"Authenticity": 50.0, "Aesthetics": 50.0,
                                                                  "Fidelity": 100.0})
    assert metrics["SPS_by_category"]["Reflect"] == {"Authenticity": None, "Aesthetics": None, "Fidelity": None}
    assert metrics["model_mean"]["All"] == pytest.approx({"Authenticity": (3 + 4.5) / 2, "Aesthetics": 4.5,
                                                          "Fidelity": 2.0})
    # answer distribution over the scored images only: 7 Yes, 2 No, 1 Cannot determine
    assert metrics["answer_distribution"] == pytest.approx({"Yes": 70.0, "No": 20.0, "Cannot determine": 10.0})
    assert counts["n"] == 2 and counts["n_images"] == 5 and counts["n_unparseable"] == 1 and counts["n_error"] == 2
    assert counts["n_with_gt"] == 2 and counts["per_category"] == {"Direct": 2, "Reflect": 0, "Refracted": 0}
    text = b.tables([RunResult(benchmark="gobench", model="m", metrics=metrics, counts=counts, complete=False)])
    assert "m [incomplete: 2 errors]" in text and "unparseable (excluded)" in text
    assert "2 request(s) failed in transport and are not scored" in text


def test_missing_human_dimension_gives_no_sps_for_it(tmp_path):
    gt = HumanGT(authenticity=2.0, aesthetics=None, fidelity=3.0)
    s = _rec(1, "direct_light_images", gt, tmp_path)
    b = GOBench()
    (r,) = b.score([s], b.expand([s]), {s.index: _ok(s.index, _reply(["Yes", "Yes", "No", "No", "No"], 4, 3))})
    assert r.scores["sps_authenticity"] == 1.0 and r.scores["sps_aesthetics"] is None and r.scores["sps_fidelity"] == 1.0
    metrics, counts = b.aggregate([r])
    assert metrics["SPS"] == {"Authenticity": 100.0, "Aesthetics": None, "Fidelity": 100.0}
    assert counts["n_with_gt"] == 1
