"""IV-Bench extra commands: the Sec. 4.4 synthesis pipeline (fake LLM over HTTP) and offline download."""

from __future__ import annotations

import json
import re
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from clirun import run_cli
from lensbench.benchmarks.ivbench.data import load_queries
from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.tools.ivbench.download import download_videos, read_ids
from lensbench.tools.ivbench.synth import SimpleColorEmbedder, make_embedder
from lensbench.testing.server import FakeOpenAIServer

COLOURS = [(220, 30, 30), (40, 170, 40), (30, 60, 220)]  # red, green, blue thirds


def _colour_video(path: Path, n: int = 30) -> Path:
    c = av.open(str(path), "w")
    s = c.add_stream("libx264", rate=10)
    s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
    for i in range(n):
        arr = np.zeros((48, 64, 3), np.uint8)
        arr[:] = COLOURS[i * 3 // n]
        for p in s.encode(av.VideoFrame.from_ndarray(arr, format="rgb24")):
            c.mux(p)
    for p in s.encode():
        c.mux(p)
    c.close()
    return path


def test_simple_embedder_picks_the_colour():
    emb = SimpleColorEmbedder()
    t = emb.embed_texts(["the blue car", "a Grey cat", "the dog"])
    assert t.shape == (3, 11) and np.allclose(np.linalg.norm(t[:2], axis=1), 1) and not t[2].any()
    with pytest.raises(ConfigError):
        make_embedder("word2vec")


def responder(body: dict) -> str:
    text = body["messages"][0]["content"][-1]["text"] if isinstance(body["messages"][0]["content"], list) \
        else body["messages"][0]["content"]
    if "convert a video question" in text:
        q = re.search(r"Question: (.*)", text).group(1)
        if "weather" in q:
            return "no entity here"
        m = re.search(r"the (\w+ car)", q)
        return json.dumps({"entity": m.group(0), "question": q.replace(m.group(0), "the entity in the image")})
    if "answerable_without_image" in text:
        return '{"answerable_without_image": %s}' % ("true" if "honk" in text else "false")
    return "?"


def test_synthesize_pipeline(tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    _colour_video(videos / "v1.mp4")
    qa = tmp_path / "qa.jsonl"
    items = [
        {"video_id": "v1", "question": "When does the blue car stop?", "answer": "at the end", "distractors": ["never"]},
        {"video_id": "v1", "question": "What colour is the red car's roof?", "answer": "black"},
        {"video_id": "v1", "question": "Does the green car honk?", "answer": "yes", "distractors": ["no"]},
        {"video_id": "v1", "question": "How is the weather?", "answer": "sunny"},
    ]
    qa.write_text("".join(json.dumps(i) + "\n" for i in items))
    out = tmp_path / "synth" / "test_data.jsonl"
    with FakeOpenAIServer(responder=responder) as srv:
        cmd = ["ivbench", "synthesize", "--videoqa", str(qa), "--videos", str(videos), "--model", "openai:fake",
               "--base-url", srv.url, "--out", str(out), "--frames", "6"]
        r = run_cli(*cmd)
        assert r.returncode == 0, r.stderr
        counts = json.loads(r.stdout.strip().splitlines()[-1])
        assert counts == {"n_input": 4, "n_no_entity": 1, "n_answerable": 1, "n_written": 2}
        n_calls = sum(srv.received.values())
        assert n_calls == 4 + 3  # 4 rewrites, 3 filter calls (one rewrite gave no entity)
        r2 = run_cli(*cmd)  # resumed: all cached
        assert r2.returncode == 0 and json.loads(r2.stdout.strip().splitlines()[-1]) == counts
        assert sum(srv.received.values()) == n_calls
    qs = load_queries(out)  # the IV-Bench schema, readable by the benchmark's loader
    assert [q.question for q in qs] == ["When does the entity in the image stop?",
                                        "What colour is the entity in the image's roof?"]
    # the simple embedder chose a blue frame for "blue car", a red one for "red car"
    for q, want in zip(qs, [COLOURS[2], COLOURS[0]]):
        with Image.open(out.parent / "images" / q.image_name) as im:
            px = np.asarray(im.convert("RGB"), dtype=float).reshape(-1, 3).mean(0)
        assert np.abs(px - want).max() < 40, (q.question, px)


def test_download_offline_or_missing_yt_dlp(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("abc\n# comment\n\nxyz\nabc\n")
    assert read_ids(ids) == ["abc", "xyz"]
    # port 9 on localhost: nothing listens, so the connectivity check fails fast
    with pytest.raises(LensbenchError, match="yt-dlp|yt_dlp|cannot reach"):  # missing extra or offline
        download_videos(read_ids(ids), tmp_path / "v", host="127.0.0.1", port=9, timeout=1)
