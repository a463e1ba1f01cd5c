"""hf: backend with torch present (skipped otherwise): a tiny random Qwen2.5-VL built from a config
in the test (no downloads), end to end through `lensbench run`, batched vs one at a time, video
frames, the thinking switch."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from clirun import run_cli  # noqa: E402
from lensbench.backends.providers import make_backend  # noqa: E402
from lensbench.core.types import GenParams, ImagePart, Message, Request  # noqa: E402
from lensbench.benchmarks.rgbth.demo import write_release as make_rgbth_release  # noqa: E402
from lensbench.tools.training.tiny_vlm import save_qwen25vl  # noqa: E402


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return save_qwen25vl(tmp_path_factory.mktemp("tiny") / "qwen25vl-tiny")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_rgbth_release(tmp_path_factory.mktemp("rgbth"), n_scenes=2)


def cli(*args):
    return run_cli(*args)


def test_lensbench_run_end_to_end_batched_and_cached(ckpt, data, tmp_path):
    out = tmp_path / "run"
    args = ["run", "rgb-th-bench", "--data-dir", str(data), "--model", f"hf:{ckpt}?batch=8", "--out", str(out),
            "--no-progress", "--format", "json", "--max-tokens", "6"]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    n_req = sum(1 for _ in open(out / "samples.jsonl"))
    assert doc["counts"]["n_error"] == 0 and n_req > 0
    import sqlite3
    rows = sqlite3.connect(out / "responses.sqlite").execute("SELECT status, usage FROM responses").fetchall()
    assert rows and all(s == "ok" for s, _ in rows)
    assert all(0 < json.loads(u)["completion_tokens"] <= 6 for _, u in rows)
    # a fully cached re-run neither sends nor loads anything and gives the same report
    r2 = cli(*args)
    assert r2.returncode == 0, r2.stderr
    assert json.loads(r2.stdout)["metrics"] == doc["metrics"]


def _requests(paths, n=6, **params):
    qs = ["is there a thermal image ?", "answer yes or no : is the image w1 w2 w3 w4 w5 ?", "question :",
          "w9 w8 w7 w6 w5 w4 w3 w2 w1 is there a the ?", "w3 ?", "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 ?"]
    return [Request(id=f"q{i}", messages=(Message.user(ImagePart.of(paths[i % len(paths)]), qs[i % len(qs)]),),
                    params=GenParams(temperature=0.0, max_tokens=8, **params)) for i in range(n)]


def test_batched_greedy_equals_one_at_a_time(ckpt, data):
    imgs = sorted(str(p) for p in data.rglob("*.jpg"))
    reqs = _requests(imgs)
    be = make_backend(f"hf:{ckpt}?batch=6&dtype=float32")
    batched = asyncio.run(be.generate_batch(reqs))
    single = [asyncio.run(be.generate(r)) for r in reqs]
    assert [c.text for c in batched] == [c.text for c in single]
    assert [c.usage["prompt_tokens"] for c in batched] == [c.usage["prompt_tokens"] for c in single]
    assert be.model.get_input_embeddings().weight.dtype.__str__() == "torch.float32"


def test_thinking_switch_reaches_the_template(ckpt, data):
    img = sorted(str(p) for p in data.rglob("*.jpg"))[:1]
    be = make_backend(f"hf:{ckpt}")
    on, = asyncio.run(be.generate_batch(_requests(img, 1)))
    off, = asyncio.run(be.generate_batch(_requests(img, 1, extra_body={"chat_template_kwargs": {"enable_thinking": False}})))
    # the template adds "<think>", "\n", "\n", "</think>", "\n", "\n" (word-level tokens) when thinking is off
    assert off.usage["prompt_tokens"] - on.usage["prompt_tokens"] == 6


@pytest.mark.parametrize("mode", ["video", "images"])
def test_video_frames(ckpt, data, mode):
    imgs = sorted(str(p) for p in data.rglob("*.jpg"))[:4]
    frames = tuple(ImagePart.of(p, video="clip.mp4", t_s=float(i)) for i, p in enumerate(imgs))
    req = Request(id="v", messages=(Message.user(*frames, "question : is there a thermal image ?"),),
                  params=GenParams(temperature=0.0, max_tokens=4))
    be = make_backend(f"hf:{ckpt}?video={mode}")
    res, = asyncio.run(be.generate_batch([req]))
    assert not isinstance(res, Exception), res
    assert res.usage["completion_tokens"] >= 1


def test_pixel_bounds_option_changes_image_tokens(ckpt, data):
    img = sorted(str(p) for p in data.rglob("*.jpg"))[:1]  # 48x32: raised to the processor's minimum (4 cells)
    small, = asyncio.run(make_backend(f"hf:{ckpt}").generate_batch(_requests(img, 1)))
    big_be = make_backend(f"hf:{ckpt}?min_pixels={28 * 28 * 32}&max_pixels={28 * 28 * 64}")
    big, = asyncio.run(big_be.generate_batch(_requests(img, 1)))
    # one image token per 28x28 cell: at least 32 cells instead of about 4
    assert big.usage["prompt_tokens"] - small.usage["prompt_tokens"] >= 20
