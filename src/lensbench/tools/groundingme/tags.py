"""Image tagging (paper Sec. 3.2.1, step 1): the object classes of each image.

The paper runs RAM++ ("to identify all object categories within each image, generating a
comprehensive list of class names"). RAM++ is not on PyPI: :class:`RamPlusTagger` uses it when
its ``ram`` package is importable; by default :class:`EngineTagger` asks an image-aware model
through lensbench's engine (``prompts/tags.txt``, our own prompt), so the step is cached and
resumable like every model call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from lensbench.core.errors import ConfigError
from lensbench.core.types import GenParams, ImagePart, Message, Request, StoredResponse
from lensbench.scoring.text import extract_json_object, strip_reasoning
from lensbench.tools.groundingme.templates import tool_prompt

__all__ = ["parse_tags", "EngineTagger", "RamPlusTagger", "make_tagger", "TAGGERS"]

TAGGERS = ("engine", "ram++")
Generate = Callable[[Sequence[Request]], Awaitable[dict[str, StoredResponse]]]


def _clean(tag: str) -> str:
    t = re.sub(r"[^\w\s\-']", " ", tag.lower())
    return re.sub(r"\s+", " ", t).strip()


def parse_tags(text: str | None, max_words: int = 4) -> list[str] | None:
    """Class names from a tagger reply: ``{"classes": [...]}``, a JSON list, or a comma / line
    separated list (reasoning and code fences ignored). Lower-cased, punctuation removed,
    de-duplicated in order; names longer than ``max_words`` words dropped. None when the reply
    holds no list at all (an empty list is a valid answer: no objects)."""
    s = re.sub(r"```(?:json)?", "", strip_reasoning(text)).strip()
    items = None
    obj = extract_json_object(s)
    if obj:
        try:
            d = json.loads(obj)
            if isinstance(d, dict):
                items = next((v for v in d.values() if isinstance(v, list)), None)
        except json.JSONDecodeError:
            pass
    if items is None:
        m = re.search(r"\[[^\[\]]*\]", s)
        if m:
            try:
                items = json.loads(m.group(0))
            except json.JSONDecodeError:
                items = None
    if items is None:
        if not s or "{" in s:
            return None
        items = [p for p in re.split(r"[,\n;|]", s)]
    out = [_clean(str(t)) for t in items if isinstance(t, (str, int, float))]
    return list(dict.fromkeys(t for t in out if t and len(t.split()) <= max_words))


class EngineTagger:
    """Tags from an image-aware model through the engine: one request ``tags/<name>`` per image
    (image, then ``prompts/tags.txt``), temperature 0 unless ``params`` say otherwise."""

    name = "engine"

    def __init__(self, params: GenParams | None = None):
        self.params = params or GenParams(temperature=0.0)
        self.template = tool_prompt("tags")

    def request(self, image_id: str, path: Path) -> Request:
        """The tagging request of one image."""
        return Request(id=f"tags/{image_id}", messages=(Message.user(ImagePart.of(path), self.template),),
                       params=self.params)

    async def tag(self, images: dict[str, Path], generate: Generate) -> dict[str, list[str] | None]:
        """``{image_id: class names}``; None where the request failed or the reply held no list."""
        reqs = [self.request(k, p) for k, p in images.items()]
        replies = await generate(reqs)
        return {k: (parse_tags(replies[f"tags/{k}"].text) if replies[f"tags/{k}"].ok else None) for k in images}


class RamPlusTagger:
    """RAM++ (``ram.models.ram_plus``, github.com/xinyu1205/recognize-anything) on a local checkpoint.

    Raises ConfigError naming how to install it when the ``ram`` package is missing."""

    name = "ram++"

    def __init__(self, checkpoint: str, image_size: int = 384, device: str | None = None):
        try:
            import torch
            from ram import get_transform, inference_ram
            from ram.models import ram_plus
        except ImportError as exc:
            raise ConfigError("--tagger ram++ needs the RAM++ package and torch (not on PyPI): pip install "
                              f"git+https://github.com/xinyu1205/recognize-anything ({exc})") from None
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = ram_plus(pretrained=checkpoint, image_size=image_size, vit="swin_l").eval().to(self.device)
        self.transform = get_transform(image_size=image_size)
        self.infer = inference_ram
        self.torch = torch

    async def tag(self, images: dict[str, Path], generate: Generate) -> dict[str, list[str] | None]:
        """``{image_id: class names}`` from RAM++'s English tags (``"a | b | c"``)."""
        from lensbench.tools.groundingme.imagefiles import open_image

        out: dict[str, list[str] | None] = {}
        for k, p in images.items():
            x = self.transform(open_image(p)).unsqueeze(0).to(self.device)
            with self.torch.no_grad():
                english = self.infer(x, self.model)[0]
            out[k] = parse_tags(english.replace(" | ", ","))
        return out


def make_tagger(kind: str, checkpoint: str | None = None, params: GenParams | None = None):
    """The tagger called ``kind`` (one of :data:`TAGGERS`). Raises ConfigError for an unknown
    kind or ``ram++`` without ``checkpoint``."""
    if kind == "engine":
        return EngineTagger(params)
    if kind == "ram++":
        if not checkpoint:
            raise ConfigError("--tagger ram++ needs --tagger-checkpoint (a RAM++ .pth file)")
        return RamPlusTagger(checkpoint)
    raise ConfigError(f"--tagger must be one of {', '.join(TAGGERS)}, got {kind!r}")
