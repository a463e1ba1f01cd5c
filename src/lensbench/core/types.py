"""Core value types of the one flow: Sample -> Request -> Response -> Outcome.

Every benchmark speaks these types; the engine, store and backends know nothing of any
benchmark. A :class:`Request` is fully determined by its messages (text and image parts, in
the order the protocol gives), its generation parameters and the model's fingerprint; its
:attr:`Request.key` (SHA-256 hex, 64 chars) is its identity in the run store.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "TextPart",
    "ImagePart",
    "Message",
    "GenParams",
    "Request",
    "Completion",
    "StoredResponse",
    "OutcomeStatus",
    "file_sha256",
]

OutcomeStatus = Literal["correct", "wrong", "unparseable", "error", "scored"]

_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | Path) -> str:
    """SHA-256 hex digest (64 chars) of a file's bytes, cached by (path, size, mtime).

    Raises:
        FileNotFoundError: naming ``path`` when it does not exist.
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"image file not found: {p}") from None
    ck = (os.path.abspath(p), st.st_size, st.st_mtime_ns)  # abspath: no syscalls (resolve() lstat-ed every component)
    digest = _SHA_CACHE.get(ck)
    if digest is None:
        h = hashlib.sha256()
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digest = h.hexdigest()
        _SHA_CACHE[ck] = digest
    return digest


class TextPart(BaseModel):
    """A text segment of a chat message."""

    model_config = ConfigDict(frozen=True)
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    """An image given by a file on disk; ``sha256`` is its content hash (filled on creation).

    The backend decides how the file is sent (e.g. base64 JPEG, max side); the content hash,
    not the path, enters the request key, so moving the data folder keeps the cache valid.
    """

    model_config = ConfigDict(frozen=True)
    type: Literal["image"] = "image"
    path: str
    sha256: str = ""
    #: for a video frame: the source video's path and the frame's time in seconds (logged in the
    #: sample record; not part of the request key, which hashes the frame's pixels).
    video: str | None = None
    t_s: float | None = None

    @classmethod
    def of(cls, path: str | Path, *, video: str | None = None, t_s: float | None = None) -> "ImagePart":
        """Image part for ``path`` with its content hash. Raises FileNotFoundError naming the file.

        ``video``/``t_s`` mark a decoded video frame (source video path, time in seconds).
        """
        return cls(path=str(path), sha256=file_sha256(path), video=video, t_s=t_s)


class Message(BaseModel):
    """One chat message: a role and its ordered parts (images and text as the protocol orders them)."""

    model_config = ConfigDict(frozen=True)
    role: Literal["system", "user", "assistant"] = "user"
    parts: tuple[TextPart | ImagePart, ...]

    @classmethod
    def user(cls, *parts: TextPart | ImagePart | str) -> "Message":
        """User message from parts; plain strings become :class:`TextPart`."""
        return cls(role="user", parts=tuple(TextPart(text=p) if isinstance(p, str) else p for p in parts))


class GenParams(BaseModel):
    """Generation parameters sent with a request; ``None`` = the server's default.

    ``temperature`` >= 0; ``max_tokens`` > 0; ``seed`` is passed to servers that accept it;
    ``extra_body`` is merged into the JSON body (e.g. ``{"chat_template_kwargs":
    {"enable_thinking": false}}``).
    """

    model_config = ConfigDict(frozen=True)
    temperature: float | None = Field(default=0.0, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, gt=0)
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)


class Request(BaseModel):
    """One fully determined model call.

    Attributes:
        id: stable sample-level name, unique within a run (e.g. ``"Source 1/Basement Fuse/Scene/2"``).
        messages: the chat, images by content hash.
        params: generation parameters.
        meta: benchmark facts some backends need (the replay backend matches on them, the
            random baseline reads ``answer_space``); not part of the key.
        role: which backend serves it: ``"model"`` (the evaluated MLLM) or ``"judge"``.
        repeat: 0 for the first ask of these exact messages within a sample, n for the n-th
            repeat (a protocol that asks one question twice, e.g. RGB-Th-Bench): part of the key
            when > 0, so a repeat is its own call with its own reply, never a copy of the first.
    """

    model_config = ConfigDict(frozen=True)
    id: str
    messages: tuple[Message, ...]
    params: GenParams = GenParams()
    meta: dict[str, Any] = Field(default_factory=dict)
    role: Literal["model", "judge"] = "model"
    repeat: int = Field(default=0, ge=0)

    def content(self) -> dict[str, Any]:
        """Canonical JSON-able content (messages with image hashes, params): what the key hashes."""
        msgs = []
        for m in self.messages:
            parts = []
            for p in m.parts:
                if isinstance(p, TextPart):
                    parts.append({"t": p.text})
                else:
                    parts.append({"img": p.sha256})
            msgs.append({"role": m.role, "parts": parts})
        out: dict[str, Any] = {"messages": msgs, "params": self.params.model_dump(mode="json")}
        if self.repeat:
            out["repeat"] = self.repeat
        return out

    def key_for(self, model_fingerprint: str) -> str:
        """Content hash (SHA-256 hex) of this request for a given model fingerprint."""
        blob = json.dumps({"model": model_fingerprint, **self.content()}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def images(self) -> list[ImagePart]:
        """All image parts in message order."""
        return [p for m in self.messages for p in m.parts if isinstance(p, ImagePart)]

    @property
    def text(self) -> str:
        """All text parts joined by newlines (for logs and text-only backends)."""
        return "\n".join(p.text for m in self.messages for p in m.parts if isinstance(p, TextPart))


@dataclass
class Completion:
    """What a backend returns for one successful call.

    ``text`` is the raw reply content (reasoning tags kept); ``reasoning`` is a separate
    reasoning channel if the server returns one (``reasoning_content``).
    """

    text: str
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    served_model: str | None = None


@dataclass
class StoredResponse:
    """A row of the run store: the outcome of sending one request (after retries).

    ``status`` is ``"ok"`` (``text`` holds the reply) or ``"error"`` (``error`` holds the
    transport failure; never scored as an answer).
    """

    key: str
    request_id: str
    status: Literal["ok", "error"]
    text: str | None
    reasoning: str | None = None
    error: str | None = None
    attempts: int = 1
    latency_s: float | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the request got a reply."""
        return self.status == "ok"
