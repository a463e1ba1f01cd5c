"""Batched generation speed of the ``hf:`` backend vs plain transformers (issue 13's figure).

A Qwen2.5-VL-7B-SHAPED model (random weights, built on the GPU from the real 7B config numbers
written below: hidden 3584, 28 layers, 28 heads, 4 KV heads, intermediate 18944, vocabulary
152064; vision tower depth 32, hidden 1280, 16 heads, intermediate 3420), bfloat16. Each request
is one 448x448 image (256 image tokens after the 2x2 merge) + 64 text tokens; 8 new tokens,
greedy, forced to 8 (``min_new_tokens``), so every configuration does the same work.

Measured (requests per second, after warm-up):
1. plain transformers, one request at a time (processor + ``generate``);
2. plain transformers, batches of ``--batch`` (left padding);
3. the ``hf:`` backend through the engine (``Engine.run``: store, batch planning, worker thread),
   ``batch=1`` (one at a time, the engine's plain path) and ``batch=--batch``.

Prints one JSON line per figure and a summary line. Needs a CUDA GPU and ``lensbench[hf]``.

    python benchmarks/hf_batching.py [--batch 64] [--n-single 24] [--n-batched 256] [--tiny]

``--tiny`` uses the 0.6M-parameter test model (a smoke test, CPU or GPU).

Seen on one H100 80GB (torch 2.11, transformers 5.17), two runs (2026-11-23):
plain one at a time 4.00 / 3.48 req/s, plain batches of 64 22.92 / 22.69 req/s;
hf: backend via the engine batch=1 3.31 / 3.08 req/s, batch=64 21.98 / 24.46 req/s
(6.6x / 7.9x its own one-at-a-time rate; the second run with one request at a time not
pipelined and batches pipelined two deep, the code as committed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path

import torch
import transformers
from PIL import Image

from lensbench.backends.hf import HFBackend
from lensbench.backends.base import BackendConfig
from lensbench.core.types import GenParams, ImagePart, Message, Request
from lensbench.runtime.engine import Engine
from lensbench.runtime.store import RunStore
from lensbench.tools.training.tiny_vlm import build_qwen25vl

# Qwen2.5-VL-7B-Instruct config.json numbers (text and vision towers)
TEXT_7B = dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
               num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=128000, rope_theta=1000000.0,
               rms_norm_eps=1e-6, hidden_act="silu", tie_word_embeddings=False,
               rope_scaling={"type": "mrope", "rope_type": "default", "mrope_section": [16, 24, 24]})
VISION_7B = dict(depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16, out_hidden_size=3584,
                 patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=112,
                 fullatt_block_indexes=[7, 15, 23, 31], hidden_act="silu", in_chans=3, tokens_per_second=2)
SIDE = 448


def line(**kw) -> None:
    print(json.dumps(kw), flush=True)


def make_images(folder: Path, n: int = 8) -> list[Path]:
    rnd = random.Random(0)
    out = []
    for i in range(n):
        im = Image.new("RGB", (SIDE, SIDE))
        im.putdata([(rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)) for _ in range(SIDE * SIDE)])
        p = folder / f"img{i}.jpg"
        im.save(p, quality=90)
        out.append(p)
    return out


def text_of(i: int, n_words: int) -> str:
    return " ".join(f"w{(i * 7 + k * 13) % 400}" for k in range(n_words))


def requests(images: list[Path], start: int, n: int, n_words: int, new_tokens: int) -> list[Request]:
    params = GenParams(temperature=0.0, max_tokens=new_tokens, extra_body={"min_tokens": new_tokens})
    return [Request(id=f"q{i}", messages=(Message.user(ImagePart.of(images[i % len(images)]), text_of(i, n_words)),),
                    params=params) for i in range(start, start + n)]


def plain_batch(model, proc, reqs: list[Request], new_tokens: int) -> None:
    convs = [[{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": r.text}]}] for r in reqs]
    prompts = [proc.apply_chat_template(c, add_generation_prompt=True, tokenize=False) for c in convs]
    imgs = []
    for r in reqs:
        with Image.open(r.images[0].path) as im:
            imgs.append([im.convert("RGB")])
    inputs = proc(text=prompts, images=imgs, padding=True, return_tensors="pt").to(model.device)
    with torch.inference_mode():
        model.generate(**inputs, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def engine_rate(backend: HFBackend, reqs: list[Request], store_dir: Path, concurrency: int = 8) -> float:
    store = RunStore(store_dir)
    eng = Engine({"model": backend}, store, concurrency=concurrency, progress=False)
    try:
        dt = timed(lambda: asyncio.run(eng.run(reqs)))
        assert eng.stats.ok == len(reqs), (eng.stats, eng.last_error)
    finally:
        store.close()
    return len(reqs) / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--n-single", type=int, default=24)
    ap.add_argument("--n-batched", type=int, default=256)
    ap.add_argument("--new-tokens", type=int, default=8)
    ap.add_argument("--text-tokens", type=int, default=64)
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    line(device=torch.cuda.get_device_name(0) if dev == "cuda" else "cpu", torch=torch.__version__,
         transformers=transformers.__version__)
    tmp = Path(tempfile.mkdtemp(prefix="hf-batching-"))
    t = time.perf_counter()
    big = {} if a.tiny else dict(text=TEXT_7B, vision=VISION_7B)
    model, proc = build_qwen25vl(**big, dtype="bfloat16" if dev == "cuda" else "float32", device=dev,
                                 min_pixels=56 * 56, max_pixels=SIDE * SIDE)
    folder = tmp / ("qwen25vl-7b-shaped" if not a.tiny else "qwen25vl-tiny")
    model.config.save_pretrained(folder)  # config + processor only: the weights stay in memory
    proc.save_pretrained(folder)
    proc = transformers.AutoProcessor.from_pretrained(folder)
    proc.tokenizer.padding_side = "left"
    line(step="built", params_b=round(sum(p.numel() for p in model.parameters()) / 1e9, 3),
         s=round(time.perf_counter() - t, 1))
    images = make_images(tmp)
    probe = proc(text=[proc.apply_chat_template([{"role": "user", "content": [
        {"type": "image"}, {"type": "text", "text": text_of(0, a.text_tokens)}]}], add_generation_prompt=True)],
        images=[[Image.open(images[0]).convert("RGB")]], return_tensors="pt")
    line(step="prompt", input_tokens=int(probe["input_ids"].shape[1]), image_grid=probe["image_grid_thw"].tolist())

    # 1-2: plain transformers
    single = requests(images, 0, a.n_single, a.text_tokens, a.new_tokens)
    for r in single[:2]:
        plain_batch(model, proc, [r], a.new_tokens)
    dt = timed(lambda: [plain_batch(model, proc, [r], a.new_tokens) for r in single])
    plain1 = a.n_single / dt
    line(what="plain transformers, one at a time", n=a.n_single, req_s=round(plain1, 2))
    batched = requests(images, 0, a.n_batched, a.text_tokens, a.new_tokens)
    plain_batch(model, proc, batched[:a.batch], a.new_tokens)
    dt = timed(lambda: [plain_batch(model, proc, batched[i:i + a.batch], a.new_tokens)
                        for i in range(0, len(batched), a.batch)])
    plainb = a.n_batched / dt
    line(what=f"plain transformers, batches of {a.batch}", n=a.n_batched, req_s=round(plainb, 2),
         x=round(plainb / plain1, 2))

    # 3: the hf: backend through the engine
    def backend(batch: int) -> HFBackend:
        be = HFBackend(f"{folder}?dtype=bfloat16&device={dev}&batch={batch}", BackendConfig())
        be.attach(model, proc)
        return be

    b1 = backend(1)
    engine_rate(b1, requests(images, 10_000, 2, a.text_tokens, a.new_tokens), tmp / "warm1")
    hf1 = engine_rate(b1, requests(images, 20_000, a.n_single, a.text_tokens, a.new_tokens), tmp / "single")
    line(what="hf: backend via engine, batch=1", n=a.n_single, req_s=round(hf1, 2))
    bb = backend(a.batch)
    engine_rate(bb, requests(images, 30_000, a.batch, a.text_tokens, a.new_tokens), tmp / "warmb")
    hfb = engine_rate(bb, requests(images, 40_000, a.n_batched, a.text_tokens, a.new_tokens), tmp / "batched")
    line(what=f"hf: backend via engine, batch={a.batch}", n=a.n_batched, req_s=round(hfb, 2), x=round(hfb / hf1, 2))
    line(summary=True, plain_single=round(plain1, 2), plain_batched=round(plainb, 2),
         plain_x=round(plainb / plain1, 2), hf_single=round(hf1, 2), hf_batched=round(hfb, 2),
         hf_x=round(hfb / hf1, 2), goal_x=6.0, met=hfb / hf1 >= 6.0)


if __name__ == "__main__":
    main()
