"""``lensbench reproduce groundingme`` on crafted runs in GroundingME's record shape (L-1 / L-2 categories, IoU
hits, best-of-N facts) and ``grounding-rej`` runs (positive / negative sets): Tab. 3 and "w/o Rejection"
cells against values and CIs computed here, Tab. 8 mAcc, Tab. 4 average vs the judge's pick, Tab. 6 / Fig. 5
thinking gain matched by label, Tab. 5 through grounding-rej with its ratio trend, and the claims."""

from __future__ import annotations

import numpy as np
import pytest
from reproduce_craft import B, cells_of, check_cell, check_family, claim, cluster_ci, expected_test, micro, rec, write

from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.reproduce import paper
from lensbench.core.resources import read_json
from lensbench.views.reproduce import reproduce

GM, REJ = "groundingme", "grounding-rej"
LAYOUT = [("Discriminative", l2, 15) for l2 in ("Appearance", "Component", "Text", "State")] + \
         [("Spatial", l2, 20) for l2 in ("Relationship", "Counting")] + \
         [("Limited", l2, 20) for l2 in ("Occlusion", "Small")] + \
         [("Rejection", l2, 10) for l2 in ("Appearance", "Component", "Text", "State")]


def _scores(rng, ok: bool, rejection: bool):
    if rejection:
        return {"iou": None, **{f"hit@{t:g}": int(ok) for t in (0.5, 0.75, 0.9)}}
    iou = float(rng.uniform(0.5, 1.0)) if ok else float(rng.uniform(0.0, 0.49))
    return {"iou": iou, **{f"hit@{t:g}": int(iou >= t) for t in (0.5, 0.75, 0.9)}}


def _records(seed: int, p: dict, bon: bool = False) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for l1, l2, n in LAYOUT:
        for k in range(n):
            ok = rng.random() < p.get(l1, p["*"])
            extra = {}
            if bon:
                hits = rng.random(16) < p.get(l1, p["*"]) * 0.8
                extra["bon"] = {"n": 16, "n_valid": 16, "mean_hit": float(hits.mean()), "oracle_hit": bool(hits.any()),
                                "selected_hit": ok}
            out.append(rec(GM, f"{l1}-{l2}-{k}", "correct" if ok else "wrong", scores=_scores(rng, ok, l1 == "Rejection"),
                           labels={"L-1": l1, "L-2": l2}, extra=extra))
    return out


def _rej_records(seed: int, p_pos: float, p_neg: float) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(80):
        neg = i % 2 == 1
        ok = rng.random() < (p_neg if neg else p_pos)
        out.append(rec(REJ, f"item{i}", "correct" if ok else "wrong", scores=_scores(rng, ok, neg),
                       labels={"L-1": "Rejection" if neg else "Positive",
                               "L-2": "RefCOCOg_rej_val" if neg else "RefCOCOg_val"}))
    return out


RATIOS = ("1:8", "1:4", "1:2", "1:1", "2:1")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("gm-repro")
    opts = GroundingME.Options().model_dump(mode="json")
    write(root / "q8", GM, "Qwen3-VL-8B", _records(1, {"*": 0.35, "Rejection": 0.0}), opts)
    write(root / "q8t", GM, "Qwen3-VL-8B-Thinking", _records(2, {"*": 0.4, "Rejection": 0.7}), opts)
    write(root / "bon", GM, "Qwen3-VL-235B-A22B-Thinking", _records(3, {"*": 0.6}, bon=True),
          {**opts, "best_of": 16, "bon_judge": "text-full-responses"}, judge="openai:deepseek-r1")
    write(root / "rej0", REJ, "Qwen/Qwen3-VL-8B-Instruct", _rej_records(4, 0.9, 0.3), opts)
    for i, r in enumerate(RATIOS):
        write(root / f"rej{i + 1}", REJ, f"ckpt-{r}", _rej_records(5 + i, 0.9 - 0.04 * i, 0.5 + 0.1 * i), opts)
    return root


@pytest.fixture(scope="module")
def rep(runs):
    dirs = [runs / x for x in ("q8", "q8t", "bon", "rej0", *(f"rej{i + 1}" for i in range(5)))]
    match = [f"{runs / 'q8t'}=Qwen3-VL-8B (thinking)", f"{runs / 'bon'}=Text-only: Deepseek-R1",
             f"{runs / 'bon'}=Qwen3-VL-235B-A22B-Thinking"] + [f"{runs / f'rej{i + 1}'}={r}" for i, r in enumerate(RATIOS)]
    return reproduce(paper(), dirs, match, n_resamples=B, seed=5)


def _load(path):
    from lensbench.views.runs import read_run

    return read_run(path).records


def _items(recs, keep):
    return [(r.sample_id, f"{r.labels['L-1']}/{r.labels['L-2']}", float(r.outcome == "correct"), 1.0) for r in recs
            if keep(r)]


def test_table3_and_without_rejection(rep, runs):
    recs = _load(runs / "q8")
    cells = {c.column: c for c in cells_of(rep, "Tab. 3") if "(q8)" in c.row}
    assert len(cells) == 17 and {c.paper_row for c in cells.values()} == {"Qwen3-VL-8B"}
    for col, keep in (("Total", lambda r: True), ("Spatial", lambda r: r.labels["L-1"] == "Spatial"),
                      ("Limited/Small", lambda r: r.labels["L-2"] == "Small")):
        items = _items(recs, keep)
        val, lo, hi = cluster_ci(items, micro(sorted({i[1] for i in items})), seed=5)
        assert (cells[col].value, cells[col].low, cells[col].high) == (pytest.approx(val), pytest.approx(lo),
                                                                        pytest.approx(hi))
        check_cell(cells[col], expected_test(items, micro(sorted({i[1] for i in items})), cells[col].published,
                                             pooled=True))
    assert check_family(cells_of(rep, "Tab. 3")) > 0
    wo = next(c for c in cells_of(rep, "Tab. 3 (w/o Rejection)") if "(q8)" in c.row)
    items = _items(recs, lambda r: r.labels["L-1"] != "Rejection")
    assert wo.value == pytest.approx(cluster_ci(items, micro(sorted({i[1] for i in items})), b=5)[0])
    macc = next(c for c in cells_of(rep, "Tab. 8") if "(q8)" in c.row and c.column == "Total/mAcc")
    th = [round(0.5 + 0.05 * i, 2) for i in range(10)]
    want = np.mean([np.mean([(r.scores["iou"] >= t) if r.scores["iou"] is not None else r.outcome == "correct"
                             for t in th]) for r in recs]) * 100
    assert macc.value == pytest.approx(want)


def test_thinking_rows_and_gain(rep, runs):
    t6 = {c.column: c for c in cells_of(rep, "Tab. 6") if "(q8t)" in c.row}
    assert {c.paper_row for c in t6.values()} == {"Qwen3-VL-8B (thinking)"}
    assert not [c for c in cells_of(rep, "Tab. 3") if "(q8t)" in c.row and c.paper_row]  # never the no-thinking row
    t3 = {r["model"]: r["values"] for r in read_json("lensbench.benchmarks.groundingme", "paper", "table3.json")["rows"]}
    gain = {c.column: c for c in cells_of(rep, "Fig. 5")}
    a, b = _load(runs / "q8t"), _load(runs / "q8")
    for col in ("Total", "Rejection"):
        keep = (lambda r: True) if col == "Total" else (lambda r: r.labels["L-1"] == col)
        ia, ib = _items(a, keep), _items(b, keep)
        want = cluster_ci(ia, micro(sorted({i[1] for i in ia})), b=5)[0] - cluster_ci(ib, micro(sorted({i[1] for i in ib})), b=5)[0]
        assert gain[col].value == pytest.approx(want)
        assert gain[col].published == pytest.approx(t6[col].published - t3["Qwen3-VL-8B"][col])
    c2 = claim(rep, "C2")  # rejection learned by thinking: 0% without, 70% with
    assert len(c2.tests) == 1 and c2.tests[0].estimate > 0 and c2.tests[0].verdict == "supported"


def test_best_of_n_average_and_pick(rep, runs):
    recs = _load(runs / "bon")
    avg = next(c for c in cells_of(rep, "Tab. 4") if c.column == "Total" and "(bon)" in c.row)
    assert avg.paper_row == "Average" and avg.value == pytest.approx(100 * np.mean([r.extra["bon"]["mean_hit"]
                                                                                    for r in recs]))
    pick = next(c for c in cells_of(rep, "Tab. 4 (judge)") if c.column == "Total" and "(bon)" in c.row)
    assert pick.paper_row == "Text-only: Deepseek-R1"
    assert pick.value == pytest.approx(100 * np.mean([r.outcome == "correct" for r in recs]))
    c3 = claim(rep, "C3")
    assert len(c3.tests) == 1 and c3.tests[0].estimate == pytest.approx(pick.value - avg.value)


def test_table5_through_grounding_rej_and_its_trend(rep, runs):
    from scipy.stats import page_trend_test

    cells = {(c.row.split("(")[-1].split(")")[0], c.column): c for c in cells_of(rep, "Tab. 5")}
    t5 = read_json("lensbench.benchmarks.groundingme", "paper", "table5.json")
    recs = _load(runs / "rej0")
    pos = 100 * np.mean([r.outcome == "correct" for r in recs if r.labels["L-1"] == "Positive"])
    neg = 100 * np.mean([r.outcome == "correct" for r in recs if r.labels["L-1"] == "Rejection"])
    origin = cells[("rej0", "Macro_Average")]
    assert origin.paper_row == "Origin" and origin.value == pytest.approx((pos + neg) / 2)
    assert origin.published == t5["rows"]["Macro_Average"][0]
    assert cells[("rej3", "RefCOCOg_rej_val")].paper_row == "1:2"
    c7 = claim(rep, "C7")
    assert len(c7.tests) == 2
    per = [[float(r.outcome == "correct") * 100 for r in _load(runs / f"rej{i + 1}") if r.labels["L-1"] == "Rejection"]
           for i in range(5)]
    ref = page_trend_test(np.array(per).T, method="asymptotic")
    assert c7.tests[0].estimate == pytest.approx(ref.statistic) and c7.tests[0].p == pytest.approx(ref.pvalue)
    assert "Fig. 6" in " ".join(rep.needs) or any(s.id == "Fig. 6" for s in rep.sections)


def test_zero_rejections_of_201_is_not_a_difference_from_half_a_percent(tmp_path):
    """Issue 29: a run rejecting none of 201 Rejection samples against Qwen2.5-VL-7B's published 0.5% (1 of
    201) was "differs" (its bootstrap CI is [0, 0]); the exact test of 0/201 vs 1/201 holds no difference."""
    from scipy import stats as st

    rng = np.random.default_rng(8)
    layout = [(l1, l2, n) for l1, l2, n in LAYOUT if l1 != "Rejection"]
    layout += [("Rejection", l2, n) for l2, n in (("Appearance", 51), ("Component", 50), ("Text", 50), ("State", 50))]
    recs = [rec(GM, f"{l1}-{l2}-{k}", "correct" if ok else "wrong", scores=_scores(rng, ok, l1 == "Rejection"),
                labels={"L-1": l1, "L-2": l2})
            for l1, l2, n in layout for k in range(n) for ok in [l1 != "Rejection" and rng.random() < 0.15]]
    run = write(tmp_path / "q25", GM, "Qwen2.5-VL-7B", recs, GroundingME.Options().model_dump(mode="json"))
    rep = reproduce(paper(), [run], n_resamples=B, seed=5)
    cell = next(c for c in cells_of(rep, "Tab. 3") if c.column == "Rejection")
    assert (cell.value, cell.low, cell.high, cell.published) == (0.0, 0.0, 0.0, 0.5)  # a zero-width bootstrap CI
    assert cell.p == pytest.approx(st.boschloo_exact([[0, 201], [1, 200]]).pvalue) and "Boschloo" in cell.method
    assert cell.d_low < 0 < cell.d_high and cell.verdict == "inconclusive"
    items = [(r.sample_id, r.labels["L-2"], float(r.outcome == "correct"), 1.0) for r in recs
             if r.labels["L-1"] == "Rejection"]
    check_cell(cell, expected_test(items, micro(["Appearance", "Component", "Text", "State"]), 0.5, pooled=True))
    check_family(cells_of(rep, "Tab. 3"))
