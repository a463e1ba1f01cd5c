"""``lensbench reproduce gobench`` on crafted runs in GOBench's record shape (999 critiques with the people's
scores and per-question majority answers): Tab. 3 SPS cells against values and CIs computed here, Tab. 1
recomputed from the ground truth (deterministic verdict, not comparable on part of the images), the Fig. 5
answers view, the blind baseline's SPS rule, and the claims."""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_craft import B, cells_of, check_cell, check_family, claim, cluster_ci, expected_test, macro, rec, write

from lensbench.benchmarks.gobench.benchmark import GOBench
from lensbench.benchmarks.gobench.reproduce import paper
from lensbench.scoring.metrics import correlation

from lensbench.views.reproduce import reproduce

NAME = "gobench"
ANS = ("Yes", "No", "Cannot determine")
DIMS = ("authenticity", "aesthetics", "fidelity")


def _human(n: int):
    rng = np.random.default_rng(0)
    return [{"authenticity": float(rng.integers(0, 11)) / 2, "aesthetics": float(rng.integers(1, 6)),
             "fidelity": float(rng.integers(1, 6)), "majority": [ANS[int(x)] for x in rng.integers(0, 3, 5)],
             "n_raters": 3} for _ in range(n)]


def _records(seed: int, close: float, n: int = 999) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for i, gt in enumerate(_human(n)):
        answers = [h if rng.random() < close else ANS[(ANS.index(h) + 1) % 3] for h in gt["majority"]]
        model = {d: gt[d] + (0.0 if rng.random() < close else 1.0) for d in DIMS}
        scores = {**model, **{f"sps_{d}": max(0.0, 1 - abs(model[d] - gt[d]) / 0.5) for d in DIMS}}
        out.append(rec(NAME, str(i + 1), "scored", target=gt, scores=scores, answer={"answers": answers, **model},
                       labels={"category": "direct_light_images", "scenario": str(i // 3), "variant": str(i % 3 + 1),
                               "image": f"direct_light_images/{i // 3}.{i % 3 + 1}.png"},
                       extra={"q_agree": [a == h for a, h in zip(answers, gt["majority"])]}))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("go-repro")
    opts = GOBench.Options().model_dump(mode="json")
    gt = {"n_with_gt": 999}
    write(root / "gpt", NAME, "gpt-4o", _records(1, 0.33), opts, counts=gt)
    write(root / "gem", NAME, "gemini-2.5-pro", _records(2, 0.6), opts, counts=gt)
    write(root / "part", NAME, "other", _records(3, 0.5, 46), opts, counts={"n_with_gt": 46})
    write(root / "blind", NAME, "gpt-4o", _records(4, 0.2), {**opts, "blind": True}, counts=gt)
    write(root / "nogt", NAME, "x", _records(5, 0.5, 10), opts, counts={"n_with_gt": 0})
    return root


@pytest.fixture(scope="module")
def rep(runs):
    return reproduce(paper(), [runs / x for x in ("gpt", "gem", "part", "blind", "nogt")],
                     [f"{runs / 'gpt'}=GPT4o (latest)", f"{runs / 'gem'}=Gemini-2.5Pro (0506)"], n_resamples=B, seed=4)


def _load(path):
    from lensbench.views.runs import read_run

    return read_run(path).records


def test_table3_cells(rep, runs):
    recs = _load(runs / "gpt")
    cells = {c.column: c for c in cells_of(rep, "Tab. 3") if "(gpt)" in c.row}
    for title, d in (("Authenticity", "authenticity"), ("Fidelity", "fidelity")):
        items = [(r.labels["image"], title, r.scores[f"sps_{d}"], 1.0) for r in recs]
        val, lo, hi = cluster_ci(items, macro([title]), seed=4)
        c = cells[title]
        assert (c.value, c.low, c.high) == (pytest.approx(val), pytest.approx(lo), pytest.approx(hi))
        assert c.paper_row == "GPT4o (latest)"
        check_cell(c, expected_test(items, macro([title]), c.published))
    assert check_family(cells_of(rep, "Tab. 3")) > 0
    nogt = [c for c in cells_of(rep, "Tab. 3") if "(nogt)" in c.row]
    assert all("no human ground truth" in c.reason for c in nogt)


def test_table1_from_the_ground_truth(rep):
    cells = cells_of(rep, "Tab. 1")
    gt = _human(999)
    want = correlation([g["aesthetics"] for g in gt], [g["authenticity"] for g in gt])
    full = [c for c in cells if "(gpt)" in c.row and c.column.startswith("Aesthetics vs Authenticity")]
    assert {c.column.rsplit(" ", 1)[1]: c.value for c in full} == {"PLCC": pytest.approx(want["PLCC"]),
                                                                   "SRCC": pytest.approx(want["SRCC"])}
    assert all(c.verdict == ("consistent" if abs(c.value - c.published) <= 5e-5 else "differs") for c in full)
    part = [c for c in cells if "(part)" in c.row]
    assert part and all(c.verdict == "not comparable" and "46 of the 999" in c.reason for c in part)


def test_fig5_answers_view(rep, runs):
    sec = next(s for s in rep.sections if s.id == "Fig. 5")
    assert sec.columns[:3] == ["image", "question", "human"] and len(sec.rows) == 15
    recs = {x: {r.sample_id: r for r in _load(runs / x)} for x in ("gpt", "gem", "part", "blind", "nogt")}
    for row in sec.rows:
        assert row[-1] == sum(a == row[2] for a in row[3:-1])
    gpt = [x for r in recs["gpt"].values() for x in r.extra["q_agree"]]
    assert any(n.startswith("gpt-4o (gpt): agrees with the human answer on " f"{sum(gpt)} of {len(gpt)}")
               for n in sec.notes)


def test_blind_flags_and_claims(rep, runs):
    flags = [f for f in rep.flags if f["baseline"] == "blind"]
    assert len(flags) == 999 and sum(f["answerable"] for f in flags) == sum(
        r.scores["sps_authenticity"] > 0 for r in _load(runs / "blind"))
    c2 = claim(rep, "C2")  # the run matched to Gemini-2.5Pro (0506) against the one matched to GPT4o (latest)
    assert len(c2.tests) == 1 and c2.tests[0].estimate > 0
    assert len(claim(rep, "C1").tests) == 4  # every run with the paper's settings (the blind one left out)
