"""Image editors that translate an infrared image into an RGB image (GenViP, paper Sec. 4.1, App. C).

Editor specs (``--editor``):

* ``folder:DIR`` — already translated images (e.g. the HF release's ``translated_rgb_imgs/``),
  matched by the infrared file's base name, or the same stem with another image extension.
* ``openai-images:MODEL`` — an OpenAI-compatible image-edit endpoint (``POST
  {base_url}/images/edits``, multipart ``image`` + ``prompt`` + ``model`` + ``size``), reply
  ``data[0].b64_json`` (or ``url`` for a data URL). The key comes from ``--api-key-env``.
* ``diffusers:MODEL_OR_PATH`` — a local diffusers image-edit pipeline (Qwen-Image-Edit-2509,
  optional ``--lora PATH``), optional extra ``lensbench[torch]``; imported only when used.

Protocol (paper App. C; official ``edit_ft/.../qwen_image_edit_2509_multigpu.py``): the editing
prompt :data:`EDIT_PROMPT`, 40 inference steps, seed 123, the input resized to 1024x1024, the
output resized back to the original width x height and saved as ``<stem>.jpg``.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from lensbench.core.errors import ConfigError

__all__ = ["EDIT_PROMPT", "EditError", "ImageEditor", "FolderEditor", "OpenAIImagesEditor", "DiffusersEditor",
           "make_editor", "translate_folder", "IMAGE_EXTS", "list_images"]

#: The editing prompt of App. C (training and inference of all editing models).
EDIT_PROMPT = "Translate the infrared image into the corresponding visible light (RGB) image."
IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff")


class EditError(Exception):
    """One image could not be translated (the message names the file and the cause)."""


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


class ImageEditor(ABC):
    """Translate one infrared image file into an RGB image file in ``out_dir``.

    :meth:`edit` returns the written path; it raises :class:`EditError` for a failure of this
    image (the run goes on and lists it).
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


def _resize_back_and_save(img: Image.Image, src: Path, out_dir: Path) -> Path:
    with Image.open(src) as s:
        size = s.size
    img = img.convert("RGB").resize(size, Image.Resampling.BICUBIC)
    dst = Path(out_dir) / (src.stem + ".jpg")
    tmp = dst.with_suffix(".jpg.tmp")
    img.save(tmp, "JPEG", quality=95)
    tmp.replace(dst)
    return dst


class OpenAIImagesEditor(ImageEditor):
    """OpenAI-compatible ``/images/edits`` client (see the module docstring). Sync httpx; retries
    timeouts, connection errors, HTTP 429 and 5xx ``max_retries`` times with exponential backoff."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 size: int = 1024, prompt: str = EDIT_PROMPT, timeout_s: float = 300.0, max_retries: int = 3,
                 backoff_s: float = 1.0):
        import httpx

        if not model:
            raise ConfigError("--editor openai-images:MODEL needs a model name")
        self.model = model
        self.url = (base_url or "https://api.openai.com/v1").rstrip("/") + "/images/edits"
        self.size = size
        self.prompt = prompt
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        key = os.environ.get(api_key_env, "")
        self._client = httpx.Client(timeout=timeout_s, headers={"Authorization": f"Bearer {key}"} if key else {})
        self.fingerprint = f"openai-images:{model}|size={size}|prompt={prompt}"

    def edit(self, src: Path, out_dir: Path) -> Path:
        import httpx

        with Image.open(src) as im:
            buf = io.BytesIO()
            im.convert("RGB").resize((self.size, self.size), Image.Resampling.BICUBIC).save(buf, "PNG")
        data = {"model": self.model, "prompt": self.prompt, "size": f"{self.size}x{self.size}", "n": "1"}
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                r = self._client.post(self.url, data=data, files={"image": (src.stem + ".png", buf.getvalue(), "image/png")})
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if r.status_code == 429 or r.status_code >= 500:
                    last = f"HTTP {r.status_code}: {r.text[:200]}"
                elif r.status_code >= 400:
                    raise EditError(f"{src.name}: HTTP {r.status_code} from {self.url}: {r.text[:300]}")
                else:
                    return _resize_back_and_save(self._decode(r, src), src, out_dir)
            if attempt < self.max_retries:
                time.sleep(self.backoff_s * (2 ** attempt))
        raise EditError(f"{src.name}: failed after {self.max_retries + 1} attempt(s) at {self.url}: {last}")

    def _decode(self, r, src: Path) -> Image.Image:
        try:
            item = r.json()["data"][0]
            b64 = item.get("b64_json")
            if not b64 and str(item.get("url", "")).startswith("data:"):
                b64 = item["url"].split(",", 1)[1]
            if not b64:
                raise KeyError("b64_json")
            return Image.open(io.BytesIO(base64.b64decode(b64))).copy()
        except (ValueError, KeyError, IndexError, TypeError, OSError) as exc:
            raise EditError(f"{src.name}: malformed image-edit reply ({type(exc).__name__}: {exc}); "
                            f"body starts {r.text[:120]!r}") from None

    def close(self) -> None:
        self._client.close()


class DiffusersEditor(ImageEditor):
    """Local diffusers pipeline (Qwen-Image-Edit-2509 and its LoRA, App. C): 40 steps, seed 123,
    1024x1024, resized back. Needs torch + diffusers (``pip install lensbench[torch]``) and the
    weights on disk or in the HF cache; raises ConfigError with what is missing otherwise."""

    def __init__(self, model: str, lora: str | None = None, steps: int = 40, seed: int = 123, size: int = 1024,
                 prompt: str = EDIT_PROMPT, device: str | None = None):
        if not model:
            raise ConfigError("--editor diffusers:MODEL_OR_PATH needs a model id or path")
        try:
            import torch
            from diffusers import DiffusionPipeline
        except ImportError as exc:
            raise ConfigError(f"--editor diffusers: needs torch and diffusers ({exc}); pip install 'lensbench[torch]'") from None
        self.torch = torch
        try:
            self.pipe = DiffusionPipeline.from_pretrained(model, torch_dtype=torch.bfloat16)
        except Exception as exc:  # noqa: BLE001 - hub/offline/format errors all end the same way
            raise ConfigError(f"--editor diffusers:{model}: cannot load the pipeline ({type(exc).__name__}: {exc}); "
                              "give a local path or make the weights available in the HF cache") from None
        if lora:
            self.pipe.load_lora_weights(lora)
        self.pipe.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.steps, self.seed, self.size, self.prompt = steps, seed, size, prompt
        self.fingerprint = f"diffusers:{model}|lora={lora}|steps={steps}|seed={seed}|size={size}"

    def edit(self, src: Path, out_dir: Path) -> Path:
        with Image.open(src) as im:
            inp = im.convert("RGB").resize((self.size, self.size), Image.Resampling.BICUBIC)
        gen = self.torch.Generator(device="cpu").manual_seed(self.seed)
        try:
            out = self.pipe(image=[inp], prompt=self.prompt, num_inference_steps=self.steps, generator=gen,
                            height=self.size, width=self.size).images[0]
        except Exception as exc:  # noqa: BLE001
            raise EditError(f"{src.name}: pipeline failed: {type(exc).__name__}: {exc}") from None
        return _resize_back_and_save(out, src, out_dir)


def make_editor(spec: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                lora: str | None = None, steps: int = 40, seed: int = 123, size: int = 1024,
                prompt: str = EDIT_PROMPT) -> ImageEditor:
    """Editor for ``spec`` (``folder:DIR`` | ``openai-images:MODEL`` | ``diffusers:MODEL_OR_PATH``).
    Raises ConfigError for an unknown prefix or a bad argument."""
    prefix, _, arg = spec.partition(":")
    if prefix == "folder":
        return FolderEditor(arg)
    if prefix == "openai-images":
        return OpenAIImagesEditor(arg, base_url=base_url, api_key_env=api_key_env, size=size, prompt=prompt)
    if prefix == "diffusers":
        return DiffusersEditor(arg, lora=lora, steps=steps, seed=seed, size=size, prompt=prompt)
    raise ConfigError(f"unknown editor {prefix!r} in --editor {spec!r}; known: folder:DIR, openai-images:MODEL, "
                      "diffusers:MODEL_OR_PATH")


def translate_folder(images: Path, out: Path, editor: ImageEditor, *, limit: int | None = None,
                     on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Translate every image in ``images`` into ``out`` (resumable).

    An image whose translation already exists in ``out`` (same stem, any image extension) is
    skipped; a failure is recorded and the run goes on. Writes ``out/translate_report.json``
    and returns it: ``{"editor", "total", "done", "skipped", "failed": [{"file", "error"}]}``.
    """
    images, out = Path(images), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = list_images(images)
    if limit:
        files = files[:limit]
    report: dict[str, Any] = {"editor": editor.fingerprint, "images": str(images), "total": len(files), "done": 0,
                              "skipped": 0, "failed": []}
    for i, src in enumerate(files):
        if find_by_stem(out, src.name) is not None:
            report["skipped"] += 1
        else:
            try:
                editor.edit(src, out)
                report["done"] += 1
            except EditError as exc:
                report["failed"].append({"file": src.name, "error": str(exc)})
            except OSError as exc:
                report["failed"].append({"file": src.name, "error": f"{type(exc).__name__}: {exc}"})
        if on_progress:
            on_progress(i + 1, len(files))
    (out / "translate_report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return report
