"""The viewer page: one self-contained file with every sample, image and table inside."""

from __future__ import annotations

import re

from lensbench.cli.view import leaderboard_report, write_viewer
from lensbench.views.viewer import md_to_html
from lensbench.views.viewer.html import read_page_data
from lensbench.testing.runs import craft_run


def _data(html: str) -> dict:
    return read_page_data(html)


def test_page_is_self_contained_and_complete(tmp_path):
    a = craft_run(tmp_path / "a", "groundingme", "ma", n=24, seed=1)
    b = craft_run(tmp_path / "b", "groundingme", "mb", n=24, seed=2, accuracy=0.9)
    v = craft_run(tmp_path / "v", "iv-bench", "ma", n=8, seed=3)
    out = tmp_path / "report.html"
    html, images, runs = write_viewer([a, b, v], out, n_resamples=200)
    assert out.read_text(encoding="utf-8") == html
    assert not re.search(r"""(src|href)=["']?https?://""", html)  # no network
    assert "<script src" not in html and "<link" not in html
    doc = _data(html)
    assert len(doc["samples"]) == 24 + 24 + 8
    assert len(doc["comparisons"]) == 1 and doc["comparisons"][0]["ia"] == 0
    # every referenced image is registered, thumbnails are embedded data URLs
    shas = {p[1] for s in doc["samples"] for m in s["m"] for p in m[1] if p[0] == "i"}
    assert shas and all(doc["images"][h]["t"].startswith("data:image/jpeg;base64,") for h in shas)
    # IV-Bench frames resolved from the run's media folder, timestamps kept
    vids = [p for s in doc["samples"] for m in s["m"] for p in m[1] if p[0] == "v"]
    assert vids and vids[0][2] == [0.5, 1.5, 2.5, 3.5]
    assert all(doc["images"][h]["t"] for h in vids[0][3])
    assert doc["tables"]["groundingme"].count("<table") >= 1


def test_unfinished_run_does_not_stop_the_viewer(tmp_path):
    a = craft_run(tmp_path / "a", "rgb-th-bench", "ma", n=24, write_result=False)
    html, _images, runs = write_viewer([a, tmp_path / "nope"], None, figures=False)
    doc = _data(html)
    assert len(doc["runs"]) == 2 and not doc["runs"][0]["complete"] and doc["runs"][1]["problems"]


def test_md_to_html_tables():
    h = md_to_html("### T <x>\n\n| a | b |\n|---|---|\n| 1 | <2> |\n\ntext")
    assert "<h4>T &lt;x&gt;</h4>" in h and "<th>a</th>" in h and "<td>&lt;2&gt;</td>" in h and "<p>text</p>" in h


def test_md_to_html_notes_are_lists():
    h = md_to_html("Notes:\n- a <x>\n- b\n  continued\n\n* = run not complete\n| a | b |\n|---|---|\n| - | 1 |")
    h = re.sub(r">\s+<", "><", h).replace("\n", " ")  # HTML whitespace: a line break inside text is a space
    assert "<p>Notes:</p><ul><li>a &lt;x&gt;</li><li>b continued</li></ul>" in h
    assert "<p>* = run not complete</p>" in h  # a footnote mark, not a list
    assert "<td>-</td>" in h and "<div class='tblwrap'><table" in h  # an empty cell stays a cell


def test_md_to_html_paper_rows_headings_and_escapes():
    """markdown-it-py does the parsing (issue 32.10); ours: headings one level down, ``(paper)`` rows marked."""
    h = md_to_html("# Top\n\n| model | QAcc |\n|---|---:|\n| GPT-4o (paper) | 71.2 |\n| ours | 70.1* |\n\n"
                   "see `lensbench view` & <b>x</b>")
    assert "<h2>Top</h2>" in h and 'class="paper"' in h and h.count("<tr") == 3
    assert h.index('class="paper"') < h.index("GPT-4o (paper)") < h.index("ours")
    assert "70.1*" in h and "&lt;b&gt;x&lt;/b&gt;" in h and "&amp;" in h and "<b>" not in h


def test_leaderboard_report_function(tmp_path):
    a = craft_run(tmp_path / "a", "groundingme", "ma", n=16)
    text = leaderboard_report([a, tmp_path / "missing"], "csv", n_resamples=100)
    assert text.splitlines()[0] == ("model,benchmark,settings,coverage,state,metric,category,value,ci_low,ci_high,n,"
                                    "cluster,ci_method,n_resamples,seed,level,run")
    row = dict(zip(text.splitlines()[0].split(","), text.splitlines()[1].split(",")))
    # the CSV records the design of every CI
    assert (row["cluster"], row["ci_method"], row["n_resamples"], row["seed"]) == ("sample", "BCa bootstrap",
                                                                                   "100", "0")
    assert "missing" in leaderboard_report([a, tmp_path / "missing"], "md", n_resamples=100)


def test_details_come_in_chunks_after_the_script(tmp_path):
    from lensbench.views.viewer.html import render_page

    a = craft_run(tmp_path / "a", "if-bench", "ma", n=40)
    html, _images, _runs = write_viewer([a], None, figures=False)
    doc = read_page_data(html)
    page = render_page(doc, chunk=7)
    assert page.count('id="lensbench-c') == 6  # 40 samples / 7
    script = page.index("<script>\n")
    assert page.index('id="lensbench-c0"') < script < page.index('id="lensbench-c1"')
    assert read_page_data(page)["samples"] == doc["samples"]


def _png_header_only(path, w: int, h: int) -> str:
    """A PNG whose header claims ``w`` x ``h`` px (valid CRCs) with one tiny IDAT: a decompression
    bomb as Pillow sees it on open, written in microseconds. Returns its sha256."""
    import hashlib
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
    path.write_bytes(raw)
    return hashlib.sha256(raw).hexdigest()


def _with_bombs(tmp_path):
    """A run whose first two images are decompression bombs (over 2x and just over 1x Pillow's limit)."""
    import json

    run = craft_run(tmp_path / "run", "rgb-th-bench", "m", n=12)
    big = _png_header_only(run / "media" / "bomb.png", 40000, 40000)      # 1600 Mpx: DecompressionBombError
    mid = _png_header_only(run / "media" / "mid.png", 10000, 10000)       # 100 Mpx: DecompressionBombWarning
    lines, k = [], 0
    for line in (run / "samples.jsonl").read_text().splitlines():
        rec = json.loads(line)
        part = rec["messages"][0]["content"][0]
        if k < 2:
            part["path"], part["sha256"] = str(run / "media" / ("bomb.png", "mid.png")[k]), (big, mid)[k]
            k += 1
        lines.append(json.dumps(rec))
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n")
    return run, big, mid


def test_decompression_bomb_images_become_placeholders(tmp_path, recwarn):
    run, big, mid = _with_bombs(tmp_path)
    for embed, max_thumbs in ((True, 3000), (True, 0), (False, 3000)):
        html, images, _runs = write_viewer([run], None, embed=embed, max_thumbs=max_thumbs, figures=False,
                                           compare=False)
        doc = _data(html)
        for sha, pixels in ((big, ("1600000000 pixels", "1600 Mpx")), (mid, ("100000000 pixels", "100 Mpx"))):
            item = doc["images"][sha]
            assert item["t"] is None and item["u"] is None, (embed, max_thumbs, item)
            assert "decompression" in item["why"] and "bomb" in item["why"] and "not decoded" in item["why"]
            assert any(x in item["why"] for x in pixels), item["why"]
            assert sha not in images.paths  # never served by --serve either
        others = [v for s, v in doc["images"].items() if s not in (big, mid)]
        assert others and all(v["t"] for v in others)  # the other images are unaffected
    assert not [w for w in recwarn.list if "DecompressionBomb" in type(w.message).__name__]
    from importlib.resources import files  # the page's script shows 'why' in the placeholder

    js = (files("lensbench.views.viewer") / "assets" / "viewer.js").read_text(encoding="utf-8")
    assert "'image not shown: ' + im.why" in js
