"""Training that refuses garbage and survives a crash (issue 30.3): non-finite / out-of-range settings and
bad data refused before any weights load (exit 2 naming file, line and field), a NaN loss stopping the
run with nothing saved as final, checkpoints written atomically and incomplete ones ignored on resume
(the resumed run ending with the uninterrupted run's weights), for the VLM SFT runner and the editor
LoRA loop."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from lensbench.cli.main import app
from lensbench.tools.training.checkpoints import HF_MARKER, atomic_checkpoint, latest_complete
from lensbench.tools.training.sft_data import make_example, write_examples


def _data(tmp_path, n=4, same=False):
    img = tmp_path / "img" / "a.png"
    img.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (32, 32), (200, 30, 30)).save(img)
    exs = [make_example(f"e{i}", [img, f"is there a w{0 if same else i} ?"], '{"bbox_2d": null}' if same or i % 2
                        else '{"bbox_2d": [1, 2, 30, 31]}') for i in range(n)]
    write_examples(tmp_path / "sft.jsonl", exs)
    return tmp_path / "sft.jsonl"


def _train(args, monkeypatch=None):
    """``lensbench train groundingme train ...`` in process; loading a model fails the test."""
    if monkeypatch is not None:
        from lensbench.tools.training import vlm_sft

        monkeypatch.setattr(vlm_sft, "load_vlm", lambda *a, **k: pytest.fail("a model was loaded"))
    return CliRunner().invoke(app, ["train", "groundingme", "train", *args])


# ------------------------------------------------------------------ refused before anything loads
@pytest.mark.parametrize("setting,why", [("learning_rate=inf", "finite"), ("learning_rate=nan", "finite"),
                                         ("learning_rate=-1e-4", "greater than 0"), ("max_steps=0", "positive"),
                                         ("epochs=inf", "finite"), ("learning_rate=5", "less than or equal to 1")])
def test_non_finite_or_out_of_range_settings_refused(tmp_path, monkeypatch, setting, why):
    r = _train(["--examples", str(_data(tmp_path)), "--model", str(tmp_path / "no-model"), "--out", str(tmp_path / "o"),
                "--set", setting], monkeypatch)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.startswith("error: training settings: " + setting.split("=")[0]) and why in r.output
    assert not (tmp_path / "o").exists()


def _line(tmp_path, i, **change):
    rows = [json.loads(x) for x in _data(tmp_path).read_text().splitlines()]
    rows[i].update(change)
    (tmp_path / "sft.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


@pytest.mark.parametrize("case", ["not-an-image", "empty-file", "null-completion", "null-text", "empty-answer",
                                  "not-utf8"])
def test_bad_training_data_refused_before_loading(tmp_path, monkeypatch, case):
    bad_line, field = 3, "images"
    if case in ("not-an-image", "empty-file"):
        f = tmp_path / "img" / "bad.png"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"" if case == "empty-file" else b"this is text, not a PNG\n")
        _line(tmp_path, 2, images=["img/bad.png"])
        want = "not an image"
    elif case == "null-completion":
        _line(tmp_path, 2, completion=[{"role": "assistant", "content": None}])
        field, want = "completion", "null"
    elif case == "null-text":
        _line(tmp_path, 2, completion=[{"role": "assistant", "content": [{"type": "text", "text": None}]}])
        field, want = "completion", "null"
    elif case == "empty-answer":
        _line(tmp_path, 2, completion=[{"role": "assistant", "content": [{"type": "text", "text": "  "}]}])
        field, want = "completion", "empty"
    else:
        _data(tmp_path)
        raw = (tmp_path / "sft.jsonl").read_bytes().split(b"\n")
        raw[2] = raw[2].replace(b"w2", b"w\xe92")  # latin-1 e-acute in line 3
        (tmp_path / "sft.jsonl").write_bytes(b"\n".join(raw))
        field, want = None, "not UTF-8"
    r = _train(["--examples", str(tmp_path / "sft.jsonl"), "--model", str(tmp_path / "no-model"),
                "--out", str(tmp_path / "o")], monkeypatch)
    assert r.exit_code == 2 and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert str(tmp_path / "sft.jsonl") in r.output and f"line {bad_line}:" in r.output and want in r.output
    assert field is None or f"[field '{field}']" in r.output


def test_lora_targets_matching_nothing_refused_before_weights_load(tiny_vlm, tmp_path, monkeypatch):
    pytest.importorskip("peft")
    base = tiny_vlm("qwen2.5-vl")
    r = _train(["--examples", str(_data(tmp_path)), "--model", str(base), "--out", str(tmp_path / "o"),
                "--set", "lora_targets=nothing_is_named_like_this", "--set", "device=cpu"], monkeypatch)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "error: training settings: lora_targets 'nothing_is_named_like_this' match no Linear" in r.output
    assert "model.visual.patch_embed.proj" in r.output and not (tmp_path / "o" / "checkpoints").exists()


# ------------------------------------------------------------------ checkpoints
def test_atomic_checkpoint_and_resume_scan(tmp_path):
    ck = tmp_path / "checkpoints"

    def write(d):
        (d / "weights.bin").write_bytes(b"w")
        (d / HF_MARKER).write_text("{}")

    def disk_fills(d):
        (d / "weights.bin").write_bytes(b"w")
        raise OSError(28, "No space left on device")

    atomic_checkpoint(ck, 1, write)
    with pytest.raises(OSError):  # a disk that fills while checkpoint 2 is written
        atomic_checkpoint(ck, 2, disk_fills)
    assert not (ck / "checkpoint-2").exists() and (ck / "tmp-checkpoint-2").is_dir()
    (ck / "checkpoint-3").mkdir()  # an old, half-written one (no marker)
    (ck / "checkpoint-4").mkdir()
    (ck / "checkpoint-4" / HF_MARKER).write_text('{"global_st')  # the marker itself cut short
    res = latest_complete(ck, HF_MARKER)
    assert res.path == ck / "checkpoint-1" and res.step == 1
    assert res.incomplete == [str(ck / "checkpoint-3"), str(ck / "checkpoint-4")]
    assert res.removed == [str(ck / "tmp-checkpoint-2")] and not (ck / "tmp-checkpoint-2").exists()
    assert len(res.report()) == 3 and "incomplete checkpoint" in res.report()[0]
    atomic_checkpoint(ck, 3, write)  # replaces the incomplete folder of the same name
    assert sorted(p.name for p in (ck / "checkpoint-3").iterdir()) == ["trainer_state.json", "weights.bin"]
    assert latest_complete(ck, HF_MARKER).step == 3


def _vlm_settings(base, out, **kw):
    from lensbench.tools.training.settings import VLMTrainSettings

    d = dict(model=str(base), out=out, batch_size=2, learning_rate=5e-3, logging_steps=1, save_steps=1, max_steps=4,
             lora_r=8, lora_alpha=16, warmup_ratio=0.0, device="cpu", save_total_limit=None)
    d.update(kw)
    return VLMTrainSettings(**d)


def _adapter(out):
    from safetensors.torch import load_file

    return load_file(str(out / "adapter" / "adapter_model.safetensors"))


def test_vlm_crash_while_checkpointing_then_resume_equals_uninterrupted(tiny_vlm, tmp_path, monkeypatch):
    pytest.importorskip("trl")
    import torch
    from transformers import Trainer

    from lensbench.tools.training.vlm_sft import train_vlm

    base, data = tiny_vlm("qwen2.5-vl"), _data(tmp_path)
    whole = train_vlm(data, _vlm_settings(base, tmp_path / "whole"))
    real = Trainer._save_rng_state

    def dies_at_3(self, output_dir):  # the process "dies" (a full disk) while checkpoint 3 is written
        if self.state.global_step == 3:
            raise OSError(28, "No space left on device")
        return real(self, output_dir)

    monkeypatch.setattr(Trainer, "_save_rng_state", dies_at_3)
    with pytest.raises(OSError):
        train_vlm(data, _vlm_settings(base, tmp_path / "crash"))
    ck = tmp_path / "crash" / "checkpoints"
    assert sorted(p.name for p in ck.iterdir()) == ["checkpoint-1", "checkpoint-2", "tmp-checkpoint-3"]
    monkeypatch.setattr(Trainer, "_save_rng_state", real)
    (ck / "checkpoint-2" / HF_MARKER).unlink()  # and an old half-written one, as versions before the fix left
    notes: list[str] = []
    again = train_vlm(data, _vlm_settings(base, tmp_path / "crash"), note=notes.append)
    assert again["resumed_from"] == str(ck / "checkpoint-1") and again["steps"] == 4
    assert any("checkpoint-2" in n and "incomplete" in n for n in notes) and any("tmp-checkpoint-3" in n for n in notes)
    assert again["checkpoint_notes"] == notes
    a, b = _adapter(tmp_path / "whole"), _adapter(tmp_path / "crash")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert whole["losses"][1:] == pytest.approx(again["losses"][-3:], abs=1e-6)


def test_vlm_nan_loss_stops_and_saves_nothing_as_final(tiny_vlm, tmp_path, monkeypatch):
    pytest.importorskip("trl")
    import trl

    from lensbench.tools.training.guards import TrainingDiverged
    from lensbench.tools.training.vlm_sft import train_vlm

    real = trl.SFTTrainer.compute_loss

    def nan_at_3(self, model, inputs, *a, **kw):
        out = real(self, model, inputs, *a, **kw)
        if self.state.global_step == 2:  # the third step
            return (out[0] * float("nan"), *out[1:]) if isinstance(out, tuple) else out * float("nan")
        return out

    monkeypatch.setattr(trl.SFTTrainer, "compute_loss", nan_at_3)
    with pytest.raises(TrainingDiverged, match="step 3: the loss is nan"):
        train_vlm(_data(tmp_path), _vlm_settings(tiny_vlm("qwen2.5-vl"), tmp_path / "o"))
    out = tmp_path / "o"
    assert not (out / "adapter").exists() and not (out / "model").exists() and not (out / "train_summary.json").exists()
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["checkpoint-1", "checkpoint-2"]
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert log[-1]["event"] == "stopped" and "nan" in log[-1]["error"]


def test_weights_check_names_the_tensor():
    torch = pytest.importorskip("torch")
    from lensbench.tools.training.guards import TrainingDiverged, check_weights

    check_weights([("a", torch.ones(3))], torch)
    with pytest.raises(TrainingDiverged, match="b holds NaN"):
        check_weights([("a", torch.ones(3)), ("b", torch.tensor([1.0, float("inf")]))], torch)


# ------------------------------------------------------------------ the editor LoRA loop
def _editor(tmp_path, n=3):
    from lensbench.tools.training.editor_lora import EditPair

    out = []
    for i in range(n):
        a, b = tmp_path / f"ir{i}.png", tmp_path / f"rgb{i}.png"
        Image.new("L", (40, 30), 40 + 50 * i).convert("RGB").save(a)
        Image.new("RGB", (40, 30), (200, 30 * i, 10)).save(b)
        out.append(EditPair((a,), b, f"pair {i}"))
    return out


def _ed_settings(model, out, **kw):
    from lensbench.tools.training.settings import EditorTrainSettings

    d = dict(model=str(model), out=out, resolution=32, batch_size=1, max_steps=3, rank=4, learning_rate=1e-3,
             save_steps=1, mixed_precision="no", device="cpu")
    d.update(kw)
    return EditorTrainSettings(**d)


def test_editor_crash_while_checkpointing_then_resume_equals_uninterrupted(tiny_editor, tmp_path, monkeypatch):
    pytest.importorskip("diffusers")
    import accelerate
    import torch
    from safetensors.torch import load_file

    from lensbench.tools.training.checkpoints import ACCELERATE_MARKER
    from lensbench.tools.training.editor_lora import train_editor_lora

    pairs = _editor(tmp_path)
    train_editor_lora(pairs, _ed_settings(tiny_editor, tmp_path / "whole"))
    real = accelerate.Accelerator.save_state
    calls = []

    def dies_at_2(self, output_dir=None, **kw):
        calls.append(output_dir)
        if len(calls) == 2:  # writes part of checkpoint 2, then the disk is full
            real(self, output_dir, **kw)
            (__import__("pathlib").Path(output_dir) / ACCELERATE_MARKER).unlink()
            raise OSError(28, "No space left on device")
        return real(self, output_dir, **kw)

    monkeypatch.setattr(accelerate.Accelerator, "save_state", dies_at_2)
    with pytest.raises(OSError):
        train_editor_lora(pairs, _ed_settings(tiny_editor, tmp_path / "crash"))
    ck = tmp_path / "crash" / "checkpoints"
    assert calls[-1].endswith("tmp-checkpoint-2") and sorted(p.name for p in ck.iterdir()) == \
        ["checkpoint-1", "tmp-checkpoint-2"]
    monkeypatch.setattr(accelerate.Accelerator, "save_state", real)
    notes: list[str] = []
    again = train_editor_lora(pairs, _ed_settings(tiny_editor, tmp_path / "crash"), note=notes.append)
    assert again["resumed_from"] == str(ck / "checkpoint-1") and again["steps"] == 3 and len(again["losses"]) == 2
    assert len(notes) == 1 and "tmp-checkpoint-2" in notes[0]
    a = load_file(str(tmp_path / "whole" / "lora" / "pytorch_lora_weights.safetensors"))
    b = load_file(str(tmp_path / "crash" / "lora" / "pytorch_lora_weights.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_editor_nan_loss_and_bad_inputs_refused(tiny_editor, tmp_path, monkeypatch):
    pytest.importorskip("diffusers")
    from lensbench.core.errors import ConfigError, DataError
    from lensbench.tools.ifbench.genvip.editor_data import pairs_from_manifest
    from lensbench.tools.training import editor_lora
    from lensbench.tools.training.guards import TrainingDiverged

    pairs = _editor(tmp_path)
    real = editor_lora.flow_matching_loss
    n = []

    def nan_at_2(*a, **kw):
        n.append(1)
        return real(*a, **kw) * (float("nan") if len(n) == 2 else 1.0)

    monkeypatch.setattr(editor_lora, "flow_matching_loss", nan_at_2)
    with pytest.raises(TrainingDiverged, match="step 2: the loss is nan"):
        editor_lora.train_editor_lora(pairs, _ed_settings(tiny_editor, tmp_path / "nan"))
    assert not (tmp_path / "nan" / "lora").exists() and not (tmp_path / "nan" / "train_summary.json").exists()
    assert sorted(p.name for p in (tmp_path / "nan" / "checkpoints").iterdir()) == ["checkpoint-1"]
    monkeypatch.setattr(editor_lora, "load_editor", lambda *a, **k: pytest.fail("the pipeline was loaded"))
    with pytest.raises(ConfigError, match="lora_targets \\['no_such_module'\\] match no"):
        editor_lora.train_editor_lora(pairs, _ed_settings(tiny_editor, tmp_path / "t", targets=["no_such_module"]))
    (tmp_path / "rgb1.png").write_bytes(b"")
    man = tmp_path / "manifest.jsonl"
    man.write_text("".join(json.dumps({"kept": True, "ir": str(p.sources[0]), "rgb": str(p.target)}) + "\n"
                           for p in pairs))
    with pytest.raises(DataError, match="line 2: .*rgb1.png: not an image") as e:
        pairs_from_manifest(man)
    assert "[field 'rgb']" in str(e.value)
