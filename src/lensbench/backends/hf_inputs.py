"""Requests -> what a Hugging Face processor and ``generate`` take (pure; no torch).

Mapping of one :class:`~lensbench.core.types.Request` (used by :mod:`lensbench.backends.hf`):

* each Message becomes ``{"role": ROLE, "content": [...]}`` with its parts in protocol order:
  a TextPart -> ``{"type": "text", "text": ...}``; an ImagePart -> ``{"type": "image"}`` and its
  file appended to the request's image list (same order);
* video frames (ImagePart with ``video`` set): in ``"video"`` mode (Qwen2-VL / Qwen2.5-VL / Qwen3-VL)
  a run of consecutive frames of one video becomes one ``{"type": "video"}`` entry and one video
  (its frame files in order) in the request's video list; in ``"images"`` mode every frame is an
  image entry like a still image (the protocol's own text around them is kept as given);
* the processor's chat template renders the conversation (``add_generation_prompt=True``) with the
  request's ``extra_body["chat_template_kwargs"]`` (e.g. ``enable_thinking``) as template variables.

Generation: temperature 0 -> greedy (``do_sample=False``); temperature > 0 -> sampling with that
temperature and ``top_p`` when given; temperature None -> the checkpoint's generation_config.
``max_tokens`` -> ``max_new_tokens`` (the backend's default when None). ``extra_body`` keys that
OpenAI-compatible servers take for sampling (``top_k``, ``min_p``, ``repetition_penalty``,
``min_tokens``) map onto generate; any other key except ``chat_template_kwargs`` is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lensbench.core.errors import ConfigError
from lensbench.core.types import ImagePart, Request

__all__ = ["ChatInputs", "build_chat", "template_kwargs", "generation_kwargs", "batch_media"]

_EXTRA_GEN = {"top_k": "top_k", "min_p": "min_p", "repetition_penalty": "repetition_penalty",
              "min_tokens": "min_new_tokens"}


@dataclass
class ChatInputs:
    """One request as chat-template input: ``conversation`` (list of role/content dicts),
    ``images`` (file paths, in the order of the image entries), ``videos`` (one list of frame
    paths per video entry, in order)."""

    conversation: list[dict[str, Any]]
    images: list[str] = field(default_factory=list)
    videos: list[list[str]] = field(default_factory=list)


def build_chat(request: Request, video_mode: str = "images") -> ChatInputs:
    """The chat-template conversation and media lists of ``request`` (see the module docstring).

    ``video_mode``: ``"video"`` or ``"images"``. Raises ValueError for another mode.
    """
    if video_mode not in ("video", "images"):
        raise ValueError(f"video_mode must be 'video' or 'images', got {video_mode!r}")
    out = ChatInputs(conversation=[])
    for m in request.messages:
        content: list[dict[str, Any]] = []
        prev_video: str | None = None
        for p in m.parts:
            if isinstance(p, ImagePart) and p.video is not None and video_mode == "video":
                if prev_video == p.video:
                    out.videos[-1].append(p.path)
                else:
                    content.append({"type": "video"})
                    out.videos.append([p.path])
                prev_video = p.video
                continue
            prev_video = None
            if isinstance(p, ImagePart):
                content.append({"type": "image"})
                out.images.append(p.path)
            else:
                content.append({"type": "text", "text": p.text})
        out.conversation.append({"role": m.role, "content": content})
    return out


def template_kwargs(request: Request) -> dict[str, Any]:
    """Template variables from ``extra_body["chat_template_kwargs"]`` (e.g. ``{"enable_thinking": False}``).

    Raises ConfigError when it is not a JSON object.
    """
    ctk = request.params.extra_body.get("chat_template_kwargs") or {}
    if not isinstance(ctk, dict):
        raise ConfigError(f"request {request.id!r}: extra_body.chat_template_kwargs must be an object")
    return dict(ctk)


def generation_kwargs(request: Request, default_max_new_tokens: int) -> dict[str, Any]:
    """Keyword arguments for ``model.generate`` (see the module docstring); no ``seed`` (the
    backend seeds torch before sampling).

    Raises:
        ConfigError: an ``extra_body`` key this backend cannot honour.
    """
    p = request.params
    kw: dict[str, Any] = {"max_new_tokens": p.max_tokens or default_max_new_tokens}
    if p.temperature is not None:
        if p.temperature == 0:
            kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            kw.update(do_sample=True, temperature=float(p.temperature))
            if p.top_p is not None:
                kw["top_p"] = float(p.top_p)
    elif p.top_p is not None:
        kw["top_p"] = float(p.top_p)
    for k, v in p.extra_body.items():
        if k == "chat_template_kwargs":
            continue
        if k not in _EXTRA_GEN:
            raise ConfigError(f"request {request.id!r}: extra_body key {k!r} has no meaning for the hf: backend "
                              f"(known: chat_template_kwargs, {', '.join(_EXTRA_GEN)})")
        kw[_EXTRA_GEN[k]] = v
    return kw


def batch_media(chats: list[ChatInputs]) -> dict[str, Any]:
    """The processor's media arguments for one batch: ``images`` as one list per prompt (or absent
    when no prompt has an image), ``videos`` as one flat list of videos (each a list of frames) in
    prompt order (or absent). Values are whatever the lists hold (paths here; loaded images later)."""
    out: dict[str, Any] = {}
    if any(c.images for c in chats):
        out["images"] = [list(c.images) for c in chats]
    if any(c.videos for c in chats):
        out["videos"] = [list(v) for c in chats for v in c.videos]
    return out
