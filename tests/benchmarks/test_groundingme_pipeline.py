"""GroundingME: loader (HF parquet + VLMEvalKit TSV), prompt, parser, coordinates, metrics,
best-of-N tournament, rendering, show and negatives. Fixture: scikit-image's bundled photos in
the release schema, with boxes chosen here."""

from __future__ import annotations

import asyncio
import base64
import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest

pytest.importorskip("skimage")
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from skimage import data as skdata

from lensbench.benchmarks.groundingme import benchmark as gm
from lensbench.benchmarks.base import RunContext, RunResult
from lensbench.core.errors import ConfigError, DataError
from lensbench.core.types import StoredResponse

# id, photo, l1, l2 (as a release might spell it), bbox (None = Rejection), size override
ITEMS = [
    ("gm-0", "astronaut", "Discriminative", "Appearance", [180, 50, 330, 230], None),
    ("gm-1", "astronaut", "Discriminative", "Discriminative_State", [20, 300, 200, 500], None),
    ("gm-2", "chelsea", "Spatial", "Relationship", [140, 20, 330, 280], None),
    ("gm-3", "coffee", "Limited", "Small", [100, 20, 500, 380], None),
    ("gm-4", "rocket", "Rejection", "Text", None, None),
    ("gm-5", "coffee", "Limited", "Occlusion", [500, 100, 2500, 1900], (3000, 2000)),
]


def _jpeg(photo: str, size=None) -> bytes:
    arr = getattr(skdata, photo)()
    im = Image.fromarray(arr).convert("RGB")
    if size:
        im = im.resize(size, Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=90)
    return buf.getvalue()


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory) -> Path:
    """HF layout (data/test-00000-of-00001.parquet) and a VLMEvalKit groundingme.tsv side by side."""
    root = tmp_path_factory.mktemp("gm")
    rows = []
    for sid, photo, l1, l2, box, size in ITEMS:
        b = _jpeg(photo, size)
        w, h = Image.open(io.BytesIO(b)).size
        rows.append({"id": sid, "image": {"bytes": b, "path": f"{sid}.jpg"}, "description": f"the object of {sid}",
                     "bbox": box, "subtask_l1": l1, "subtask_l2": l2, "width": w, "height": h})
    (root / "hf" / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), root / "hf" / "data" / "test-00000-of-00001.parquet")
    (root / "tsv").mkdir()
    with open(root / "tsv" / "groundingme.tsv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["index", "image", "question", "answer", "width", "height", "subtask_l1", "subtask_l2"])
        for i, r in enumerate(rows):
            # VLMEvalKit stores a repeated image once: gm-1 refers to gm-0's row by index
            img = "0" if r["id"] == "gm-1" else base64.b64encode(r["image"]["bytes"]).decode()
            w.writerow([i, img, r["description"], json.dumps(r["bbox"]) if r["bbox"] else "", r["width"],
                        r["height"], r["subtask_l1"], r["subtask_l2"]])
    return root


# ----------------------------------------------------------------------------- loader

def test_parquet_loader(fixture_dir):
    ss = gm.load_groundingme(fixture_dir / "hf")
    assert [s.id for s in ss] == [it[0] for it in ITEMS]
    assert ss[1].subtask_l2 == "State"  # "Discriminative_State" canonicalised
    assert ss[4].bbox is None and ss[4].is_rejection
    assert ss[5].width == 3000 and ss[5].height == 2000
    assert ss[0].bbox == (180.0, 50.0, 330.0, 230.0)


def test_tsv_loader_matches_parquet(fixture_dir):
    a = gm.load_groundingme(fixture_dir / "hf")
    b = gm.load_groundingme(fixture_dir / "tsv")
    strip = lambda s: (s.description, s.bbox, s.subtask_l1, s.subtask_l2, s.width, s.height)  # noqa: E731
    assert [strip(s) for s in a] == [strip(s) for s in b]
    assert [s.id for s in b] == ["0", "1", "2", "3", "4", "5"]  # VLMEvalKit has no id column: index


def test_images_identical_from_both_layouts(fixture_dir, tmp_path):
    a = gm.load_groundingme(fixture_dir / "hf")
    b = gm.load_groundingme(fixture_dir / "tsv")
    pa_ = gm.prepare_images(a, tmp_path / "a", None)
    pb = gm.prepare_images(b, tmp_path / "b", None)
    for sa, sb in zip(a, b):
        assert Path(pa_[sa.id].path).read_bytes() == Path(pb[sb.id].path).read_bytes()
    # the referenced image (gm-1 -> row 0) is the astronaut photo
    assert Path(pb["1"].path).read_bytes() == Path(pb["0"].path).read_bytes()


def test_datasets_save_to_disk_layout(fixture_dir, tmp_path):
    """A ``datasets`` save_to_disk folder (Arrow stream files) loads like the parquet shards."""
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_parquet(str(fixture_dir / "hf" / "data" / "test-00000-of-00001.parquet"))
    ds.save_to_disk(str(tmp_path / "saved"))
    a = gm.load_groundingme(fixture_dir / "hf")
    b = gm.load_groundingme(tmp_path / "saved")
    assert [(s.id, s.bbox, s.subtask_l2) for s in a] == [(s.id, s.bbox, s.subtask_l2) for s in b]
    ia, ib = gm.prepare_images(a, tmp_path / "a", None), gm.prepare_images(b, tmp_path / "b", None)
    assert all(Path(ia[s.id].path).read_bytes() == Path(ib[s.id].path).read_bytes() for s in a)


def test_real_release_if_present(shared_data):
    """The real release (if a copy lies in shared data): 1,005 items, Sec. 3.3.1's counts."""
    root = shared_data / "GroundingME"
    if not root.exists():
        pytest.skip(f"GroundingME release not found at {root}")
    ss = gm.load_groundingme(root)
    counts = {l1: sum(s.subtask_l1 == l1 for s in ss) for l1 in gm.L1_ORDER}
    assert len(ss) == 1005
    assert counts == {"Discriminative": 204, "Spatial": 300, "Limited": 300, "Rejection": 201}
    assert all(s.subtask_l2 in gm.L2_ORDER[s.subtask_l1] for s in ss)


def test_loader_errors(tmp_path):
    good = {"id": "x", "image": {"bytes": b"", "path": None}, "description": "d", "bbox": [1, 2, 3, 4],
            "subtask_l1": "Spatial", "subtask_l2": "Counting", "width": 10, "height": 10}
    f = tmp_path / "a" / "test.parquet"
    f.parent.mkdir()
    pq.write_table(pa.Table.from_pylist([{k: v for k, v in good.items() if k != "height"}]), f)
    with pytest.raises(DataError, match="height"):
        gm.load_groundingme(f.parent)
    pq.write_table(pa.Table.from_pylist([{**good, "bbox": None}]), f)
    with pytest.raises(DataError, match="null is allowed only for Rejection"):
        gm.load_groundingme(f)
    pq.write_table(pa.Table.from_pylist([{**good, "subtask_l1": "Weird"}]), f)
    with pytest.raises(DataError, match="subtask_l1"):
        gm.load_groundingme(f)
    pq.write_table(pa.Table.from_pylist([{**good, "bbox": [5, 5, 1, 1]}]), f)
    with pytest.raises(DataError, match="x2 < x1"):
        gm.load_groundingme(f)
    with pytest.raises(DataError, match="no GroundingME data"):
        gm.load_groundingme(_empty(tmp_path))


def _empty(tmp_path):
    p = tmp_path / "empty"
    p.mkdir()
    return p


# ----------------------------------------------------------------------------- prompt and parser

def test_prompt_is_table9_verbatim():
    p = gm.build_prompt("A DESCRIPTION")
    assert p.startswith("All spatial relationships are defined from the viewer's perspective, where 'front' means")
    assert "describes:\nA DESCRIPTION\nEnsure that all details" in p
    assert p.endswith('If no matching object is found, output {"bbox_2d": null}.')
    assert '{"bbox_2d": [x1, y1, x2, y2]}' in p
    assert '{"bbox_2d": [y1, x1, y2, x2]}' in gm.build_prompt("d", "yxyx1000")


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
    p = gm.parse_bbox_reply(reply)
    assert p.kind == kind
    assert p.box == (tuple(float(v) for v in box) if box else None)


def test_official_parse_semantics():
    assert gm.official_parse_bbox('{"bbox_2d": null}') == [0, 0, 0, 0]
    assert gm.official_parse_bbox("it is at 1, 2, 3, 4 or 5 6 7 8") == [5, 6, 7, 8]
    assert gm.official_parse_bbox("no idea") == [0, 0, 0, 0]


def test_judge_verdict():
    assert gm.parse_judge_verdict("\\boxed{A}") == "A"
    assert gm.parse_judge_verdict("<think>\\boxed{A}</think> so \\boxed{B}") == "B"
    assert gm.parse_judge_verdict("\\boxed{\\text{B}}") == "B"
    assert gm.parse_judge_verdict("Response A is better") is None


# ----------------------------------------------------------------------------- geometry

def test_iou_values():
    assert gm.iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert gm.iou([0, 0, 10, 10], [5, 0, 15, 10]) == pytest.approx(50 / 150)
    assert gm.iou([0, 0, 10, 10], [20, 20, 30, 30]) == 0.0
    assert gm.iou([0, 0, 0, 0], [0, 0, 0, 0]) == 0.0
    assert gm.iou([0, 0, 10, 10], None) == 0.0


def test_smart_resize_hand_computed():
    # 1080x1920: round(38.57)=39 -> 1092, round(68.57)=69 -> 1932; within budget
    assert gm.smart_resize(1080, 1920) == (1092, 1932)
    # 3000x4000 under 1280*28*28: beta = sqrt(12e6/1003520) = 3.458; floor(30.98)=30 -> 840, floor(41.31)=41 -> 1148
    assert gm.smart_resize(3000, 4000, max_pixels=1280 * 28 * 28) == (840, 1148)
    # tiny image scaled up to min_pixels: 20x20 -> beta = sqrt(3136/400) = 2.8, ceil(2)=2 -> 56
    assert gm.smart_resize(20, 20) == (56, 56)
    with pytest.raises(ValueError):
        gm.smart_resize(1, 500)


def test_coordinate_conventions():
    orig, sent = (3000, 2000), (1500, 1000)
    want = (600.0, 400.0, 1200.0, 1000.0)
    conv = lambda b, f, **kw: gm.to_original_pixels(b, f, sent_size=sent, orig_size=orig, **kw)  # noqa: E731
    assert conv([300, 200, 600, 500], "abs") == pytest.approx(want)
    assert conv([200, 200, 400, 500], "rel1000") == pytest.approx(want)
    assert conv([0.2, 0.2, 0.4, 0.5], "rel1") == pytest.approx(want)
    assert conv([200, 200, 500, 400], "yxyx1000") == pytest.approx(want)
    # abs-resized: smart_resize(1000, 1500) = (1008, 1512) (round 35.7->36, 53.57->54)
    assert conv([1512 * 0.2, 1008 * 0.2, 1512 * 0.4, 1008 * 0.5], "abs-resized") == pytest.approx(want)
    with pytest.raises(ConfigError):
        conv([0, 0, 1, 1], "xywh")


def test_fit_budget_and_draft_downscale():
    assert gm.fit_budget(3000, 2000, None) == (3000, 2000)
    w, h = gm.fit_budget(3000, 2000, 1_000_000)
    assert w * h <= 1_000_000 and abs(w / h - 1.5) < 0.01 and w >= 1220
    im, orig = gm.downscale_image_bytes(_jpeg("coffee", (3000, 2000)), 1_000_000)
    assert orig == (3000, 2000) and im.size == (w, h)


# ----------------------------------------------------------------------------- evaluation with a scripted model

def _ctx(tmp_path: Path, generate, has_judge=False, overrides=None) -> RunContext:
    async def gen(reqs, label):
        return generate(reqs)
    return RunContext(run_dir=tmp_path, data_dir=tmp_path, seed=0, generate=gen, has_judge=has_judge,
                      model_name="scripted", param_overrides=overrides or {})


def _ok(rq, text, reasoning=None):
    return StoredResponse(key="k", request_id=rq.id, status="ok", text=text, reasoning=reasoning)


def _format_box(box, fmt, sent, orig):
    x1, y1, x2, y2 = box
    ow, oh = orig
    if fmt == "abs":
        sx, sy = sent[0] / ow, sent[1] / oh
        return [round(x1 * sx), round(y1 * sy), round(x2 * sx), round(y2 * sy)]
    if fmt == "rel1000":
        return [round(x1 / ow * 1000), round(y1 / oh * 1000), round(x2 / ow * 1000), round(y2 / oh * 1000)]
    if fmt == "yxyx1000":
        return [round(y1 / oh * 1000), round(x1 / ow * 1000), round(y2 / oh * 1000), round(x2 / ow * 1000)]
    raise AssertionError(fmt)


def scripted_model(plan: dict[str, str], fmt: str):
    """Replies per sample id: 'exact' (GT in the model's convention), 'shift' (GT moved right by
    20 % of its width: IoU = 0.8/1.2 = 2/3), 'null', 'garbage', 'error'."""
    def gen(reqs):
        out = {}
        for rq in reqs:
            sid, m = rq.meta["sample_id"], rq.meta
            mode = plan[sid]
            sent = Image.open(rq.images[0].path).size
            box = m["bbox"] or [10, 10, 50, 50]  # Rejection items: a hallucinated box
            if mode == "error":
                out[rq.id] = StoredResponse(key="k", request_id=rq.id, status="error", text=None, error="HTTP 500")
                continue
            if mode == "shift":
                d = 0.2 * (box[2] - box[0])
                box = [box[0] + d, box[1], box[2] + d, box[3]]
            text = {"null": 'No such object. {"bbox_2d": null}', "garbage": "I cannot tell."}.get(
                mode, "```json\n" + json.dumps({"bbox_2d": _format_box(box, fmt, sent, (m["width"], m["height"]))})
                + "\n```")
            out[rq.id] = _ok(rq, text)
        return out
    return gen


def _run(bench, samples, ctx):
    return asyncio.run(bench.evaluate(samples, ctx))


@pytest.mark.parametrize("fmt,max_pixels", [("abs", None), ("abs", 1_000_000), ("rel1000", 1_000_000),
                                            ("yxyx1000", None)])
def test_evaluate_and_aggregate(fixture_dir, tmp_path, fmt, max_pixels):
    samples = gm.load_groundingme(fixture_dir / "hf")
    plan = {"gm-0": "exact", "gm-1": "shift", "gm-2": "null", "gm-3": "garbage", "gm-4": "exact", "gm-5": "exact"}
    bench = gm.GroundingME(gm.GroundingME.Options(bbox_format=fmt, max_pixels=max_pixels))
    recs = _run(bench, samples, _ctx(tmp_path, scripted_model(plan, fmt)))
    by = {r["id"]: r for r in recs}
    assert by["gm-0"]["status"] == "correct" and by["gm-0"]["iou"] > 0.97
    assert by["gm-1"]["iou"] == pytest.approx(2 / 3, abs=0.02)
    assert by["gm-2"]["outcome"] == "rejected" and by["gm-2"]["status"] == "wrong"
    assert by["gm-3"]["status"] == "unparseable"
    assert by["gm-4"]["status"] == "wrong"  # a box on a Rejection item
    assert by["gm-5"]["iou"] > 0.97  # 8K-style item: downscaled or not, mapped back to original pixels
    if max_pixels:
        assert by["gm-5"]["sent_size"][0] * by["gm-5"]["sent_size"][1] <= max_pixels
        assert by["gm-5"]["sent_size"] != [3000, 2000]
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


def test_errors_are_not_scored(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")
    plan = {s.id: "exact" for s in samples} | {"gm-3": "error", "gm-4": "null"}
    bench = gm.GroundingME()
    recs = _run(bench, samples, _ctx(tmp_path, scripted_model(plan, "abs")))
    m, c = bench.aggregate(recs)
    assert c["n_error"] == 1 and c["n"] == 5
    assert m["Acc@0.5"]["Total"] == 100.0 and m["Acc@0.5"]["Rejection"] == 100.0
    assert m["Rejection rate"]["Rejection"] == 100.0


def test_official_compat(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")
    # unparseable on a Rejection item = correct in the official scorers; a 0-999 box is found by best-IoU
    plan = {"gm-0": "exact", "gm-1": "exact", "gm-2": "exact", "gm-3": "garbage", "gm-4": "garbage", "gm-5": "exact"}

    def gen999(reqs):
        out = scripted_model(plan, "abs")(reqs)
        for rq in reqs:
            if rq.meta["sample_id"] == "gm-2":
                b, w, h = rq.meta["bbox"], rq.meta["width"], rq.meta["height"]
                out[rq.id] = _ok(rq, json.dumps({"bbox_2d": [round(b[0] / w * 999), round(b[1] / h * 999),
                                                             round(b[2] / w * 999), round(b[3] / h * 999)]}))
        return out

    strict = gm.GroundingME(gm.GroundingME.Options(bbox_format="abs"))
    off = gm.GroundingME(gm.GroundingME.Options(bbox_format="abs", official_compat=True))
    ms, _ = strict.aggregate(_run(strict, samples, _ctx(tmp_path / "s", gen999)))
    mo, co = off.aggregate(_run(off, samples, _ctx(tmp_path / "o", gen999)))
    assert ms["Acc@0.5"]["Rejection"] == 0.0 and mo["Acc@0.5"]["Rejection"] == 100.0
    assert ms["Acc@0.5"]["Spatial"] == 0.0 and mo["Acc@0.5"]["Spatial"] == 100.0
    assert co["scoring"] == "official-compat"
    res = RunResult(benchmark="groundingme", model="m", metrics=mo, counts=co,
                    options=off.options.model_dump(mode="json"))
    assert "official-compat" in off.render([res])


# ----------------------------------------------------------------------------- best-of-N

def bon_model(good_k: dict[str, set[int]]):
    """Sample k of item sid answers with the exact box iff k in good_k[sid], else a far-away box;
    every reply carries a reasoning line naming its index."""
    def gen(reqs):
        out = {}
        for rq in reqs:
            if rq.role == "judge":
                continue
            sid, k, m = rq.meta["sample_id"], rq.meta["sample_index"], rq.meta
            good = k in good_k.get(sid, set())
            if m["bbox"] is None:
                text = '{"bbox_2d": null}' if good else '{"bbox_2d": [0, 0, 5, 5]}'
            else:
                b = m["bbox"] if good else [0, 0, 5, 5]
                text = json.dumps({"bbox_2d": [round(v) for v in b]})
            out[rq.id] = _ok(rq, text, reasoning=f"trajectory {k} {'careful' if good else 'hasty'}")
        return out
    return gen


def text_judge(fail_first: bool = False):
    """Prefers the response whose trajectory says 'careful'; optionally answers without a verdict
    on attempt 0 (to exercise the retry)."""
    def judge(reqs):
        out = {}
        for rq in reqs:
            t = rq.text
            a = t.split("[Full Content of Response A]")[1].split("[Full Content of Response B]")[0]
            if fail_first and rq.id.endswith("/t0"):
                out[rq.id] = _ok(rq, "Both look fine.")
                continue
            out[rq.id] = _ok(rq, "<think>compare</think>\\boxed{" + ("A" if "careful" in a else "B") + "}")
        return out
    return judge


def _combined(model, judge):
    def gen(reqs):
        out = model([r for r in reqs if r.role == "model"])
        out.update(judge([r for r in reqs if r.role == "judge"]))
        return out
    return gen


def test_best_of_n_text_judge(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")
    good = {"gm-0": {3}, "gm-1": set(), "gm-2": {0, 1, 2, 3, 4}, "gm-3": {4}, "gm-4": {1}, "gm-5": {0}}
    sent = []

    def spy(reqs):
        sent.extend(reqs)
        return _combined(bon_model(good), text_judge())(reqs)

    bench = gm.GroundingME(gm.GroundingME.Options(best_of=5, judge="text"))
    recs = _run(bench, samples, _ctx(tmp_path, spy, has_judge=True))
    model_reqs = [r for r in sent if r.role == "model"]
    assert len(model_reqs) == 6 * 5
    assert {r.params.temperature for r in model_reqs} == {0.7}
    assert len({r.params.seed for r in model_reqs}) == 5  # distinct seeds
    # N=5 knockout: 2 + 1 + 1 matches per item
    assert all(len(r["bon"]["judge"]["matches"]) == 4 for r in recs)
    judge_reqs = [r for r in sent if r.role == "judge"]
    assert judge_reqs and all(not r.images for r in judge_reqs)  # text-only judge sees no image
    assert "trajectory" in judge_reqs[0].text and "<think>" in judge_reqs[0].text
    by = {r["id"]: r for r in recs}
    # the judge finds the careful trajectory whenever there is one
    for sid, ks in good.items():
        assert by[sid]["bon"]["selected_hit"] == bool(ks)
        assert by[sid]["bon"]["oracle_hit"] == bool(ks)
        assert by[sid]["bon"]["mean_hit"] == pytest.approx(len(ks) / 5)
    m, c = bench.aggregate(recs)
    assert m["BoN average"]["Total"] == pytest.approx(100 * (1 + 0 + 5 + 1 + 1 + 1) / 30)
    assert m["BoN selected"]["Total"] == pytest.approx(500 / 6)
    assert m["BoN oracle"]["Total"] == pytest.approx(500 / 6)
    assert m["BoN selected"]["Rejection"] == 100.0
    assert c["judge_fallbacks"] == 0 and c["judge_matches"] == 24
    res = RunResult(benchmark="groundingme", model="m", metrics=m, counts=c,
                    options=bench.options.model_dump(mode="json"))
    md = bench.render([res], with_paper=True)
    assert "Table 4" in md and "Oracle best-of-5" in md and "Deepseek-R1" in md


def test_best_of_n_judge_retry_and_fallback(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")[:2]
    good = {"gm-0": {1}, "gm-1": {1}}
    # retry succeeds: same selections as a clean judge, no fallbacks, 2 attempts per match
    b1 = gm.GroundingME(gm.GroundingME.Options(best_of=2, judge="text", judge_retries=1))
    recs = _run(b1, samples, _ctx(tmp_path / "a", _combined(bon_model(good), text_judge(fail_first=True)), True))
    assert all(r["bon"]["selected_hit"] for r in recs)
    assert all(mt["attempts"] == 2 and not mt["fallback"] for r in recs for mt in r["bon"]["judge"]["matches"])
    # no retries: the fixed rule (candidate A = sample 0, the bad one) decides and is counted
    b0 = gm.GroundingME(gm.GroundingME.Options(best_of=2, judge="text", judge_retries=0))
    recs = _run(b0, samples, _ctx(tmp_path / "b", _combined(bon_model(good), text_judge(fail_first=True)), True))
    assert all(r["selected_index"] == 0 for r in recs)
    _, c = b0.aggregate(recs)
    assert c["judge_fallbacks"] == 2


def test_multimodal_judge_sees_image_and_boxes(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")[:1]
    seen = []

    def judge(reqs):
        seen.extend(reqs)
        return {rq.id: _ok(rq, "Bbox B fits.\n\\boxed{B}") for rq in reqs}

    bench = gm.GroundingME(gm.GroundingME.Options(best_of=2, judge="mm"))
    recs = _run(bench, samples, _ctx(tmp_path, _combined(bon_model({"gm-0": {1}}), judge), True))
    assert len(seen) == 1 and len(seen[0].images) == 1
    assert "Bbox A: [0, 0, 5, 5]" in seen[0].text and "Bbox B: [180, 50, 330, 230]" in seen[0].text
    assert recs[0]["selected_index"] == 1 and recs[0]["status"] == "correct"


def test_judge_needs_backend(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")[:1]
    bench = gm.GroundingME(gm.GroundingME.Options(best_of=2, judge="text:openai:r1"))
    with pytest.raises(ConfigError, match="--judge-model openai:r1"):
        _run(bench, samples, _ctx(tmp_path, bon_model({}), has_judge=False))
    with pytest.raises(ValueError):
        gm.GroundingME.Options(judge="vision")


# ----------------------------------------------------------------------------- tables, show, negatives

def test_render_tables_with_paper():
    bench = gm.GroundingME()
    md = bench.render([], with_paper=True)
    assert "Qwen3-VL-A22B (paper) | 71.2 | 74.0 | 84.0 | 50.0 | 69.6" in md
    assert "| 45.1 |" in md and "Table 8" in md
    csv_text = bench.render([], fmt="csv", with_paper=True)
    assert "Seed-1.6-V.-250815 (paper)" in csv_text


def test_paper_table3_is_consistent():
    """Shipped Table 3 numbers: each L-1 average is the sample-weighted mean of its L-2 columns
    (Sec. 3.3.1 counts: Dis. 52/50/50/52, Rej. 50/51/50/50, Spa. 150/150, Lim. 150/150) and Total
    the weighted mean over L-1 (204/300/300/201) — within the paper's rounding."""
    t3 = json.loads((Path(gm.__file__).parent / "paper" / "table3.json").read_text())
    n = {"Discriminative": [52, 50, 50, 52], "Spatial": [150, 150], "Limited": [150, 150], "Rejection": [50, 51, 50, 50]}
    assert len(t3["rows"]) == 25
    for row in t3["rows"]:
        v = row["values"]
        tot = 0.0
        for l1, ns in n.items():
            avg = sum(v[f"{l1}/{l2}"] * k for l2, k in zip(gm.L2_ORDER[l1], ns)) / sum(ns)
            assert abs(avg - v[l1]) < 0.2, (row["model"], l1)
            tot += v[l1] * sum(ns)
        assert abs(tot / 1005 - v["Total"]) < 0.2, row["model"]


def test_show_draws_boxes(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")
    plan = {s.id: "shift" for s in samples}
    bench = gm.GroundingME(gm.GroundingME.Options(max_pixels=1_000_000))
    recs = _run(bench, samples, _ctx(tmp_path, scripted_model(plan, "abs")))
    with (tmp_path / "samples.jsonl").open("w") as fh:
        for r in recs:
            fh.write(json.dumps(r) + "\n")
    from typer.testing import CliRunner

    out = tmp_path / "gm5.png"
    res = CliRunner().invoke(gm.groundingme_app, ["show", str(tmp_path), "--id", "gm-5", "--out", str(out)])
    assert res.exit_code == 0, res.output
    im = Image.open(out).convert("RGB")
    sent = recs[-1]["sent_size"]
    assert im.size == tuple(sent)
    # the GT's left edge (x = 500 of 3000 original px) is drawn in green on the downscaled image
    x = round(500 * sent[0] / 3000)
    y = round(1000 * sent[1] / 2000)
    px = [im.getpixel((x + dx, y)) for dx in range(-2, 3)]
    assert any(p[1] > 150 and p[0] < 80 and p[2] < 80 for p in px), px
    with pytest.raises(DataError):
        gm.find_record(tmp_path, "nope")
    res = CliRunner().invoke(gm.groundingme_app, ["show", str(tmp_path), "--id", "nope"])
    assert res.exit_code == 2 and "no record with id 'nope'" in res.output


def test_prepared_images_are_reused(fixture_dir, tmp_path):
    samples = gm.load_groundingme(fixture_dir / "hf")
    first = gm.prepare_images(samples, tmp_path, 1_000_000)
    # a resumed run reads no source: point every sample at a file that does not exist
    gone = [dataclasses.replace(s, image=gm.ImageSource("file", str(tmp_path / "missing.jpg"))) for s in samples]
    assert gm.prepare_images(gone, tmp_path, 1_000_000) == first
    with pytest.raises(DataError, match="not found"):
        gm.prepare_images(gone, tmp_path / "other", 1_000_000)


def test_negatives_builder_and_mixing(tmp_path):
    src = tmp_path / "refcocog.json"
    items = [{"ann_id": i, "image_id": 100 + i, "bbox": [1, 2, 3, 4],
              "sentences": [{"sent": f"the red cup number {i}"}]} for i in range(40)]
    src.write_text(json.dumps({"annotations": items}))
    loaded = gm.read_refexp_source(src)
    assert loaded[3]["description"] == "the red cup number 3"

    async def gen(reqs):
        out = {}
        for i, rq in enumerate(reqs):
            orig = rq.text.split("Original description: ")[1].split("\n")[0]
            text = "```json\n" + json.dumps({"description": orig.replace("red", "blue")}) + "\n```"
            if i == 0:
                text = json.dumps({"description": orig})  # unchanged edit: skipped
            out[rq.id] = StoredResponse(key="k", request_id=rq.id, status="ok", text=text)
        return out

    negs = asyncio.run(gm.build_negatives(loaded, gen, seed=3))
    assert len(negs) == 39 and all(n["bbox"] is None and "blue" in n["description"] for n in negs)
    assert {n["negative_type"] for n in negs} <= set(gm.NEG_ATTRIBUTES)
    again = asyncio.run(gm.build_negatives(loaded, gen, seed=3))
    assert [n["negative_type"] for n in again] == [n["negative_type"] for n in negs]
    pos = [{**it, "label": "positive"} for it in loaded]
    for ratio, (k_neg, k_pos) in {"1:8": (1, 8), "1:2": (1, 2), "2:1": (2, 1)}.items():
        mix = gm.mix_negatives(pos, negs, ratio, seed=0, total=18 if ratio != "1:8" else 36)
        nn = sum(1 for m in mix if m.get("label") == "negative")
        assert nn * (k_neg + k_pos) == len(mix) * k_neg
        assert mix == gm.mix_negatives(pos, negs, ratio, seed=0, total=len(mix))
    with pytest.raises(ConfigError):
        gm.mix_negatives(pos, negs, "2:1", seed=0, total=100)
    with pytest.raises(ConfigError):
        gm.parse_ratio("1-2")
