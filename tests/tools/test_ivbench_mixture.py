"""IV-Bench Tab. 3 recipe (issue 31.5, paper Sec. 4.4): the unaligned examples no longer announce an image; the
pure-video (LLaVA-Video-178K's own JSON format) and pure-image components are mixed into every variant, the same
drawn items in each; the LLaVA-Video-178K row is a variant of its own, trained and evaluated like the others."""

from __future__ import annotations

import json
import random

import pytest
from PIL import Image
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.core.errors import DataError
from lensbench.tools.training.sft_data import read_examples

pytest.importorskip("av")

# LLaVA-Video-178K items exactly as the release writes them (0_30_s_academic_v0_1/*_qa_processed.json: id,
# conversations of human/gpt turns with "<image>" standing for the video, data_source, video relative to the
# source's video folder); the open-ended file holds several turns per video.
LLAVA_VIDEO = [
    {"id": "RW587", "conversations": [
        {"from": "human", "value": "<image>\nWhat is the person holding at the start of the video?"},
        {"from": "gpt", "value": "The person is holding a red cup."},
        {"from": "human", "value": "What does the person do after putting the cup down?"},
        {"from": "gpt", "value": "They open the door and leave the room."}],
     "data_source": "0_30_s_academic_v0_1", "video": "academic_source/Charades/RW587.mp4"},
    {"id": "1006-8968804598", "conversations": [
        {"from": "human", "value": "<image>\nWhy does the boy run?\nA. to catch the ball\nB. to hide\nC. to eat\n"
                                   "D. to sleep\nPlease respond with only the letter of the correct answer."},
        {"from": "gpt", "value": "A."}],
     "data_source": "0_30_s_nextqa", "video": "NextQA/NExTVideo/1006/8968804598.mp4"},
    {"id": "v_vid0", "conversations": [{"from": "human", "value": "<image>\nDescribe the video."},
                                       {"from": "gpt", "value": "Boxes move."}],
     "data_source": "0_30_s_youtube_v0_1", "video": "liwei_youtube_videos/vid0.mp4"},  # a synthesized video
    {"id": "AB12", "conversations": [{"from": "human", "value": "<image>\nHow many boxes are there?"},
                                     {"from": "gpt", "value": "Two."}],
     "data_source": "0_30_s_academic_v0_1", "video": "academic_source/Charades/AB12.mp4"},
]
IMAGES = [{"id": f"img{i}", "image": f"coco/{i}.jpg",
           "conversations": [{"from": "human", "value": f"<image>\nWhat colour is picture {i}?"},
                             {"from": "gpt", "value": "Grey."}]} for i in range(4)]


def _sources(root):
    from lensbench.media.synth_video import write_test_video

    for it in LLAVA_VIDEO:
        (root / "videos" / it["video"]).parent.mkdir(parents=True, exist_ok=True)
        write_test_video(root / "videos" / it["video"], n_frames=16, fps=8, size=(64, 48))
    (root / "coco").mkdir(parents=True)
    for i in range(4):
        Image.new("RGB", (32, 32), (40 * i, 90, 90)).save(root / "coco" / f"{i}.jpg")
    (root / "0_30_s_academic_oe_v0_1_qa_processed.json").write_text(json.dumps(LLAVA_VIDEO), encoding="utf-8")
    (root / "si.json").write_text(json.dumps(IMAGES), encoding="utf-8")
    return root / "0_30_s_academic_oe_v0_1_qa_processed.json", root / "si.json"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from lensbench.tools.ivbench.train_demo import make_ivbench_demo

    return make_ivbench_demo(tmp_path_factory.mktemp("ivdemo"), n_videos=1)


def test_unaligned_examples_announce_no_image(demo, tmp_path):
    from lensbench.tools.ivbench.sft_data import export_sft

    done = export_sft(demo["synth"], demo["videos"], demo["images"], tmp_path / "exp", frames=3)
    iv, video = read_examples(done["iv"]["sft"]), read_examples(done["video"]["sft"])
    t_iv, t_v = iv[0]["prompt"][0]["content"][-1]["text"], video[0]["prompt"][0]["content"][-1]["text"]
    head = "We provide you with a video that has been divided into 3 evenly spaced frames across its "
    dur = t_iv[len(head):].split(" ")[0]
    assert t_iv.startswith(head) and "followed by an image" in t_iv
    assert t_v == (f"{head}{dur} seconds duration. Please answer the question based on the content from the video "
                   "frames." + t_iv[t_iv.index("?") - len("How many times does the entity in the image appear in the "
                                                          "video"):].replace("the entity in the image", "the red box"))
    assert "image" not in t_v and len(video[0]["images"]) == 3  # frames only, and no word about an image
    assert done["video"]["components"] == {"main": 2}


def test_llava_video_format_read_into_examples(tmp_path):
    from lensbench.media.frame_cache import FrameCache
    from lensbench.tools.ivbench.sft_mix import llava_examples, read_llava

    vfile, ifile = _sources(tmp_path)
    items = read_llava(vfile, "video")
    exs, c = llava_examples(items[:2], "video", tmp_path / "videos", FrameCache(tmp_path / "fc"), frames=4)
    assert c == {"items": 2, "examples": 3, "skipped_media": 0}  # one example per human/gpt turn
    assert [e["id"] for e in exs] == ["pure-video/RW587/0", "pure-video/RW587/1", "pure-video/1006-8968804598/0"]
    first = exs[0]["prompt"][0]["content"]
    assert [b["type"] for b in first] == ["image"] * 4 + ["text"]  # the frames where <image> stood
    assert first[-1]["text"] == "What is the person holding at the start of the video?"
    assert exs[1]["prompt"][0]["content"][-1]["text"] == "What does the person do after putting the cup down?"
    assert exs[2]["completion"][0]["content"][0]["text"] == "A." and len(exs[2]["images"]) == 4
    assert exs[2]["meta"]["data_source"] == "0_30_s_nextqa" and len(exs[2]["meta"]["frame_times"]) == 4
    img, c = llava_examples(read_llava(ifile, "image"), "image", None)
    assert c["examples"] == 4 and img[0]["images"] == [str(tmp_path / "coco" / "0.jpg")]
    bad = tmp_path / "bad.json"
    for items_, field in (([{**LLAVA_VIDEO[0], "video": None}], "video"),
                          ([{**LLAVA_VIDEO[0], "conversations": LLAVA_VIDEO[0]["conversations"][::-1]}],
                           "conversations")):
        bad.write_text(json.dumps([LLAVA_VIDEO[1]] + items_))
        with pytest.raises(DataError, match=f"bad.json \\[field '{field}'\\]: item 1:"):
            read_llava(bad, "video")
    bad.write_text(json.dumps([{**LLAVA_VIDEO[1], "video": "../../etc/x.mp4"}]))
    with pytest.raises(DataError, match="leads outside"):
        llava_examples(read_llava(bad, "video"), "video", tmp_path / "videos", FrameCache(tmp_path / "fc"))


def test_mixture_same_draw_in_every_variant_and_the_row(demo, tmp_path):
    from lensbench.tools.ivbench.sft_data import export_sft
    from lensbench.tools.ivbench.sft_mix import MixSources

    vfile, ifile = _sources(tmp_path / "src")
    mix = MixSources((vfile,), tmp_path / "src" / "videos", (ifile,), tmp_path / "src", video_ratio=1.0,
                     image_ratio=1.5)
    done = export_sft(demo["synth"], demo["videos"], demo["images"], tmp_path / "exp", frames=3, seed=5, mix=mix,
                      row=True)
    # main = 2 queries; 1.0 x 2 = 2 video items drawn from the 3 whose video is not a synthesized one (vid0),
    # round(1.5 x 2) = 3 image items drawn from 4; the draw: random.Random(seed).sample over each pool
    pool = [it["id"] for it in LLAVA_VIDEO if it["id"] != "v_vid0"]
    v_ids = {pool[i] for i in random.Random(5).sample(range(3), 2)}
    i_ids = {f"img{i}" for i in random.Random(5).sample(range(4), 3)}
    turns = {"RW587": 2, "1006-8968804598": 1, "AB12": 1}
    n_video = sum(turns[i] for i in v_ids)
    for v in ("iv", "video"):
        assert done[v]["components"] == {"main": 2, "pure-video": n_video, "pure-image": 3}
        exs = read_examples(done[v]["sft"])  # every line checked: images exist, one per image entry
        assert len(exs) == 2 + n_video + 3
        assert {e["id"].split("/")[1] for e in exs if e["id"].startswith("pure-video/")} == v_ids
        assert {e["id"].split("/")[1] for e in exs if e["id"].startswith("pure-image/")} == i_ids
    assert [e["id"] for e in read_examples(done["iv"]["sft"])] != sorted(e["id"] for e in read_examples(done["iv"]["sft"]))
    row = read_examples(done["llava-video-178k"]["sft"])  # the entire video data (vid0 too) + the same image data
    assert done["llava-video-178k"]["components"] == {"llava-video-178k": 5, "pure-image": 3}
    assert {e["id"].split("/")[1] for e in row if e["id"].startswith("pure-video/")} == {it["id"] for it in LLAVA_VIDEO}
    doc = json.loads((tmp_path / "exp" / "mix.json").read_text())
    assert doc["components"]["pure-video"]["available"] == 4 and doc["components"]["pure-video"]["excluded_synth_videos"] == 1
    assert doc["components"]["pure-image"]["drawn"] == 3 and doc["row"]["video"]["drawn"] == 4
    llava = json.loads((tmp_path / "exp" / "llava_iv.json").read_text())
    assert len(llava) == len(exs) and all(r["conversations"][0]["value"].count("<image>") == len(r["image"]) for r in llava)


def test_cli_export_options_and_bad_input(demo, tmp_path):
    vfile, ifile = _sources(tmp_path / "src")
    base = ["train", "ivbench", "export", "--questions", str(demo["synth"]), "--videos", str(demo["videos"]),
            "--frames", "3", "--llava-video", str(vfile), "--video-root", str(tmp_path / "src" / "videos"),
            "--image-data", str(ifile)]
    r = CliRunner().invoke(app, base + ["--out", str(tmp_path / "e"), "--row"])
    assert r.exit_code == 0, r.output
    assert set(json.loads((tmp_path / "e" / "export.json").read_text())) == {"iv", "video", "llava-video-178k"}
    r = CliRunner().invoke(app, base + ["--out", str(tmp_path / "e2"), "--video-ratio", "-1"])
    assert r.exit_code == 2 and "--video-ratio must be >= 0" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, base[:-6] + ["--out", str(tmp_path / "e3"), "--row", "--image-data", str(ifile)])
    assert r.exit_code == 2 and "needs its data: give --llava-video" in r.output
    (tmp_path / "bad.json").write_text(json.dumps([{"id": "x", "video": "a.mp4", "conversations": []}]))
    r = CliRunner().invoke(app, base[:-6] + ["--llava-video", str(tmp_path / "bad.json"), "--out", str(tmp_path / "e4")])
    assert r.exit_code == 2 and "bad.json [field 'conversations']: item 0" in r.output
    assert not (tmp_path / "e4").exists()  # nothing written before the sources are checked


def test_row_recipe_trains_and_evaluates(demo, tiny_vlm, tmp_path):
    """The Tab. 3 row through the recipe's own path: the mixture file -> train -> evaluate (hf:) -> Tab. 3."""
    from lensbench.tools.ivbench.sft_data import export_sft
    from lensbench.tools.ivbench.sft_mix import MixSources
    from lensbench.tools.ivbench.sft_table import render_table3
    from lensbench.tools.training.evaluate import evaluate_checkpoint
    from lensbench.tools.training.settings import VLMTrainSettings
    from lensbench.tools.training.vlm_sft import train_vlm

    vfile, ifile = _sources(tmp_path / "src")
    done = export_sft(demo["synth"], demo["videos"], demo["images"], tmp_path / "exp", frames=3, variants=(),
                      mix=MixSources((vfile,), tmp_path / "src" / "videos", (ifile,), tmp_path / "src"), row=True)
    assert list(done) == ["llava-video-178k"]
    s = train_vlm(done["llava-video-178k"]["sft"], VLMTrainSettings(
        model=str(tiny_vlm("llava-onevision")), out=tmp_path / "t", batch_size=2, max_steps=1, device="cpu"))
    r = evaluate_checkpoint("iv-bench", s["model_dir"], tmp_path / "run", data_dir=demo["ivbench"], batch=2,
                            frames="3", max_tokens=3, model_name="tiny row")
    assert r.counts["n"] == 2 and r.counts["n_error"] == 0
    md = render_table3([("llava-video-178k", r)], "tiny")
    assert "| tiny + LLaVA-Video-178K | llava-video-178k |" in md
    assert "| LLaVA-OneVision-7B-si + LLaVA-Video-178K (paper) | llava-video-178k | 16.72 | - |" in md


def test_variants_row_model_evaluates_a_released_checkpoint_as_the_row(demo, tiny_vlm, tmp_path):
    """``variants --row-model``: the paper's row 4 is the released LLaVA-Video model; it is evaluated as that row
    (not trained), beside the base model, into the same variants folder that ``table`` reads."""
    from lensbench.tools.ivbench.sft_data import export_sft
    from lensbench.tools.ivbench.sft_mix import MixSources

    vfile, _ifile = _sources(tmp_path / "src")
    export_sft(demo["synth"], demo["videos"], demo["images"], tmp_path / "exp", frames=3, variants=(),
               mix=MixSources((vfile,), tmp_path / "src" / "videos"), row=True)
    base = str(tiny_vlm("llava-onevision"))
    r = CliRunner().invoke(app, ["train", "ivbench", "variants", "--model", base, "--export", str(tmp_path / "exp"),
                                 "--data-dir", str(demo["ivbench"]), "--out", str(tmp_path / "var"), "--frames", "3",
                                 "--max-tokens", "3", "--eval-batch", "2", "--row-model", base])
    assert r.exit_code == 0, r.output
    runs = json.loads((tmp_path / "var" / "variants.json").read_text())["runs"]
    assert list(runs) == ["base", "llava-video-178k"] and not (tmp_path / "var" / "llava-video-178k" / "train").exists()
    t = CliRunner().invoke(app, ["train", "ivbench", "table", str(tmp_path / "var")])
    assert t.exit_code == 0 and " + LLaVA-Video-178K | llava-video-178k |" in t.output


def test_visual_inputs_go_where_their_tokens_stand():
    from pathlib import Path

    from lensbench.tools.ivbench.sft_mix import _parts

    a, b = Path("a.jpg"), Path("b.jpg")
    assert _parts("<image>\nCompare <image> with the first.", [a, b]) == [a, "Compare ", b, " with the first."]
    assert _parts("<video>\nWhat happens?", [a, b]) == [a, b, "What happens?"]  # a video's frames at its token
    assert _parts("Before <image> after <image>", [a]) == ["Before ", a, " after "]
    assert _parts("No token here.", [a]) == [a, "No token here."]
