"""GroundingME tables (Table 3/8/4 with the paper's rows) and ``lensbench show`` drawing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from groundingme_fixture import ctx, fixture_dir, run, scripted_model  # noqa: F401
from lensbench.benchmarks.groundingme import benchmark as gm_module
from lensbench.benchmarks.groundingme.benchmark import GroundingME
from lensbench.benchmarks.groundingme.data import load_groundingme
from lensbench.benchmarks.groundingme.taxonomy import L2_ORDER
from lensbench.core.errors import DataError


def test_render_tables_with_paper():
    bench = GroundingME()
    md = bench.tables([], with_paper=True)
    assert "Qwen3-VL-A22B (paper) | 71.2 | 74.0 | 84.0 | 50.0 | 69.6" in md
    assert "| 45.1 |" in md and "Table 8" in md
    csv_text = bench.tables([], fmt="csv", with_paper=True)
    assert "Seed-1.6-V.-250815 (paper)" in csv_text


def test_paper_table3_is_consistent():
    """Shipped Table 3 numbers: each L-1 average is the sample-weighted mean of its L-2 columns
    (Sec. 3.3.1 counts: Dis. 52/50/50/52, Rej. 50/51/50/50, Spa. 150/150, Lim. 150/150) and Total
    the weighted mean over L-1 (204/300/300/201) — within the paper's rounding."""
    t3 = json.loads((Path(gm_module.__file__).parent / "paper" / "table3.json").read_text())
    n = {"Discriminative": [52, 50, 50, 52], "Spatial": [150, 150], "Limited": [150, 150], "Rejection": [50, 51, 50, 50]}
    assert len(t3["rows"]) == 25
    for row in t3["rows"]:
        v = row["values"]
        tot = 0.0
        for l1, ns in n.items():
            avg = sum(v[f"{l1}/{l2}"] * k for l2, k in zip(L2_ORDER[l1], ns)) / sum(ns)
            assert abs(avg - v[l1]) < 0.2, (row["model"], l1)
            tot += v[l1] * sum(ns)
        assert abs(tot / 1005 - v["Total"]) < 0.2, row["model"]


def test_draw_boxes(fixture_dir, tmp_path):  # noqa: F811
    samples = load_groundingme(fixture_dir / "hf")
    plan = {s.id: "shift" for s in samples}
    bench = GroundingME(GroundingME.Options(max_pixels=1_000_000))
    recs = run(bench, samples, ctx(tmp_path, scripted_model(plan, "abs")))
    out = bench.draw(recs[-1], tmp_path / "gm5.png")
    im = Image.open(out).convert("RGB")
    sent = recs[-1].extra["sent_size"]
    assert im.size == tuple(sent)
    # the GT's left edge (x = 500 of 3000 original px) is drawn in green on the downscaled image
    x = round(500 * sent[0] / 3000)
    y = round(1000 * sent[1] / 2000)
    px = [im.getpixel((x + dx, y)) for dx in range(-2, 3)]
    assert any(p[1] > 150 and p[0] < 80 and p[2] < 80 for p in px), px
    gone = recs[-1].model_copy(update={"extra": {**recs[-1].extra, "image": str(tmp_path / "moved.jpg")}})
    with pytest.raises(DataError, match="not found"):
        bench.draw(gone, tmp_path / "x.png")
