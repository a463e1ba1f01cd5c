"""Text-to-image generation for GOBench's 333 scenario prompts (paper Sec. 2.1: each model makes one
image per scenario).

Generators (``--generator`` spec):

* ``folder:DIR`` — images made elsewhere: ``DIR/<category>/<N>.<ext>`` (or ``DIR/<category>_<N>.<ext>``)
  are copied in.
* ``openai-images:MODEL`` — the OpenAI Images API (``POST {base}/images/generations``; any
  compatible endpoint via ``--base-url``), through httpx; key from ``--api-key-env``.
* ``diffusers:MODEL_OR_PATH`` — a local diffusers text-to-image pipeline (optional extra
  ``lensbench[torch]``; imported only when used; offline without cached weights = clear error).

Output: ``OUT/<category>/<N>.png`` per scenario (e.g. ``direct_light_images/1.png``) plus
``OUT/generation.jsonl`` (one line per image: scenario, prompt, generator, seconds). Existing
images are kept (resumable); failures are listed, not fatal.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from lensbench.core.errors import ConfigError
from lensbench.benchmarks.gobench.records import GORecord

__all__ = ["GenerationError", "TextToImage", "FolderGenerator", "OpenAIImagesGenerator", "DiffusersGenerator",
           "make_generator", "scenarios", "generate_all", "GenerationReport"]

_EXTS = (".png", ".jpg", ".jpeg", ".webp")


class GenerationError(Exception):
    """One prompt could not be turned into an image (the run goes on)."""


class TextToImage(ABC):
    """A text-to-image backend: :meth:`generate` writes one image for ``prompt`` to ``dst`` (PNG)."""

    name: str = ""

    @abstractmethod
    def generate(self, prompt: str, key: str, dst: Path) -> None:
        """Write the image for ``prompt`` (scenario ``key``, e.g. ``direct_light_images/1``) to ``dst``.

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
        for stem in (self.folder / cat / num, self.folder / f"{cat}_{num}"):
            for ext in _EXTS:
                src = Path(str(stem) + ext)
                if src.is_file():
                    if ext == ".png":
                        shutil.copyfile(src, dst)
                    else:
                        with Image.open(src) as im:
                            im.convert("RGB").save(dst, format="PNG")
                    return
        raise GenerationError(f"no image for {key} in {self.folder} (looked for {cat}/{num}.png and {cat}_{num}.png)")


class OpenAIImagesGenerator(TextToImage):
    """OpenAI Images API text-to-image (``b64_json`` or ``url`` replies), via httpx."""

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 size: str = "1024x1024", timeout_s: float = 300.0):
        import httpx

        if not model:
            raise ConfigError("--generator openai-images:MODEL needs a model name")
        key = os.environ.get(api_key_env, "")
        self.model, self.size = model, size
        self.base = (base_url or "https://api.openai.com/v1").rstrip("/")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(timeout=timeout_s, headers=headers)
        self.name = f"openai-images:{model}"

    def generate(self, prompt: str, key: str, dst: Path) -> None:
        import httpx

        body = {"model": self.model, "prompt": prompt, "n": 1, "size": self.size}
        try:
            r = self.client.post(f"{self.base}/images/generations", json=body)
        except httpx.HTTPError as exc:
            raise GenerationError(f"{key}: {type(exc).__name__}: {exc}") from None
        if r.status_code != 200:
            raise GenerationError(f"{key}: HTTP {r.status_code}: {r.text[:300]}")
        try:
            item = r.json()["data"][0]
            if item.get("b64_json"):
                data = base64.b64decode(item["b64_json"])
            elif item.get("url"):
                got = self.client.get(item["url"])
                got.raise_for_status()
                data = got.content
            else:
                raise KeyError("b64_json/url")
            with Image.open(io.BytesIO(data)) as im:
                im.convert("RGB").save(dst, format="PNG")
        except (KeyError, IndexError, ValueError, OSError, httpx.HTTPError) as exc:
            raise GenerationError(f"{key}: unexpected reply ({type(exc).__name__}: {exc})") from None

    def close(self) -> None:
        self.client.close()


class DiffusersGenerator(TextToImage):
    """A diffusers text-to-image pipeline (lazy import; needs ``lensbench[torch]``)."""

    def __init__(self, model: str, steps: int = 30, seed: int = 0, size: int = 1024):
        try:
            import torch
            from diffusers import AutoPipelineForText2Image
        except ImportError as exc:
            raise ConfigError(f"diffusers:{model} needs the optional extra: pip install 'lensbench[torch]' ({exc})") from None
        try:
            self.pipe = AutoPipelineForText2Image.from_pretrained(model, torch_dtype=torch.bfloat16)
        except Exception as exc:  # noqa: BLE001 - hub/offline/format errors all end here
            raise ConfigError(f"diffusers:{model}: cannot load the pipeline ({type(exc).__name__}: {exc}); "
                              "give a local path or make the weights available offline") from None
        self.pipe.to("cuda" if torch.cuda.is_available() else "cpu")
        self.torch, self.steps, self.seed, self.size = torch, steps, seed, size
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


def scenarios(records: list[GORecord]) -> list[tuple[str, GORecord]]:
    """``(scenario key, first record of it)`` for each of the 333 scenarios, in file order."""
    seen: dict[str, GORecord] = {}
    for r in records:
        seen.setdefault(r.scenario, r)
    return list(seen.items())


@dataclass
class GenerationReport:
    """What :func:`generate_all` did: counts and ``(scenario, error)`` failures."""

    made: int = 0
    kept: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


def generate_all(records: list[GORecord], out: Path, gen: TextToImage, *, limit: int | None = None,
                 log=None) -> GenerationReport:
    """One image per scenario into ``out/<category>/<N>.png`` (existing ones kept), logged to
    ``out/generation.jsonl``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rep = GenerationReport()
    todo = scenarios(records)[: limit or None]
    with (out / "generation.jsonl").open("a", encoding="utf-8") as fh:
        for key, rec in todo:
            dst = out / f"{key}.png"
            if dst.is_file():
                rep.kept += 1
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_suffix(".tmp.png")
            t0 = time.time()
            try:
                gen.generate(rec.prompt, key, tmp)
                tmp.replace(dst)
            except GenerationError as exc:
                rep.failed.append((key, str(exc)))
                tmp.unlink(missing_ok=True)
                if log:
                    log(f"[red]failed[/] {exc}")
                continue
            rep.made += 1
            fh.write(json.dumps({"scenario": key, "image": f"{key}.png", "prompt": rec.prompt, "generator": gen.name,
                                 "seconds": round(time.time() - t0, 3)}, ensure_ascii=False) + "\n")
            fh.flush()
    return rep
