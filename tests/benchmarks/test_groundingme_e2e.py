"""GroundingME end to end through the real CLI, engine, store and HTTP backend (FakeOpenAIServer):
``lensbench run groundingme`` with downscaling and rel1000 boxes, a resumed run, best-of-N with a
text judge, and ``lensbench show``."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

pytest.importorskip("skimage")
from PIL import Image
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.testing.server import FakeOpenAIServer

from groundingme_fixture import ITEMS, fixture_dir  # noqa: F401  (module-scoped fixture)

GT = {f"the object of {sid}": box for sid, _, _, _, box, _ in ITEMS}
SIZES = {}


def _parts(body):
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return None, content
    img = text = None
    for p in content:
        if p.get("type") == "image_url":
            img = p["image_url"]["url"]
        elif p.get("type") == "text":
            text = p["text"]
    return img, text


def responder(body: dict) -> str:
    img, text = _parts(body)
    if text.startswith("# Role and Task") and "[Full Content of Response A]" in text:
        a = text.split("[Full Content of Response A]")[1].split("[Full Content of Response B]")[0]
        return "\\boxed{A}" if "careful" in a else "\\boxed{B}"
    desc = text.split("describes:\n")[1].split("\n")[0]
    box = GT[desc]
    im = Image.open(io.BytesIO(base64.b64decode(img.split(",", 1)[1])))
    SIZES[desc] = im.size
    seed = body.get("seed")
    if seed is not None and seed % 2 == 1:  # best-of-N: odd seeds answer badly
        return "<think>hasty</think>" + json.dumps({"bbox_2d": [0, 0, 5, 5]})
    if box is None:
        return '<think>careful: no such thing</think>{"bbox_2d": null}'
    # the original size is encoded in ITEMS; recover it from the description's item
    sid = desc.rsplit(" ", 1)[1]
    ow, oh = _orig_size(sid)
    rel = [round(box[0] / ow * 1000), round(box[1] / oh * 1000), round(box[2] / ow * 1000), round(box[3] / oh * 1000)]
    return "<think>careful look</think>```json\n" + json.dumps({"bbox_2d": rel}) + "\n```"


def _orig_size(sid):
    from skimage import data as skdata

    for s, photo, *_rest, size in ITEMS:
        if s == sid:
            if size:
                return size
            a = getattr(skdata, photo)()
            return a.shape[1], a.shape[0]
    raise KeyError(sid)


def test_cli_run_show_and_resume(fixture_dir, tmp_path):  # noqa: F811
    runner = CliRunner()
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=responder) as srv:
        args = ["run", "groundingme", "--data-dir", str(fixture_dir / "hf"), "--model", "openai:fake",
                "--base-url", srv.url, "--out", str(out), "--bbox-format", "rel1000", "--max-pixels", "1000000",
                "--format", "json"]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        n_first = sum(srv.answered.values())
        result = json.loads((out / "result.json").read_text())
        assert result["metrics"]["Acc@0.5"]["Total"] == 100.0
        assert result["counts"]["n"] == 6 and result["counts"]["n_unparseable"] == 0
        # the 3000x2000 image was downscaled to the 1 Mpx budget before sending
        w, h = SIZES["the object of gm-5"]
        assert w * h <= 1_000_000 and w > 1000
        # resume: nothing is sent again
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        assert sum(srv.answered.values()) == n_first
    res = runner.invoke(app, ["show", str(out), "--id", "gm-5"])
    assert res.exit_code == 0, res.output
    png = Path(res.output.strip().splitlines()[-1])
    assert png.is_file() and Image.open(png).size == (w, h)


def test_cli_best_of_n_text_judge(fixture_dir, tmp_path):  # noqa: F811
    runner = CliRunner()
    out = tmp_path / "bon"
    with FakeOpenAIServer(responder=responder) as srv:
        res = runner.invoke(app, ["run", "groundingme", "--data-dir", str(fixture_dir / "hf"), "--model", "openai:fake",
                                  "--base-url", srv.url, "--judge-model", "openai:judge", "--judge-base-url", srv.url,
                                  "--out", str(out), "--bbox-format", "rel1000", "--best-of", "4", "--bon-judge", "text-full-responses",
                                  "--with-paper"])
        assert res.exit_code == 0, res.output
    result = json.loads((out / "result.json").read_text())
    m = result["metrics"]
    # seeds 0..3: two good (even) and two bad (odd) samples per item
    assert m["BoN average"]["Total"] == 50.0
    assert m["BoN selected"]["Total"] == 100.0 and m["BoN oracle"]["Total"] == 100.0
    assert result["counts"]["judge_matches"] == 6 * 3 and result["counts"]["judge_fallbacks"] == 0
    assert "Judge-selected" in res.output and "Deepseek-R1" in res.output


def test_cli_official_compat_lmms_eval(fixture_dir, tmp_path):  # noqa: F811
    runner = CliRunner()
    out = tmp_path / "compat"
    with FakeOpenAIServer(responder=responder) as srv:
        res = runner.invoke(app, ["run", "groundingme", "--data-dir", str(fixture_dir / "hf"), "--model", "openai:fake",
                                  "--base-url", srv.url, "--out", str(out), "--official-compat", "--compat-rule",
                                  "lmms-eval"])
        assert res.exit_code == 0, res.output
    assert "official-compat lmms-eval" in res.output and "Center_ACC" in res.output
    result = json.loads((out / "result.json").read_text())
    assert result["options"]["compat_rule"] == "lmms-eval" and result["counts"]["scoring"] == "official-compat"
    # replies are rel1000 boxes: the /999 reading is within 0.1 % of them, so every positive is found
    assert result["metrics"]["Acc@0.5"]["Total"] == 100.0
    rec = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
    assert rec["extra"]["compat_rule"] == "lmms-eval" and rec["extra"]["compat_reading"] == "normalized"
