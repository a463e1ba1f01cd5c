"""Image editors: translate one image file into another (GenViP: infrared -> RGB; paper Sec. 4.1, App. C).

Editor specs (``--editor`` of ``lensbench genvip translate``):

* ``folder:DIR`` — already translated images (e.g. the HF release's ``translated_rgb_imgs/``),
  matched by the input file's base name, or the same stem with another image extension.
* ``openai-images:MODEL`` — an OpenAI-compatible image-edit endpoint (``POST
  {base_url}/images/edits``, multipart ``image`` + ``prompt`` + ``model`` + ``size``), reply
  ``data[0].b64_json`` (or a data URL in ``url``). The key comes from ``--api-key-env``.
* ``diffusers:MODEL_OR_PATH`` — a local diffusers image-edit pipeline (Qwen-Image-Edit-2509,
  optional ``--lora PATH``), optional extra ``lensbench[hf]``; imported only when used.

Protocol (paper App. C; official ``edit_ft/.../qwen_image_edit_2509_multigpu.py``): the editing
prompt :data:`EDIT_PROMPT`, 40 inference steps, seed 123, the input resized to 1024x1024, the
output resized back to the original width x height and saved as ``<stem>.jpg``.
"""

from __future__ import annotations

import io
import shutil
from abc import ABC, abstractmethod
from pathlib import Path

from PIL import Image

from lensbench.backends.images.base import (ImageBackendError, OpenAIImagesClient, find_by_stem,
                                            load_diffusers_pipeline, resize_back_and_save)
from lensbench.core.errors import ConfigError

__all__ = ["EDIT_PROMPT", "EditError", "ImageEditor", "FolderEditor", "OpenAIImagesEditor", "DiffusersEditor",
           "make_editor"]

#: The editing prompt of App. C (training and inference of all editing models).
EDIT_PROMPT = "Translate the infrared image into the corresponding visible light (RGB) image."


class EditError(ImageBackendError):
    """One image could not be translated (the message names the file and the cause)."""


class ImageEditor(ABC):
    """Translate one image file into an image file in ``out_dir``.

    :meth:`edit` returns the written path; it raises :class:`EditError` for a failure of this
    image (the run goes on and lists it). ``fingerprint`` names the editor and its settings.
    """

    fingerprint: str = ""

    @abstractmethod
    def edit(self, src: Path, out_dir: Path) -> Path:
        """Write the translation of ``src`` into ``out_dir``; return its path."""

    def close(self) -> None:
        """Release resources (default: nothing)."""


class FolderEditor(ImageEditor):
    """Copies already translated images from ``folder`` (same base name or same stem)."""

    def __init__(self, folder: str):
        if not folder:
            raise ConfigError("--editor folder:DIR needs a folder after 'folder:'")
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ConfigError(f"--editor folder:{folder}: not a folder")
        self.fingerprint = f"folder:{self.folder.resolve()}"

    def edit(self, src: Path, out_dir: Path) -> Path:
        found = find_by_stem(self.folder, src.name)
        if found is None:
            raise EditError(f"{src.name}: no translated image with this name or stem in {self.folder}")
        dst = Path(out_dir) / found.name
        shutil.copyfile(found, dst)
        return dst


class OpenAIImagesEditor(ImageEditor):
    """OpenAI-compatible ``/images/edits`` client (see the module docstring): input resized to
    ``size`` x ``size`` PNG, output resized back; retries timeouts, connection errors, HTTP 429
    and 5xx ``max_retries`` times with exponential backoff (``api`` is the
    :class:`~lensbench.backends.images.base.OpenAIImagesClient`)."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 size: int = 1024, prompt: str = EDIT_PROMPT, timeout_s: float = 300.0, max_retries: int = 3,
                 backoff_s: float = 1.0):
        if not model:
            raise ConfigError("--editor openai-images:MODEL needs a model name")
        self.model, self.size, self.prompt, self.max_retries = model, size, prompt, max_retries
        self.api = OpenAIImagesClient(base_url, api_key_env, timeout_s, max_retries=max_retries, backoff_s=backoff_s)
        self.url = self.api.url("images/edits")
        self.fingerprint = f"openai-images:{model}|size={size}|prompt={prompt}"

    def edit(self, src: Path, out_dir: Path) -> Path:
        with Image.open(src) as im:
            buf = io.BytesIO()
            im.convert("RGB").resize((self.size, self.size), Image.Resampling.BICUBIC).save(buf, "PNG")
        data = {"model": self.model, "prompt": self.prompt, "size": f"{self.size}x{self.size}", "n": "1"}
        tries = f"failed after {self.max_retries + 1} attempt(s) at {self.url}"
        try:
            r = self.api.post("images/edits", data=data, files={"image": (src.stem + ".png", buf.getvalue(), "image/png")})
        except ImageBackendError as exc:
            raise EditError(f"{src.name}: {tries}: {exc}") from None
        if r.status_code == 429 or r.status_code >= 500:
            raise EditError(f"{src.name}: {tries}: HTTP {r.status_code}: {r.text[:200]}")
        if r.status_code >= 400:
            raise EditError(f"{src.name}: HTTP {r.status_code} from {self.url}: {r.text[:300]}")
        try:
            img = self.api.decode(r, fetch_urls=False)
        except (ValueError, KeyError, IndexError, TypeError, OSError) as exc:
            raise EditError(f"{src.name}: malformed image-edit reply ({type(exc).__name__}: {exc}); "
                            f"body starts {r.text[:120]!r}") from None
        return resize_back_and_save(img, src, out_dir)

    def close(self) -> None:
        self.api.close()


class DiffusersEditor(ImageEditor):
    """Local diffusers pipeline (Qwen-Image-Edit-2509 and its LoRA, App. C): 40 steps, seed 123,
    1024x1024, resized back; ``dtype`` ``auto`` = bfloat16 on a GPU, float32 on a CPU
    (:func:`~lensbench.backends.images.base.pipeline_dtype`). Needs torch + diffusers (``pip install
    lensbench[hf]``) and the weights on disk or in the HF cache; raises ConfigError with what is
    missing otherwise."""

    def __init__(self, model: str, lora: str | None = None, steps: int = 40, seed: int = 123, size: int = 1024,
                 prompt: str = EDIT_PROMPT, device: str | None = None, dtype: str = "auto"):
        if not model:
            raise ConfigError("--editor diffusers:MODEL_OR_PATH needs a model id or path")
        self.torch, self.pipe = load_diffusers_pipeline(model, kind="DiffusionPipeline", label=f"--editor diffusers:{model}",
                                                        lora=lora, device=device, dtype=dtype)
        self.steps, self.seed, self.size, self.prompt = steps, seed, size, prompt
        self.fingerprint = (f"diffusers:{model}|lora={lora}|steps={steps}|seed={seed}|size={size}"
                            f"|dtype={self.pipe.lensbench_dtype}")

    def edit(self, src: Path, out_dir: Path) -> Path:
        with Image.open(src) as im:
            inp = im.convert("RGB").resize((self.size, self.size), Image.Resampling.BICUBIC)
        gen = self.torch.Generator(device="cpu").manual_seed(self.seed)
        try:
            out = self.pipe(image=[inp], prompt=self.prompt, num_inference_steps=self.steps, generator=gen,
                            height=self.size, width=self.size).images[0]
        except Exception as exc:  # noqa: BLE001
            raise EditError(f"{src.name}: pipeline failed: {type(exc).__name__}: {exc}") from None
        return resize_back_and_save(out, src, out_dir)


def make_editor(spec: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                lora: str | None = None, steps: int = 40, seed: int = 123, size: int = 1024,
                prompt: str = EDIT_PROMPT, dtype: str = "auto") -> ImageEditor:
    """Editor for ``spec`` (``folder:DIR`` | ``openai-images:MODEL`` | ``diffusers:MODEL_OR_PATH``);
    ``dtype``: the diffusers pipeline's (``auto``: bfloat16 on a GPU, float32 on a CPU).
    Raises ConfigError for an unknown prefix or a bad argument."""
    prefix, _, arg = spec.partition(":")
    if prefix == "folder":
        return FolderEditor(arg)
    if prefix == "openai-images":
        return OpenAIImagesEditor(arg, base_url=base_url, api_key_env=api_key_env, size=size, prompt=prompt)
    if prefix == "diffusers":
        return DiffusersEditor(arg, lora=lora, steps=steps, seed=seed, size=size, prompt=prompt, dtype=dtype)
    raise ConfigError(f"unknown editor {prefix!r} in --editor {spec!r}; known: folder:DIR, openai-images:MODEL, "
                      "diffusers:MODEL_OR_PATH")
