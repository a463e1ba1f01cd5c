"""IV-Bench end to end: synthetic release layout with real videos, a real HTTP fake server, sweeps."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from clirun import run_cli
from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.media.synth_video import write_test_video
from lensbench.runtime.runner import RunSettings, run_benchmark
from lensbench.testing.server import FakeOpenAIServer

QUERY_IMAGE_SIZE = (66, 50)  # distinct from every frame size, so the server can tell it apart
TASKS = ["Existence", "Counting", "NLI", "Summary"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """3 videos x 2 queries in the official layout; vidC's file is cut in half (corrupt)."""
    d = tmp_path_factory.mktemp("ivbench")
    (d / "videos").mkdir()
    (d / "images").mkdir()
    lines = []
    for k, vid in enumerate(["vidA", "vidB", "vidC"]):
        write_test_video(d / "videos" / f"{vid}.mp4", n_frames=48 + 12 * k, fps=12, gop=6, size=(160, 120))
        qs = []
        for j in range(2):
            name = f"{vid}_{j}_image.png"
            Image.new("RGB", QUERY_IMAGE_SIZE, (40 * k, 90 * j, 7)).save(d / "images" / name)
            answer = f"answer {vid} {j}"
            qs.append({"data_id": j, "image_name": name, "question": f"What about {vid} {j}?",
                       "question_type": TASKS[(2 * k + j) % 4], "granularity": "Whole Video", "answer": answer,
                       "answer_location": "", "distractors": [f"distractor {i}" for i in range(8)] + [answer]})
        lines.append(json.dumps({vid: qs}))
    (d / "test_data.jsonl").write_text("\n".join(lines) + "\n")
    data = (d / "videos" / "vidC.mp4").read_bytes()
    (d / "videos" / "vidC.mp4").write_bytes(data[: len(data) // 2])
    return d


def _sizes(body: dict) -> list[tuple[int, int]]:
    out = []
    for part in body["messages"][0]["content"]:
        if part["type"] == "image_url":
            raw = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            with Image.open(io.BytesIO(raw)) as im:
                out.append(im.size)
    return out


class Oracle:
    """Answers vidA right (as a bare letter) and vidB with prose naming no option; records bodies."""

    def __init__(self):
        self.bodies: list[dict] = []

    def __call__(self, body: dict) -> str:
        self.bodies.append(body)
        text = next(p["text"] for p in body["messages"][0]["content"] if p["type"] == "text")
        vid, j = re.search(r"What about (\w+) (\d)", text).groups()
        if vid == "vidB":
            return "I cannot tell from these frames."
        letter = re.search(rf"^([a-j])\. answer {vid} {j}$", text, re.M).group(1)
        return f"The answer is ({letter.upper()})."


def test_run_end_to_end(data_dir, tmp_path):
    oracle = Oracle()
    with FakeOpenAIServer(responder=oracle) as srv:
        res = run_benchmark(IVBench(IVBench.Options(frames="5")), RunSettings(
            model="openai:fake", base_url=[srv.url], out=tmp_path / "run", data_dir=data_dir, progress=False))
    c = res.counts
    assert (c["n"], c["n_correct"], c["n_unparseable"], c["n_video_error"]) == (4, 2, 2, 2)
    assert not res.complete and c["n_items_duplicate_answer"] == 6
    assert res.metrics["accuracy"]["Overall"] == 50.0
    recs = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    errs = [r for r in recs if r["outcome"] == "error"]
    assert {r["labels"]["video_id"] for r in errs} == {"vidC"} and all("vidC.mp4" in r["error"] for r in errs)
    assert all(r["extra"]["error_kind"] == "video" and r["request_id"] is None for r in errs)
    # video-first: 5 frames in time order (160x120), then the query image, then the text
    assert len(oracle.bodies) == 4
    for body in oracle.bodies:
        assert _sizes(body) == [(160, 120)] * 5 + [QUERY_IMAGE_SIZE]
        assert body["messages"][0]["content"][-1]["type"] == "text"
        assert body["max_tokens"] == 1024 and body["temperature"] == 0.0
    a0 = next(r for r in recs if r["sample_id"] == "vidA/0")
    assert a0["extra"]["frame_indices"] == [4, 13, 23, 32, 42]  # seg = 47/5 = 9.4: int(4.7 + round(9.4 i))
    assert a0["extra"]["duration"] == pytest.approx(4.0)
    # frames are logged as the video path and each frame's time (index / 12 fps), then the query image
    content = a0["messages"][0]["content"]
    assert [c["type"] for c in content] == ["video", "image", "text"]
    assert content[0]["path"] == str(data_dir / "videos" / "vidA.mp4")
    assert content[0]["timestamps"] == pytest.approx([4 / 12, 13 / 12, 23 / 12, 32 / 12, 42 / 12], abs=1e-6)
    assert len(content[0]["frames"]) == 5 and content[1]["path"] == str(data_dir / "images" / "vidA_0_image.png")
    assert a0["answer"] == a0["target"] and a0["outcome"] == "correct"
    assert a0["labels"] == {"task": "Existence", "column": "Exist.", "group": "P", "video_id": "vidA", "data_id": 0,
                            "granularity": "Whole Video", "frames": 5, "resolution": None, "config": "5f@native"}
    text = next(p["text"] for b in oracle.bodies for p in b["messages"][0]["content"]
                if p["type"] == "text" and "vidA 0" in p["text"])
    assert "divided into 5 evenly spaced frames across its 4.0 seconds duration" in text


def test_image_first_and_text_only(data_dir, tmp_path):
    for pattern, expected in [("image-first", [QUERY_IMAGE_SIZE] + [(80, 60)] * 3), ("text-only", [(80, 60)] * 3)]:
        oracle = Oracle()
        with FakeOpenAIServer(responder=oracle) as srv:
            run_benchmark(IVBench(IVBench.Options(frames="3", resolution="60", pattern=pattern)), RunSettings(
                model="openai:fake", base_url=[srv.url], out=tmp_path / pattern, data_dir=data_dir, progress=False))
        assert oracle.bodies and all(_sizes(b) == expected for b in oracle.bodies), pattern


def test_sweep_shares_decodes_and_plots(data_dir, tmp_path):
    cache = tmp_path / "frames"
    bench = IVBench(IVBench.Options(frames="2,4", resolution="30,native", frame_cache=str(cache)))
    oracle = Oracle()
    with FakeOpenAIServer(responder=oracle) as srv:
        settings = RunSettings(model="openai:fake", base_url=[srv.url], out=tmp_path / "sweep", data_dir=data_dir,
                               progress=False)
        res = run_benchmark(bench, settings)
        assert res.counts["n_videos_decoded"] == 2  # vidA, vidB once each for all 4 configs
        assert len(oracle.bodies) == 4 * 4
        sweep = res.metrics["sweep"]
        assert [(s["frames"], s["resolution"]) for s in sweep] == [(2, 30), (2, None), (4, 30), (4, None)]
        assert all(s["accuracy"]["Overall"] == 50.0 and s["n"] == 4 for s in sweep)
        assert (tmp_path / "sweep" / "ivbench_sweep.png").stat().st_size > 1000
        report = bench.tables([res], "md")
        assert "Frame / resolution sweep" in report and "| fake | 4 | 30 | 50.00 |" in report
        # a second run with the shared cache decodes nothing and sends nothing new
        bench2 = IVBench(IVBench.Options(frames="2,4", resolution="30,native", frame_cache=str(cache)))
        res2 = run_benchmark(bench2, settings)
        assert res2.counts["n_videos_decoded"] == 0 and len(oracle.bodies) == 16
        assert res2.metrics == res.metrics


def test_cli_run_and_report(data_dir, tmp_path):
    out = tmp_path / "cli"
    r = run_cli("run", "iv-bench", "--data-dir", str(data_dir), "--model", "constant:a", "--out", str(out), "--frames",
                "3", "--no-progress", "--with-paper")
    assert r.returncode == 3, r.stderr  # vidC is corrupt: incomplete run
    assert "IV-Bench accuracy (Table 2 layout" in r.stdout and "Gemini-2-Pro (paper)" in r.stdout
    assert "2 undecodable video" in r.stdout
    bad = run_cli("run", "iv-bench", "--data-dir", str(data_dir), "--model", "constant:a", "--out",
                  str(tmp_path / "bad"), "--frames", "8,x")
    assert bad.returncode == 2 and "--frames" in bad.stderr
