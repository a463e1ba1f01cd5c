"""The training recipes' data side, no torch needed: SFT example files and their exports, the box
convention inverse, grounding items from the RefCOCOg layouts, GroundingME mixtures and answers, the
grounding-rej benchmark, the negatives' visual check, the sweep tables, GenViP pairs <-> DiffSynth
metadata, LoRA key names, the editor and Tab. 3 tables, ``--set`` settings and the CLI listing."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.core.errors import ConfigError, DataError
from lensbench.core.results import RunResult
from lensbench.core.types import StoredResponse
from lensbench.scoring.bbox import BBOX_FORMATS, from_original_pixels, smart_resize, to_original_pixels
from lensbench.tools.groundingme.train_demo import make_grounding_demo
from lensbench.tools.ifbench.genvip.train_demo import make_genvip_demo
from lensbench.tools.training.exports import to_llamafactory, to_llava, to_swift
from lensbench.tools.training.sft_data import make_example, read_examples, write_examples
from lensbench.tools.training.settings import EditorTrainSettings, VLMTrainSettings, settings_from_cli


def _img(path, size=(64, 48), colour=(200, 30, 30)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)
    return path


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    pytest.importorskip("pyarrow")
    return make_grounding_demo(tmp_path_factory.mktemp("gm-demo"))


# ----------------------------------------------------------------- SFT files and exports
def test_sft_file_round_trip_and_bad_input(tmp_path):
    a, b = _img(tmp_path / "img" / "a.png"), _img(tmp_path / "img" / "b.png")
    ex = make_example("e1", [a, "first", b, "second"], "yes", system="be brief", meta={"k": 1})
    assert write_examples(tmp_path / "sft.jsonl", [ex]) == 1
    line = json.loads((tmp_path / "sft.jsonl").read_text())
    assert line["images"] == ["img/a.png", "img/b.png"]  # relative to the file
    got = read_examples(tmp_path / "sft.jsonl")[0]
    assert got["images"] == [str(a.resolve()), str(b.resolve())] and got["meta"] == {"k": 1}
    assert [m["role"] for m in got["prompt"]] == ["system", "user"]
    bad = dict(line, images=["img/a.png"])  # 2 image entries, 1 path
    (tmp_path / "bad.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(DataError, match="1 image path") as e:
        read_examples(tmp_path / "bad.jsonl")
    assert "images" in str(e.value) and "line 1" in str(e.value)
    missing = dict(line, images=["img/a.png", "img/nope.png"])
    (tmp_path / "bad.jsonl").write_text(json.dumps(missing) + "\n")
    with pytest.raises(DataError, match="image file not found"):
        read_examples(tmp_path / "bad.jsonl")
    two = dict(line, completion=line["completion"] * 2)
    (tmp_path / "bad.jsonl").write_text(json.dumps(two) + "\n")
    with pytest.raises(DataError, match="exactly one assistant"):
        read_examples(tmp_path / "bad.jsonl")


def test_exports_put_one_image_tag_per_image(tmp_path):
    a, b = _img(tmp_path / "a.png"), _img(tmp_path / "b.png")
    exs = read_examples(tmp_path / "s.jsonl") if write_examples(
        tmp_path / "s.jsonl", [make_example("x", [a, b, "which?"], "a", meta={"video": "v.mp4"})]) else []
    sw = [json.loads(x) for x in to_swift(exs, tmp_path / "o" / "swift.jsonl").read_text().splitlines()]
    assert sw[0]["messages"][0] == {"role": "user", "content": "<image>\n<image>\nwhich?"}
    assert sw[0]["messages"][1] == {"role": "assistant", "content": "a"} and len(sw[0]["images"]) == 2
    lf = json.loads(to_llamafactory(exs, tmp_path / "o" / "mix.json", "demo").read_text())
    info = json.loads((tmp_path / "o" / "dataset_info.json").read_text())
    assert lf == [{"messages": sw[0]["messages"], "images": sw[0]["images"]}]
    assert info["demo"]["formatting"] == "sharegpt" and info["demo"]["file_name"] == "mix.json"
    ll = json.loads(to_llava(exs, tmp_path / "o" / "llava.json", extra_keys=("video",)).read_text())
    assert ll[0]["conversations"][0] == {"from": "human", "value": "<image>\n<image>\nwhich?"}
    assert ll[0]["video"] == "v.mp4" and ll[0]["image"] == sw[0]["images"]


def test_settings_from_cli():
    s = settings_from_cli(VLMTrainSettings, ["lora=false", "epochs=1"], model="m", out="o", epochs=3.0)
    assert s.lora is False and s.epochs == 1.0
    e = settings_from_cli(EditorTrainSettings, ["targets=to_q,to_k"], model="m", out="o")
    assert e.targets == ["to_q", "to_k"] and (e.rank, e.epochs, e.batch_size, e.resolution, e.learning_rate) == \
        (32, 2.0, 8, 1024, 1e-4)  # IF-Bench App. C
    with pytest.raises(ConfigError, match="unknown key 'lorra'"):
        settings_from_cli(VLMTrainSettings, ["lorra=1"], model="m", out="o")
    with pytest.raises(ConfigError, match="epochs"):
        settings_from_cli(VLMTrainSettings, ["epochs=-1"], model="m", out="o")


# ----------------------------------------------------------------- boxes
@pytest.mark.parametrize("fmt", BBOX_FORMATS)
def test_from_original_pixels_inverts_to_original(fmt):
    box, size = (12.0, 8.0, 40.0, 30.0), (64, 48)
    out = from_original_pixels(box, fmt, sent_size=size, orig_size=size)
    back = to_original_pixels(out, fmt, sent_size=size, orig_size=size)
    assert back == pytest.approx(box)


def test_from_original_pixels_values():
    assert from_original_pixels((32, 24, 64, 48), "rel1000", sent_size=(64, 48), orig_size=(64, 48)) == \
        pytest.approx((500, 500, 1000, 1000))
    h, w = smart_resize(48, 64)
    assert from_original_pixels((32, 24, 64, 48), "abs-resized", sent_size=(64, 48), orig_size=(64, 48)) == \
        pytest.approx((32 * w / 64, 24 * h / 48, w, h))


# ----------------------------------------------------------------- grounding items
def test_grounding_items_from_generic_and_hf_layouts(tmp_path):
    from lensbench.tools.groundingme.refexp import read_grounding_items

    _img(tmp_path / "im" / "a.png", (80, 60))
    (tmp_path / "rows.jsonl").write_text(json.dumps({"id": 1, "image": "im/a.png", "description": "a cup",
                                                     "bbox": [1, 2, 30, 40]}) + "\n")
    it = read_grounding_items(tmp_path / "rows.jsonl")[0]
    assert (it["bbox"], it["width"], it["height"], it["description"]) == ([1, 2, 30, 40], 80, 60, "a cup")
    # jxu124/refcocog rows: sentences, COCO box in raw_anns (x, y, w, h), size in raw_image_info
    row = {"ref_id": 7, "image_path": "a.png", "split": "train", "bbox": [0, 0, 1, 1],
           "sentences": [{"sent": "left cup", "raw": "Left cup"}, {"sent": "the cup", "raw": "The cup"}],
           "raw_anns": json.dumps({"bbox": [10, 5, 20, 15]}), "raw_image_info": json.dumps({"width": 80, "height": 60})}
    (tmp_path / "jx.jsonl").write_text(json.dumps(row) + "\n" + json.dumps({**row, "split": "val"}) + "\n")
    items = read_grounding_items(tmp_path / "jx.jsonl", images_dir=tmp_path / "im", split="train")
    assert [i["id"] for i in items] == ["7-s0", "7-s1"] and items[0]["bbox"] == [10, 5, 30, 20]
    # lmms-lab/RefCOCOg parquet: embedded image, expressions in "answer", COCO bbox
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    buf = io.BytesIO()
    Image.new("RGB", (50, 40), (1, 2, 3)).save(buf, "PNG")
    pq.write_table(pa.Table.from_pylist([{"question_id": "q1", "image": {"bytes": buf.getvalue(), "path": "x.png"},
                                          "answer": ["the man", "a man"], "bbox": [5, 5, 10, 20], "iscrowd": 0}]),
                   tmp_path / "val.parquet")
    items = read_grounding_items(tmp_path / "val.parquet", media_dir=tmp_path / "media")
    assert [i["description"] for i in items] == ["the man", "a man"] and items[0]["bbox"] == [5, 5, 15, 25]
    assert Image.open(items[0]["image"]).size == (50, 40) == (items[0]["width"], items[0]["height"])
    with pytest.raises(DataError, match="no description"):
        (tmp_path / "bad.jsonl").write_text(json.dumps({"image": "im/a.png", "bbox": [1, 2, 3, 4]}) + "\n")
        read_grounding_items(tmp_path / "bad.jsonl")


def test_grounding_items_from_coco_refs(tmp_path):
    from lensbench.tools.groundingme.refexp import read_grounding_items

    _img(tmp_path / "train2014" / "COCO_1.jpg", (100, 80))
    refs = [{"ref_id": 3, "image_id": 1, "ann_id": 9, "split": "train", "sentences": [{"sent": "dog on the left"}]}]
    (tmp_path / "refcocog").mkdir()
    with open(tmp_path / "refcocog" / "refs(umd).p", "wb") as fh:
        pickle.dump(refs, fh)
    (tmp_path / "refcocog" / "instances.json").write_text(json.dumps({
        "images": [{"id": 1, "file_name": "COCO_1.jpg", "width": 100, "height": 80}],
        "annotations": [{"id": 9, "image_id": 1, "bbox": [4, 6, 20, 30]}]}))
    it, = read_grounding_items(tmp_path / "refcocog", images_dir=tmp_path / "train2014", split="train")
    assert (it["description"], it["bbox"], it["width"]) == ("dog on the left", [4, 6, 24, 36], 100)
    with pytest.raises(ConfigError, match="--images"):
        read_grounding_items(tmp_path / "refcocog")


# ----------------------------------------------------------------- GroundingME mixtures and answers
def test_answers_and_mixtures(tmp_path, demo):
    from lensbench.benchmarks.groundingme.items import read_items_file
    from lensbench.benchmarks.groundingme.prompts import build_prompt
    from lensbench.tools.groundingme.refexp import read_grounding_items, write_items_file
    from lensbench.tools.groundingme.sft_data import answer_for, write_eval_set, write_mixtures

    item = {"id": "a", "image": "x", "description": "d", "bbox": [16, 12, 48, 36], "width": 64, "height": 48}
    assert json.loads(answer_for(item, "rel1000")) == {"bbox_2d": [250, 250, 750, 750]}
    assert json.loads(answer_for({**item, "bbox": None}, "rel1000")) == {"bbox_2d": None}
    pos = read_grounding_items(demo["refs"], split="train")
    write_items_file(tmp_path / "pos.jsonl", pos)
    negs = read_items_file(demo["negatives_train"])
    man = write_mixtures(tmp_path / "mix", read_items_file(tmp_path / "pos.jsonl"), negs, ratios=("1:2", "2:1"),
                         total=12, seed=3, bbox_format="rel1000")
    assert man["ratios"]["1:2"] == {"file": "mix_1-2.jsonl", "n_negative": 4, "n_positive": 8}
    assert man["ratios"]["2:1"]["n_negative"] == 8
    exs = read_examples(tmp_path / "mix" / "mix_2-1.jsonl")
    assert len({e["id"] for e in exs}) == 12  # negatives' ids differ from their positives'
    by_label = {e["meta"]["label"] for e in exs}
    assert by_label == {"positive", "negative"}
    for e in exs:
        text = e["prompt"][0]["content"][1]["text"]
        src = next(x for x in pos + negs if x["image"] == e["images"][0] and x["description"] in text)
        assert text == build_prompt(src["description"], "rel1000")
        want = None if e["meta"]["label"] == "negative" else json.loads(answer_for(src, "rel1000"))["bbox_2d"]
        assert json.loads(e["completion"][0]["content"][0]["text"]) == {"bbox_2d": want}
    with pytest.raises(ConfigError, match="needs"):
        write_mixtures(tmp_path / "m2", pos, negs, ratios=("2:1",), total=100)
    ev = write_eval_set(tmp_path / "eval", pos[:3], negs[:2])
    sets = [json.loads(x)["set"] for x in (ev / "items.jsonl").read_text().splitlines()]
    assert sets == ["RefCOCOg_val"] * 3 + ["RefCOCOg_rej_val"] * 2


def test_grounding_rej_benchmark_scores_rejections(tmp_path, demo):
    """A model that always rejects: every negative right, every positive wrong (Tab. 5 columns)."""
    import lensbench
    from lensbench.benchmarks.groundingme.items import read_items_file
    from lensbench.tools.groundingme.refexp import read_grounding_items
    from lensbench.tools.groundingme.sft_data import write_eval_set

    pos, negs = read_grounding_items(demo["refs"], split="val"), read_items_file(demo["negatives_val"])
    data = write_eval_set(tmp_path / "eval", pos[:4], negs[:2])
    res = lensbench.run("grounding-rej", model='constant:{"bbox_2d": null}', out=tmp_path / "run", data_dir=data)
    acc = res.metrics["Acc@0.5"]
    assert (acc["RefCOCOg_val"], acc["RefCOCOg_rej_val"], acc["Macro_Average"], acc["Total"]) == \
        (0.0, 100.0, 50.0, 100.0 * 2 / 6)
    assert res.metrics["Rejection rate"]["Positives"] == 100.0 and res.counts["sets"] == {"RefCOCOg_val": 4,
                                                                                         "RefCOCOg_rej_val": 2}
    table = lensbench.load_run(tmp_path / "run").table(with_paper=True)
    assert "| 0.0 | 100.0 | 50.0 |" in table and "Qwen3-VL-8B-Instruct 2:1 (paper) | 83.1 | 97.3 | 90.2" in table
    (data / "items.jsonl").write_text((data / "items.jsonl").read_text().replace('"width": 64', '"width": 0', 1))
    with pytest.raises(DataError, match="width"):
        lensbench.run("grounding-rej", model='constant:{"bbox_2d": null}', out=tmp_path / "run2", data_dir=data)


# ----------------------------------------------------------------- visual check
def test_visual_check_verdicts(tmp_path):
    import asyncio

    from lensbench.tools.groundingme.visual_check import visual_check

    img = _img(tmp_path / "a.png")
    negs = [{"id": str(i), "image": str(img), "description": f"d{i}"} for i in range(4)]
    answers = {"vcheck/0": "No.", "vcheck/1": "Yes, the cup.", "vcheck/2": "I cannot tell", "vcheck/3": None}

    async def gen(reqs, label):
        assert label == "visual-check" and all(r.messages[0].parts[0].path == str(img) for r in reqs)
        assert "d2" in reqs[2].messages[0].parts[1].text
        return {r.id: StoredResponse(key=r.id, request_id=r.id, status="ok" if answers[r.id] else "error",
                                     text=answers[r.id] or "") for r in reqs}

    kept, counts = asyncio.run(visual_check(negs, gen))
    assert [k["id"] for k in kept] == ["0"] and kept[0]["visual_check"] == "no-match"
    assert counts == {"no-match": 1, "matches": 1, "unclear": 1, "error": 1}
    kept, _ = asyncio.run(visual_check(negs, gen, keep_unclear=True))
    assert [k["id"] for k in kept] == ["0", "2", "3"]


def test_negatives_pool_with_visual_check_cli(tmp_path, demo):
    from lensbench.testing.server import FakeOpenAIServer
    from lensbench.tools.groundingme.refexp import read_grounding_items, write_items_file

    items = read_grounding_items(demo["refs"], split="val")[:4]
    write_items_file(tmp_path / "pos.jsonl", items)

    def responder(body):
        content = body["messages"][-1]["content"]
        text = content if isinstance(content, str) else " ".join(c.get("text", "") for c in content)
        if "Is there any object" in text:  # the visual check: the edit of item 0 still matches
            return "yes" if "purple pen" in text else "no"
        desc = text.split("\n")[-1] if "ref" not in text else text
        return json.dumps({"description": "purple pen" if items[0]["description"] in text else "a golden box"})

    with FakeOpenAIServer(responder) as srv:
        r = CliRunner().invoke(app, ["groundingme", "negatives", "--source", str(tmp_path / "pos.jsonl"), "--model",
                                     "openai:m", "--base-url", srv.url, "--visual-check", "openai:v",
                                     "--visual-check-base-url", srv.url, "--pool", "--out", str(tmp_path / "neg.jsonl")],
                               env={"OPENAI_API_KEY": "x"})
    assert r.exit_code == 0, r.output
    got = [json.loads(x) for x in (tmp_path / "neg.jsonl").read_text().splitlines()]
    assert len(got) == 3 and all(g["bbox"] is None and g["visual_check"] == "no-match" for g in got)
    assert {g["source_description"] for g in got} == {i["description"] for i in items[1:]}
    assert '"matches": 1' in r.output and '"no-match": 3' in r.output


# ----------------------------------------------------------------- sweep tables
def test_sweep_tables_from_run_folders(tmp_path, demo):
    import lensbench
    from lensbench.benchmarks.groundingme.items import read_items_file
    from lensbench.tools.groundingme.refexp import read_grounding_items
    from lensbench.tools.groundingme.sft_table import render_sweep, without_rejection
    from lensbench.tools.groundingme.sft_data import write_eval_set

    data = write_eval_set(tmp_path / "eval", read_grounding_items(demo["refs"], split="val")[:3],
                          read_items_file(demo["negatives_val"])[:3])
    runs = {}
    for name, spec in (("base", "constant:{\"bbox_2d\": [0, 0, 1, 1]}"), ("1:1", 'constant:{"bbox_2d": null}')):
        for bench, d in (("grounding-rej", data), ("groundingme", demo["groundingme"])):
            lensbench.run(bench, model=spec, out=tmp_path / name / bench, data_dir=d, model_name=name)
        runs[name] = {"in_domain": str(tmp_path / name / "grounding-rej"), "groundingme": str(tmp_path / name / "groundingme")}
    doc = {"base_model": "/m/tiny", "baseline": {"runs": runs["base"]}, "ratios": {"1:1": {"runs": runs["1:1"]}}}
    md = render_sweep(doc)
    assert "| Macro_Average (tiny) | 0.0 | - | - | - | 50.0 | - |" in md  # columns: Origin, 1:8 ... 2:1
    assert "| RefCOCOg_rej_val (Qwen3-VL-8B-Instruct, paper) | 30.5 | 83.5 | 87.9 | 92.3 | 94.8 | 97.3 |" in md
    gm = lensbench.load_run(tmp_path / "1:1" / "groundingme").result
    assert gm.metrics["Acc@0.5"]["Rejection"] == 100.0 and without_rejection(gm) == 0.0
    assert "| 1:1 (tiny) | 0.0 | 100.0 |" in md  # Fig. 6 data row: w/o Rejection, Rejection
    csv = render_sweep(doc, "csv", with_paper=False)
    assert "paper" not in csv and "Origin (tiny),0.0" in csv.replace('"', "")


# ----------------------------------------------------------------- GenViP editor data, LoRA keys, tables
def test_diffsynth_metadata_round_trip(tmp_path, shared_data):
    from lensbench.backends.images.editors import EDIT_PROMPT
    from lensbench.tools.ifbench.genvip.editor_data import read_diffsynth_metadata, write_diffsynth_metadata

    f = shared_data / "IF-Bench" / "edit_ft" / "DiffSynth-Studio" / "data" / "example.json"
    if not f.is_file():
        pytest.skip("the IF-Bench release's DiffSynth-Studio example.json is absent")
    pairs = read_diffsynth_metadata(f, tmp_path, check_files=False)
    raw = json.loads(f.read_text())
    assert [p.target.name for p in pairs] == [r["image"].split("/")[-1] for r in raw]
    assert all(p.prompt == EDIT_PROMPT for p in pairs)  # the release's prompts are empty (App. C prompt used)
    out = write_diffsynth_metadata(pairs, tmp_path / "meta.json", tmp_path, empty_prompt=True)
    assert json.loads(out.read_text()) == raw


def test_curate_manifest_to_pairs_and_metadata(tmp_path):
    pytest.importorskip("cv2")
    from lensbench.tools.ifbench.genvip.curate import CurateSettings, curate, find_pairs
    from lensbench.tools.ifbench.genvip.editor_data import pairs_from_manifest, read_diffsynth_metadata, write_diffsynth_metadata

    d = make_genvip_demo(tmp_path / "demo")
    summary = curate(find_pairs(d["pairs"]), [], tmp_path / "cur", CurateSettings(target=3, min_side=16, min_dice=0.0,
                                                                                    min_brightness=0.0, ks=(1,)))
    pairs = pairs_from_manifest(tmp_path / "cur")
    assert len(pairs) == summary["kept"] == 3 and all(p.sources[0].parent.name == "ir" for p in pairs)
    meta = write_diffsynth_metadata(pairs, tmp_path / "ds" / "metadata.json", d["pairs"])
    rows = json.loads(meta.read_text())
    assert rows[0]["image"].startswith("rgb/") and rows[0]["edit_image"][0].startswith("ir/")
    back = read_diffsynth_metadata(meta, d["pairs"])
    assert [(b.sources, b.target) for b in back] == [(p.sources, p.target) for p in pairs]


def test_lora_keys_diffsynth_to_diffusers_and_back():
    np = pytest.importorskip("numpy")
    from lensbench.backends.images.lora_keys import is_diffusers_format, to_diffsynth, to_diffusers

    a, b = np.ones((4, 8)), np.full((16, 4), 2.0)
    ds = {"transformer_blocks.0.attn.to_q.lora_A.default.weight": a,
          "transformer_blocks.0.attn.to_q.lora_B.default.weight": b}
    conv = to_diffusers(ds)
    assert set(conv) == {"transformer.transformer_blocks.0.attn.to_q.lora_A.weight",
                         "transformer.transformer_blocks.0.attn.to_q.lora_B.weight"} and is_diffusers_format(conv)
    back = to_diffsynth(conv, scale=0.5)
    assert set(back) == set(ds) and (back["transformer_blocks.0.attn.to_q.lora_B.default.weight"] == 1.0).all()
    kohya = {"diffusion_model.img_in.lora_down.weight": a, "diffusion_model.img_in.lora_up.weight": b,
             "diffusion_model.img_in.alpha": 2.0}  # alpha / r = 0.5, folded as sqrt(0.5) into each side
    k = to_diffusers(kohya)
    prod = k["transformer.img_in.lora_B.weight"] @ k["transformer.img_in.lora_A.weight"]
    assert prod == pytest.approx(0.5 * (b @ a))
    with pytest.raises(ValueError, match="lacks its lora_B"):
        to_diffusers({"x.lora_A.weight": a})


def test_editor_table_names_the_editor(tmp_path):
    from lensbench.tools.ifbench.genvip.editor_table import editor_of, render_editor_table

    (tmp_path / "tr").mkdir()
    (tmp_path / "tr" / "translate_report.json").write_text(json.dumps({"editor": "diffusers:E|lora=L|steps=40"}))
    score = {c: 50.0 for c in ["Avg", "SU", "IT", "VC", "TL", "SRU", "OC", "TFU", "AR", "TFR", "CR"]}
    runs = [RunResult("if-bench", "m", {"Score": score}, {"n": 1}, options={"input": "if"}),
            RunResult("if-bench", "m", {"Score": score}, {"n": 1},
                      options={"input": "if+rgb+text", "translated_dir": str(tmp_path / "tr")})]
    assert [editor_of(r) for r in runs] == ["Vanilla", "diffusers:E; lora=L; steps=40"]
    md = render_editor_table(runs)
    assert "| Qwen2.5-VL-7B (paper) | Qwen-Edit-2509-FT | 74.2 |" in md
    assert "| Vanilla | 50.0 |" in md and "| diffusers:E; lora=L; steps=40 | 50.0 |" in md


def test_table3_rows():
    from lensbench.tools.ivbench.sft_table import render_table3

    r = RunResult("iv-bench", "m", {"accuracy": {"Overall": 25.0}}, {"n": 8})
    md = render_table3([("base", r), ("iv", None)], "tiny")
    assert "| tiny | base | 25.00 | 8 |" in md and "| tiny + IV-aligned SFT data | iv | - | - |" in md
    assert "| LLaVA-OneVision-7B-si + 36K IV data (paper) | iv | 16.13 | - |" in md


def test_cli_lists_the_recipes():
    top = CliRunner().invoke(app, ["--help"])
    assert top.exit_code == 0 and "train" in top.output and "Sec. 5.3" in top.output
    r = CliRunner().invoke(app, ["train", "--help"])
    assert all(k in r.output for k in ("groundingme", "genvip", "ivbench", "tiny", "demo-data"))


def test_manifest_paths_relative_to_where_curate_ran(tmp_path, monkeypatch):
    """``genvip curate --pairs demo/pairs`` writes paths as given (relative to its working folder)."""
    from lensbench.tools.ifbench.genvip.editor_data import pairs_from_manifest

    _img(tmp_path / "demo" / "pairs" / "ir" / "a.png"), _img(tmp_path / "demo" / "pairs" / "rgb" / "a.png")
    (tmp_path / "cur").mkdir()
    (tmp_path / "cur" / "manifest.jsonl").write_text(json.dumps(
        {"ir": "demo/pairs/ir/a.png", "rgb": "demo/pairs/rgb/a.png", "kept": True}) + "\n" + json.dumps(
        {"ir": "demo/pairs/ir/b.png", "rgb": "demo/pairs/rgb/b.png", "kept": False}) + "\n")
    monkeypatch.chdir(tmp_path)
    p, = pairs_from_manifest("cur")
    assert p.sources[0].resolve() == (tmp_path / "demo" / "pairs" / "ir" / "a.png").resolve()
    monkeypatch.chdir(tmp_path / "cur")
    with pytest.raises(DataError, match="file not found"):
        pairs_from_manifest(tmp_path / "cur")


# ----------------------------------------------------------------- issue 31: Sec. 5.3 mixtures and Fig. 6 order
def test_mix_without_total_gives_every_ratio_the_same_size(tmp_path, demo):
    """Sec. 5.3 fixes the size of every fine-tuning set (30,000); 'mix' without --total gave 18 / 20 / 24 / 32 / 24."""
    ratios = ("1:8", "1:4", "1:2", "1:1", "2:1")
    n_pos = sum(1 for x in demo["refs"].read_text().splitlines() if json.loads(x)["split"] == "train")
    n_neg = len(demo["negatives_train"].read_text().splitlines())

    def fits(t, r):  # round(t * neg / (neg + pos)) negatives, the rest positives
        a, b = map(int, r.split(":"))
        k = round(t * a / (a + b))
        return k <= n_neg and t - k <= n_pos

    want = max(t for t in range(1, 30_001) if all(fits(t, r) for r in ratios))
    largest = {r: max(t for t in range(1, 1000) if fits(t, r)) for r in ratios}
    assert (n_pos, n_neg, want) == (16, 16, 18) and len(set(largest.values())) > 1
    from lensbench.tools.groundingme.refexp import read_grounding_items, write_items_file

    write_items_file(tmp_path / "pos.jsonl", read_grounding_items(demo["refs"], split="train"))
    args = ["train", "groundingme", "mix", "--positives", str(tmp_path / "pos.jsonl"), "--negatives",
            str(demo["negatives_train"]), "--out"]
    r = CliRunner().invoke(app, [*args, str(tmp_path / "mix")])
    assert r.exit_code == 0, r.output
    man = json.loads((tmp_path / "mix" / "mixtures.json").read_text())
    assert man["total"] == want and "same for every ratio" in man["total_rule"]
    assert {v["n_negative"] + v["n_positive"] for v in man["ratios"].values()} == {want}
    for r_, v in man["ratios"].items():
        a, b = map(int, r_.split(":"))
        assert v["n_negative"] == round(want * a / (a + b))
        assert len((tmp_path / "mix" / v["file"]).read_text().splitlines()) == want
    r = CliRunner().invoke(app, [*args, str(tmp_path / "old"), "--per-ratio-max"])
    assert r.exit_code == 0, r.output
    old = json.loads((tmp_path / "old" / "mixtures.json").read_text())
    assert {k: v["n_negative"] + v["n_positive"] for k, v in old["ratios"].items()} == largest
    assert old["total"] is None and "differ" in old["total_rule"]


def test_sweep_columns_and_fig6_in_ratio_order(tmp_path, monkeypatch):
    """Fig. 6 put the ratios in the order the sweep ran them (Baseline, 1:2, 2:1, 1:8, 1:4, 1:1): a zigzag."""
    pytest.importorskip("matplotlib")
    from lensbench.tools.groundingme import sft_table

    ran = ["1:2", "2:1", "1:8", "1:4", "1:1"]
    doc = {"base_model": "/m/tiny", "baseline": {"runs": {}}, "ratios": {r: {"runs": {}} for r in ran}}
    paper_order = ["Origin", "1:8", "1:4", "1:2", "1:1", "2:1"]
    assert [name for name, _ in sft_table.sweep_runs(doc)] == paper_order
    md = sft_table.render_sweep(doc, with_paper=False)
    t7 = md.split("Tab. 7")[1].split("Fig. 6")[0]
    assert [ln.split("|")[1].split(" (")[0].strip() for ln in t7.splitlines() if "(tiny)" in ln] == paper_order
    figs = []
    monkeypatch.setattr(sft_table, "save_png", lambda fig, path: figs.append(fig) or path)
    # ours lacks most ratios: the paper's points must still sit at their own ratios, in order
    sft_table.plot_fig6({**doc, "ratios": {"1:1": {"runs": {}}}}, tmp_path / "f.png")
    ax = figs[0].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Baseline", "1:8", "1:4", "1:2", "1:1", "2:1"]
    paper = ax.get_lines()[-1]
    assert list(paper.get_xdata()) == [0, 1, 2, 3, 4, 5]
    f6 = json.loads((Path(sft_table.__file__).parents[2] / "benchmarks" / "groundingme" / "paper" / "fig6.json").read_text())
    assert list(paper.get_ydata()) == [p["without_rejection"] for p in f6["points"]]
