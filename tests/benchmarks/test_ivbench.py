"""IV-Bench protocol: real question file, options, prompt text, parser, aggregation, Table 2 data."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from lensbench.benchmarks.base import RunResult
from lensbench.benchmarks.ivbench.benchmark import IVBench
from lensbench.benchmarks.ivbench.data import Query, load_queries
from lensbench.benchmarks.ivbench.options import build_options
from lensbench.benchmarks.ivbench.parse import parse_choice
from lensbench.benchmarks.ivbench.prompts import build_text
from lensbench.benchmarks.ivbench.report import paper_rows
from lensbench.benchmarks.ivbench.sweep import FIG4B_PAIRS, sweep_configs
from lensbench.core.errors import ConfigError, DataError
from lensbench.core.records import SampleRecord

TASKS_BY_GROUP = {
    "Perception": ["Existence", "Reverse Existence", "NLI", "Spatial relationship", "Keyframe extraction",
                   "Constrained OCR", "Details Event"],
    "Reasoning": ["Counting", "Attribute Change", "Temporal Reasoning", "Space-time computing", "Instruction manual",
                  "Summary"],
}


@pytest.fixture(scope="module")
def jsonl(shared_data) -> Path:
    p = shared_data / "IV-Bench" / "dataset" / "test_data.jsonl"
    if not p.is_file():
        pytest.skip(f"IV-Bench questions not found at {p}")
    return p


@pytest.fixture(scope="module")
def raw_items(jsonl):
    """(video_id, query dict) pairs read with plain json, in file order."""
    out = []
    for line in jsonl.read_text(encoding="utf-8").splitlines():
        if line.strip():
            for vid, qs in json.loads(line).items():
                out.extend((vid, q) for q in qs)
    return out


def test_real_file_counts(jsonl, raw_items):
    qs = load_queries(jsonl)
    assert len(qs) == len(raw_items) == 1686
    assert len({q.video_id for q in qs}) == 747
    assert Counter(q.question_type for q in qs) == Counter(q["question_type"] for _, q in raw_items)
    assert set(q.question_type for q in qs) == set(TASKS_BY_GROUP["Perception"] + TASKS_BY_GROUP["Reasoning"])
    assert [q.uid for q in qs] == [f"{v}/{q['data_id']}" for v, q in raw_items]


def test_real_file_options(jsonl, raw_items):
    qs = load_queries(jsonl)
    dup_items = 0
    letters = Counter()
    for q, (_, raw) in zip(qs, raw_items):
        ch = build_options(q, seed=0)
        answer = raw["answer"].strip()
        ds = [d.strip() for d in raw["distractors"]]
        dup_items += answer in ds
        distinct = {d for d in ds if d} - {answer}
        opts = ch.as_dict
        assert list(opts) == [chr(ord("a") + i) for i in range(len(opts))]
        assert len(opts) == len(distinct) + 1
        stripped = [v.strip() for v in opts.values()]
        assert stripped.count(answer) == 1 and opts[ch.correct] == raw["answer"]  # the answer's bytes as released
        assert set(stripped) == distinct | {answer}
        assert set(opts.values()) <= set(raw["distractors"]) | {raw["answer"]}  # every text as released
        assert ch.dup_answer == ds.count(answer)
        letters[ch.correct] += 1
        # deterministic per item; another seed gives another order for most items
        assert build_options(q, seed=0) == ch
    assert dup_items == 21
    assert sum(build_options(q, 0).correct != build_options(q, 1).correct for q in qs) > 0.8 * len(qs)
    # the correct letter is spread over a..j (expected ~170 each for 10-option items)
    assert set(letters) >= set("abcdefghi") and max(letters.values()) < 250


def test_shuffle_is_the_documented_one():
    import hashlib

    q = Query("vid", 3, "vid_3_image.png", "Q?", "Counting", "Whole Video", "right", "", ("x", "y", "right", " ", "z"), 1)
    seed = int.from_bytes(hashlib.sha256(b"7|vid|3").digest()[:8], "big")
    opts = ["x", "y", "z", "right"]
    random.Random(seed).shuffle(opts)
    ch = build_options(q, 7)
    assert [t for _, t in ch.options] == opts
    assert (ch.dup_answer, ch.empty, ch.dup_other) == (1, 1, 0)


def test_prompt_text_official_and_clean():
    q = Query("v", 0, "v_0_image.png", "How many cups are there?", "Counting", "", "3", "", ("2", "4"), 1)
    ch = build_options(q, 0)
    lines = "\n".join(f"{k}. {v}" for k, v in ch.options)
    text = build_text(q, ch, pattern="video-first", frame_num=32, duration=123.456, style="official")
    assert text == ("We provide you with a video that has been divided into 32 evenly spaced frames across its "
                    "123.456 seconds duration, followed by an image. Please answer the question based on the content "
                    "from both the video frames and the image.How many cups are there?？\n" + lines +
                    "\nAnswer with the option's letter from the given choices directly.")
    img_first = build_text(q, ch, pattern="image-first", frame_num=8, duration=30.0, style="clean")
    assert img_first.startswith("We provide you with an image placed at the very beginning, followed by a video that "
                                "has been divided into 8 evenly spaced frames across its 30.0 seconds duration.")
    assert "extracted video frames.\nHow many cups are there?\na. " in img_first


@pytest.mark.parametrize("reply, expected", [
    ("b", "b"), ("(B)", "b"), ("b.", "b"), ("Answer: B", "b"), ("The answer is (c).", "c"), ("<answer>: d", "d"),
    ("**C**", "c"), ("B) blue car", "b"), ("c. first from the left", "c"), ("blue car", "b"),
    ("I think it is the Blue Car.", "b"), ("first from the left", "c"), ("<think>maybe a</think>\nE", "e"),
    ("Option E", "e"), ("3", "e"),
    ("a dog is on the left", None), ("The answer is a dog", None), ("None of the options fit.", None), ("", None),
    ("K", None), ("red car or blue car", None), ("<think>unfinished", None),
])
def test_parse_choice(reply, expected):
    opts = {"a": "red car", "b": "blue car", "c": "first from the left",
            "d": "first from the left, second from the left", "e": "3"}
    assert parse_choice(reply, opts) == expected


def test_sweep_configs():
    assert sweep_configs("8,16", "72,native", None) == [(8, 72), (8, None), (16, 72), (16, None)]
    assert sweep_configs("32", None, None) == [(32, None)]
    assert sweep_configs("32", None, "fig4b") == FIG4B_PAIRS
    assert sweep_configs("32", None, "8x720, 32x360p") == [(8, 720), (32, 360)]
    for bad in [("8,x", None, None), ("0", None, None), ("32", None, "8by720")]:
        with pytest.raises(ConfigError):
            sweep_configs(*bad)
    with pytest.raises(ValueError):
        IVBench.Options(frames="8,,x")
    with pytest.raises(ValueError):
        IVBench.Options(pattern="frames-first")


def _rec(task, status, n_options=10, frames=32, resolution=None, i=[0]):
    i[0] += 1
    return SampleRecord(benchmark="iv-bench", sample_id=f"v{i[0]}/0", outcome=status,
                        labels={"task": task, "video_id": f"v{i[0]}", "data_id": 0, "frames": frames,
                                "resolution": resolution},
                        extra={"n_options": n_options, "dup_answer_removed": 0, "dup_distractor_removed": 0,
                               "empty_distractor_removed": 0})


def test_aggregate_is_sample_weighted():
    recs = ([_rec("Existence", "correct")] * 3 + [_rec("Existence", "wrong")] +           # 3/4
            [_rec("NLI", "unparseable")] * 4 +                                           # 0/4
            [_rec("Summary", "correct")] + [_rec("Counting", "wrong", n_options=5)] +     # 1/2
            [_rec("Counting", "error")])                                                 # not scored
    bench = IVBench()
    metrics, counts = bench.aggregate(recs)
    acc = metrics["accuracy"]
    assert acc["Exist."] == 75.0 and acc["NLI"] == 0.0 and acc["Sum."] == 100.0 and acc["Cnt."] == 0.0
    assert acc["P-Avg"] == pytest.approx(100 * 3 / 8)   # micro, not the mean of 75 and 0
    assert acc["R-Avg"] == pytest.approx(50.0)
    assert acc["Overall"] == pytest.approx(100 * 4 / 10)
    assert acc["RE"] is None
    assert metrics["chance"]["R-Avg"] == pytest.approx(100 * (0.1 + 0.2) / 2)
    assert counts["n"] == 10 and counts["n_unparseable"] == 4 and counts["n_error"] == 1
    assert counts["per_task"]["Cnt."] == 1
    out = bench.tables([RunResult("iv-bench", "m", metrics, counts, complete=False)], "md", with_paper=True)
    assert "| m (32f@native) [incomplete: 1 errors] | 40.00 | 75.00 |" in out
    assert "| Qwen2.5-VL-72B (paper) | 28.90 |" in out


def test_paper_table2_data():
    rows = paper_rows()
    assert len(rows) == 27
    p_cols, r_cols = ["Exist.", "RE", "NLI", "SR", "KE", "CO", "DE"], ["Cnt.", "AC", "TR", "STC", "IU", "Sum."]
    for r in rows:
        # a weighted mean lies between its parts (checks the transcription)
        assert min(r[c] for c in p_cols) <= r["P-Avg"] <= max(r[c] for c in p_cols), r["model"]
        assert min(r[c] for c in r_cols) <= r["R-Avg"] <= max(r[c] for c in r_cols), r["model"]
        assert min(r["P-Avg"], r["R-Avg"]) - 0.15 <= r["Overall"] <= max(r["P-Avg"], r["R-Avg"]) + 0.15, r["model"]
    gem = next(r for r in rows if r["model"] == "Gemini-2-Pro")
    assert (gem["Overall"], gem["IU"], gem["R-Avg"]) == (27.7, 39.6, 24.9)


def test_loader_missing_media(jsonl, tmp_path):
    from PIL import Image

    from lensbench.media.synth_video import write_test_video

    qs = load_queries(jsonl)
    (tmp_path / "test_data.jsonl").symlink_to(jsonl)
    (tmp_path / "videos").mkdir()
    (tmp_path / "images").mkdir()
    vid = qs[0].video_id
    present = [q for q in qs if q.video_id == vid]
    write_test_video(tmp_path / "videos" / f"{vid}.mp4", n_frames=24)
    for q in present:
        Image.new("RGB", (32, 32)).save(tmp_path / "images" / q.image_name)
    with pytest.raises(DataError, match=f"{1686 - len(present)} of 1686 queries lack media"):
        IVBench().load(tmp_path)
    bench = IVBench(IVBench.Options(skip_missing=True))
    got = bench.load(tmp_path)
    assert [q.uid for q in got] == [q.uid for q in present]
    assert got.counts["n_skipped_missing"] == 1686 - len(present)
    # text-only needs no images
    for q in present:
        (tmp_path / "images" / q.image_name).unlink()
    assert len(IVBench(IVBench.Options(skip_missing=True, pattern="text-only")).load(tmp_path)) == len(present)
    with pytest.raises(DataError, match="none of the 1686"):
        IVBench(IVBench.Options(skip_missing=True)).load(tmp_path)


def test_loader_bad_data(tmp_path):
    f = tmp_path / "test_data.jsonl"
    f.write_text(json.dumps({"v": [{"data_id": 0, "image_name": "i.png", "question": "q", "question_type": "Magic",
                                    "answer": "a", "distractors": []}]}) + "\n")
    with pytest.raises(DataError, match="unknown question_type 'Magic'"):
        load_queries(f)
    f.write_text('{"v": [{"data_id": 0}]}\n')
    with pytest.raises(DataError, match="missing field"):
        load_queries(f)
    f.write_text("not json\n")
    with pytest.raises(DataError, match="line 1"):
        load_queries(f)
    with pytest.raises(DataError, match="no question file"):
        IVBench().load(tmp_path / "empty")
