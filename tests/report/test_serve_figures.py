"""--serve (aiohttp: page, thumbnails and images by hash, nothing else) and the plots."""

from __future__ import annotations

import asyncio

import pytest

from lensbench.cli.view import write_viewer
from lensbench.views.figures import make_figures
from lensbench.views.runs import read_run
from lensbench.views.viewer.html import read_page_data
from lensbench.testing.runs import craft_run


def test_serve_page_and_images(tmp_path):
    aiohttp_test = pytest.importorskip("aiohttp.test_utils")
    from lensbench.views.viewer.serve import make_app, serve_roots

    run = craft_run(tmp_path / "gm", "groundingme", "m", n=12)
    html, images, runs = write_viewer([run], None, embed=False, figures=False)
    doc = read_page_data(html)
    sha, item = next(iter(doc["images"].items()))
    assert item["t"] == f"/thumb/{sha}" and item["u"] == f"/media/{sha}" and "base64" not in html

    async def go():
        async with aiohttp_test.TestClient(aiohttp_test.TestServer(make_app(html, images.paths, serve_roots(runs)))) as client:
            page = await client.get("/")
            assert page.status == 200 and "lensbench-index" in await page.text()
            full = await client.get(f"/media/{sha}")
            assert full.status == 200 and await full.read() == images.paths[sha].read_bytes()
            thumb = await client.get(f"/thumb/{sha}")
            body = await thumb.read()
            assert thumb.status == 200 and body[:2] == b"\xff\xd8"  # JPEG
            assert (await client.get("/media/" + "0" * 64)).status == 404
            assert (await client.get("/media/..%2f..%2fetc%2fpasswd")).status == 404

    asyncio.run(go())


def test_figures_for_each_benchmark(tmp_path):
    pytest.importorskip("matplotlib")
    runs = [read_run(craft_run(tmp_path / b / m, b, m, n=48, seed=k))
            for k, (b, m) in enumerate([("if-bench", "a"), ("if-bench", "b"), ("rgb-th-bench", "a"),
                                        ("groundingme", "a"), ("iv-bench", "a"), ("gobench", "a")])]
    figs = dict(make_figures(runs))
    assert {"IF-Bench score per dimension", "IV-Bench accuracy per task", "RGB-Th-Bench QAcc per skill (Fig. 4 layout)",
            "RGB-Th-Bench SAcc per skill (Fig. 5 layout)", "GroundingME IoU per L-1: a", "GOBench model vs human: a"} <= set(figs)
    assert all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in figs.values())
