"""GenViP: translate command (folder and OpenAI-images editors) and the Sec. 4.2 curation pipeline
on constructed image pairs whose outcome is known by construction."""

from __future__ import annotations

import base64
import io
import json
from collections import Counter
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image, ImageDraw
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.tools.ifbench.genvip.curate import (
    CurateSettings,
    balanced_sample,
    curate,
    edge_dice,
    find_pairs,
    hamming,
    hierarchical_kmeans,
    phash,
)
from lensbench.tools.ifbench.genvip.editors import EDIT_PROMPT, EditError, OpenAIImagesEditor, translate_folder


def shapes(seed: int, size=(320, 256), colour=False, bg=40) -> Image.Image:
    """A scene of random rectangles and ellipses; the same seed gives the same geometry."""
    rng = np.random.default_rng(seed)
    im = Image.new("RGB", size, (bg, bg, bg))
    d = ImageDraw.Draw(im)
    for _ in range(8):
        x0, y0 = int(rng.integers(0, size[0] - 60)), int(rng.integers(0, size[1] - 60))
        x1, y1 = x0 + int(rng.integers(30, 60)), y0 + int(rng.integers(30, 60))
        g = int(rng.integers(120, 255))
        rgb = tuple(int(v) for v in rng.integers(150, 255, 3))  # drawn always: same geometry either way
        fill = rgb if colour else (g, g, g)
        (d.rectangle if rng.random() < 0.5 else d.ellipse)([x0, y0, x1, y1], fill=fill)
    return im


# ------------------------------------------------------------------ translate
def test_translate_folder_editor_resumable_and_failures_listed(tmp_path):
    src, ready, out = tmp_path / "ir", tmp_path / "ready", tmp_path / "out"
    src.mkdir(), ready.mkdir()
    for n in ("a", "b", "c"):
        shapes(ord(n)).save(src / f"{n}.jpg")
    shapes(1, colour=True).save(ready / "a.png")  # another extension, same stem
    shapes(2, colour=True).save(ready / "b.jpg")
    runner = CliRunner()
    r = runner.invoke(app, ["genvip", "translate", "--images", str(src), "--out", str(out), "--editor", f"folder:{ready}"])
    assert r.exit_code == 1, r.output  # one failure -> non-zero exit, never silently dropped
    rep = json.loads((out / "translate_report.json").read_text())
    assert rep["done"] == 2 and rep["skipped"] == 0 and [f["file"] for f in rep["failed"]] == ["c.jpg"]
    assert (out / "a.png").read_bytes() == (ready / "a.png").read_bytes()
    shapes(3, colour=True).save(ready / "c.webp")
    r = runner.invoke(app, ["genvip", "translate", "--images", str(src), "--out", str(out), "--editor", f"folder:{ready}"])
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "translate_report.json").read_text())
    assert rep["done"] == 1 and rep["skipped"] == 2 and rep["failed"] == []


def test_openai_images_editor_resizes_back_and_retries(tmp_path):
    src, out = tmp_path / "ir", tmp_path / "out"
    src.mkdir(), out.mkdir()
    shapes(5, size=(640, 512)).save(src / "x.jpg")
    shapes(6, size=(300, 200)).save(src / "y.jpg")
    calls = Counter()

    def handler(request: httpx.Request) -> httpx.Response:
        body = request.read()
        assert request.url.path.endswith("/images/edits")
        assert EDIT_PROMPT.encode() in body and b"1024x1024" in body
        calls["n"] += 1
        if calls["n"] <= 2:
            return httpx.Response(503, text="busy")
        if b'filename="y.png"' in body:
            return httpx.Response(400, text="content policy")
        buf = io.BytesIO()
        Image.new("RGB", (1024, 1024), (10, 200, 30)).save(buf, "PNG")
        return httpx.Response(200, json={"data": [{"b64_json": base64.b64encode(buf.getvalue()).decode()}]})

    ed = OpenAIImagesEditor("gpt-image-1", base_url="http://edit.test/v1", backoff_s=0.0)
    ed.api.http = httpx.Client(transport=httpx.MockTransport(handler))
    rep = translate_folder(src, out, ed)
    assert rep["done"] == 1 and [f["file"] for f in rep["failed"]] == ["y.jpg"] and "400" in rep["failed"][0]["error"]
    with Image.open(out / "x.jpg") as im:
        assert im.size == (640, 512)  # resized back to the infrared image's size
        assert im.getpixel((5, 5))[1] > 150
    with pytest.raises(EditError):
        ed.edit(src / "y.jpg", out)


# ------------------------------------------------------------------ curation units
def test_edge_dice_and_phash_known_values():
    a = np.asarray(shapes(11).convert("L"))
    b = np.asarray(shapes(12).convert("L"))
    assert edge_dice(a, a) == pytest.approx(1.0)
    assert edge_dice(np.zeros((50, 50), np.uint8), np.zeros((50, 50), np.uint8)) == 0.0
    assert edge_dice(a, b) < 0.2
    assert edge_dice(a, b, tolerance_px=2) >= edge_dice(a, b)


def test_phash_near_duplicates(tmp_path):
    shapes(21).save(tmp_path / "a.png")
    shapes(21).resize((160, 128)).save(tmp_path / "a_small.jpg", quality=70)
    shapes(22).save(tmp_path / "b.png")
    ha, hs, hb = phash(tmp_path / "a.png"), phash(tmp_path / "a_small.jpg"), phash(tmp_path / "b.png")
    assert hamming(ha, ha) == 0 and hamming(ha, hs) <= 6 and hamming(ha, hb) > 12


def test_balanced_sample_water_filling():
    labels = np.array([0] * 10 + [1] * 2 + [2] * 3)
    idx = balanced_sample(labels, 9, seed=1)
    got = Counter(labels[idx].tolist())
    assert got == {0: 4, 1: 2, 2: 3}  # small clusters give all they have, the rest goes to the big one
    assert len(balanced_sample(labels, 100)) == 15
    # two levels: the top-level budget is split evenly, then inside each top cluster
    lab2 = np.array([[0, 0]] * 6 + [[0, 1]] * 6 + [[1, 2]] * 20)
    idx2 = balanced_sample(lab2, 8, seed=0)
    c = Counter(map(tuple, lab2[idx2].tolist()))
    assert c == {(0, 0): 2, (0, 1): 2, (1, 2): 4}


def test_hierarchical_kmeans_separates_obvious_groups():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 0.1, (20, 2)), rng.normal(10, 0.1, (20, 2))])
    lab = hierarchical_kmeans(x, (2, 2), seed=0)
    assert len(set(lab[:20, 0])) == 1 and len(set(lab[20:, 0])) == 1 and lab[0, 0] != lab[20, 0]
    assert len(set(lab[:, 1])) == 4


# ------------------------------------------------------------------ curation pipeline
def test_curate_pipeline_on_constructed_pairs(tmp_path):
    pairs, bench = tmp_path / "pairs", tmp_path / "bench"
    (pairs / "ir").mkdir(parents=True), (pairs / "rgb").mkdir(), bench.mkdir()
    expect = {}

    def pair(name, ir, rgb, reason):
        ir.save(pairs / "ir" / f"{name}.jpg", quality=95)
        rgb.save(pairs / "rgb" / f"{name}.png")
        expect[name] = reason

    for i in range(6):  # aligned, bright, large: survive the filters
        pair(f"good{i}", shapes(100 + i), shapes(100 + i, colour=True, bg=90), "ok")
    pair("small", shapes(200, size=(180, 256)), shapes(200, size=(180, 256), colour=True, bg=90), "resolution")
    dark = Image.fromarray((np.asarray(shapes(201, colour=True)) * 0.08).astype(np.uint8))
    pair("dark", shapes(201), dark, "too_dark")
    pair("misaligned", shapes(202), shapes(303, colour=True, bg=90), "edge_dice")
    shapes(204).save(bench / "benchmark_img.jpg", quality=90)
    pair("leak", shapes(204), shapes(204, colour=True, bg=90), "near_duplicate")
    # a pair without a partner is ignored
    shapes(999).save(pairs / "ir" / "orphan.jpg")

    found = find_pairs(pairs)
    assert len(found) == 10
    s = CurateSettings(target=4, min_dice=0.3, ks=(2, 2), seed=0)
    summary = curate(found, [bench / "benchmark_img.jpg"], tmp_path / "out", s)
    rows = {Path(json.loads(x)["ir"]).stem: json.loads(x) for x in (tmp_path / "out" / "manifest.jsonl").read_text().splitlines()}
    for name, reason in expect.items():
        if reason == "ok":
            assert rows[name]["reason"] in ("kept", "not_sampled"), (name, rows[name])
            assert rows[name]["edge_dice"] > 0.5
        else:
            assert rows[name]["reason"] == reason, (name, rows[name])
    assert summary["kept"] == 4 and summary["counts"]["not_sampled"] == 2
    assert summary["counts"] == {"edge_dice": 1, "kept": 4, "near_duplicate": 1, "not_sampled": 2, "resolution": 1,
                                 "too_dark": 1}
    assert rows["dark"]["rgb_brightness"] < 30 and rows["misaligned"]["edge_dice"] < 0.3
    # deterministic: the same seed keeps the same pairs
    again = curate(found, [bench / "benchmark_img.jpg"], tmp_path / "out2", s)
    rows2 = [json.loads(x) for x in (tmp_path / "out2" / "manifest.jsonl").read_text().splitlines()]
    assert [r["kept"] for r in rows2] == [r["kept"] for r in rows.values()] and again["kept"] == 4
    # CLI
    r = CliRunner().invoke(app, ["genvip", "curate", "--pairs", str(pairs), "--benchmark-images", str(bench),
                                 "--out", str(tmp_path / "out3"), "--target", "4", "--min-dice", "0.3", "--clusters", "2,2"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["kept"] == 4
