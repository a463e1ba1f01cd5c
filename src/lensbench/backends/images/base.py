"""Shared parts of the image-generation backends (GenViP image editors, GOBench text-to-image generators).

* errors: :class:`ImageBackendError` (one image failed; the caller lists it and goes on);
* folder source: :func:`list_images`, :func:`find_by_stem`, :func:`find_image` (pre-made images);
* :class:`OpenAIImagesClient`: the OpenAI Images API (``/images/generations``, ``/images/edits``)
  over httpx, with optional retries of timeouts, connection errors, HTTP 429 and 5xx, and
  :meth:`OpenAIImagesClient.decode` for ``b64_json`` / ``url`` (data URL or http) replies;
* :func:`load_diffusers_pipeline`: a diffusers pipeline loaded lazily (optional extra
  ``lensbench[hf]``), with a clear ConfigError when torch/diffusers or the weights are missing;
* saving: :func:`save_png` and :func:`resize_back_and_save` (atomic writes).

No benchmark knowledge here (backends sit below benchmarks): a specialisation says what a key,
a prompt and an output file are.
"""

from __future__ import annotations

import base64
import io
import os
import time
from pathlib import Path
from typing import Any

from PIL import Image

from lensbench.core.errors import ConfigError
from lensbench.core.extras import require

__all__ = ["ImageBackendError", "IMAGE_EXTS", "list_images", "find_by_stem", "find_image", "OpenAIImagesClient",
           "load_diffusers_pipeline", "pipeline_dtype", "save_png", "resize_back_and_save"]

#: Image file extensions recognised in folders (lower case).
IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff")


class ImageBackendError(Exception):
    """One image could not be made (the message names the image and the cause); the run goes on."""


# --------------------------------------------------------------------------- folder source
def list_images(folder: Path) -> list[Path]:
    """Image files directly in ``folder``, sorted by name. Raises ConfigError if it is not a folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder} is not a folder")
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTS)


def find_by_stem(folder: Path, name: str) -> Path | None:
    """``folder/name`` or a file with the same stem and another image extension, else None."""
    p = Path(folder) / Path(name).name
    if p.is_file():
        return p
    for ext in IMAGE_EXTS:
        q = p.with_suffix(ext)
        if q.is_file():
            return q
    return None


def find_image(stems: list[Path], exts: tuple[str, ...]) -> Path | None:
    """The first existing ``stem + ext`` over ``stems`` (outer) and ``exts`` (inner), else None.

    ``stems`` are paths without extension (``DIR/direct_light_images/1``); a stem may contain dots.
    """
    for stem in stems:
        for ext in exts:
            p = Path(str(stem) + ext)
            if p.is_file():
                return p
    return None


# --------------------------------------------------------------------------- saving
def save_png(img: Image.Image, dst: Path) -> Path:
    """Write ``img`` as RGB PNG to ``dst`` (the caller picks a temporary name when needed)."""
    img.convert("RGB").save(dst, format="PNG")
    return Path(dst)


def resize_back_and_save(img: Image.Image, src: Path, out_dir: Path) -> Path:
    """Resize ``img`` (bicubic) to the size of the image file ``src`` and write it atomically as
    ``out_dir/<src stem>.jpg`` (JPEG quality 95; GenViP App. C: outputs resized back to the
    input's width x height). Returns the written path."""
    with Image.open(src) as s:
        size = s.size
    img = img.convert("RGB").resize(size, Image.Resampling.BICUBIC)
    dst = Path(out_dir) / (Path(src).stem + ".jpg")
    tmp = dst.with_suffix(".jpg.tmp")
    img.save(tmp, "JPEG", quality=95)
    tmp.replace(dst)
    return dst


# --------------------------------------------------------------------------- OpenAI Images API
class OpenAIImagesClient:
    """Synchronous client of an OpenAI-compatible Images API.

    ``base_url`` defaults to ``https://api.openai.com/v1``; the key is read from the environment
    variable ``api_key_env`` (never stored elsewhere). ``max_retries`` extra attempts are made
    after a timeout / connection error / HTTP 429 / 5xx, waiting ``backoff_s * 2**attempt``
    seconds. ``http`` is the underlying ``httpx.Client`` (tests may replace it).
    """

    def __init__(self, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY", timeout_s: float = 300.0,
                 max_retries: int = 0, backoff_s: float = 1.0):
        httpx = require("httpx", "images", "the image API client")

        key = os.environ.get(api_key_env, "")
        self.base = (base_url or "https://api.openai.com/v1").rstrip("/")
        self.max_retries, self.backoff_s = max_retries, backoff_s
        self.http = httpx.Client(timeout=timeout_s, headers={"Authorization": f"Bearer {key}"} if key else {})

    def url(self, path: str) -> str:
        """``base_url`` + ``/`` + ``path`` (e.g. ``images/edits``)."""
        return f"{self.base}/{path.lstrip('/')}"

    def post(self, path: str, **kw: Any):
        """POST to ``path`` (``json=`` or ``data=``/``files=``), retried as the class says.

        Returns the last ``httpx.Response`` (any status: the caller decides what a 4xx means),
        or raises :class:`ImageBackendError` (message ``"<ExcType>: <detail>"``) when the last
        attempt failed in transport.
        """
        httpx = require("httpx", "images", "the image API client")

        last_exc = ""
        for attempt in range(self.max_retries + 1):
            try:
                r = self.http.post(self.url(path), **kw)
            except httpx.HTTPError as exc:
                last_exc = f"{type(exc).__name__}: {exc}"
                r = None
            else:
                last_exc = ""
                if not (r.status_code == 429 or r.status_code >= 500):
                    return r
            if attempt < self.max_retries:
                time.sleep(self.backoff_s * (2 ** attempt))
        if r is None:
            raise ImageBackendError(last_exc)
        return r

    def decode(self, r, *, fetch_urls: bool = True) -> Image.Image:
        """The first image of a 2xx reply: ``data[0].b64_json``, else ``data[0].url`` (a ``data:``
        URL, or an http URL fetched when ``fetch_urls``). Raises KeyError / IndexError /
        ValueError / TypeError / OSError / httpx.HTTPError for a malformed reply (callers wrap them)."""
        item = r.json()["data"][0]
        b64 = item.get("b64_json")
        url = str(item.get("url") or "")
        if b64:
            data = base64.b64decode(b64)
        elif url.startswith("data:"):
            data = base64.b64decode(url.split(",", 1)[1])
        elif url and fetch_urls:
            got = self.http.get(url)
            got.raise_for_status()
            data = got.content
        else:
            raise KeyError("b64_json" if not fetch_urls else "b64_json/url")
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            return im.copy()

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()


# --------------------------------------------------------------------------- diffusers
def pipeline_dtype(torch, device: str, dtype: str = "auto"):
    """The torch dtype to run a diffusers pipeline in on ``device``: ``auto`` = bfloat16 on a CUDA
    device (float16 where the GPU has no bfloat16), float32 on a CPU (issue 31: bfloat16 matmuls on
    a CPU are about 16x slower than float32; a GenViP demo edit did not finish in 25 minutes);
    ``bfloat16`` / ``float16`` / ``float32`` force one. Raises ConfigError for another name."""
    if dtype == "auto":
        if not device.startswith("cuda"):
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if dtype not in ("bfloat16", "float16", "float32"):
        raise ConfigError(f"dtype must be auto, bfloat16, float16 or float32, got {dtype!r}")
    return getattr(torch, dtype)


def load_diffusers_pipeline(model: str, *, kind: str, label: str, lora: str | None = None,
                            device: str | None = None, dtype: str = "auto") -> tuple[Any, Any]:
    """``(torch module, pipeline)``: ``diffusers.<kind>.from_pretrained(model)`` in the dtype of
    :func:`pipeline_dtype` (``auto``: bfloat16 on CUDA, float32 on a CPU), with LoRA weights when
    ``lora`` is given, moved to ``device`` (default: CUDA when available). ``pipe.lensbench_dtype``
    is the dtype's name.

    ``lora``: a diffusers LoRA folder / file, or a DiffSynth-Studio one (its key names are converted,
    :mod:`lensbench.backends.images.lora_keys`).
    ``kind``: ``"AutoPipelineForText2Image"`` or ``"DiffusionPipeline"``; ``label`` starts the
    error messages (e.g. ``"--editor diffusers:MODEL"``). Raises ConfigError when torch or
    diffusers is missing (``pip install 'lensbench[hf]'``) or the pipeline cannot be loaded
    (hub, offline or format errors: give a local path or cached weights).
    """
    try:
        torch = require("torch", "hf", label)
        diffusers = require("diffusers", "hf", label)
    except ImportError as exc:
        raise ConfigError(f"{label} needs torch and diffusers ({exc}); pip install 'lensbench[hf]'") from None
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch_dtype = pipeline_dtype(torch, device, dtype)
    try:
        pipe = getattr(diffusers, kind).from_pretrained(model, torch_dtype=torch_dtype)
    except Exception as exc:  # noqa: BLE001 - hub/offline/format errors all end the same way
        raise ConfigError(f"{label}: cannot load the pipeline ({type(exc).__name__}: {exc}); give a local path or "
                          "make the weights available in the HF cache") from None
    if lora:
        from lensbench.backends.images.lora_keys import read_for_diffusers

        pipe.load_lora_weights(read_for_diffusers(lora))  # diffusers or DiffSynth-Studio key names
    pipe.to(device)
    pipe.lensbench_dtype = str(torch_dtype).replace("torch.", "")
    return torch, pipe
