"""The GenViP editor LoRA on a tiny random Qwen-Image-Edit-Plus pipeline (torch, diffusers, peft;
skipped without them): flow-matching loss lower after steps on a repeated batch, the LoRA saved in
diffusers format / reloaded / changing outputs, resume, a DiffSynth-Studio LoRA (crafted state dict)
loading as DiffSynth applies it, and the loop train -> translate --lora -> IF-Bench GenViP -> Tab. 5."""

from __future__ import annotations

import json
import math

import pytest
from PIL import Image

pytest.importorskip("torch")
pytest.importorskip("diffusers")
pytest.importorskip("peft")

import torch  # noqa: E402

from lensbench.tools.training.editor_lora import EditPair, PairDataset, flow_matching_loss, train_editor_lora  # noqa: E402
from lensbench.tools.training.settings import EditorTrainSettings  # noqa: E402


def _pairs(tmp_path, n=2):
    out = []
    for i in range(n):
        a, b = tmp_path / f"ir{i}.png", tmp_path / f"rgb{i}.png"
        Image.new("L", (40, 30), 40 + 50 * i).convert("RGB").save(a)
        Image.new("RGB", (40, 30), (200, 30 * i, 10)).save(b)
        out.append(EditPair((a,), b, "w1 w2"))
    return out


def _settings(model, out, **kw):
    d = dict(model=str(model), out=out, resolution=32, batch_size=2, max_steps=2, rank=4, learning_rate=1e-3,
             save_steps=1, mixed_precision="no", device="cpu")
    d.update(kw)
    return EditorTrainSettings(**d)


def _transformer_out(tr, seed=0):
    g = torch.Generator().manual_seed(seed)
    hs = torch.randn(1, 32, tr.config.in_channels, generator=g)
    enc = torch.randn(1, 5, tr.config.joint_attention_dim, generator=g)
    with torch.no_grad():
        return tr(hidden_states=hs, encoder_hidden_states=enc, encoder_hidden_states_mask=torch.ones(1, 5, dtype=torch.long),
                  timestep=torch.tensor([0.5]), img_shapes=[[(1, 4, 4), (1, 4, 4)]], return_dict=False)[0]


def test_flow_matching_loss_lower_after_steps(tiny_editor, tmp_path):
    from diffusers import DiffusionPipeline, FlowMatchEulerDiscreteScheduler
    from peft import LoraConfig

    s = _settings(tiny_editor, tmp_path)
    pipe = DiffusionPipeline.from_pretrained(str(tiny_editor))
    pipe.transformer.requires_grad_(False)
    pipe.transformer.add_adapter(LoraConfig(r=4, lora_alpha=4, init_lora_weights="gaussian", target_modules=s.targets))
    params = [p for p in pipe.transformer.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=3e-3)
    sched = FlowMatchEulerDiscreteScheduler.from_config(pipe.scheduler.config)
    batch = [PairDataset(_pairs(tmp_path, 1), 32)[0]]

    def loss():
        return flow_matching_loss(pipe, pipe.transformer, batch, s, sched, "cpu", torch.float32,
                                  generator=torch.Generator().manual_seed(1))

    first = loss()
    for _ in range(4):
        opt.zero_grad()
        l_ = loss()
        l_.backward()
        opt.step()
    assert math.isfinite(first.item()) and loss().item() < first.item()


def test_lora_saved_reloaded_changes_outputs_and_resumes(tiny_editor, tmp_path):
    from diffusers import DiffusionPipeline
    from safetensors.torch import load_file

    pairs = _pairs(tmp_path)
    s = train_editor_lora(pairs, _settings(tiny_editor, tmp_path / "run"))
    assert s["steps"] == 2 and len(s["losses"]) == 2 and all(math.isfinite(x) for x in s["losses"])
    lora = tmp_path / "run" / "lora"
    d = load_file(str(lora / "pytorch_lora_weights.safetensors"))
    assert d and all(k.startswith("transformer.") and ".lora_" in k for k in d)
    ds = load_file(str(lora / "diffsynth.safetensors"))
    assert set(ds) == {k[len("transformer."):].replace(".weight", ".default.weight") for k in d}
    pipe = DiffusionPipeline.from_pretrained(str(tiny_editor))
    ref = _transformer_out(pipe.transformer)
    pipe.load_lora_weights(str(lora))
    assert (_transformer_out(pipe.transformer) - ref).abs().max() > 1e-6
    again = train_editor_lora(pairs, _settings(tiny_editor, tmp_path / "run", max_steps=3))
    assert again["resumed_from"].endswith("checkpoint-2") and again["steps"] == 3 and len(again["losses"]) == 1


def _seen(monkeypatch) -> list[list[str]]:
    """The prompts of every batch the training loop computes a loss on, in order."""
    from lensbench.tools.training import editor_lora

    seen: list[list[str]] = []
    real = editor_lora.flow_matching_loss

    def spy(pipe, tr, batch, *a, **kw):
        seen.append([b["prompt"] for b in batch])
        return real(pipe, tr, batch, *a, **kw)

    monkeypatch.setattr(editor_lora, "flow_matching_loss", spy)
    return seen


@pytest.mark.parametrize("grad_accum,stop", [(1, 5), (2, 3)])
def test_resume_sees_the_data_in_the_uninterrupted_order(tiny_editor, tmp_path, monkeypatch, grad_accum, stop):
    """7 pairs in batches of 2 (4 batches an epoch, the last of 1): a run stopped at step ``stop`` (mid-way through the second epoch) and resumed
    to step 7 trains on the same batches in the same order as a run of 7 steps without a stop, across epoch ends
    (issue 22: the resumed run restarted the sampler's generator, so its later epochs had other orders)."""
    pairs = [EditPair(p.sources, p.target, f"pair {i}") for i, p in enumerate(_pairs(tmp_path, 7))]
    seen = _seen(monkeypatch)
    whole = train_editor_lora(pairs, _settings(tiny_editor, tmp_path / "whole", max_steps=7, grad_accum=grad_accum))
    order = list(seen)
    assert whole["steps"] == 7 and len(order) == 7 * grad_accum  # 4 batches an epoch: whole accumulations
    every = sorted(f"pair {i}" for i in range(7))
    assert all(sorted(sum(order[e * 4:(e + 1) * 4], [])) == every for e in range(len(order) // 4))  # epochs
    assert order[4:7] != order[:3]  # each epoch reshuffled
    seen.clear()
    cut = train_editor_lora(pairs, _settings(tiny_editor, tmp_path / "cut", max_steps=stop, grad_accum=grad_accum))
    again = train_editor_lora(pairs, _settings(tiny_editor, tmp_path / "cut", max_steps=7, grad_accum=grad_accum))
    assert again["resumed_from"].endswith(f"checkpoint-{stop}")
    assert seen == order
    # the noise and timesteps too (accelerate restores the RNG states; starting a pass draws none): same losses
    assert cut["losses"] + again["losses"] == pytest.approx(whole["losses"], rel=1e-5)


def test_diffsynth_lora_loads_as_diffsynth_applies_it(tiny_editor, tmp_path):
    """A crafted DiffSynth-Studio LoRA (its key names, ``.default.``, no alpha) gives the outputs of
    W + B @ A (DiffSynth's GeneralLoRALoader) once loaded through the converted names."""
    from diffusers import DiffusionPipeline
    from safetensors.torch import save_file

    from lensbench.backends.images.lora_keys import read_for_diffusers

    g = torch.Generator().manual_seed(0)
    pipe = DiffusionPipeline.from_pretrained(str(tiny_editor))
    tr = pipe.transformer
    mods = ["transformer_blocks.0.attn.to_q", "transformer_blocks.1.img_mlp.net.2"]
    sd = {}
    for m in mods:
        w = tr.get_submodule(m).weight
        sd[f"{m}.lora_A.default.weight"] = torch.randn(2, w.shape[1], generator=g) * 0.1
        sd[f"{m}.lora_B.default.weight"] = torch.randn(w.shape[0], 2, generator=g) * 0.1
    save_file(sd, str(tmp_path / "epoch-1.safetensors"))
    ref_pipe = DiffusionPipeline.from_pretrained(str(tiny_editor))
    with torch.no_grad():
        for m in mods:
            ref_pipe.transformer.get_submodule(m).weight += sd[f"{m}.lora_B.default.weight"] @ sd[f"{m}.lora_A.default.weight"]
    want = _transformer_out(ref_pipe.transformer)
    assert (want - _transformer_out(tr)).abs().max() > 1e-5
    pipe.load_lora_weights(read_for_diffusers(tmp_path / "epoch-1.safetensors"))
    assert torch.allclose(_transformer_out(pipe.transformer), want, atol=1e-5)


def test_genvip_loop_ends_in_table5(tiny_editor, tiny_vlm, tmp_path, monkeypatch):
    """train (manifest) -> translate with the LoRA -> IF-Bench IF+RGB+Text through hf: -> Tab. 5."""
    pytest.importorskip("cv2")
    import diffusers.pipelines.qwenimage.pipeline_qwenimage_edit_plus as plus
    from typer.testing import CliRunner

    from lensbench.cli.main import app
    from lensbench.tools.ifbench.genvip.train_demo import make_genvip_demo

    # the pipeline edits at ~1024 x 1024 whatever the output size: 32 x 32 here keeps the test fast
    monkeypatch.setattr(plus, "VAE_IMAGE_SIZE", 32 * 32)
    monkeypatch.setattr(plus, "CONDITION_IMAGE_SIZE", 32 * 32)
    d = make_genvip_demo(tmp_path / "demo", n_pairs=4)
    run = CliRunner().invoke
    r = run(app, ["genvip", "curate", "--pairs", str(d["pairs"]), "--benchmark-images", str(d["ifbench"] / "infrared_imgs"),
                  "--out", str(tmp_path / "cur"), "--target", "2", "--min-side", "16", "--min-dice", "0",
                  "--min-brightness", "0", "--clusters", "1"])
    assert r.exit_code == 0, r.output
    r = run(app, ["train", "genvip", "train", "--manifest", str(tmp_path / "cur"), "--model", str(tiny_editor),
                  "--out", str(tmp_path / "ft"), "--set", "resolution=32", "--set", "max_steps=1", "--set", "rank=4",
                  "--set", "batch_size=2"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "ft" / "train_summary.json").read_text())["steps"] == 1
    r = run(app, ["train", "genvip", "loop", "--lora", str(tmp_path / "ft" / "lora"), "--editor-model", str(tiny_editor),
                  "--data-dir", str(d["ifbench"]), "--model", f"hf:{tiny_vlm('qwen2.5-vl')}?batch=8", "--out",
                  str(tmp_path / "loop"), "--steps", "1", "--size", "32", "--max-tokens", "4", "--limit", "2"])
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "loop" / "translated" / "translate_report.json").read_text())
    assert rep["done"] == 2 and f"lora={tmp_path / 'ft' / 'lora'}" in rep["editor"]
    assert rep["editor"].endswith("|dtype=float32") or torch.cuda.is_available()  # a CPU runs the editor in float32
    assert "translate: 1/2 images" in r.output and "translate: 2/2 images" in r.output  # progress (stderr)
    import lensbench

    gv = lensbench.load_run(tmp_path / "loop" / "genvip")
    assert gv.result.counts["input"] == "if+rgb+text" and gv.result.counts["n_error"] == 0
    assert all(len([p for p in rec.messages[0]["content"] if p["type"] == "image"]) == 2 for rec in gv.records)
    assert "| Vanilla |" in r.output and f"lora={tmp_path / 'ft' / 'lora'}" in r.output
    assert "| Qwen2.5-VL-7B (paper) | Qwen-Edit-2509-FT | 74.2 |" in r.output
