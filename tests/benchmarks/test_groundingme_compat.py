"""GroundingME ``--official-compat``: the release's evaluate.py rule and lmms-eval's task rule
(``--compat-rule lmms-eval``: also MiMo / Qwen resized-pixel readings, width/height unpacked as
written there), the compat parse's rejections / unparseable counts, the all-sample IoU and
Center_ACC. Every expected figure is computed in this file from the boxes (own IoU, readings
written out by hand), never by the scorer under test."""

from __future__ import annotations

import json

import pytest

from groundingme_fixture import by_id, ctx, fixture_dir, run, scripted_model  # noqa: F401
from lensbench.benchmarks.base import RunResult
from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.compat import official_parse, smart_resize_mimo
from lensbench.benchmarks.groundingme.data import load_groundingme

# fixture sizes (w, h): gm-0/1 astronaut 512x512, gm-2 chelsea 451x300, gm-3 coffee 600x400, gm-4 rocket 427x640,
# gm-5 coffee resized to 3000x2000
GT = {"gm-0": [180, 50, 330, 230], "gm-1": [20, 300, 200, 500], "gm-2": [140, 20, 330, 280],
      "gm-3": [100, 20, 500, 380], "gm-5": [500, 100, 2500, 1900]}


def _iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _inside(gt, box):
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return gt[0] <= cx <= gt[2] and gt[1] <= cy <= gt[3]


def _bench(rule=None):
    o = GroundingME.Options(official_compat=rule is not None, **({"compat_rule": rule} if rule else {}))
    return GroundingME(o)


def test_official_parse_semantics():
    assert official_parse('{"bbox_2d": null}').box == [0, 0, 0, 0]
    assert official_parse('{"bbox_2d": null}').method == "json-null"
    assert official_parse("it is at 1, 2, 3, 4 or 5 6 7 8").box == [5, 6, 7, 8]
    assert official_parse("it is at 1, 2, 3, 4 or 5 6 7 8").method == "numbers"
    # single quotes are not JSON: the fallback takes the last four numbers
    assert official_parse("{'bbox_2d': [1, 2, 3, 4]}") == official_parse("1 2 3 4")
    # the greedy span breaks on a second object: numbers again (the last four of the reply)
    assert official_parse('{"bbox_2d": [1, 2, 3, 4]} {"x": [9, 9, 9, 9]}').box == [9, 9, 9, 9]
    assert official_parse("no idea").method == "none" and official_parse(None).box == [0, 0, 0, 0]


def test_mimo_resize_as_written():
    # 20x100 (h x w): the short side becomes 28, the long one keeps 100; 28*112 = 3136 < 6272 ->
    # beta = sqrt(6272 / (28*100)) = 1.4967; ceil(1.4967) * 28 = 56, ceil(5.345) * 28 = 168
    assert smart_resize_mimo(20, 100) == (56, 168)
    # 2000x3000 over 28*28*4096 = 3,211,264: beta = 1.36690; floor(52.26)=52 -> 1456, floor(78.38)=78 -> 2184
    assert smart_resize_mimo(2000, 3000) == (1456, 2184)
    with pytest.raises(ValueError):
        smart_resize_mimo(5, 8)


def test_evaluate_rule_constants_and_compat_counts(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    texts = {
        "gm-0": json.dumps({"bbox_2d": [180 / 512, 50 / 512, 330 / 512, 230 / 512]}),  # all <= 1: times w/h
        "gm-1": '{"bbox_2d": [0, 0, 1, 1]}',                                         # <= 1 incl. 1: full image
        "gm-2": '{"bbox_2d": [0, 0, 999, 999]}',                                     # /999: full image
        "gm-3": "The box is 100, 20, 500, 380",                                      # bare numbers: raw pixels
        "gm-4": "I cannot tell.",                                                    # nothing: [0,0,0,0]
        "gm-5": '{"bbox_2d": null}',                                                 # false rejection
    }
    bench = _bench("evaluate")
    recs = run(bench, samples, ctx(tmp_path, scripted_model({s.id: "text" for s in samples}, "abs", texts)))
    by = by_id(recs)
    want = {"gm-0": 1.0, "gm-1": 180 * 200 / (512 * 512), "gm-2": 190 * 260 / (451 * 300), "gm-3": 1.0,
            "gm-4": 1.0, "gm-5": 0.0}
    for sid, v in want.items():
        assert by[sid].scores["iou"] == pytest.approx(v, rel=1e-12), sid
    # a /1000 divisor would give 190*260 / (450.549 * 299.7): distinguishable at this tolerance
    assert 190 * 260 / (451 * 0.999 * 300 * 0.999) != pytest.approx(by["gm-2"].scores["iou"], rel=1e-6)
    assert by["gm-1"].extra["compat_reading"] == "normalized" and by["gm-3"].extra["compat_reading"] == "raw"
    assert by["gm-3"].outcome == "correct" and by["gm-3"].extra["parse"] == "unparseable"  # strict parse: nothing
    assert by["gm-4"].outcome == "unparseable" and by["gm-4"].scores["hit@0.5"] == 1      # official: a rejection
    m, c = bench.aggregate(recs)
    assert m["Acc@0.5"]["Total"] == pytest.approx(100 * 3 / 6)  # gm-0, gm-3, gm-4
    assert m["Acc@0.5"]["Rejection"] == 100.0
    assert m["Official IoU"]["Total"] == pytest.approx(100 * sum(want.values()) / 6)
    assert m["Official IoU"]["Rejection"] == 100.0
    # centres of the chosen readings: gm-0 GT, gm-1 (256, 256) outside [20,300,200,500], gm-2 (225.5, 150) inside,
    # gm-3 GT, gm-4 (0, 0) in [0,0,0,0], gm-5 (0, 0) outside
    assert m["Center_ACC"]["Total"] == pytest.approx(100 * 4 / 6)
    # rejections and unparseable from the compat parse: gm-4 (nothing read) and gm-5 (null) are [0,0,0,0]
    assert m["Rejection rate"] == {"Positives": pytest.approx(100 / 5), "Rejection": 100.0}
    assert m["Unparseable rate"]["Total"] == pytest.approx(100 / 6)
    assert c["n_unparseable"] == 1 and c["n_rejected"] == 2 and c["scoring"] == "official-compat"


def _lmms_texts():
    # gm-2 (451x300): as written, x / qwen_width * w with qwen_width = resized HEIGHT (308), y / 448 * h
    # (smart_resize(300, 451) = (308, 448): round(10.71)=11 -> 308, round(16.11)=16 -> 448; MiMo gives the same)
    g2 = [140 * 308 / 451, 20 * 448 / 300, 330 * 308 / 451, 280 * 448 / 300]
    # gm-5 (3000x2000): MiMo (1456, 2184), Qwen (1988, 2996): reply in MiMo's swapped frame
    g5 = [500 * 1456 / 3000, 100 * 2184 / 2000, 2500 * 1456 / 3000, 1900 * 2184 / 2000]
    g3 = [100 / 600 * 999, 20 / 400 * 999, 500 / 600 * 999, 380 / 400 * 999]  # /999 reading = GT
    return {"gm-0": '{"bbox_2d": [240, 120, 260, 140]}', "gm-1": '{"bbox_2d": null}',
            "gm-2": json.dumps({"bbox_2d": g2}), "gm-3": json.dumps({"bbox_2d": g3}),
            "gm-4": '{"bbox_2d": [10, 10, 50, 50]}', "gm-5": json.dumps({"bbox_2d": g5})}, g2, g5


def test_lmms_eval_rule(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    texts, g2, g5 = _lmms_texts()
    plan = {s.id: "text" for s in samples}
    lm = _bench("lmms-eval")
    ev = _bench("evaluate")
    rl = by_id(run(lm, samples, ctx(tmp_path / "l", scripted_model(plan, "abs", texts))))
    re_ = by_id(run(ev, samples, ctx(tmp_path / "e", scripted_model(plan, "abs", texts))))
    # lmms-eval finds the resized-pixel readings
    assert rl["gm-2"].scores["iou"] == pytest.approx(1.0, abs=1e-9) and rl["gm-2"].extra["compat_reading"] == "mimo"
    assert rl["gm-5"].scores["iou"] == pytest.approx(1.0, abs=1e-9) and rl["gm-5"].extra["compat_reading"] == "mimo"
    assert rl["gm-3"].scores["iou"] == pytest.approx(1.0, abs=1e-9) and rl["gm-3"].extra["compat_reading"] == "normalized"
    # the evaluate rule has only raw and /999: best of the two, computed here
    w2 = max(_iou(GT["gm-2"], g2), _iou(GT["gm-2"], [v / 999 * s for v, s in zip(g2, (451, 300, 451, 300))]))
    w5 = max(_iou(GT["gm-5"], g5), _iou(GT["gm-5"], [v / 999 * s for v, s in zip(g5, (3000, 2000, 3000, 2000))]))
    assert re_["gm-2"].scores["iou"] == pytest.approx(w2, rel=1e-12) and w2 < 0.5
    assert re_["gm-5"].scores["iou"] == pytest.approx(w5, rel=1e-12) and w5 < 0.5
    # the unswapped (w, h) reading would not recover the box for gm-2
    assert _iou(GT["gm-2"], [g2[0] / 448 * 451, g2[1] / 308 * 300, g2[2] / 448 * 451, g2[3] / 308 * 300]) < 0.9
    # gm-0 (512x512): a 20-px box at the centre. Readings: raw (IoU 400 / 27000), MiMo = Qwen = x * 512/504
    # (round(18.29) = 18 -> 504): 20*512/504 squared / 27000 -> the larger, chosen; centre inside -> Center hit
    mimo0 = [v * 512 / 504 for v in (240, 120, 260, 140)]
    assert rl["gm-0"].scores["iou"] == pytest.approx(_iou(GT["gm-0"], mimo0), rel=1e-12)
    assert rl["gm-0"].scores["center"] == 1 and rl["gm-0"].scores["hit@0.5"] == 0
    assert re_["gm-0"].scores["iou"] == pytest.approx(400 / 27000, rel=1e-12)
    m, c = lm.aggregate(list(rl.values()))
    ious = {"gm-0": _iou(GT["gm-0"], mimo0), "gm-1": 0.0, "gm-2": 1.0, "gm-3": 1.0, "gm-4": 0.0, "gm-5": 1.0}
    assert m["Acc@0.5"]["Total"] == pytest.approx(100 * 3 / 6)
    assert m["Official IoU"]["Total"] == pytest.approx(100 * sum(ious.values()) / 6, rel=1e-9)
    # Center_ACC: gm-0 yes, gm-1 (0,0) not in GT, gm-2/3/5 yes (exact readings), gm-4 (30, 30) not in [0,0,0,0]
    centers = [_inside(GT["gm-0"], mimo0), _inside(GT["gm-1"], [0, 0, 0, 0]), True, True, False, True]
    assert m["Center_ACC"]["Total"] == pytest.approx(100 * sum(centers) / 6)
    assert m["Rejection rate"] == {"Positives": pytest.approx(100 / 5), "Rejection": 0.0}
    me, _ = ev.aggregate(list(re_.values()))
    assert me["Acc@0.5"]["Total"] == pytest.approx(100 * 1 / 6)  # only gm-3 (the /999 reading)


def test_report_names_the_rule(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    texts, _, _ = _lmms_texts()
    bench = _bench("lmms-eval")
    m, c = bench.aggregate(run(bench, samples, ctx(tmp_path, scripted_model({s.id: "text" for s in samples},
                                                                              "abs", texts))))
    res = RunResult(benchmark="groundingme", model="m", metrics=m, counts=c,
                    options=bench.options.model_dump(mode="json"))
    md = bench.tables([res])
    assert "m (abs, official-compat lmms-eval)" in md
    assert "rule lmms-eval: best IoU over raw / normalised / MiMo / Qwen readings" in md
    assert "Center_ACC Total" in md
    with pytest.raises(ValueError):
        GroundingME.Options(official_compat=True, compat_rule="vlmevalkit")
