"""``lensbench groundingme build | export`` end to end on the fake OpenAI server: the prompts as
sent, the red box drawn where the candidate is, the filter counts, the release files read back
by the loader, ``lensbench run groundingme`` on the result, and resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.testing.server import FakeOpenAIServer

sys.path.insert(0, str(Path(__file__).parent))
from gm_build_fixture import CONES, FLAGS, KITE, ScriptedBuilder, make_scene, parts  # noqa: E402

pytest.importorskip("pyarrow")

PROMPTS = Path(__file__).resolve().parents[2] / "src/lensbench/tools/groundingme/prompts"


def _template(name: str) -> str:
    body = (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").split("\n-----\n", 1)[1]
    return body[:-1] if body.endswith("\n") else body


def _build_args(scene, work, url, *extra):
    return ["groundingme", "build", "--work", str(work), "--model", "openai:builder", "--base-url", url,
            "--images", str(scene["images"]), "--boxes", str(scene["boxes"]), "--small-boxes", str(scene["small"]),
            "--max-per-image", "10", "--rejection-share", "0.25", *extra]


def _candidates(work):
    return [json.loads(x) for x in (work / "candidates.jsonl").read_text().splitlines()]


def test_build_export_and_run(tmp_path):
    scene = make_scene(tmp_path)
    work, out = tmp_path / "work", tmp_path / "release"
    model = ScriptedBuilder()
    runner = CliRunner()
    with FakeOpenAIServer(responder=model) as srv:
        res = runner.invoke(app, _build_args(scene, work, srv.url))
        assert res.exit_code == 0, res.output
        n_sent = sum(srv.answered.values())
        # 4 cones + 8 flags described with the red box, 1 kite from a crop, 3 negative edits
        assert n_sent == 4 + 8 + 1 + 3
        res = runner.invoke(app, _build_args(scene, work, srv.url))  # rerun: every reply cached
        assert res.exit_code == 0, res.output
        assert sum(srv.answered.values()) == n_sent
    # prompts verbatim (the files after their '-----' header), label filled in
    redbox = [t for t in model.texts if "framed by the red box" in t]
    assert sorted(set(redbox)) == sorted({_template("describe_redbox").replace("{label}", lab) for lab in ("cone", "flag")})
    assert [t for t in model.texts if "is a crop" in t][0] == _template("describe_crop").replace("{label}", "kite")
    # the red frame was drawn on each selected box (pylon, cars and wall were never described)
    frames = Counter(lab for lab, _ in model.frames)
    assert frames == {"cone": 4, "flag": 8}
    want = {("cone", b) for b in CONES} | {("flag", b) for b in FLAGS}
    for lab, fr in model.frames:
        assert any(lab == wl and all(abs(a - b) <= 2 for a, b in zip(fr, wb)) for wl, wb in want), (lab, fr)
    assert model.crops == [(KITE[2] - KITE[0], KITE[3] - KITE[1])]
    build = json.loads((work / "build.json").read_text())["counts"]
    # a.png: 4 cones + pylon + 2 cars + wall = 8 boxes, 7 after NMS; b.png: 8 flags
    assert build["n_boxes"] == 16 and build["n_boxes_after_nms"] == 15 and build["n_candidates"] == 13
    items = _candidates(work)
    cats = Counter(f"{it['subtask_l1']}/{it['subtask_l2']}" for it in items)
    # round(0.25 * 13) = 3 of the 4 cones become Rejection (keeping their L-2); flags: 7 Counting + 1 Occlusion
    assert sum(v for k, v in cats.items() if k.startswith("Rejection/")) == 3
    assert sum(v for k, v in cats.items() if k.startswith("Discriminative/")) == 1
    assert cats["Spatial/Counting"] == 7 and cats["Limited/Occlusion"] == 1 and cats["Limited/Small"] == 1
    text_cone = [it for it in items if '"B"' in (it.get("source_description") or it["description"])][0]
    assert text_cone["subtask_l2"] == "Text"
    for it in items:
        if it["subtask_l1"] == "Rejection":
            assert it["bbox"] is None and it["distractor_bbox"] in [list(b) for b in CONES]
            assert ("purple" in it["description"] and "orange" in it["source_description"]) or \
                ('"C"' in it["description"] and it["subtask_l2"] == "Text")
    assert build["n_negative_failed"] == 0 and build["n_error"] == 0 and build["n_empty"] == 0
    occl = [it for it in items if it["subtask_l2"] == "Occlusion"][0]
    assert occl["bbox"] == list(FLAGS[-1]) and occl["class_count"] == 8

    res = runner.invoke(app, ["groundingme", "export", "--work", str(work), "--out", str(out)])
    assert res.exit_code != 0 and "review" in res.output  # unreviewed export must be asked for
    res = runner.invoke(app, ["groundingme", "export", "--work", str(work), "--out", str(out), "--unreviewed"])
    assert res.exit_code == 0, res.output

    from lensbench.benchmarks.groundingme.data import iter_image_bytes, load_groundingme

    for src in (out, out / "groundingme.tsv"):
        samples = load_groundingme(src)
        assert sorted(s.id for s in samples) == sorted(it["id"] for it in items)
        byid = {it["id"]: it for it in items}
        for s in samples:
            it = byid[s.id]
            assert s.description == it["description"] and s.subtask_l1 == it["subtask_l1"]
            assert s.bbox == (None if it["bbox"] is None else tuple(float(round(v)) for v in it["bbox"]))
        got = dict((s.id, b) for s, b in iter_image_bytes(samples))
        assert got[occl["id"]] == (scene["images"] / "b.png").read_bytes()

    # evaluate the built benchmark: the scripted grounder is right except on Counting items
    truth = {it["description"]: it for it in items}

    def grounder(body):
        _im, text = parts(body)
        desc = text.split("describes:\n")[1].split("\n")[0]
        it = truth[desc]
        if it["bbox"] is None:
            return '{"bbox_2d": null}'
        x1, y1, x2, y2 = it["bbox"]
        if it["subtask_l2"] == "Counting":
            x1, x2 = x1 + 200, x2 + 200
        return json.dumps({"bbox_2d": [x1, y1, x2, y2]})

    with FakeOpenAIServer(responder=grounder) as srv:
        res = runner.invoke(app, ["run", "groundingme", "--data-dir", str(out), "--model", "openai:grounder",
                                  "--base-url", srv.url, "--out", str(tmp_path / "run"), "--bbox-format", "abs"])
        assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    want_total = 100 * sum(it["subtask_l2"] != "Counting" for it in items) / len(items)
    assert result["metrics"]["Acc@0.5"]["Total"] == pytest.approx(want_total, abs=0.05)
    assert result["counts"]["n"] == 13


def test_export_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    (tmp_path / "work").mkdir()
    res = CliRunner().invoke(app, ["groundingme", "export", "--work", str(tmp_path / "work"), "--out",
                                   str(tmp_path / "out"), "--unreviewed"])
    assert res.exit_code != 0 and "not empty" in res.output
    assert (tmp_path / "out" / "keep.txt").read_text() == "x"


def test_bad_box_file_fails_before_any_request(tmp_path):
    scene = make_scene(tmp_path)
    scene["boxes"].write_text(json.dumps([{"image": "a.png", "bbox": [5, 5, 2, 9], "label": "cone"}]))
    with FakeOpenAIServer(responder=ScriptedBuilder()) as srv:
        res = CliRunner().invoke(app, _build_args(scene, tmp_path / "w", srv.url))
        assert res.exit_code != 0 and "boxes.json" in res.output and "[0].bbox" in res.output
        assert sum(srv.received.values()) == 0


def test_resume_after_kill_sends_only_what_is_missing(tmp_path):
    scene = make_scene(tmp_path)
    work = tmp_path / "work"
    model = ScriptedBuilder()
    with FakeOpenAIServer(responder=model, hold_after=5) as srv:
        cmd = [sys.executable, "-m", "lensbench", *_build_args(scene, work, srv.url, "--concurrency", "2")]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 60
        while sum(srv.answered.values()) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the 5 replies are stored; the next requests are held unanswered
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert not (work / "candidates.jsonl").exists()
        srv.release()
        res = CliRunner().invoke(app, _build_args(scene, work, srv.url))
        assert res.exit_code == 0, res.output
        assert max(srv.answered.values()) == 1  # nothing answered twice
        assert sum(srv.answered.values()) == 16
    assert len(_candidates(work)) == 13


def test_a_failed_description_is_left_out_counted_and_retried(tmp_path):
    import asyncio
    import shutil

    from lensbench.backends.base import BackendConfig
    from lensbench.backends.providers import make_backend
    from lensbench.runtime.engine import RetryPolicy
    from lensbench.runtime.session import Session
    from lensbench.testing.server import content_key
    from lensbench.tools.groundingme.build import BuildOptions, build

    scene = make_scene(tmp_path)
    opts = BuildOptions(images=scene["images"], boxes=scene["boxes"], small_boxes=scene["small"], max_per_image=10,
                        rejection_share=0.0)
    work = tmp_path / "work"
    model = ScriptedBuilder()

    def run(url):
        async def go():
            backend = make_backend("openai:b", BackendConfig(base_urls=[url]))
            async with Session(work, {"model": backend}, retry=RetryPolicy(max_retries=0), progress=False) as s:
                return await build(opts, work, s.generate, "openai:b", lambda m: None)
        return asyncio.run(go())

    with FakeOpenAIServer(responder=model) as probe:  # a first build, to learn the kite request's content key
        run(probe.url)
    kite_keys = {content_key(b) for b in probe.bodies if "This image is a crop" in parts(b)[1]}
    assert len(kite_keys) == 1
    shutil.rmtree(work)

    def kite_fails(key, attempt):
        return "500" if key in kite_keys else None

    with FakeOpenAIServer(responder=model, fault_plan=kite_fails) as srv:
        counts = run(srv.url)
        assert counts["n_error"] == 1 and counts["n_items"] == 12  # the kite: a server failure, never described
        assert not any(it["subtask_l2"] == "Small" for it in _candidates(work))
    with FakeOpenAIServer(responder=model) as srv:
        counts = run(srv.url)
        assert counts["n_error"] == 0 and counts["n_items"] == 13
        assert sum(srv.answered.values()) == 1  # only the failed request is sent again


def test_build_visual_check_keeps_only_negatives_the_model_finds_no_object_for(tmp_path):
    """--visual-check (issue 22's check, in the construction): the model is shown each negative's image;
    a negative it says matches an object (the '"C"' text edit: the scripted model sees such a cone) stays
    Discriminative with its original description, the others become Rejection."""
    scene = make_scene(tmp_path)
    plain, checked = tmp_path / "plain", tmp_path / "checked"
    model = ScriptedBuilder()
    with FakeOpenAIServer(responder=model) as srv:
        assert CliRunner().invoke(app, _build_args(scene, plain, srv.url)).exit_code == 0
        res = CliRunner().invoke(app, _build_args(scene, checked, srv.url, "--visual-check"))
        assert res.exit_code == 0, res.output
    negatives = [it for it in _candidates(plain) if it["subtask_l1"] == "Rejection"]
    matching = [it for it in negatives if '"C"' in it["description"]]
    assert matching and len(matching) < len(negatives)  # the scene gives both verdicts
    # every negative was checked once, each with its own image (not a crop)
    assert sorted(d for d, _ in model.checked) == sorted(it["description"] for it in negatives)
    assert {size for _, size in model.checked} <= {im.size for im in map(_open, scene["images"].iterdir())}
    got = _candidates(checked)
    rej = [it for it in got if it["subtask_l1"] == "Rejection"]
    assert sorted(it["id"] for it in rej) == sorted(it["id"] for it in negatives if it not in matching)
    assert all(it["visual_check"] == "no-match" for it in rej)
    kept = {it["id"] for it in got if it["subtask_l1"] == "Discriminative"}
    assert {it["id"].removesuffix("-rej") for it in matching} <= kept
    counts = json.loads((checked / "build.json").read_text())["counts"]
    assert counts["visual_check"] == {"no-match": len(negatives) - len(matching), **({"matches": len(matching)}
                                                                                    if matching else {})}


def _open(p):
    from PIL import Image

    with Image.open(p) as im:
        im.load()
        return im
