"""IV-Bench protocol details on crafted inputs (no video decoding): request bytes and image order of
the three patterns, option texts as released, sample-weighted averages over unequal tasks, and
transport errors left out of the scores. Expected values are written out by hand here."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from PIL import Image

from lensbench.benchmarks.base import RunContext
from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.benchmarks.ivbench.data import Query, load_queries
from lensbench.benchmarks.ivbench.options import build_options
from lensbench.core.records import SampleRecord
from lensbench.core.types import ImagePart, StoredResponse, TextPart
from lensbench.media.frame_cache import FrameSet

VIDEO_FIRST = ("We provide you with a video that has been divided into 3 evenly spaced frames across its 12.5 seconds "
               "duration, followed by an image. Please answer the question based on the content from both the video "
               "frames and the image.")
IMAGE_FIRST = ("We provide you with an image placed at the very beginning, followed by a video that has been divided "
               "into 3 evenly spaced frames across its 12.5 seconds duration. Please answer the question based on the "
               "content from both the image and the extracted video frames.")
INSTRUCTION = "Answer with the option's letter from the given choices directly."


def _query(vid="v1", did=0, task="Counting", answer=" four", distractors=("two", " two ", "three ", "", "four")):
    return {"data_id": did, "image_name": f"{vid}_{did}.png", "question": "How many cups?", "question_type": task,
            "granularity": "Whole Video", "answer": answer, "answer_location": "", "distractors": list(distractors)}


def _layout(tmp_path: Path, lines: list[dict]) -> Path:
    """Release layout with empty video files (frames are supplied directly) and small query images."""
    d = tmp_path / "data"
    (d / "videos").mkdir(parents=True)
    (d / "images").mkdir()
    (d / "test_data.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    for x in lines:
        for vid, qs in x.items():
            (d / "videos" / f"{vid}.mp4").write_bytes(b"")
            for q in qs:
                Image.new("RGB", (40, 30), (200, 10, len(q["image_name"]))).save(d / "images" / q["image_name"])
    return d


def _frames(tmp_path: Path, vid: str, n: int = 3) -> FrameSet:
    """n distinct JPEG frames at indices 0, 25, 50 of a 10 fps, 12.5 s video."""
    paths = []
    for i in range(n):
        p = tmp_path / f"{vid}_f{i}.jpg"
        Image.new("RGB", (32, 24), (30 * i, 100, 7)).save(p)
        paths.append(p)
    return FrameSet(paths=paths, indices=[25 * i for i in range(n)], duration=12.5, n_frames=125, fps=10.0,
                    size=(32, 24), frame_size=(32, 24))


def _ctx(tmp_path: Path, data: Path) -> RunContext:
    async def _gen(reqs, label):  # pragma: no cover - never called here
        raise AssertionError

    return RunContext(run_dir=tmp_path / "run", data_dir=data, seed=0, generate=_gen, has_judge=False, model_name="m")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# ----------------------------------------------------------------------------- options as released
def test_options_keep_released_bytes_and_dedupe_on_stripped_text():
    q = Query("v", 3, "v_3.png", "Q", "Counting", "", " four", "", ("two", " two ", "three ", "", " four ", "six"), 1)
    ch = build_options(q, 7)
    # kept in file order: "two" (first of the two spellings), "three " (bytes kept), "six", then the answer " four"
    kept = ["two", "three ", "six", " four"]
    order = list(range(4))
    random.Random(int.from_bytes(hashlib.sha256(b"7|v|3").digest()[:8], "big")).shuffle(order)
    assert [t for _, t in ch.options] == [kept[j] for j in order]
    assert ch.as_dict[ch.correct] == " four"
    assert (ch.dup_answer, ch.dup_other, ch.empty) == (1, 1, 1)
    # the permutation is the one the stripped-text version used (only the bytes differ)
    stripped = ["two", "three", "six", "four"]
    random.Random(int.from_bytes(hashlib.sha256(b"7|v|3").digest()[:8], "big")).shuffle(stripped)
    assert [t.strip() for _, t in ch.options] == stripped


def test_real_file_option_texts_sent_as_released(shared_data):
    """30 option texts of the public file (3 answers, 27 distractors, on 22 items) carry surrounding spaces."""
    p = shared_data / "IV-Bench" / "dataset" / "test_data.jsonl"
    if not p.is_file():
        pytest.skip(f"IV-Bench questions not found at {p}")
    changed = items = answers = 0
    for q in load_queries(p):
        texts = [t for _, t in build_options(q, 0).options]
        n = sum(t != t.strip() for t in texts)
        changed += n
        items += n > 0
        answers += q.answer != q.answer.strip()
    assert (changed, items, answers) == (30, 22, 3)


# ----------------------------------------------------------------------------- request bytes and order
@pytest.mark.parametrize("pattern", ["video-first", "image-first", "text-only"])
def test_request_bytes_and_image_order(tmp_path, pattern):
    data = _layout(tmp_path, [{"v1": [_query()]}])
    bench = IVBench(IVBench.Options(frames="3", pattern=pattern))
    qs = bench.load(data)
    fs = _frames(tmp_path, "v1")
    reqs, _unsent = bench.requests(qs, {"v1": {(3, None): fs}}, _ctx(tmp_path, data), seed=0)
    assert len(reqs) == 1 and reqs[0].id == "v1/0"
    parts = reqs[0].messages[0].parts
    ch = build_options(qs[0], 0)
    options = "\n".join(f"{k}. {v}" for k, v in ch.options)  # e.g. "c.  four": released bytes, no strip
    assert "  four" in options and "three \n" in options + "\n"
    prefix = IMAGE_FIRST if pattern == "image-first" else VIDEO_FIRST
    expected_text = prefix + "How many cups?？\n" + options + "\n" + INSTRUCTION
    assert isinstance(parts[-1], TextPart) and parts[-1].text == expected_text
    images = [p for p in parts if isinstance(p, ImagePart)]
    frame_shas = [_sha(p) for p in fs.paths]
    query_sha = _sha(data / "images" / "v1_0.png")
    want = {"video-first": frame_shas + [query_sha], "image-first": [query_sha] + frame_shas,
            "text-only": frame_shas}[pattern]
    assert [p.sha256 for p in images] == want
    frames = [p for p in images if p.video is not None]
    assert [p.t_s for p in frames] == [0.0, 2.5, 5.0]  # indices 0, 25, 50 at 10 fps
    assert {p.video for p in frames} == {str(data / "videos" / "v1.mp4")}
    assert reqs[0].params.max_tokens == 1024 and reqs[0].params.temperature == 0.0
    assert reqs[0].meta["target"] == ch.correct and ch.as_dict[ch.correct] == " four"


def test_clean_style_strips_option_texts(tmp_path):
    data = _layout(tmp_path, [{"v1": [_query()]}])
    bench = IVBench(IVBench.Options(frames="3", text_style="clean"))
    qs = bench.load(data)
    reqs, _ = bench.requests(qs, {"v1": {(3, None): _frames(tmp_path, "v1")}}, None, seed=0)
    ch = build_options(qs[0], 0)
    text = reqs[0].messages[0].parts[-1].text
    assert text == (VIDEO_FIRST + "\nHow many cups?\n" + "\n".join(f"{k}. {v.strip()}" for k, v in ch.options) +
                    "\n" + INSTRUCTION)


# ----------------------------------------------------------------------------- scoring and averages
def _reply(rid: str, text: str | None) -> StoredResponse:
    if text is None:
        return StoredResponse(key="k" + rid, request_id=rid, status="error", text=None, error="HTTP 503")
    return StoredResponse(key="k" + rid, request_id=rid, status="ok", text=text)


def test_unequal_tasks_sample_weighted_and_transport_errors_left_out(tmp_path):
    # Perception: Existence 5 items (4 right), Reverse Existence 1 (0 right), NLI 2 (1 right, 1 unparseable)
    # Reasoning: Counting 3 (1 right), Summary 1 (1 right); plus 2 Existence items whose request failed
    plan = ([("Existence", "right")] * 4 + [("Existence", "wrong")] + [("Reverse Existence", "wrong")] +
            [("NLI", "right"), ("NLI", "junk")] + [("Counting", "right")] + [("Counting", "wrong")] * 2 +
            [("Summary", "right")] + [("Existence", "transport")] * 2)
    lines = [{f"v{i}": [_query(f"v{i}", 0, task)]} for i, (task, _) in enumerate(plan)]
    data = _layout(tmp_path, lines)
    bench = IVBench(IVBench.Options(frames="3"))
    qs = bench.load(data)
    frames = {q.video_id: {(3, None): _frames(tmp_path, q.video_id)} for q in qs}
    ctx = _ctx(tmp_path, data)
    reqs, bench._facts = bench.requests(qs, frames, ctx, seed=0)
    replies = {}
    for q, (task, kind) in zip(qs, plan):
        ch = build_options(q, 0)
        wrong = next(k for k in ch.as_dict if k != ch.correct)
        text = {"right": f"Answer: {ch.correct.upper()}", "wrong": wrong, "junk": "I cannot tell.",
                "transport": None}[kind]
        replies[q.uid] = _reply(q.uid, text)
    records = bench.score(qs, reqs, replies, ctx)
    assert all(isinstance(r, SampleRecord) for r in records)
    errs = [r for r in records if r.outcome == "error"]
    assert len(errs) == 2 and all(r.error == "HTTP 503" and r.extra["error_kind"] == "transport" for r in errs)
    assert all(r.messages and r.messages[0]["content"][0]["type"] == "video" for r in errs)  # what was sent is logged
    metrics, counts = bench.aggregate(records)
    acc = metrics["accuracy"]
    # by hand: P = (4 + 0 + 1) / (5 + 1 + 2) = 62.5 (the macro mean of 80, 0, 50 would be 43.3)
    assert acc["Exist."] == pytest.approx(80.0) and acc["RE"] == 0.0 and acc["NLI"] == pytest.approx(50.0)
    assert acc["P-Avg"] == pytest.approx(62.5)
    # R = (1 + 1) / (3 + 1) = 50 (macro: 66.7); Overall = 7 / 12
    assert acc["Cnt."] == pytest.approx(100 / 3) and acc["Sum."] == 100.0
    assert acc["R-Avg"] == pytest.approx(50.0)
    assert acc["Overall"] == pytest.approx(700 / 12)
    assert acc["SR"] is None
    assert (counts["n"], counts["n_error"], counts["n_transport_error"], counts["n_video_error"]) == (12, 2, 2, 0)
    assert counts["n_unparseable"] == 1 and counts["n_correct"] == 7 and counts["per_task"]["Exist."] == 5
    # chance: options per item are "two", "three ", " four" -> 3 options each
    assert metrics["chance"]["Overall"] == pytest.approx(100 / 3)


def test_video_error_records_are_not_scored(tmp_path):
    from lensbench.media.video import VideoError

    data = _layout(tmp_path, [{"v1": [_query("v1")]}, {"v2": [_query("v2", task="Existence")]}])
    bench = IVBench(IVBench.Options(frames="3"))
    qs = bench.load(data)
    frames = {"v1": {(3, None): _frames(tmp_path, "v1")}, "v2": VideoError(data / "videos" / "v2.mp4", "truncated")}
    ctx = _ctx(tmp_path, data)
    reqs, unsent = bench.requests(qs, frames, ctx, seed=0)
    assert [r.id for r in reqs] == ["v1/0"]
    ch = build_options(qs[0], 0)
    records = bench.score(qs, reqs + unsent, {"v1/0": _reply("v1/0", ch.correct)}, ctx)
    assert [r.outcome for r in records] == ["correct", "error"]
    assert records[1].error.startswith("video: ") and "v2.mp4: truncated" in records[1].error
    assert records[1].request_id is None and records[1].labels["group"] == "P"
    metrics, counts = bench.aggregate(records)
    assert metrics["accuracy"]["Overall"] == 100.0 and metrics["accuracy"]["Exist."] is None
    assert (counts["n"], counts["n_video_error"], counts["n_transport_error"]) == (1, 1, 0)
