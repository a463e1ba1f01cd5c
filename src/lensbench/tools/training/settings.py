"""Training settings of the shared layer (pydantic; every field documented, validated before training).

Every number must be finite (no ``inf`` / ``nan``: issue 30.3, ``--set learning_rate=inf`` trained an
adapter of NaNs) and in range: ``learning_rate`` in (0, 1], ``max_steps`` -1 (= use epochs) or >= 1,
``epochs`` > 0; a bad value is a ConfigError naming the key, raised before any model loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from lensbench.core.errors import ConfigError

__all__ = ["VLMTrainSettings", "EditorTrainSettings", "LLM_LORA_TARGETS", "QWEN_IMAGE_LORA_TARGETS", "settings_from_cli"]

#: peft regex: the language model's attention and MLP projections (not the vision tower) of the
#: Qwen2.5-VL / Qwen3-VL / LLaVA-OneVision module trees in transformers >= 4.52.
LLM_LORA_TARGETS = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"
#: DiffSynth-Studio's LoRA targets for the Qwen-Image(-Edit) DiT (examples/qwen_image/model_training/lora/
#: Qwen-Image-Edit-2509.sh, ``--lora_target_modules``); the module names are the same in diffusers'
#: ``QwenImageTransformer2DModel``.
QWEN_IMAGE_LORA_TARGETS = ["to_q", "to_k", "to_v", "add_q_proj", "add_k_proj", "add_v_proj", "to_out.0", "to_add_out",
                           "img_mlp.net.2", "img_mod.1", "txt_mlp.net.2", "txt_mod.1"]


def _steps(v: int) -> int:
    if v != -1 and v < 1:
        raise ValueError("must be -1 (train for `epochs`) or a positive number of steps")
    return v


class VLMTrainSettings(BaseModel):
    """SFT of an image-text model (:func:`lensbench.tools.training.vlm_sft.train_vlm`).

    ``model``: base checkpoint folder or Hub id (``AutoModelForImageTextToText``); ``out``: output
    folder (checkpoints, log, adapter, merged ``model/``). ``epochs`` (> 0), ``batch_size`` per
    device, ``grad_accum`` steps, ``learning_rate``, ``warmup_ratio`` (0-1), cosine schedule;
    ``max_steps`` (> 0 overrides epochs). ``lora``: LoRA (True) or full fine-tuning (False, the
    vision tower frozen unless ``train_vision``); ``lora_r`` / ``lora_alpha`` / ``lora_dropout`` /
    ``lora_targets`` (module names or one regex). ``dtype``: ``auto`` = bfloat16 on a GPU that
    has it, else float32. ``seed`` fixes initialisation, shuffling and dropout. ``save_steps``,
    ``save_total_limit``: checkpoints; ``resume``: continue from the last checkpoint in ``out``.
    ``max_length``: truncate sequences (None = never; images must not be cut). ``device``: auto /
    cpu / cuda.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: str
    out: Path
    epochs: float = Field(default=3.0, gt=0)
    batch_size: int = Field(default=8, ge=1)
    grad_accum: int = Field(default=1, ge=1)
    learning_rate: float = Field(default=1e-4, gt=0, le=1)
    warmup_ratio: float = Field(default=0.03, ge=0, le=1)
    max_steps: int = Field(default=-1)
    lora: bool = True
    lora_r: int = Field(default=16, ge=1)
    lora_alpha: int = Field(default=32, ge=1)
    lora_dropout: float = Field(default=0.05, ge=0, lt=1)
    lora_targets: str | list[str] = LLM_LORA_TARGETS
    train_vision: bool = False
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    seed: int = 0
    save_steps: int = Field(default=500, ge=1)
    save_total_limit: Optional[int] = Field(default=3, ge=1)
    resume: bool = True
    logging_steps: int = Field(default=10, ge=1)
    max_length: Optional[int] = Field(default=None, ge=16)
    gradient_checkpointing: bool = False
    dataloader_workers: int = Field(default=0, ge=0)
    device: Literal["auto", "cpu", "cuda"] = "auto"

    @field_validator("max_steps")
    @classmethod
    def _max_steps(cls, v: int) -> int:
        return _steps(v)


class EditorTrainSettings(BaseModel):
    """Flow-matching LoRA of an image editor (:func:`lensbench.tools.training.editor_lora.train_editor_lora`).

    ``model``: a diffusers Qwen-Image-Edit(-Plus) pipeline folder or Hub id; ``out``: output folder.
    ``rank`` / ``alpha`` (None = rank, DiffSynth-Studio's choice: scale 1) / ``targets`` of the
    LoRA on the transformer; ``epochs``, ``batch_size``, ``grad_accum``, ``learning_rate``,
    ``resolution`` (square side in px, a multiple of 32; pairs are resized to it), ``max_steps``
    (> 0 overrides epochs); ``weighting_scheme`` / ``logit_mean`` / ``logit_std`` / ``mode_scale``:
    diffusers' timestep density and ``compute_loss_weighting_for_sd3`` (``none`` = uniform, weight 1);
    ``loss_weighting``: ``diffusers`` (that) or ``diffsynth`` (DiffSynth-Studio's Qwen-Image trainer:
    shifted sigma grid, uniform grid index, its per-timestep weight; ``weighting_scheme`` must then stay
    ``none``; :mod:`lensbench.tools.training.editor_weighting`); ``mixed_precision``:
    ``no`` / ``bf16`` / ``fp16`` (accelerate); ``seed``; ``save_steps`` (accelerate states under
    ``out/checkpoints``), ``resume``; ``gradient_checkpointing``; ``max_grad_norm``.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: str
    out: Path
    rank: int = Field(default=32, ge=1)
    alpha: Optional[int] = Field(default=None, ge=1)
    targets: list[str] = Field(default_factory=lambda: list(QWEN_IMAGE_LORA_TARGETS))
    epochs: float = Field(default=2.0, gt=0)
    batch_size: int = Field(default=8, ge=1)
    grad_accum: int = Field(default=1, ge=1)
    learning_rate: float = Field(default=1e-4, gt=0, le=1)
    resolution: int = Field(default=1024, ge=32, multiple_of=32)
    max_steps: int = Field(default=-1)
    weighting_scheme: Literal["none", "sigma_sqrt", "logit_normal", "mode", "cosmap"] = "none"
    logit_mean: float = 0.0
    logit_std: float = 1.0
    mode_scale: float = 1.29
    loss_weighting: Literal["diffusers", "diffsynth"] = "diffusers"
    mixed_precision: Literal["no", "bf16", "fp16"] = "bf16"  # "no" on a CPU whatever is set
    seed: int = 0
    save_steps: int = Field(default=500, ge=1)
    resume: bool = True
    gradient_checkpointing: bool = False
    max_grad_norm: float = Field(default=1.0, gt=0)
    device: Literal["auto", "cpu", "cuda"] = "auto"

    @field_validator("max_steps")
    @classmethod
    def _max_steps(cls, v: int) -> int:
        return _steps(v)

    @field_validator("loss_weighting")
    @classmethod
    def _one_weighting(cls, v: str, info: ValidationInfo) -> str:
        scheme = info.data.get("weighting_scheme", "none")
        if v == "diffsynth" and scheme != "none":
            raise ValueError(f"diffsynth draws its own timesteps and weights; weighting_scheme must be none, "
                             f"not {scheme!r}")
        return v


def settings_from_cli(cls: type[BaseModel], sets: list[str] | None = None, **fixed: Any) -> BaseModel:
    """``cls(**fixed, **overrides)`` where ``sets`` are ``KEY=VALUE`` strings from a repeated
    ``--set`` option (values coerced by the field types; a comma-separated value fills a list
    field). ``fixed`` are the recipe's values (model, out, paper defaults); ``--set`` wins.

    Raises ConfigError naming the bad ``--set`` entry, an unknown key (with the known ones) or an
    invalid value."""
    over: dict[str, Any] = {}
    for item in sets or []:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE")
        if key not in cls.model_fields:
            raise ConfigError(f"--set {item!r}: unknown key {key!r}; known: {', '.join(cls.model_fields)}")
        ann = str(cls.model_fields[key].annotation)
        over[key] = [v.strip() for v in value.split(",") if v.strip()] if ann.startswith("list[") else value
    try:
        return cls(**{**fixed, **over})
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"training settings: {bad}") from None
