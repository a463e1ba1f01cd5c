"""GroundingME test fixture: scikit-image's bundled photos in the release schema (HF parquet and
VLMEvalKit TSV), boxes chosen here, and scripted models / judges (no network)."""

from __future__ import annotations

import asyncio
import base64
import csv
import io
import json
from pathlib import Path

import pytest

pytest.importorskip("skimage")
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from skimage import data as skdata

from lensbench.benchmarks.base import RunContext
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


def jpeg(photo: str, size=None) -> bytes:
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
        b = jpeg(photo, size)
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


def ctx(tmp_path: Path, generate, has_judge=False, overrides=None) -> RunContext:
    async def gen(reqs, label):
        return generate(reqs)
    return RunContext(run_dir=tmp_path, data_dir=tmp_path, seed=0, generate=gen, has_judge=has_judge,
                      model_name="scripted", param_overrides=overrides or {})


def ok(rq, text, reasoning=None):
    return StoredResponse(key="k", request_id=rq.id, status="ok", text=text, reasoning=reasoning)


def run(bench, samples, context):
    return asyncio.run(bench.evaluate(samples, context))


def by_id(records):
    return {r.sample_id: r for r in records}


def format_box(box, fmt, sent, orig):
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


def scripted_model(plan: dict[str, str], fmt: str, texts: dict[str, str] | None = None):
    """Replies per sample id: 'exact' (GT in the model's convention), 'shift' (GT moved right by
    20 % of its width: IoU = 0.8/1.2 = 2/3), 'null', 'garbage', 'error', or 'text' (the literal
    reply ``texts[sid]``)."""
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
            if mode == "text":
                out[rq.id] = ok(rq, texts[sid])
                continue
            if mode == "shift":
                d = 0.2 * (box[2] - box[0])
                box = [box[0] + d, box[1], box[2] + d, box[3]]
            text = {"null": 'No such object. {"bbox_2d": null}', "garbage": "I cannot tell."}.get(
                mode, "```json\n" + json.dumps({"bbox_2d": format_box(box, fmt, sent, (m["width"], m["height"]))})
                + "\n```")
            out[rq.id] = ok(rq, text)
        return out
    return gen


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
            out[rq.id] = ok(rq, text, reasoning=f"trajectory {k} {'careful' if good else 'hasty'}")
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
                out[rq.id] = ok(rq, "Both look fine.")
                continue
            out[rq.id] = ok(rq, "<think>compare</think>\\boxed{" + ("A" if "careful" in a else "B") + "}")
        return out
    return judge


def combined(model, judge):
    def gen(reqs):
        out = model([r for r in reqs if r.role == "model"])
        out.update(judge([r for r in reqs if r.role == "judge"]))
        return out
    return gen
