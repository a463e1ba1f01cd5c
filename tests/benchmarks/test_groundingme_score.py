"""GroundingME strict scoring: the reply parser, per-sample records, metrics (Table 3 / 8), IoU
thresholds at their boundaries, sample-weighted means, transport errors and the request layout.
Expected figures are computed here from the boxes, not by the scorer."""

from __future__ import annotations

import json

import pytest

from groundingme_fixture import by_id, ctx, fixture_dir, run, scripted_model  # noqa: F401
from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.data import load_groundingme
from lensbench.benchmarks.groundingme.parse import parse_bbox_reply, parse_judge_verdict
from lensbench.benchmarks.groundingme.prompts import build_prompt
from lensbench.core.records import SampleRecord
from lensbench.core.types import ImagePart, TextPart


@pytest.mark.parametrize("reply,kind,box", [
    ('{"bbox_2d": [10, 20, 30, 40]}', "box", (10, 20, 30, 40)),
    ('```json\n{"bbox_2d": [10.5, 20, 30, 40]}\n```', "box", (10.5, 20, 30, 40)),
    ("<think>maybe {\"bbox_2d\": [1, 1, 2, 2]}</think>\nAnswer: {'bbox_2d': [5, 6, 7, 8]}", "box", (5, 6, 7, 8)),
    ('The object is not there. {"bbox_2d": null}', "null", None),
    ("{'bbox_2d': None}", "null", None),
    ("bbox_2d: [1, 2, 3, 4]", "box", (1, 2, 3, 4)),
    ('[{"bbox_2d": [[1, 2, 3, 4]], "label": "cup"}]', "box", (1, 2, 3, 4)),
    ('{"bbox_2d": ["1", "2", "3", "4"]}', "box", (1, 2, 3, 4)),
    ('first {"bbox_2d": [1, 2, 3, 4]} then {"bbox_2d": [5, 6, 7, 8]}', "box", (5, 6, 7, 8)),
    ("The box is 10, 20, 30, 40.", "unparseable", None),
    ('{"bbox_2d": [x1, y1, x2, y2]}', "unparseable", None),
    ('{"bbox_2d": [1, 2, 3]}', "unparseable", None),
    ("<think>{\"bbox_2d\": [1, 2, 3, 4]}", "unparseable", None),  # truncated reasoning: nothing left
    ("", "unparseable", None),
    (None, "unparseable", None),
])
def test_parse_bbox_reply(reply, kind, box):
    p = parse_bbox_reply(reply)
    assert p.kind == kind
    assert p.box == (tuple(float(v) for v in box) if box else None)


def test_judge_verdict():
    assert parse_judge_verdict("\\boxed{A}") == "A"
    assert parse_judge_verdict("<think>\\boxed{A}</think> so \\boxed{B}") == "B"
    assert parse_judge_verdict("\\boxed{\\text{B}}") == "B"
    assert parse_judge_verdict("Response A is better") is None


@pytest.mark.parametrize("fmt,max_pixels", [("abs", None), ("abs", 1_000_000), ("rel1000", 1_000_000),
                                            ("yxyx1000", None)])
def test_evaluate_and_aggregate(fixture_dir, tmp_path, fmt, max_pixels):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    plan = {"gm-0": "exact", "gm-1": "shift", "gm-2": "null", "gm-3": "garbage", "gm-4": "exact", "gm-5": "exact"}
    bench = GroundingME(GroundingME.Options(bbox_format=fmt, max_pixels=max_pixels))
    recs = run(bench, samples, ctx(tmp_path, scripted_model(plan, fmt)))
    assert all(isinstance(r, SampleRecord) and r.benchmark == "groundingme" for r in recs)
    by = by_id(recs)
    assert by["gm-0"].outcome == "correct" and by["gm-0"].scores["iou"] > 0.97
    assert by["gm-0"].target == [180.0, 50.0, 330.0, 230.0] and by["gm-0"].labels == {"L-1": "Discriminative",
                                                                                      "L-2": "Appearance"}
    assert by["gm-1"].scores["iou"] == pytest.approx(2 / 3, abs=0.02)
    assert by["gm-2"].extra["parse"] == "rejected" and by["gm-2"].answer is None and by["gm-2"].outcome == "wrong"
    assert by["gm-3"].outcome == "unparseable" and by["gm-3"].answer is None
    assert by["gm-4"].outcome == "wrong" and by["gm-4"].target is None  # a box on a Rejection item
    assert by["gm-5"].scores["iou"] > 0.97  # 8K-style item: downscaled or not, mapped back to original pixels
    if max_pixels:
        sent = by["gm-5"].extra["sent_size"]
        assert sent[0] * sent[1] <= max_pixels and sent != [3000, 2000]
    m, c = bench.aggregate(recs)
    # hits at 0.5: gm-0, gm-1, gm-5 of 6 items
    assert m["Acc@0.5"]["Total"] == pytest.approx(300 / 6)
    assert m["Acc@0.5"]["Discriminative"] == 100.0
    assert m["Acc@0.5"]["Discriminative/State"] == 100.0
    assert m["Acc@0.5"]["Spatial"] == 0.0 and m["Acc@0.5"]["Rejection"] == 0.0
    assert m["Acc@0.5"]["Limited"] == 50.0 and m["Acc@0.5"]["Limited/Small"] == 0.0
    # Acc@0.75 / 0.9: the shifted box (IoU 2/3) drops out
    assert m["Acc@0.75"]["Discriminative"] == 50.0 and m["Acc@0.9"]["Total"] == pytest.approx(200 / 6)
    # mAcc Discriminative: exact box hits 10/10 thresholds, IoU 2/3 hits 0.50..0.65 = 4/10 -> (100 + 40) / 2
    assert m["mAcc"]["Discriminative"] == pytest.approx(70.0)
    assert m["mAcc"]["Total"] == pytest.approx((10 + 4 + 10) / 60 * 100)
    assert m["Rejection rate"]["Positives"] == pytest.approx(100 / 5)
    assert m["Rejection rate"]["Rejection"] == 0.0
    assert c["n"] == 6 and c["n_unparseable"] == 1 and c["n_error"] == 0


def _exact_plan_texts():
    """Boxes (original pixels; no downscaling) whose IoU with the ground truth is exactly 1, 0.5,
    0.75, 0.9 and just under 0.5, plus a correct rejection."""
    return {
        "gm-0": [180, 50, 330, 230],     # = GT: IoU 1
        "gm-1": [20, 300, 200, 400],     # GT [20,300,200,500]: 180*100 / (180*200) = 0.5
        "gm-2": [140, 20, 330, 215],     # GT [140,20,330,280]: 190*195 / (190*260) = 0.75
        "gm-3": [100, 20, 500, 344],     # GT [100,20,500,380]: 400*324 / (400*360) = 0.9
        "gm-5": [500, 100, 2500, 999],   # GT [500,100,2500,1900]: 2000*899 / (2000*1800) = 899/1800 < 0.5
    }


def test_threshold_boundaries_and_miou(fixture_dir, tmp_path):  # noqa: F811
    """The official scorers and Appendix A.2 count IoU >= t: an IoU of exactly 0.5 / 0.75 / 0.9 is
    a hit at that threshold (inclusive)."""
    samples = load_groundingme(fixture_dir / "hf")
    boxes = _exact_plan_texts()
    texts = {sid: json.dumps({"bbox_2d": b}) for sid, b in boxes.items()} | {"gm-4": '{"bbox_2d": null}'}
    bench = GroundingME()
    recs = run(bench, samples, ctx(tmp_path, scripted_model({s.id: "text" for s in samples}, "abs", texts)))
    by = by_id(recs)
    ious = {"gm-0": 1.0, "gm-1": 0.5, "gm-2": 0.75, "gm-3": 0.9, "gm-5": 899 / 1800}
    for sid, v in ious.items():
        assert by[sid].scores["iou"] == pytest.approx(v, rel=1e-12)
    assert by["gm-1"].scores["hit@0.5"] == 1 and by["gm-1"].scores["hit@0.75"] == 0
    assert by["gm-2"].scores["hit@0.75"] == 1 and by["gm-2"].scores["hit@0.9"] == 0
    assert by["gm-3"].scores["hit@0.9"] == 1
    assert by["gm-5"].scores["hit@0.5"] == 0 and by["gm-5"].outcome == "wrong"
    assert by["gm-4"].scores == {"iou": None, "hit@0.5": 1, "hit@0.75": 1, "hit@0.9": 1}
    m, c = bench.aggregate(recs)
    assert m["Acc@0.5"]["Total"] == pytest.approx(100 * 5 / 6)      # gm-0..3 + the rejection
    assert m["Acc@0.75"]["Total"] == pytest.approx(100 * 4 / 6)     # gm-0, gm-2, gm-3, gm-4
    assert m["Acc@0.9"]["Total"] == pytest.approx(100 * 3 / 6)      # gm-0, gm-3, gm-4
    # thresholds 0.50:0.05:0.95 met: IoU 1 -> 10, 0.5 -> 1, 0.75 -> 6, 0.9 -> 9, 0.4994 -> 0, rejection -> 10
    assert m["mAcc"]["Total"] == pytest.approx(100 * (10 + 1 + 6 + 9 + 0 + 10) / 60)
    assert m["mAcc"]["Limited"] == pytest.approx(100 * (9 + 0) / 20)
    # mIoU over positives only (Rejection items have no IoU)
    assert m["mIoU"]["Positives"] == pytest.approx(100 * (1 + 0.5 + 0.75 + 0.9 + 899 / 1800) / 5)
    assert m["mIoU"]["Discriminative"] == pytest.approx(75.0)
    assert m["mIoU"]["Limited"] == pytest.approx(100 * (0.9 + 899 / 1800) / 2)
    assert c["n_unparseable"] == 0 and c["n_rejected"] == 1


def _rec(sid, l1, l2, hit, iou=None):
    return SampleRecord(benchmark="groundingme", sample_id=sid, outcome="correct" if hit else "wrong",
                        labels={"L-1": l1, "L-2": l2},
                        scores={"iou": iou, "hit@0.5": int(hit), "hit@0.75": int(hit), "hit@0.9": int(hit)},
                        extra={"rejected": l1 == "Rejection" and hit})


def test_l1_and_total_are_sample_weighted():
    """Unequal L-2 groups: L-1 = hits / items of the L-1 (not the mean of its L-2 means), Total =
    hits / all items (not the mean of the L-1 means)."""
    recs = [_rec(f"a{i}", "Discriminative", "Appearance", True, 0.8) for i in range(3)]
    recs += [_rec("t0", "Discriminative", "Text", False, 0.1)]
    recs += [_rec(f"r{i}", "Rejection", "State", i == 0) for i in range(2)]
    m, c = GroundingME().aggregate(recs)
    assert m["Acc@0.5"]["Discriminative/Appearance"] == 100.0 and m["Acc@0.5"]["Discriminative/Text"] == 0.0
    assert m["Acc@0.5"]["Discriminative"] == pytest.approx(75.0)           # 3 / 4, not (100 + 0) / 2
    assert m["Acc@0.5"]["Rejection"] == pytest.approx(50.0)
    assert m["Acc@0.5"]["Total"] == pytest.approx(100 * 4 / 6)             # not (75 + 50) / 2
    assert m["mIoU"]["Discriminative"] == pytest.approx(100 * (0.8 * 3 + 0.1) / 4)
    assert c["n"] == 6 and c["n_Discriminative"] == 4 and c["n_Rejection"] == 2


def test_transport_errors_are_left_out(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    plan = {s.id: "exact" for s in samples} | {"gm-3": "error", "gm-1": "shift", "gm-4": "null"}
    bench = GroundingME()
    recs = run(bench, samples, ctx(tmp_path, scripted_model(plan, "abs")))
    err = by_id(recs)["gm-3"]
    assert err.outcome == "error" and err.error == "HTTP 500" and err.scores == {} and err.answer is None
    m, c = bench.aggregate(recs)
    assert c["n_error"] == 1 and c["n"] == 5 and c["n_Limited"] == 1
    # Limited has gm-3 (error) and gm-5 (exact): the error is in no denominator
    assert m["Acc@0.5"]["Limited"] == 100.0 and m["Acc@0.5"]["Limited/Small"] is None
    assert m["Acc@0.5"]["Total"] == 100.0 and m["Acc@0.75"]["Total"] == pytest.approx(100 * 4 / 5)
    assert m["Acc@0.5"]["Rejection"] == 100.0 and m["Rejection rate"]["Rejection"] == 100.0
    assert m["mIoU"]["Limited"] == pytest.approx(by_id(recs)["gm-5"].scores["iou"] * 100)
    assert m["Unparseable rate"]["Total"] == 0.0


def test_image_first_and_prompt_bytes(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")[:2]
    sent = []

    def spy(reqs):
        sent.extend(reqs)
        return scripted_model({s.id: "exact" for s in samples}, "abs")(reqs)

    recs = run(GroundingME(), samples, ctx(tmp_path, spy))
    for rq, s in zip(sent, samples):
        assert len(rq.messages) == 1 and rq.messages[0].role == "user"
        parts = rq.messages[0].parts
        assert isinstance(parts[0], ImagePart) and isinstance(parts[1], TextPart) and len(parts) == 2
        assert parts[1].text.encode() == build_prompt(f"the object of {s.id}").encode()
        assert rq.params.temperature == 0.0 and rq.params.max_tokens == 20480
    logged = recs[0].messages[0]["content"]
    assert [p["type"] for p in logged] == ["image", "text"]
    assert logged[1]["text"].startswith("All spatial relationships") and "describes:\nthe object of gm-0\n" in logged[1]["text"]
