"""Issue 31 on tiny models (torch, diffusers; skipped without them): the GenViP editor's dtype picked
per device (float32 on a CPU, where bfloat16 is ~16x slower; an option overrides) and progress of
the long training work (the editor LoRA's step bar)."""

from __future__ import annotations

import pytest
from PIL import Image

torch = pytest.importorskip("torch")
pytest.importorskip("diffusers")
pytest.importorskip("peft")


def test_editor_dtype_per_device(tiny_editor, monkeypatch):
    from lensbench.backends.images.base import pipeline_dtype
    from lensbench.backends.images.editors import make_editor
    from lensbench.core.errors import ConfigError

    assert pipeline_dtype(torch, "cpu") is torch.float32
    assert pipeline_dtype(torch, "cpu", "bfloat16") is torch.bfloat16  # the option overrides
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert pipeline_dtype(torch, "cuda") is torch.bfloat16 and pipeline_dtype(torch, "cuda:1") is torch.bfloat16
    assert pipeline_dtype(torch, "cuda", "float32") is torch.float32
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert pipeline_dtype(torch, "cuda") is torch.float16
    with pytest.raises(ConfigError, match="int8"):
        pipeline_dtype(torch, "cpu", "int8")
    ed = make_editor(f"diffusers:{tiny_editor}", steps=1, size=32)
    if str(ed.pipe.device) == "cpu":
        assert ed.pipe.transformer.dtype == torch.float32 and ed.fingerprint.endswith("|dtype=float32")
    forced = make_editor(f"diffusers:{tiny_editor}", steps=1, size=32, dtype="bfloat16")
    assert forced.pipe.transformer.dtype == torch.bfloat16 and forced.fingerprint.endswith("|dtype=bfloat16")


def test_editor_lora_shows_its_steps(tiny_editor, tmp_path, capsys):
    from lensbench.tools.training.editor_lora import EditPair, train_editor_lora
    from lensbench.tools.training.settings import EditorTrainSettings

    a, b = tmp_path / "ir.png", tmp_path / "rgb.png"
    Image.new("RGB", (40, 30), (60, 60, 60)).save(a)
    Image.new("RGB", (40, 30), (200, 30, 10)).save(b)
    s = EditorTrainSettings(model=str(tiny_editor), out=tmp_path / "o", resolution=32, batch_size=1, max_steps=3,
                            rank=4, save_steps=10, mixed_precision="no", device="cpu")
    train_editor_lora([EditPair((a,), b, "p")], s, progress=True)
    err = capsys.readouterr().err
    assert "editor LoRA" in err and "3/3" in err and "loss=" in err
    train_editor_lora([EditPair((a,), b, "p")], s.model_copy(update={"out": tmp_path / "quiet"}))
    assert "editor LoRA" not in capsys.readouterr().err
