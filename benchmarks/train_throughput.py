"""Training throughput of the shared training layer (issue 22): samples per second and peak memory
of the TRL SFT runner (LoRA and full fine-tuning) and of the editor flow-matching LoRA loop.

Models are built from configs (random weights, no downloads): ``--shape tiny`` the test models of
``lensbench.testing`` (runs anywhere in seconds); ``--shape 7b`` a Qwen2.5-VL-7B-SHAPED model
(hidden 3584, 28 layers, vision depth 32; bfloat16 on a GPU) for the VLM runner. Each run trains
``--steps`` optimiser steps on repeated one-image examples (``--image`` px square) after one
warm-up step, and prints one JSON line: what, shape, device, batch, steps, samples/s (the
trainer's own figure and wall-clock), peak process RSS (MiB) and peak CUDA memory (MiB, null
without CUDA), first and last loss.

    python benchmarks/train_throughput.py [--shape tiny|7b] [--steps 6] [--batch 4] [--image 64]
        [--editor-resolution 32] [--skip-editor]

Needs ``lensbench[train]``.

Seen (2-core CPU, no GPU, torch 2.14.1 / transformers 5.24 / TRL 1.16 / peft 0.21 / diffusers 0.42,
2026-11-26): see the issue-22 report for the figures this printed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from PIL import Image

from lensbench.tools.training.editor_lora import EditPair, train_editor_lora
from lensbench.tools.training.settings import EditorTrainSettings, VLMTrainSettings
from lensbench.tools.training.sft_data import make_example, write_examples
from lensbench.tools.training.vlm_sft import train_vlm

SEVEN_B_TEXT = dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                    num_key_value_heads=4, max_position_embeddings=32768)
SEVEN_B_VISION = dict(depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16, out_hidden_size=3584,
                      fullatt_block_indexes=[7, 15, 23, 31])


def _vlm_model(shape: str, root: Path) -> Path:
    import torch

    from lensbench.tools.training.tiny_vlm import build_qwen25vl, save_tiny_vlm

    if shape == "tiny":
        return save_tiny_vlm("qwen2.5-vl", root / "model")
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model, proc = build_qwen25vl(text=SEVEN_B_TEXT, vision=SEVEN_B_VISION, dtype="bfloat16", device=dev)
    model.save_pretrained(root / "model")
    proc.save_pretrained(root / "model")
    del model
    return root / "model"


def vlm(shape: str, steps: int, batch: int, image: int, lora: bool, root: Path) -> dict:
    base = _vlm_model(shape, root)
    img = root / "img.png"
    Image.new("RGB", (image, image), (120, 60, 30)).save(img)
    exs = [make_example(f"e{i}", [img, f"is there a w{i % 9} ?"], '{"bbox_2d": [1, 2, 30, 31]}') for i in range(batch)]
    write_examples(root / "sft.jsonl", exs)
    out = root / ("lora" if lora else "full")
    warm = VLMTrainSettings(model=str(base), out=out, max_steps=1, batch_size=batch, logging_steps=1, lora=lora,
                            learning_rate=1e-4, save_steps=10_000)
    train_vlm(root / "sft.jsonl", warm)
    s = train_vlm(root / "sft.jsonl", warm.model_copy(update={"max_steps": 1 + steps}))
    return {"what": f"vlm-sft-{'lora' if lora else 'full'}", "shape": shape, "device": s["device"], "dtype": s["dtype"],
            "batch": batch, "image_px": image, "steps": steps, "samples_per_s_wall": s["samples_per_s"],
            "peak_rss_mb": s["peak_rss_mb"], "peak_gpu_mb": s["peak_gpu_mb"], "loss_first": s["losses"][0],
            "loss_last": s["losses"][-1]}


def editor(steps: int, batch: int, resolution: int, root: Path) -> dict:
    from lensbench.tools.training.tiny_editor import save_tiny_editor

    model = save_tiny_editor(root / "editor")
    pairs = []
    for i in range(batch):
        a, b = root / f"ir{i}.png", root / f"rgb{i}.png"
        Image.new("L", (resolution, resolution), 30 * i % 255).convert("RGB").save(a)
        Image.new("RGB", (resolution, resolution), (200, 20, 10 * i % 255)).save(b)
        pairs.append(EditPair((a,), b, "w1"))
    s = EditorTrainSettings(model=str(model), out=root / "ed", resolution=resolution, batch_size=batch, max_steps=1,
                            rank=4, save_steps=10_000)
    train_editor_lora(pairs, s)
    r = train_editor_lora(pairs, s.model_copy(update={"max_steps": 1 + steps}))
    return {"what": "editor-lora", "shape": "tiny", "device": r["device"], "batch": batch, "resolution": resolution,
            "steps": steps, "samples_per_s_wall": r["samples_per_s"], "peak_rss_mb": r["peak_rss_mb"],
            "peak_gpu_mb": r["peak_gpu_mb"], "loss_first": r["losses"][0], "loss_last": r["losses"][-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=["tiny", "7b"], default="tiny")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--image", type=int, default=64)
    ap.add_argument("--editor-resolution", type=int, default=32)
    ap.add_argument("--skip-editor", action="store_true")
    ap.add_argument("--skip-full", action="store_true", help="LoRA only (full FT of a 7B needs ~130 GB)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        print(json.dumps(vlm(a.shape, a.steps, a.batch, a.image, True, root)), flush=True)
        if not a.skip_full:
            print(json.dumps(vlm(a.shape, a.steps, a.batch, a.image, False, root)), flush=True)
        if not a.skip_editor:
            print(json.dumps(editor(a.steps, a.batch, a.editor_resolution, root)), flush=True)


if __name__ == "__main__":
    main()
