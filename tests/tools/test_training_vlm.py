"""The shared SFT runner and the GroundingME / IV-Bench recipes on tiny random models (torch, TRL,
peft; skipped without them): assistant-only labels, loss lower after steps on a repeated batch,
resume, the LoRA saved / reloaded / changing outputs, full fine-tuning, and checkpoints evaluated
through ``hf:`` into well-formed runs, ending in the paper tables."""

from __future__ import annotations

import json
import math

import pytest
from PIL import Image

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("pyarrow")

import lensbench  # noqa: E402
from lensbench.tools.groundingme.train_demo import make_grounding_demo  # noqa: E402
from lensbench.tools.training.sft_data import make_example, read_examples, write_examples  # noqa: E402
from lensbench.tools.training.settings import VLMTrainSettings  # noqa: E402
from lensbench.tools.training.vlm_sft import build_trainer, train_vlm  # noqa: E402


def _examples(tmp_path, n=4, same=True):
    img = tmp_path / "img" / "a.png"
    img.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (32, 32), (200, 30, 30)).save(img)
    exs = [make_example(f"e{i}", [img, "is there a w1 ?" if same else f"is there a w{i} ?"],
                        '{"bbox_2d": null}' if same or i % 2 else '{"bbox_2d": [1, 2, 30, 31]}') for i in range(n)]
    write_examples(tmp_path / "sft.jsonl", exs)
    return tmp_path / "sft.jsonl"


def _settings(base, out, **kw):
    d = dict(model=str(base), out=out, batch_size=4, learning_rate=5e-3, logging_steps=1, save_steps=2, max_steps=3,
             lora_r=8, lora_alpha=16, warmup_ratio=0.0, device="cpu")
    d.update(kw)
    return VLMTrainSettings(**d)


@pytest.fixture(scope="module")
def trained(tiny_vlm, tmp_path_factory):
    """A LoRA run on a repeated batch (3 steps), then resumed to 4 steps."""
    tmp = tmp_path_factory.mktemp("sft")
    data = _examples(tmp)
    base = tiny_vlm("qwen2.5-vl")
    first = train_vlm(data, _settings(base, tmp / "run"))
    second = train_vlm(data, _settings(base, tmp / "run", max_steps=4))
    return {"base": base, "data": data, "out": tmp / "run", "first": first, "second": second}


def test_labels_masked_outside_the_assistant_turn(tiny_vlm, tmp_path):
    data = _examples(tmp_path, same=False)
    exs = read_examples(data)
    trainer, proc, _, _ = build_trainer(exs, _settings(tiny_vlm("qwen2.5-vl"), tmp_path / "o"))
    rows = [trainer.train_dataset[i] for i in range(len(exs))]
    batch = trainer.data_collator(rows)
    tok = proc.tokenizer
    for i, ex in enumerate(exs):
        conv = [{"role": m["role"], "content": [dict(c) for c in m["content"]]} for m in ex["prompt"]]
        full = proc.apply_chat_template(conv + ex["completion"], tokenize=False)
        pre = proc.apply_chat_template(conv, tokenize=False, add_generation_prompt=True)
        assert full.startswith(pre)
        want = tok(full[len(pre):], add_special_tokens=False)["input_ids"]  # the assistant turn, <|im_end|> included
        labels = batch["labels"][i]
        kept = labels[labels != -100].tolist()
        assert kept == want and kept[-1] == tok.convert_tokens_to_ids("<|im_end|>")
        ids = batch["input_ids"][i][labels != -100].tolist()
        assert ids == want  # labels are the input ids on the answer and -100 everywhere else
    assert (batch["labels"] == -100).sum() > batch["labels"].numel() // 2


def test_loss_finite_lower_after_steps_and_resume(trained):
    first, second = trained["first"], trained["second"]
    assert len(first["losses"]) == 3 and all(math.isfinite(x) for x in first["losses"])
    assert first["losses"][-1] < first["losses"][0]
    # the trainer checkpoints every 2 steps and at the end: the second call resumes after step 3
    assert first["resumed_from"] is None and second["resumed_from"].endswith("checkpoint-3")
    assert second["steps"] == 4 and second["samples"] == 1 * 4  # only step 4 ran in the resumed call
    log = [json.loads(x) for x in (trained["out"] / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "loss" in r][:3] == [1, 2, 3] and log[-1]["event"] == "done"
    again = train_vlm(trained["data"], _settings(trained["base"], trained["out"], max_steps=4))
    assert again["skipped"] and again["steps"] == 4


def test_lora_saved_reloaded_and_changing_outputs(trained):
    import torch
    from peft import PeftModel

    from lensbench.tools.training.vlm_sft import load_vlm

    base, proc = load_vlm(str(trained["base"]))
    ex = read_examples(trained["data"])[0]
    with Image.open(ex["images"][0]) as im:
        inputs = proc(text=[proc.apply_chat_template(ex["prompt"], add_generation_prompt=True)], images=[[im.convert("RGB")]],
                      return_tensors="pt")
    with torch.no_grad():
        ref = base(**inputs).logits
        lora = PeftModel.from_pretrained(base, trained["out"] / "adapter").eval()
        got = lora(**inputs).logits
        merged, _ = load_vlm(str(trained["out"] / "model"))
        mer = merged.eval()(**inputs).logits
    assert (got - ref).abs().max() > 1e-3  # the trained LoRA changes the outputs
    assert torch.allclose(got, mer, atol=1e-4)  # the merged hf: folder is the adapter folded in


def test_checkpoint_evaluated_through_hf_and_tables(trained, tmp_path):
    """The sweep (baseline + one ratio) through hf: into well-formed runs, ending in Tab. 5 / 7 / Fig. 6."""
    from lensbench.benchmarks.groundingme.items import read_items_file
    from lensbench.tools.groundingme.refexp import read_grounding_items
    from lensbench.tools.groundingme.sft_data import write_eval_set, write_mixtures
    from lensbench.tools.groundingme.sft_table import render_sweep
    from lensbench.tools.groundingme.sweep import SweepPlan, run_sweep

    demo = make_grounding_demo(tmp_path / "demo", n_train=8, n_val=3)
    pos = read_grounding_items(demo["refs"], split="train")
    write_mixtures(tmp_path / "mix", pos, read_items_file(demo["negatives_train"]), ratios=("1:1",), total=8,
                   bbox_format="abs-resized")
    write_eval_set(tmp_path / "mix" / "eval", read_grounding_items(demo["refs"], split="val"),
                   read_items_file(demo["negatives_val"]))
    plan = SweepPlan(train=_settings(trained["base"], tmp_path, max_steps=1), mixtures=tmp_path / "mix",
                     eval_set=tmp_path / "mix" / "eval", out=tmp_path / "sweep", groundingme=demo["groundingme"],
                     eval={"max_tokens": 12}, batch=8)
    said: list[str] = []
    doc = run_sweep(plan, log=said.append)
    assert said[0].startswith("[1/2] baseline: evaluating") and any(m.startswith("[2/2] ratio 1:1: trained (1 steps)")
                                                                     for m in said)
    run = lensbench.load_run(doc["ratios"]["1:1"]["runs"]["in_domain"])
    assert run.result.counts["n"] == 6 and run.result.counts["n_error"] == 0 and len(run.records) == 6
    assert run.manifest["model_spec"].startswith("hf:") and run.manifest["options"]["bbox_format"] == "abs-resized"
    base_run = lensbench.load_run(doc["baseline"]["runs"]["in_domain"])
    assert base_run.manifest["model_fingerprint"] != run.manifest["model_fingerprint"]
    rec = run.records[0]
    assert rec.messages[0]["content"][0]["type"] == "image" and "bbox_2d" in rec.messages[0]["content"][1]["text"]
    gm = lensbench.load_run(doc["ratios"]["1:1"]["runs"]["groundingme"])
    assert gm.result.counts["n"] == 6 and gm.result.counts["n_error"] == 0
    md = render_sweep(doc)
    assert "### GroundingME Tab. 5" in md and "### GroundingME Tab. 7" in md and "Fig. 6" in md
    assert "| Macro_Average (" in md and "| 1:1 (" in md


def test_full_fine_tuning_keeps_the_vision_tower(tiny_vlm, tmp_path):
    from safetensors.torch import load_file

    base = tiny_vlm("qwen2.5-vl")
    s = train_vlm(_examples(tmp_path), _settings(base, tmp_path / "full", lora=False, max_steps=1, learning_rate=1e-2))
    assert s["adapter_dir"] is None
    before, after = load_file(str(base / "model.safetensors")), load_file(str(tmp_path / "full" / "model" / "model.safetensors"))
    vis = [k for k in before if "visual." in k]  # the checkpoint keeps Qwen2.5-VL's original key names
    llm = [k for k in before if k.endswith("layers.0.self_attn.q_proj.weight") and "visual" not in k]
    assert vis and llm
    assert all((before[k] == after[k]).all() for k in vis)
    assert not (before[llm[0]] == after[llm[0]]).all()


@pytest.mark.parametrize("kind", ["qwen3-vl", "llava-onevision"])
def test_other_families_train_and_generate(kind, tiny_vlm, tmp_path):
    import asyncio

    from lensbench.backends.providers import make_backend
    from lensbench.core.types import GenParams, ImagePart, Message, Request

    data = _examples(tmp_path)
    s = train_vlm(data, _settings(tiny_vlm(kind), tmp_path / "run", max_steps=2))
    assert all(math.isfinite(x) for x in s["losses"]) and s["losses"][-1] < s["losses"][0]
    be = make_backend(f"hf:{s['model_dir']}?batch=2")
    img = read_examples(data)[0]["images"][0]
    req = Request(id="q", messages=(Message.user(ImagePart.of(img), "is there a w1 ?"),),
                  params=GenParams(temperature=0.0, max_tokens=4))
    res, = asyncio.run(be.generate_batch([req]))
    assert not isinstance(res, Exception) and res.usage["completion_tokens"] >= 1


def test_ivbench_variants_export_train_evaluate(tiny_vlm, tmp_path):
    pytest.importorskip("av")
    from lensbench.tools.ivbench.train_demo import make_ivbench_demo
    from lensbench.tools.ivbench.sft_data import export_sft
    from lensbench.tools.ivbench.sft_table import render_table3
    from lensbench.tools.training.evaluate import evaluate_checkpoint

    d = make_ivbench_demo(tmp_path / "demo", n_videos=1)
    done = export_sft(d["synth"], d["videos"], d["images"], tmp_path / "export", frames=3)
    iv, video = read_examples(done["iv"]["sft"]), read_examples(done["video"]["sft"])
    assert len(iv) == len(video) == 2
    assert len(iv[0]["images"]) == 4 and len(video[0]["images"]) == 3  # 3 frames + the query image; frames only
    text_iv, text_v = iv[0]["prompt"][0]["content"][-1]["text"], video[0]["prompt"][0]["content"][-1]["text"]
    assert "entity in the image" in text_iv and "red box" in text_v and "entity in the image" not in text_v
    assert iv[0]["completion"][0]["content"][0]["text"] in "abcd" and iv[0]["meta"]["video"].endswith("vid0.mp4")
    llava = json.loads((tmp_path / "export" / "llava_iv.json").read_text())
    assert llava[0]["conversations"][0]["value"].count("<image>") == 4 and len(llava[0]["frame_times"]) == 3
    s = train_vlm(done["iv"]["sft"], _settings(tiny_vlm("llava-onevision"), tmp_path / "t", max_steps=1, batch_size=2))
    r = evaluate_checkpoint("iv-bench", s["model_dir"], tmp_path / "run", data_dir=d["ivbench"], batch=2, frames="3",
                            max_tokens=3, model_name="tiny iv")
    assert r.counts["n"] == 2 and r.counts["n_error"] == 0
    assert "| tiny + IV-aligned SFT data | iv |" in render_table3([("iv", r)], "tiny")


def test_trained_checkpoint_records_its_box_convention_and_hf_reads_it(trained, tmp_path):
    """Issue 31.3: a Qwen2.5-VL checkpoint trained on abs-resized answers, evaluated by hand through hf:,
    was read as abs; only the sweep passed the right format."""
    from lensbench.backends.hf_spec import recorded_eval_options
    from lensbench.benchmarks.groundingme.items import read_items_file
    from lensbench.core.errors import ConfigError
    from lensbench.tools.groundingme.refexp import read_grounding_items
    from lensbench.tools.groundingme.sft_data import write_mixtures

    demo = make_grounding_demo(tmp_path / "demo", n_train=8, n_val=3)
    man = write_mixtures(tmp_path / "mix", read_grounding_items(demo["refs"], split="train"),
                         read_items_file(demo["negatives_train"]), ratios=("1:1",), total=4, bbox_format="abs-resized")
    s = train_vlm(tmp_path / "mix" / man["ratios"]["1:1"]["file"], _settings(trained["base"], tmp_path / "t", max_steps=1))
    rec = json.loads((tmp_path / "t" / "model" / "lensbench_train.json").read_text())
    assert rec["eval_options"] == {"bbox_format": "abs-resized"} and s["eval_options"] == rec["eval_options"]
    assert recorded_eval_options(s["model_dir"]) == {"bbox_format": "abs-resized"}
    assert recorded_eval_options(str(trained["base"])) == {}  # no record: nothing declared
    kw = dict(data_dir=demo["groundingme"], max_tokens=8)
    with pytest.warns(UserWarning, match="bbox_format=abs-resized: as the model's checkpoint records"):
        run = lensbench.run("groundingme", model=f"hf:{s['model_dir']}?batch=8", out=tmp_path / "by-hand", **kw)
    assert run.counts["n"] == 6
    assert lensbench.load_run(tmp_path / "by-hand").manifest["options"]["bbox_format"] == "abs-resized"
    lensbench.run("groundingme", model=f"hf:{s['model_dir']}?batch=8", out=tmp_path / "chosen", bbox_format="rel1000",
                  **kw)
    assert lensbench.load_run(tmp_path / "chosen").manifest["options"]["bbox_format"] == "rel1000"  # a choice wins
    (tmp_path / "t" / "model" / "lensbench_train.json").write_text('{"eval_options": ["abs"]}')
    with pytest.raises(ConfigError, match="eval_options"):
        recorded_eval_options(s["model_dir"])
