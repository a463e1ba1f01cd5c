"""Flow-matching LoRA training of a Qwen-Image-Edit pipeline (diffusers + accelerate + peft).

Modelled on diffusers' ``examples/dreambooth/train_dreambooth_lora_qwen_image.py`` (timestep
density ``compute_density_for_timestep_sampling``, ``sigma``-interpolated noisy latents
``(1 - s) x + s n``, target ``n - x``, ``compute_loss_weighting_for_sd3``; or, with
``loss_weighting="diffsynth"``, DiffSynth-Studio's sigma grid, uniform timestep draw and per-timestep
weight, as :mod:`~lensbench.tools.training.editor_weighting` and docs/training.md say; accelerate checkpoints
and resume with ``skip_first_batches``, ``save_lora_weights``), with the edit conditioning of
``QwenImageEditPlusPipeline.__call__``: the prompt is encoded together with the source image(s)
(resized to about 384 x 384) by the pipeline's own ``encode_prompt``, and the source images'
VAE latents (at the training resolution) are packed and appended to the noisy target latents
along the sequence, with one ``img_shapes`` entry each; the prediction is read from the target's
tokens only. Only the transformer's LoRA (``settings.targets``; DiffSynth-Studio's list by
default) is trained; VAE and text encoder stay frozen. A resumed run trains on the batches of an
uninterrupted one, in its order and with its noise (each epoch's order is drawn from the seed and
the epoch, :class:`EpochSampler`; the RNG states come back with the checkpoint).

Outputs (``out/``): ``lora/pytorch_lora_weights.safetensors`` (diffusers format, with the adapter
metadata; ``pipe.load_lora_weights(out/"lora")``), ``lora/diffsynth.safetensors`` (the same
weights in DiffSynth-Studio's names), ``checkpoints/checkpoint-N`` (accelerate states),
``train_log.jsonl``, ``train_summary.json``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lensbench.backends.images.lora_keys import LORA_FILE, to_diffsynth
from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.extras import require
from lensbench.tools.training.checkpoints import ACCELERATE_MARKER, atomic_checkpoint, latest_complete
from lensbench.tools.training.editor_weighting import draw_timesteps
from lensbench.tools.training.guards import check_loss, check_lora_targets, check_weights, editor_modules
from lensbench.tools.training.measure import Meter
from lensbench.tools.training.settings import EditorTrainSettings
from lensbench.tools.training.vlm_sft import JsonlLog

__all__ = ["EditPair", "train_editor_lora", "flow_matching_loss", "load_editor", "PairDataset", "EpochSampler",
           "DIFFSYNTH_FILE"]

DIFFSYNTH_FILE = "diffsynth.safetensors"
_CONDITION_AREA = 384 * 384  # QwenImageEditPlusPipeline.CONDITION_IMAGE_SIZE


@dataclass(frozen=True)
class EditPair:
    """One training pair: ``sources`` (the image(s) to edit), ``target`` (the wanted result), ``prompt``."""

    sources: tuple[Path, ...]
    target: Path
    prompt: str
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


def _condition_size(w: int, h: int) -> tuple[int, int]:
    ratio = w / h
    cw = (_CONDITION_AREA * ratio) ** 0.5
    return max(32, round(cw / 32) * 32), max(32, round(cw / ratio / 32) * 32)


class PairDataset:
    """A map-style dataset over pairs: item ``i`` = ``{"sources": [PIL], "target": PIL, "prompt"}``,
    every image converted to RGB and resized to ``size`` x ``size`` (bicubic; DiffSynth-Studio's
    fixed-resolution training)."""

    def __init__(self, pairs: list[EditPair], size: int):
        self.pairs, self.size = pairs, size

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i: int) -> dict[str, Any]:
        from PIL import Image

        p = self.pairs[i]

        def load(f: Path):
            with Image.open(f) as im:
                return im.convert("RGB").resize((self.size, self.size), Image.Resampling.BICUBIC)

        return {"sources": [load(s) for s in p.sources], "target": load(p.target), "prompt": p.prompt}


def _latents(pipe, torch, images, size: int, sample: bool):
    """Normalised VAE latents ``(B, C, 1, h, w)`` of PIL images resized to ``size``."""
    px = torch.cat([pipe.image_processor.preprocess(im, size, size) for im in images]).unsqueeze(2)
    px = px.to(pipe.vae.device, pipe.vae.dtype)
    dist = pipe.vae.encode(px).latent_dist
    lat = dist.sample() if sample else dist.mode()
    c = pipe.vae.config
    mean = torch.tensor(c.latents_mean).view(1, -1, 1, 1, 1).to(lat)
    std = torch.tensor(c.latents_std).view(1, -1, 1, 1, 1).to(lat)
    return (lat - mean) / std


def _prompt_embeds(pipe, torch, batch: list[dict[str, Any]], device):
    """Prompt embeddings (B, L, D) and mask (B, L) of each example with its own condition images."""
    embs = []
    for ex in batch:
        cond = [pipe.image_processor.resize(im, *reversed(_condition_size(*im.size))) for im in ex["sources"]]
        e, _ = pipe.encode_prompt(prompt=[ex["prompt"]], image=cond, device=device)
        embs.append(e[0])
    n = max(e.shape[0] for e in embs)
    emb = torch.stack([torch.cat([e, e.new_zeros(n - e.shape[0], e.shape[1])]) for e in embs])
    mask = torch.stack([torch.cat([torch.ones(e.shape[0], dtype=torch.long), torch.zeros(n - e.shape[0], dtype=torch.long)])
                        for e in embs]).to(device)
    return emb, mask


def load_editor(settings: EditorTrainSettings, torch, diffusers, weight_dtype):
    """The diffusers pipeline of ``settings.model`` in ``weight_dtype``. Raises ConfigError when it cannot
    be loaded or is not a Qwen-Image-Edit pipeline."""
    try:
        pipe = diffusers.DiffusionPipeline.from_pretrained(settings.model, torch_dtype=weight_dtype)
    except Exception as exc:  # noqa: BLE001 - hub / offline / format errors end the same way
        raise ConfigError(f"cannot load the editor pipeline {settings.model!r}: {type(exc).__name__}: {exc}") from None
    if not (hasattr(pipe, "encode_prompt") and type(pipe.transformer).__name__ == "QwenImageTransformer2DModel"):
        raise ConfigError(f"{settings.model!r} is a {type(pipe).__name__}; the editor LoRA loop trains "
                          "Qwen-Image-Edit pipelines (QwenImageTransformer2DModel)")
    return pipe


def _stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _trainable(tr):
    return ((n, p) for n, p in tr.named_parameters() if p.requires_grad)


def _guard(log: JsonlLog, check, *args) -> None:
    """``check(*args)``; what it raises is logged (``event: stopped``) and re-raised."""
    try:
        check(*args)
    except LensbenchError as exc:
        log.write({"event": "stopped", "error": str(exc)})
        raise


def train_editor_lora(pairs: list[EditPair], settings: EditorTrainSettings, note=None,
                      progress: bool = False) -> dict[str, Any]:
    """Train a LoRA on ``pairs`` (module docstring); returns the summary written to
    ``out/train_summary.json``: ``lora_dir``, ``steps``, ``losses`` (per optimiser step),
    ``samples_per_s``, ``peak_rss_mb``, ``peak_gpu_mb``, ``resumed_from``.

    Checkpoints are written to ``tmp-checkpoint-N`` and renamed when complete; a resume takes the last
    complete one (``checkpoint_notes`` in the summary: incomplete ones ignored, also passed to ``note``,
    None = stderr). A NaN / infinite loss stops the run before its optimiser step. ``progress``: a
    step bar (tqdm) on stderr with the last loss.

    Raises ConfigError for an empty pair list, a pipeline that is not a Qwen-Image-Edit one, LoRA
    targets that match no module (checked from the config before any weights load), or a missing
    ``lensbench[train]``; :class:`~lensbench.tools.training.guards.TrainingDiverged` for a NaN /
    infinite loss or weights (nothing saved as final)."""
    s = settings
    if not pairs:
        raise ConfigError("no training pairs")
    check_lora_targets(editor_modules(s.model), list(s.targets), s.model)
    torch = require("torch", "train", "training an editor LoRA")
    diffusers = require("diffusers", "train", "training an editor LoRA")
    accelerate = require("accelerate", "train", "training an editor LoRA")
    peft = require("peft", "train", "training an editor LoRA")
    tu = require("diffusers.training_utils", "train", "training an editor LoRA")
    out = Path(s.out)
    acc, weight_dtype = _accelerator(s, out, torch, accelerate)
    pipe = load_editor(s, torch, diffusers, weight_dtype)
    pipe.to(acc.device)
    for m in (pipe.vae, pipe.text_encoder, pipe.transformer):
        m.requires_grad_(False)
    tr = pipe.transformer
    params = _add_lora(tr, s, torch, peft, tu)
    opt, loader, sched, total = _optimiser(pairs, params, s, torch, diffusers)
    tr, opt, loader, sched = acc.prepare(tr, opt, loader, sched)
    noise_sched = diffusers.FlowMatchEulerDiscreteScheduler.from_config(pipe.scheduler.config)
    ckpts = out / "checkpoints"
    log = JsonlLog(out / "train_log.jsonl")
    found = latest_complete(ckpts, ACCELERATE_MARKER)
    notes = found.report()
    for n in notes:
        log.write({"event": "checkpoint", "note": n})
        (note or _stderr)(n)
    resumed, step = (str(found.path), found.step) if s.resume and found.path else (None, 0)
    if resumed is not None:
        acc.load_state(resumed)
    losses: list[float] = []
    meter = Meter().start()
    n_seen = 0
    tr.train()
    bar = require("tqdm.auto", "train", "training an editor LoRA").tqdm(
        total=total, initial=step, desc="editor LoRA", unit="step", disable=not progress)
    # where the checkpoint stopped: its epoch, and the batches of that epoch already trained on (an epoch is
    # ceil(batches / grad_accum) optimiser steps: accelerate syncs at the end of the loader)
    epoch, in_epoch = divmod(step, -(-len(loader) // s.grad_accum)) if resumed else (0, 0)
    skip = in_epoch * s.grad_accum
    while step < total:
        # epoch e's order depends on (seed, e) alone: a resumed run sees the uninterrupted run's. Through the
        # prepared loader (accelerate sets its sampler's epoch to the loader's own pass count on every pass)
        loader.set_epoch(epoch)
        batches = acc.skip_first_batches(loader, skip) if skip else loader
        epoch, skip = epoch + 1, 0
        for batch in batches:
            with acc.accumulate(tr):
                loss = flow_matching_loss(pipe, tr, batch, s, noise_sched, acc.device, weight_dtype)
                _guard(log, check_loss, float(loss.detach()), step + 1)
                acc.backward(loss)
                if acc.sync_gradients:
                    acc.clip_grad_norm_(params, s.max_grad_norm)
                opt.step()
                sched.step()
                opt.zero_grad()
            n_seen += len(batch)
            if acc.sync_gradients:
                step += 1
                losses.append(float(loss.detach()))
                bar.update(1)
                bar.set_postfix(loss=f"{losses[-1]:.4f}")
                log.write({"step": step, "loss": losses[-1], "epoch": n_seen / len(pairs)})
                if step % s.save_steps == 0:
                    _guard(log, check_weights, _trainable(tr), torch, f"weights at step {step}")
                    atomic_checkpoint(ckpts, step, lambda d: acc.save_state(str(d)))
                if step >= total:
                    break
    bar.close()
    m = meter.stop(samples=n_seen)
    _guard(log, check_weights, _trainable(tr), torch)
    return _save(pipe, acc, tr, peft, tu, s, out, {"steps": step, "losses": losses, "resumed_from": resumed,
                                                   "n_pairs": len(pairs), "device": str(acc.device),
                                                   "checkpoint_notes": notes, **m}, log)


def _accelerator(s: EditorTrainSettings, out: Path, torch, accelerate):
    """``(accelerate.Accelerator, weight dtype)`` for ``s`` (CPU when asked or without CUDA: no mixed precision),
    the seed set."""
    cpu = s.device == "cpu" or (s.device == "auto" and not torch.cuda.is_available())
    mp = "no" if cpu else s.mixed_precision
    acc = accelerate.Accelerator(mixed_precision=mp, gradient_accumulation_steps=s.grad_accum, cpu=cpu,
                                 project_dir=str(out))
    accelerate.utils.set_seed(s.seed)
    return acc, {"bf16": torch.bfloat16, "fp16": torch.float16}.get(mp, torch.float32)


class EpochSampler:
    """Indices ``0..n-1`` in a shuffled order that depends on ``(seed, epoch)`` alone (``set_epoch`` before
    each pass), as accelerate's ``SeedableRandomSampler``: a run resumed from a checkpoint in epoch ``e``
    sets epoch ``e``, skips the batches already seen and goes on in the uninterrupted run's order."""

    def __init__(self, n: int, seed: int):
        self.n, self.seed, self.epoch = n, seed, 0

    def set_epoch(self, epoch: int) -> None:
        """The pass to draw the order of (0-based)."""
        self.epoch = epoch

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        torch = require("torch", "train", "training an editor LoRA")
        return iter(torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed + self.epoch)).tolist())


def _optimiser(pairs: list[EditPair], params: list, s: EditorTrainSettings, torch, diffusers):
    """``(optimiser, data loader with a seeded :class:`EpochSampler`, constant LR scheduler, total optimiser steps)``:
    ``max_steps``, else ``epochs`` over the loader's accumulated steps. The loader has its own generator, so
    starting a pass never draws from torch's global RNG (the noise's, restored by a resume)."""
    opt = torch.optim.AdamW(params, lr=s.learning_rate)
    loader = torch.utils.data.DataLoader(PairDataset(pairs, s.resolution), batch_size=s.batch_size,
                                         sampler=EpochSampler(len(pairs), s.seed),
                                         generator=torch.Generator().manual_seed(s.seed), collate_fn=list)
    per_epoch = max(1, -(-len(loader) // s.grad_accum))
    total = s.max_steps if s.max_steps > 0 else max(1, round(s.epochs * per_epoch))
    return opt, loader, diffusers.optimization.get_scheduler("constant", optimizer=opt), total


def _add_lora(tr, s: EditorTrainSettings, torch, peft, tu) -> list:
    """Add the LoRA adapter (rank, alpha, targets of ``s``) to the transformer ``tr``, with gradient checkpointing
    when asked; returns the trainable parameters (kept in float32). Raises ConfigError when the targets match
    no module."""
    try:
        tr.add_adapter(peft.LoraConfig(r=s.rank, lora_alpha=s.alpha or s.rank, init_lora_weights="gaussian",
                                       target_modules=list(s.targets)))
    except ValueError as exc:
        raise ConfigError(f"LoRA targets {s.targets} do not fit this transformer: {exc}") from None
    if s.gradient_checkpointing:
        tr.enable_gradient_checkpointing()
    tu.cast_training_params([tr], dtype=torch.float32)
    return [p for p in tr.parameters() if p.requires_grad]


def flow_matching_loss(pipe, transformer, batch: list[dict[str, Any]], s: EditorTrainSettings, noise_sched, device,
                       weight_dtype, generator=None):
    """The flow-matching loss of one batch (``{"sources": [PIL], "target": PIL, "prompt": str}``
    dicts, images already at ``s.resolution``): noise and timesteps drawn from ``generator``
    (None = torch's global RNG), the prediction read from the target's tokens. Timesteps, sigmas and
    per-sample weights follow ``s.loss_weighting``
    (:func:`~lensbench.tools.training.editor_weighting.draw_timesteps`); the loss is the mean over
    the batch of ``weight * mean((pred - (noise - x))^2)`` (per sample, float32). A scalar tensor
    with the graph of ``transformer``'s trainable parameters."""
    torch = require("torch", "train", "training an editor LoRA")
    with torch.no_grad():
        emb, mask = _prompt_embeds(pipe, torch, batch, device)
        x = _latents(pipe, torch, [b["target"] for b in batch], s.resolution, sample=True)
        conds = [_latents(pipe, torch, [b["sources"][k] for b in batch], s.resolution, sample=False)
                 for k in range(len(batch[0]["sources"]))]
    bsz, ch = x.shape[0], x.shape[1]
    noise = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
    t, sig, w = draw_timesteps(s, noise_sched, bsz, generator, weight_dtype)
    t, w = t.to(device), w.to(device, torch.float32)
    sig = sig.to(device, x.dtype).view(-1, 1, 1, 1, 1)
    noisy = (1.0 - sig) * x + sig * noise
    packed = pipe._pack_latents(noisy, bsz, ch, x.shape[3], x.shape[4])
    packed_cond = [pipe._pack_latents(c, bsz, ch, c.shape[3], c.shape[4]) for c in conds]
    hl, wl = x.shape[3] // 2, x.shape[4] // 2
    shapes = [[(1, hl, wl)] + [(1, c.shape[3] // 2, c.shape[4] // 2) for c in conds]] * bsz
    pred = transformer(hidden_states=torch.cat([packed, *packed_cond], dim=1).to(weight_dtype),
                       timestep=(t / 1000).to(weight_dtype), encoder_hidden_states=emb.to(weight_dtype),
                       encoder_hidden_states_mask=mask, img_shapes=shapes, return_dict=False)[0]
    pred = pipe._unpack_latents(pred[:, : packed.shape[1]], s.resolution, s.resolution, pipe.vae_scale_factor)
    return (w * ((pred.float() - (noise - x).float()) ** 2).reshape(bsz, -1).mean(1)).mean()


def _save(pipe, acc, tr, peft, tu, s: EditorTrainSettings, out: Path, summary: dict[str, Any], log: JsonlLog):
    st = require("safetensors.torch", "train", "saving LoRA weights")
    tr = acc.unwrap_model(tr)
    sd = peft.get_peft_model_state_dict(tr)
    lora_dir = out / "lora"
    meta = tu._collate_lora_metadata({"transformer": tr}) if hasattr(tu, "_collate_lora_metadata") else {}
    type(pipe).save_lora_weights(str(lora_dir), transformer_lora_layers=sd, **meta)
    diffusers_sd = {k: v.detach().cpu().contiguous() for k, v in st.load_file(str(lora_dir / LORA_FILE)).items()}
    st.save_file(to_diffsynth(diffusers_sd, scale=(s.alpha or s.rank) / s.rank), str(lora_dir / DIFFSYNTH_FILE))
    summary = {"base_model": s.model, "lora_dir": str(lora_dir), "settings": s.model_dump(mode="json"), **summary}
    (out / "train_summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    log.write({"event": "done", "steps": summary["steps"]})
    return summary
