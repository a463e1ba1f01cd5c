"""Settings and identity of an ``hf:MODEL_OR_PATH`` model (no torch needed).

Spec: ``hf:PATH_OR_HUB_ID[?key=value&...]``, e.g.
``hf:/models/Qwen2.5-VL-7B-Instruct?dtype=bfloat16&device=cuda&attn=sdpa&batch=16``
(keys: :class:`HFSettings`; the same keys may also come from ``BackendConfig.extra["hf"]``, which
the query overrides).

Identity (enters the fingerprint, hence every request key): for a local folder, the SHA-256 of
its ``config.json`` and of every processor / tokenizer / template / generation-config file
(``*.json``, ``*.jinja``, ``*.txt``, ``*.model``, ``*.tiktoken``), plus the names and sizes of the weight
files (``*.safetensors``, ``*.bin``, ``*.pt``, ``*.pth``) — cheap, and changes with any other
checkpoint. For a Hub id: ``ID@REVISION`` (``revision=`` key, default ``main``; pin a commit for
a key that follows the weights).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal, Optional
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lensbench.core.errors import ConfigError

__all__ = ["HFSettings", "parse_hf_spec", "model_identity", "read_model_config", "resolve_dtype",
           "resolve_video_mode", "recorded_eval_options", "VIDEO_FAMILIES", "TRAIN_RECORD"]

#: written by ``lensbench train`` into the merged model folder (``tools/training/vlm_sft.py``)
TRAIN_RECORD = "lensbench_train.json"

#: ``model_type`` values whose processor takes a video as a list of frames with a
#: ``{"type": "video"}`` chat entry (Qwen2-VL, Qwen2.5-VL, Qwen3-VL).
VIDEO_FAMILIES = frozenset({"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe"})

_SMALL_SUFFIXES = (".json", ".jinja", ".txt", ".model", ".tiktoken")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_DTYPES = ("bfloat16", "float16", "float32")


class HFSettings(BaseModel):
    """``hf:`` spec keys.

    ``dtype``: weights/activations dtype (``auto`` = the checkpoint's own ``torch_dtype``/``dtype``
    from config.json, float32 when absent); ``device``: ``auto`` (cuda when available, else cpu),
    ``cpu``, ``cuda``, ``cuda:N``, or ``map`` (``device_map="auto"`` through accelerate: a model
    larger than one GPU); ``attn``: attention implementation passed as ``attn_implementation``
    (``sdpa``, ``eager``, ``flash_attention_2`` ...; None = transformers' default); ``batch``:
    requests generated together (the engine's batch size for this backend, >= 1);
    ``max_new_tokens``: used when a request sets no ``max_tokens``; ``video``: how video frames are
    given (``auto`` = as a video for the Qwen-VL families, as separate images otherwise; ``video``;
    ``images``); ``revision``: Hub revision; ``trust_remote_code``: allow the checkpoint's own code;
    ``min_pixels`` / ``max_pixels``: resize bounds (pixels per image or frame) of processors that
    have them (Qwen-VL families; None = the checkpoint's preprocessor_config.json).

    Outputs depend on ``dtype``, ``attn``, ``max_new_tokens``, ``video``, the pixel bounds and the checkpoint (all in
    the fingerprint); ``device`` and ``batch`` place the work and are not (a different batch
    composition may still change low-order bits of the logits, as on any batching server).
    """

    model_config = ConfigDict(extra="forbid")

    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        default="auto", description="weights/activations dtype (auto: the checkpoint's own)")
    device: str = Field(default="auto", pattern=r"^(auto|cpu|cuda(:\d+)?|map)$",
                        description="auto, cpu, cuda, cuda:N or map (device_map=auto through accelerate)")
    attn: Optional[str] = Field(default=None, pattern=r"^[a-z0-9_]+$",
                                description="attn_implementation: sdpa, eager, flash_attention_2 ...")
    batch: int = Field(default=16, ge=1, le=4096, description="requests generated together")
    max_new_tokens: int = Field(default=1024, ge=1, description="used when a request sets no max_tokens")
    video: Literal["auto", "video", "images"] = Field(
        default="auto", description="video frames as a video (Qwen-VL families under auto) or as images")
    revision: Optional[str] = Field(default=None, description="Hub revision")
    trust_remote_code: bool = Field(default=False, description="allow the checkpoint's own code")
    min_pixels: Optional[int] = Field(default=None, ge=1, description="resize bound per image or frame (Qwen-VL)")
    max_pixels: Optional[int] = Field(default=None, ge=1, description="resize bound per image or frame (Qwen-VL)")


def parse_hf_spec(arg: str, defaults: dict[str, Any] | None = None) -> tuple[str, HFSettings]:
    """Split ``MODEL_OR_PATH[?key=value&...]`` into the source and validated settings.

    Raises:
        ConfigError: empty source, unreadable query, unknown key or bad value (names the spec).
    """
    src, sep, query = (arg or "").partition("?")
    src = src.strip()
    if not src:
        raise ConfigError("--model hf:MODEL_OR_PATH needs a model folder or Hub id after 'hf:'")
    values: dict[str, Any] = dict(defaults or {})
    if sep:
        try:
            values.update(parse_qsl(query, keep_blank_values=True, strict_parsing=True))
        except ValueError:
            raise ConfigError(f"hf:{arg}: cannot read settings {query!r}; use ?key=value&key=value") from None
    try:
        return src, HFSettings(**values)
    except ValidationError as exc:
        bad = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"hf:{arg}: bad setting ({bad}); known keys: {', '.join(HFSettings.model_fields)}") from None


def _is_local(src: str) -> bool:
    p = Path(src).expanduser()
    return p.exists() or src.startswith((".", "/", "~"))


def read_model_config(src: str) -> dict[str, Any]:
    """The model's ``config.json`` as a dict for a local folder; ``{}`` for a Hub id (not fetched here).

    Raises:
        ConfigError: a local path that is not a folder, or has no readable config.json.
    """
    if not _is_local(src):
        return {}
    p = Path(src).expanduser()
    if not p.is_dir():
        raise ConfigError(f"hf:{src}: not a model folder (give a folder holding config.json, or a Hub id)")
    try:
        return json.loads((p / "config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"hf:{src}: no config.json in {p}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"hf:{src}: cannot read {p / 'config.json'}: {exc}") from None


def recorded_eval_options(src: str) -> dict[str, Any]:
    """Benchmark options a checkpoint written by ``lensbench train`` records for its evaluation
    (``eval_options`` of :data:`TRAIN_RECORD`, e.g. ``{"bbox_format": "abs-resized"}``: the box
    convention it was trained to answer in); ``{}`` for a Hub id or a folder without the record.

    Raises:
        ConfigError: the record exists but cannot be read, or its ``eval_options`` is not an object
        of names to strings / numbers / booleans.
    """
    if not _is_local(src):
        return {}
    f = Path(src).expanduser() / TRAIN_RECORD
    if not f.is_file():
        return {}
    try:
        opts = json.loads(f.read_text(encoding="utf-8")).get("eval_options") or {}
    except (OSError, ValueError, AttributeError) as exc:
        raise ConfigError(f"hf:{src}: cannot read {f}: {exc}") from None
    if not isinstance(opts, dict) or not all(isinstance(k, str) and isinstance(v, (str, int, float, bool))
                                             for k, v in opts.items()):
        raise ConfigError(f"{f} [field 'eval_options']: must be an object of option names to values")
    return opts


def model_identity(src: str, revision: str | None = None) -> str:
    """The checkpoint's identity string (see the module docstring).

    Raises ConfigError as :func:`read_model_config` does.
    """
    if not _is_local(src):
        return f"hub:{src}@{revision or 'main'}"
    read_model_config(src)  # validates the folder
    p = Path(src).expanduser().resolve()
    h = hashlib.sha256()
    for f in sorted(x for x in p.rglob("*") if x.is_file()):
        rel = f.relative_to(p).as_posix()
        if f.suffix in _WEIGHT_SUFFIXES:
            h.update(f"w|{rel}|{f.stat().st_size}\n".encode())
        elif f.suffix in _SMALL_SUFFIXES and f.stat().st_size <= 64 << 20:
            h.update(f"f|{rel}|{hashlib.sha256(f.read_bytes()).hexdigest()}\n".encode())
    return f"{p.name}|{h.hexdigest()[:16]}"


def resolve_dtype(setting: str, config: dict[str, Any]) -> str:
    """The dtype name the model will run in: ``setting`` unless ``auto``, then the checkpoint's
    (``dtype`` / ``torch_dtype`` of config.json or its ``text_config``), ``float32`` when absent;
    ``auto`` for a Hub id (its config is not read here; transformers picks the checkpoint's)."""
    if setting != "auto":
        return setting
    for d in (config, config.get("text_config") or {}):
        v = d.get("dtype") or d.get("torch_dtype")
        if isinstance(v, str) and v.replace("torch.", "") in _DTYPES:
            return v.replace("torch.", "")
    return "float32" if config else "auto"


def resolve_video_mode(setting: str, model_type: str | None, source: str = "") -> str:
    """``"video"`` (frames as one video entry) or ``"images"`` (each frame an image entry).
    ``auto`` = ``video`` for :data:`VIDEO_FAMILIES` (by config.json's ``model_type``; for a Hub id,
    whose config is not read here, by a name containing ``qwen`` and ``-vl``), ``images`` otherwise."""
    if setting != "auto":
        return setting
    if model_type is None:
        name = source.lower()
        return "video" if "qwen" in name and "-vl" in name else "images"
    return "video" if model_type in VIDEO_FAMILIES else "images"
