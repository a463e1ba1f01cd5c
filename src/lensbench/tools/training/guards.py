"""Guards that keep a training run from producing garbage (issue 30.3): a non-finite loss stops the run
before the optimiser step it would poison, non-finite weights are never saved as final, LoRA
targets are matched against the model's module tree (built from its config on the meta device: no
weights read) before anything loads, and the HF Trainer writes its checkpoints atomically
(:mod:`.checkpoints`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.extras import require
from lensbench.tools.training.checkpoints import atomic_checkpoint

__all__ = ["TrainingDiverged", "check_loss", "check_weights", "check_lora_targets", "vlm_modules", "editor_modules",
           "safe_sft_trainer"]

_LORA_LAYERS = ("Linear", "Embedding", "Conv1d", "Conv2d", "Conv3d", "Conv1D")


class TrainingDiverged(LensbenchError):
    """The loss or the trained weights became NaN / infinite; nothing was saved as final."""


def check_loss(value: float, step: int) -> None:
    """Raise :class:`TrainingDiverged` when ``value`` (the loss of optimiser step ``step``, 1-based) is
    NaN or infinite."""
    if not math.isfinite(value):
        raise TrainingDiverged(f"training stopped at step {step}: the loss is {value} (too high a learning_rate, "
                               "or an overflow in this dtype); nothing was saved as final, checkpoints before this "
                               "step are kept")


def check_weights(params, torch, what: str = "trained weights") -> None:
    """Raise :class:`TrainingDiverged` when any tensor of ``params`` (an iterable of ``(name, tensor)``)
    holds a NaN or an infinity, naming the first."""
    with torch.no_grad():
        for name, p in params:
            if not bool(torch.isfinite(p).all()):
                raise TrainingDiverged(f"the {what} are not finite ({name} holds NaN/inf); nothing was saved as final")


def _match(targets: str | list[str], key: str) -> bool:
    from peft import LoraConfig
    from peft.tuners.tuners_utils import check_target_module_exists

    return bool(check_target_module_exists(LoraConfig(target_modules=targets), key))


def check_lora_targets(modules: list[tuple[str, str]], targets: str | list[str], model: str) -> int:
    """The number of ``(name, class name)`` in ``modules`` that peft's LoRA would wrap for
    ``targets`` (peft's own matching: a string is a full-match regex, a list matches names or name
    suffixes), counting layer types LoRA supports (Linear, Embedding, Conv). Raises ConfigError
    naming ``lora_targets`` and ``model`` when none matches."""
    require("peft", "train", "checking LoRA targets")
    hit = sum(1 for name, cls in modules if cls in _LORA_LAYERS and _match(targets, name))
    if not hit:
        shown = [n for n, c in modules if c in _LORA_LAYERS][:4]
        raise ConfigError(f"training settings: lora_targets {targets!r} match no Linear/Embedding/Conv module of "
                          f"{model!r} (its modules are named like {', '.join(shown)} ...)")
    return hit


def _meta_modules(build) -> list[tuple[str, str]]:
    accelerate = require("accelerate", "train", "checking LoRA targets")
    with accelerate.init_empty_weights():
        model = build()
    return [(n, type(m).__name__) for n, m in model.named_modules() if n]


def vlm_modules(source: str) -> list[tuple[str, str]]:
    """``(module name, class name)`` of the image-text model ``source`` built from its config on the meta
    device (no weights read). Raises ConfigError when the config cannot be read."""
    tf = require("transformers", "train", "training an image-text model")
    try:
        cfg = tf.AutoConfig.from_pretrained(source)
        return _meta_modules(lambda: tf.AutoModelForImageTextToText.from_config(cfg))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot load {source!r} as an image-text model: {type(exc).__name__}: {exc}") from None


def editor_modules(source: str) -> list[tuple[str, str]]:
    """``(module name, class name)`` of the transformer of the Qwen-Image-Edit pipeline ``source``, built
    from its config on the meta device. Raises ConfigError when the config cannot be read."""
    diffusers = require("diffusers", "train", "training an editor LoRA")
    cls = diffusers.QwenImageTransformer2DModel
    try:
        cfg = cls.load_config(source, subfolder="transformer")
        return _meta_modules(lambda: cls.from_config(cfg))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot load the editor pipeline {source!r}: {type(exc).__name__}: {exc}") from None


def safe_sft_trainer(trl, torch):
    """A subclass of TRL's ``SFTTrainer`` that checks every training step's loss (:func:`check_loss`,
    raised before the optimiser step) and the trainable weights before each checkpoint, and writes each
    checkpoint atomically: the Trainer's own ``_save_checkpoint`` into ``tmp-checkpoint-N``, renamed to
    ``checkpoint-N`` when complete, then its ``save_total_limit`` rotation."""
    tu = require("transformers.trainer_utils", "train", "training an image-text model")

    class SafeSFTTrainer(trl.SFTTrainer):
        def training_step(self, *args: Any, **kwargs: Any):
            loss = super().training_step(*args, **kwargs)
            check_loss(float(loss.detach().float().mean()), self.state.global_step + 1)
            return loss

        def _save_checkpoint(self, model, trial):
            check_weights(((n, p) for n, p in self.model.named_parameters() if p.requires_grad), torch,
                          f"weights at step {self.state.global_step}")
            run_dir = Path(self._get_output_dir(trial=trial))
            saved = self.args.output_dir

            def write(staging: Path) -> Path:
                self.args.output_dir = str(staging / run_dir.name)  # the Trainer writes <output_dir>/checkpoint-N
                try:
                    super(SafeSFTTrainer, self)._save_checkpoint(model, trial)
                finally:
                    self.args.output_dir = saved
                return staging / run_dir.name / f"checkpoint-{self.state.global_step}"

            atomic_checkpoint(run_dir, self.state.global_step, write)
            if self.args.should_save:
                tu.rotate_checkpoints(output_dir=str(run_dir), save_total_limit=self.args.save_total_limit,
                                      best_model_checkpoint=self.state.best_model_checkpoint, use_mtime=False)

    return SafeSFTTrainer
