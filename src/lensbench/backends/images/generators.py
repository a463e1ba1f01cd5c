"""Text-to-image generators: one image per prompt (GOBench-Gen: each model draws each scenario,
paper Sec. 2.1).

Generator specs (``--generator`` of ``lensbench gobench generate``):

* ``folder:DIR`` — images made elsewhere: ``DIR/<category>/<N>.<ext>`` (or ``DIR/<category>_<N>.<ext>``)
  for the key ``<category>/<N>``, copied in (converted to PNG).
* ``openai-images:MODEL`` — the OpenAI Images API (``POST {base}/images/generations``; any
  compatible endpoint via ``--base-url``); key from ``--api-key-env``; ``b64_json`` or ``url`` replies.
* ``diffusers:MODEL_OR_PATH`` — a local diffusers text-to-image pipeline (optional extra
  ``lensbench[hf]``; imported only when used; offline without cached weights = clear error).
"""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from pathlib import Path

from PIL import Image

from lensbench.backends.images.base import (ImageBackendError, OpenAIImagesClient, find_image,
                                            load_diffusers_pipeline, save_png)
from lensbench.core.errors import ConfigError
from lensbench.core.extras import require

__all__ = ["GenerationError", "TextToImage", "FolderGenerator", "OpenAIImagesGenerator", "DiffusersGenerator",
           "make_generator"]

_EXTS = (".png", ".jpg", ".jpeg", ".webp")


class GenerationError(ImageBackendError):
    """One prompt could not be turned into an image (the run goes on)."""


class TextToImage(ABC):
    """A text-to-image backend: :meth:`generate` writes one image for ``prompt`` to ``dst`` (PNG)."""

    name: str = ""

    @abstractmethod
    def generate(self, prompt: str, key: str, dst: Path) -> None:
        """Write the image for ``prompt`` (``key`` names it, e.g. ``direct_light_images/1``) to ``dst``.

        Raises GenerationError for a failure of this one prompt.
        """

    def close(self) -> None:
        """Release resources."""


class FolderGenerator(TextToImage):
    """Copies pre-made images: ``DIR/<category>/<N>.<ext>`` or ``DIR/<category>_<N>.<ext>``."""

    def __init__(self, folder: str):
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ConfigError(f"folder:{folder}: not a folder")
        self.name = f"folder:{self.folder.name}"

    def generate(self, prompt: str, key: str, dst: Path) -> None:
        cat, _, num = key.partition("/")
        src = find_image([self.folder / cat / num, self.folder / f"{cat}_{num}"], _EXTS)
        if src is None:
            raise GenerationError(f"no image for {key} in {self.folder} (looked for {cat}/{num}.png and {cat}_{num}.png)")
        if src.suffix == ".png":
            shutil.copyfile(src, dst)
        else:
            with Image.open(src) as im:
                save_png(im, dst)


class OpenAIImagesGenerator(TextToImage):
    """OpenAI Images API text-to-image (``b64_json`` or ``url`` replies); one attempt per prompt
    unless ``max_retries`` (``api`` is the :class:`~lensbench.backends.images.base.OpenAIImagesClient`)."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 size: str = "1024x1024", timeout_s: float = 300.0, max_retries: int = 0):
        if not model:
            raise ConfigError("--generator openai-images:MODEL needs a model name")
        self.model, self.size = model, size
        self.api = OpenAIImagesClient(base_url, api_key_env, timeout_s, max_retries=max_retries)
        self.name = f"openai-images:{model}"

    def generate(self, prompt: str, key: str, dst: Path) -> None:
        httpx = require("httpx", "images", "the image API client")

        body = {"model": self.model, "prompt": prompt, "n": 1, "size": self.size}
        try:
            r = self.api.post("images/generations", json=body)
        except ImageBackendError as exc:
            raise GenerationError(f"{key}: {exc}") from None
        if r.status_code != 200:
            raise GenerationError(f"{key}: HTTP {r.status_code}: {r.text[:300]}")
        try:
            save_png(self.api.decode(r), dst)
        except (KeyError, IndexError, TypeError, ValueError, OSError, httpx.HTTPError) as exc:
            raise GenerationError(f"{key}: unexpected reply ({type(exc).__name__}: {exc})") from None

    def close(self) -> None:
        self.api.close()


class DiffusersGenerator(TextToImage):
    """A diffusers text-to-image pipeline (lazy import; needs ``lensbench[hf]``): ``steps``
    inference steps, CPU generator seeded with ``seed``, ``size`` x ``size`` pixels."""

    def __init__(self, model: str, steps: int = 30, seed: int = 0, size: int = 1024):
        self.torch, self.pipe = load_diffusers_pipeline(model, kind="AutoPipelineForText2Image",
                                                        label=f"diffusers:{model}")
        self.steps, self.seed, self.size = steps, seed, size
        self.name = f"diffusers:{model}"

    def generate(self, prompt: str, key: str, dst: Path) -> None:
        g = self.torch.Generator(device="cpu").manual_seed(self.seed)
        try:
            img = self.pipe(prompt=prompt, num_inference_steps=self.steps, generator=g, height=self.size,
                            width=self.size).images[0]
        except Exception as exc:  # noqa: BLE001
            raise GenerationError(f"{key}: {type(exc).__name__}: {exc}") from None
        img.save(dst, format="PNG")


def make_generator(spec: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                   size: str = "1024x1024", steps: int = 30, seed: int = 0) -> TextToImage:
    """Generator for ``spec`` (``folder:DIR`` | ``openai-images:MODEL`` | ``diffusers:MODEL``). Raises ConfigError."""
    kind, _, arg = spec.partition(":")
    if kind == "folder":
        return FolderGenerator(arg)
    if kind == "openai-images":
        return OpenAIImagesGenerator(arg, base_url=base_url, api_key_env=api_key_env, size=size)
    if kind == "diffusers":
        side = int(size.split("x")[0]) if "x" in size else int(size)
        return DiffusersGenerator(arg, steps=steps, seed=seed, size=side)
    raise ConfigError(f"unknown generator {spec!r}: folder:DIR | openai-images:MODEL | diffusers:MODEL_OR_PATH")
