"""GOBench Gen-1K filtering (Sec. 2.1) on crafted generations: each quality rule and the near-duplicate
rules (perceptual hash across generators, an image embedder when given) with the counts, the
measurements against independent computations, and the filtered folder fed to the rating page and
to ``lensbench run gobench``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter
from typer.testing import CliRunner

from lensbench.benchmarks.gobench.load import load_records
from lensbench.cli.main import app
from lensbench.tools.gobench.filter import quality_metrics
from lensbench.tools.gobench.server import collect_items
from tests.tools.test_gobench_gen import _mini_release

imagehash = pytest.importorskip("imagehash")


def _scene(bg, fg, shapes, size=(320, 320)):
    im = Image.new("RGB", size, bg)
    d = ImageDraw.Draw(im)
    for k, (x, y, r) in enumerate(shapes):
        (d.ellipse if k % 2 else d.rectangle)([x - r, y - r, x + r, y + r], fill=fg[k % len(fg)])
    return im


def _blocks(seed, n=8, size=320):
    """An n x n grid of red and blue cells, half each, in a seeded layout (same colours for every seed)."""
    cells = np.array([0] * (n * n // 2) + [1] * (n * n // 2))
    np.random.default_rng(seed).shuffle(cells)
    a = np.kron(cells.reshape(n, n), np.ones((size // n, size // n), int))
    return Image.fromarray(np.where(a[..., None] == 0, [220, 30, 30], [30, 60, 220]).astype(np.uint8))


def _generations(root):
    a = _scene("white", [(20, 20, 20), (255, 140, 0)], [(60, 60, 40), (200, 90, 50), (120, 230, 60), (260, 260, 30)])
    b = _scene((40, 170, 40), [(130, 40, 160)], [(250, 50, 30), (80, 160, 70), (200, 250, 40)])
    gx, gy = root / "genX", root / "genY"
    for g in (gx, gy):
        (g / "direct_light_images").mkdir(parents=True)
        (g / "reflect_light_images").mkdir(parents=True)
    a.save(gx / "direct_light_images" / "1.png")
    b.save(gx / "reflect_light_images" / "7.png")
    flat = np.full((300, 300, 3), 128, np.uint8) + np.random.default_rng(0).integers(0, 3, (300, 300, 3)).astype(np.uint8)
    Image.fromarray(flat).save(gx / "direct_light_images" / "2.png")
    near = a.resize((290, 290)).point(lambda v: min(255, v + 6))  # another generator, nearly the same picture
    near.convert("RGB").save(gy / "direct_light_images" / "1.jpg", quality=70)
    _blocks(1).save(gy / "reflect_light_images" / "7.png")
    _blocks(2).save(gy / "direct_light_images" / "3.png")  # same colours as 7.png, another layout
    a.resize((120, 100)).save(gy / "direct_light_images" / "4.png")
    b.filter(ImageFilter.GaussianBlur(8)).save(gy / "direct_light_images" / "5.png")
    raw = (gx / "reflect_light_images" / "7.png").read_bytes()
    (gy / "direct_light_images" / "6.png").write_bytes(raw[:200])  # truncated
    return gx, gy, a, near


def test_quality_metrics_against_independent_values(tmp_path):
    rng = np.random.default_rng(1)
    px = rng.integers(0, 256, (40, 60)).astype(np.uint8)
    Image.fromarray(px, "L").save(tmp_path / "n.png")
    w, h, std, sharp = quality_metrics(tmp_path / "n.png")
    a = px.astype(float)
    lap = np.zeros((38, 58))
    for i in range(1, 39):
        for j in range(1, 59):
            lap[i - 1, j - 1] = a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1] - 4 * a[i, j]
    assert (w, h) == (60, 40) and std == pytest.approx(a.std()) and sharp == pytest.approx(lap.var())


def test_filter_counts_and_decisions(tmp_path):
    gx, gy, a, near = _generations(tmp_path)
    assert imagehash.phash(a) - imagehash.phash(near.convert("RGB")) <= 8  # what makes it a near-duplicate
    out = tmp_path / "filtered"
    r = CliRunner().invoke(app, ["gobench", "filter", "--images", str(gx), "--images", str(gy), "--out", str(out),
                                 "--unit", "image"])
    assert r.exit_code == 0, r.output
    lines = {x["image"]: x for x in map(json.loads, (out / "filter.jsonl").read_text().splitlines())}
    assert len(lines) == 9
    fate = {k: (v["kept"], v["reason"]) for k, v in lines.items()}
    assert fate == {
        "genX/direct_light_images/1.png": (True, None), "genX/direct_light_images/2.png": (False, "flat"),
        "genX/reflect_light_images/7.png": (True, None),
        "genY/direct_light_images/1.jpg": (False, "near-duplicate (hash)"),
        "genY/direct_light_images/3.png": (True, None), "genY/direct_light_images/4.png": (False, "too small"),
        "genY/direct_light_images/5.png": (False, "blurry"), "genY/direct_light_images/6.png": (False, "unreadable"),
        "genY/reflect_light_images/7.png": (True, None)}
    assert lines["genY/direct_light_images/1.jpg"]["duplicate_of"] == "genX/direct_light_images/1.png"
    assert "4 kept" in r.output and "near-duplicate (hash) 1" in r.output
    kept = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.*") if p.name != "filter.jsonl")
    assert kept == ["genX/direct_light_images/1.png", "genX/reflect_light_images/7.png",
                    "genY/direct_light_images/3.png", "genY/reflect_light_images/7.png"]
    r = CliRunner().invoke(app, ["gobench", "filter", "--images", str(gx), "--out", str(out)])
    assert r.exit_code != 0 and "new --out" in r.output  # a result is never written over
    # an image embedder also finds the same picture in another layout (same colours)
    r = CliRunner().invoke(app, ["gobench", "filter", "--images", str(gx), "--images", str(gy), "--out",
                                 str(tmp_path / "f2"), "--embedder", "simple", "--unit", "image"])
    assert r.exit_code == 0, r.output
    lines = {x["image"]: x for x in map(json.loads, (tmp_path / "f2" / "filter.jsonl").read_text().splitlines())}
    c2 = lines["genY/reflect_light_images/7.png"]  # visited after direct_light_images/3.png
    assert c2["reason"] == "near-duplicate (embedding)" and c2["duplicate_of"] == "genY/direct_light_images/3.png"
    assert c2["distance"] == pytest.approx(1.0)


def test_filtered_folder_goes_to_rating_and_run(tmp_path):
    data = _mini_release(tmp_path / "data")
    gx, gy, _a, _n = _generations(tmp_path)
    out = tmp_path / "filtered"
    assert CliRunner().invoke(app, ["gobench", "filter", "--images", str(gx), "--images", str(gy), "--out",
                                    str(out)]).exit_code == 0
    items, unknown = collect_items(out / "genX", load_records(data / "data_total.json"), "genX")
    assert [it.record for it in items] == ["direct_light_images_1", "reflect_light_images_7"] and not unknown
    reply = ('{"realityAnswers_Eval": ["Yes","Yes","Yes","Yes","Yes"], "aestheticsRating_Eval": 4, '
             '"consistencyRating_Eval": 3}')
    r = CliRunner().invoke(app, ["run", "gobench", "--data-dir", str(data), "--layout", "scenario", "--images-dir",
                                 str(out / "genX"), "--model", f"constant:{reply}", "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "run" / "result.json").read_text())
    assert res["counts"]["n"] == 2
