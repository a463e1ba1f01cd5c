"""Supervised fine-tuning of image-text models with TRL's ``SFTTrainer`` and peft LoRA (or full FT).

``train_vlm(train_file, settings)`` reads an SFT example file (:mod:`.sft_data`), loads the base
model with ``AutoModelForImageTextToText`` and its ``AutoProcessor``, and trains:

* the examples are TRL's conversational prompt-completion layout, so TRL's
  ``DataCollatorForVisionLanguageModeling`` tokenises prompt and completion through the model's own
  processor and chat template (images expanded by the processor) and sets the labels of every
  prompt token and of padding to -100: the loss is on the assistant turn only
  (``completion_only_loss``);
* ``transformers.set_seed(seed)`` before the model and the LoRA are made, ``seed`` / ``data_seed``
  in the trainer: the same data and settings give the same run;
* checkpoints every ``save_steps`` under ``out/checkpoints``, each written to ``tmp-checkpoint-N`` and
  renamed when complete (:mod:`.checkpoints`); a re-run resumes from the last complete one
  (``resume``; an incomplete one is ignored and reported); a finished run with the same data and
  settings is not trained again;
* guards (:mod:`.guards`): the data file and the LoRA targets are checked before any weights load; a
  NaN / infinite loss stops the run before its optimiser step, and non-finite weights are never
  saved (neither as a checkpoint nor as final);
* progress: the trainer's progress bar and one JSON line per logging step in ``out/train_log.jsonl``.

Outputs (``out/``): ``adapter/`` (the LoRA, peft format; absent for full FT), ``model/`` (the
merged weights + processor + ``lensbench_train.json``, which ``hf:out/model`` evaluates and whose
content makes the folder's identity differ from the base model's; its ``eval_options`` record the box
convention the answers were written in, which ``hf:`` reads so that a hand-run evaluation scores the
boxes as trained), ``train_summary.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.extras import require
from lensbench.core.jsonl import dumps_line
from lensbench.tools.training.checkpoints import HF_MARKER, latest_complete
from lensbench.tools.training.guards import check_lora_targets, check_weights, safe_sft_trainer, vlm_modules
from lensbench.tools.training.measure import Meter
from lensbench.tools.training.sft_data import read_examples, to_dataset
from lensbench.tools.training.settings import VLMTrainSettings

__all__ = ["train_vlm", "build_trainer", "load_vlm", "JsonlLog", "file_sha256"]

_VISION = ("visual.", "vision_tower", "vision_model", "multi_modal_projector")


def file_sha256(path: Path) -> str:
    """SHA-256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class JsonlLog:
    """Appends one JSON object per line to ``path`` (the training progress log)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, row: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(dumps_line(row, ensure_ascii=True, default=str) + "\n")


def _device(torch, setting: str) -> str:
    if setting == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if setting == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda: no CUDA device is available")
    return setting


def _dtype(torch, setting: str, device: str):
    if setting == "auto":
        return torch.bfloat16 if device == "cuda" and torch.cuda.is_bf16_supported() else torch.float32
    return getattr(torch, setting)


def load_vlm(source: str, dtype=None):
    """``(model, processor)`` from a folder or Hub id. Raises ConfigError when it cannot be loaded."""
    tf = require("transformers", "train", "training an image-text model")
    try:
        processor = tf.AutoProcessor.from_pretrained(source)
        kw = {"dtype": dtype} if dtype is not None else {}
        model = tf.AutoModelForImageTextToText.from_pretrained(source, **kw)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot load {source!r} as an image-text model: {type(exc).__name__}: {exc}") from None
    return model, processor


def _eval_options(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """The evaluation options the data fixes: ``bbox_format`` when every example records the same one in
    its ``meta`` (the answers' box convention; ``hf:`` reads it back from ``lensbench_train.json``)."""
    fmts = {(e.get("meta") or {}).get("bbox_format") for e in examples}
    return {"bbox_format": fmts.pop()} if len(fmts) == 1 and None not in fmts else {}


def _stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _log_callback(tf, log: JsonlLog):
    class _Cb(tf.TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if logs:
                log.write({"step": state.global_step, "epoch": state.epoch, **logs})

    return _Cb()


def _finished(out: Path, fingerprint: dict[str, Any]) -> dict[str, Any] | None:
    p = out / "train_summary.json"
    if not p.is_file() or not (out / "model" / "config.json").is_file():
        return None
    try:
        s = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    return s if s.get("fingerprint") == fingerprint else None


def build_trainer(examples: list[dict[str, Any]], s: VLMTrainSettings, log: JsonlLog | None = None,
                  eval_callback: Any = None):
    """``(trainer, processor, device, dtype)``: TRL's ``SFTTrainer`` over ``examples`` as
    :func:`train_vlm` uses it (not trained yet); ``eval_callback`` (a
    :class:`~lensbench.tools.training.eval_callback.LensbenchEvalCallback`) is attached to it. Raises
    ConfigError (model / extra)."""
    torch = require("torch", "train", "training an image-text model")
    tf = require("transformers", "train", "training an image-text model")
    trl = require("trl", "train", "training an image-text model")
    peft = require("peft", "train", "training an image-text model")
    device = _device(torch, s.device)
    dtype = _dtype(torch, s.dtype, device)
    tf.set_seed(s.seed)
    model, processor = load_vlm(s.model, dtype)
    peft_config = None
    if s.lora:
        peft_config = peft.LoraConfig(r=s.lora_r, lora_alpha=s.lora_alpha, lora_dropout=s.lora_dropout,
                                      target_modules=s.lora_targets, task_type="CAUSAL_LM")
    elif not s.train_vision:
        for name, p in model.named_parameters():
            if any(k in name for k in _VISION):
                p.requires_grad_(False)
    fields = {f.name for f in dataclasses.fields(trl.SFTConfig)}
    warmup = {"warmup_ratio": s.warmup_ratio} if "warmup_ratio" in fields else {"warmup_steps": s.warmup_ratio}
    args = trl.SFTConfig(
        output_dir=str(Path(s.out) / "checkpoints"), num_train_epochs=s.epochs, max_steps=s.max_steps,
        per_device_train_batch_size=s.batch_size, gradient_accumulation_steps=s.grad_accum,
        learning_rate=s.learning_rate, lr_scheduler_type="cosine", **warmup,
        logging_steps=s.logging_steps, save_steps=s.save_steps, save_total_limit=s.save_total_limit,
        seed=s.seed, data_seed=s.seed, bf16=dtype == torch.bfloat16, fp16=dtype == torch.float16,
        use_cpu=device == "cpu", report_to=[], max_length=s.max_length, completion_only_loss=True,
        gradient_checkpointing=s.gradient_checkpointing, dataloader_num_workers=s.dataloader_workers,
        remove_unused_columns=False)
    trainer = safe_sft_trainer(trl, torch)(model=model, args=args, train_dataset=to_dataset(examples), processing_class=processor,
                             peft_config=peft_config, callbacks=[_log_callback(tf, log)] if log else None)
    if eval_callback is not None:
        eval_callback.attach(trainer)
    return trainer, processor, device, dtype


def train_vlm(train_file: str | Path, settings: VLMTrainSettings, note=None,
              eval_callback: Any = None) -> dict[str, Any]:
    """Train on ``train_file`` as ``settings`` say (module docstring); returns the summary written to
    ``out/train_summary.json``: ``model_dir`` (for ``hf:``), ``adapter_dir``, ``steps``, ``losses``
    (logged training losses in order), ``train_runtime_s``, ``samples_per_s``, ``peak_rss_mb``,
    ``peak_gpu_mb``, ``resumed_from``, ``fingerprint`` (data SHA-256 + settings); ``skipped`` when
    a finished run with the same data and settings was found (nothing trained); ``checkpoint_notes``:
    incomplete checkpoints ignored by the resume (also passed to ``note``, a ``str -> None``
    callable; None = print to stderr). ``eval_callback``: a
    :class:`~lensbench.tools.training.eval_callback.LensbenchEvalCallback` evaluating the model in memory
    during training (its runs under its own ``out``; the summary's ``evaluations`` lists their steps and cost).

    Raises DataError for a bad example file, ConfigError for LoRA targets matching no module (both
    before any weights load) or a model that cannot be loaded or a missing ``lensbench[train]``,
    :class:`~lensbench.tools.training.guards.TrainingDiverged` for a NaN / infinite loss or weights
    (nothing saved as final).
    """
    s = settings
    train_file = Path(train_file)
    examples = read_examples(train_file)
    out = Path(s.out)
    fingerprint = {"data_sha256": file_sha256(train_file), "settings": s.model_dump(mode="json", exclude={"out"})}
    done = _finished(out, fingerprint)
    if done is not None:
        return {**done, "skipped": "already trained with this data and these settings"}
    if s.lora:
        check_lora_targets(vlm_modules(s.model), s.lora_targets, s.model)
    torch = require("torch", "train", "training an image-text model")
    log = JsonlLog(out / "train_log.jsonl")
    resume = latest_complete(out / "checkpoints", HF_MARKER)
    notes = resume.report()
    for n in notes:
        log.write({"event": "checkpoint", "note": n})
        (note or _stderr)(n)
    trainer, processor, device, dtype = build_trainer(examples, s, log, eval_callback)
    last = str(resume.path) if s.resume and resume.path else None
    meter = Meter().start()
    try:
        result = trainer.train(resume_from_checkpoint=last)
        check_weights(((n, p) for n, p in trainer.model.named_parameters() if p.requires_grad), torch)
    except LensbenchError as exc:
        log.write({"event": "stopped", "error": str(exc)})
        raise
    steps = trainer.state.global_step
    start = resume.step if last else 0
    m = meter.stop(samples=int((steps - start) * s.batch_size * s.grad_accum))  # this process's samples
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    summary: dict[str, Any] = {
        "base_model": s.model, "train_file": str(train_file), "n_examples": len(examples), "steps": steps,
        "losses": losses, "train_runtime_s": result.metrics.get("train_runtime"),
        "samples_per_s": result.metrics.get("train_samples_per_second"), **m, "resumed_from": last,
        "device": device, "dtype": str(dtype).replace("torch.", ""), "fingerprint": fingerprint,
        "adapter_dir": str(out / "adapter") if s.lora else None, "model_dir": str(out / "model"),
        "checkpoint_notes": notes, "eval_options": _eval_options(examples)}
    if eval_callback is not None:
        summary["evaluations"] = {"out": str(eval_callback.out), "runs": eval_callback.history}
    final = trainer.model
    if s.lora:
        final.save_pretrained(out / "adapter")
        processor.save_pretrained(out / "adapter")
        final = final.merge_and_unload()
    final.save_pretrained(out / "model")
    processor.save_pretrained(out / "model")
    (out / "model" / "lensbench_train.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    (out / "train_summary.json").write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
    log.write({"event": "done", "steps": steps, **m})
    return summary
