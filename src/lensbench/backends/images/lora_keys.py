"""Image-editor LoRA weights between DiffSynth-Studio and diffusers key names.

diffusers (``QwenImage*Pipeline.save_lora_weights``; ``pytorch_lora_weights.safetensors``):
``transformer.<module>.lora_A.weight`` / ``.lora_B.weight``, applied as ``W + (alpha/r) B A``
with ``alpha`` from the saved adapter metadata (absent: ``alpha = r``).

DiffSynth-Studio (``diffsynth/trainers/utils.py``: ``export_trainable_state_dict`` with
``--remove_prefix_in_ckpt pipe.dit.``; ``epoch-N.safetensors``): ``<module>.lora_A.default.weight``
/ ``.lora_B.default.weight`` (peft's adapter name kept), trained with ``lora_alpha = rank``; its
loader (``diffsynth/lora/__init__.py``, ``GeneralLoRALoader``) adds ``B @ A`` with alpha 1 and
also accepts the names without ``default.`` and a ``diffusion_model.`` prefix. Kohya-style
``lora_down`` / ``lora_up`` (+ ``.alpha``) files are read too. The module names of the Qwen-Image
DiT are the same in both (``transformer_blocks.N.attn.to_q`` ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.extras import require

__all__ = ["LORA_FILE", "is_diffusers_format", "to_diffusers", "to_diffsynth", "read_lora", "read_for_diffusers"]

#: diffusers' LoRA weight file name inside a LoRA folder.
LORA_FILE = "pytorch_lora_weights.safetensors"
_PREFIXES = ("pipe.dit.", "dit.", "diffusion_model.", "transformer.")


def is_diffusers_format(sd: dict[str, Any]) -> bool:
    """True when every key is ``transformer.*.lora_A.weight`` / ``.lora_B.weight`` (nothing to convert)."""
    return bool(sd) and all(k.startswith("transformer.") and k.endswith((".lora_A.weight", ".lora_B.weight"))
                            for k in sd)


def _strip(key: str) -> str:
    for p in _PREFIXES:
        if key.startswith(p):
            return key[len(p):]
    return key


def to_diffusers(sd: dict[str, Any]) -> dict[str, Any]:
    """A DiffSynth-Studio (or kohya ``lora_down``/``lora_up``) LoRA state dict in diffusers names.

    ``.alpha`` entries are folded into the weights (``B`` and ``A`` scaled by ``sqrt(alpha/r)``),
    so the result applies with scale 1 (alpha = r). Raises ValueError when a ``lora_A`` has no
    ``lora_B`` (or the reverse), or when there is no LoRA weight at all."""
    pairs: dict[str, dict[str, Any]] = {}
    alphas: dict[str, float] = {}
    for key, value in sd.items():
        k = _strip(key).replace(".default.", ".")
        if k.endswith(".alpha"):
            alphas[k[: -len(".alpha")]] = float(value)
            continue
        for suffix, role in ((".lora_A.weight", "A"), (".lora_B.weight", "B"), (".lora_down.weight", "A"),
                             (".lora_up.weight", "B")):
            if k.endswith(suffix):
                pairs.setdefault(k[: -len(suffix)], {})[role] = value
                break
    if not pairs:
        raise ValueError("no LoRA weights (lora_A/lora_B or lora_down/lora_up) in this state dict")
    out = {}
    for mod, ab in pairs.items():
        if set(ab) != {"A", "B"}:
            raise ValueError(f"LoRA module {mod!r} lacks its lora_{'B' if 'A' in ab else 'A'} weight")
        a, b = ab["A"], ab["B"]
        if mod in alphas:
            f = (alphas[mod] / a.shape[0]) ** 0.5
            a, b = a * f, b * f
        out[f"transformer.{mod}.lora_A.weight"] = a
        out[f"transformer.{mod}.lora_B.weight"] = b
    return out


def to_diffsynth(sd: dict[str, Any], scale: float = 1.0) -> dict[str, Any]:
    """A diffusers LoRA state dict in DiffSynth-Studio's names (``<module>.lora_A.default.weight``);
    ``scale`` = the adapter's ``alpha / r``, folded into ``lora_B`` (DiffSynth applies ``B @ A``)."""
    out = {}
    for key, value in sd.items():
        k = _strip(key)
        if k.endswith(".lora_A.weight"):
            out[k.replace(".lora_A.weight", ".lora_A.default.weight")] = value
        elif k.endswith(".lora_B.weight"):
            out[k.replace(".lora_B.weight", ".lora_B.default.weight")] = value * scale if scale != 1.0 else value
    return out


def read_lora(path: str | Path) -> dict[str, Any]:
    """The tensors of a LoRA file (``.safetensors``; ``.bin`` / ``.pt`` read with
    ``weights_only``) or of a diffusers LoRA folder (its :data:`LORA_FILE`). Raises ConfigError."""
    p = Path(path)
    if p.is_dir():
        p = p / LORA_FILE
    if not p.is_file():
        raise ConfigError(f"LoRA weights not found: {p}")
    if p.suffix == ".safetensors":
        st = require("safetensors.torch", "train", "reading LoRA weights")
        return dict(st.load_file(str(p)))
    torch = require("torch", "train", "reading LoRA weights")
    return dict(torch.load(str(p), map_location="cpu", weights_only=True))


def read_for_diffusers(path: str | Path) -> dict[str, Any] | str:
    """What to give ``pipe.load_lora_weights``: the folder / file itself when it is in diffusers
    format (its saved adapter metadata then applies), else the converted state dict
    (:func:`to_diffusers`). Raises ConfigError for a file that holds no LoRA weights."""
    sd = read_lora(path)
    if is_diffusers_format(sd):
        return str(path)
    try:
        return to_diffusers(sd)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None
