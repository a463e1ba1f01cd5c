"""Core value types of the one flow: Request -> Completion (a backend's answer) -> StoredResponse
(what the run store keeps) -> outcome (:data:`OutcomeStatus` of a scored record).

Every benchmark speaks these types; the engine and the store know nothing of any benchmark. A
:class:`Request` is fully determined by its messages (text and image parts, in the order the
protocol gives), its generation parameters and the model's fingerprint; its key
(:meth:`Request.key_for`: SHA-256 hex, 64 chars) is its identity in the run store.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
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
    "params_dump",
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


def _bad(owner: str, name: str, want: str, value: Any) -> ValueError:
    return ValueError(f"{owner}.{name} must be {want}, got {value!r} ({type(value).__name__})")


def _check_str(owner: str, name: str, value: Any, *, optional: bool = False) -> None:
    if not (isinstance(value, str) or (optional and value is None)):
        raise _bad(owner, name, "a str" + (" or None" if optional else ""), value)


class _NoMeta(dict):
    """The ``meta`` of requests given none: one shared, read-only, empty dict (no dict per request).

    A dict (JSON-able, ``isinstance(meta, dict)``) whose mutators raise TypeError; pickles and
    copies as the one shared object.
    """

    __slots__ = ()

    def _read_only(self, *_a: Any, **_k: Any) -> None:
        raise TypeError("Request.meta is read-only (give meta=... when building the request)")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only

    def __hash__(self) -> int:
        return 0

    def __reduce__(self) -> str:
        return "_NO_META"


_NO_META: Mapping[str, Any] = _NoMeta()


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """A text segment of a chat message.

    Raises:
        ValueError: ``text`` is not a str, or ``type`` is not ``"text"`` (naming the field).
    """

    type: Literal["text"] = "text"
    text: str

    def __post_init__(self) -> None:
        if self.type != "text":
            raise _bad("TextPart", "type", "'text'", self.type)
        _check_str("TextPart", "text", self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagePart:
    """An image given by a file on disk; ``sha256`` is its content hash (filled on creation).

    The backend decides how the file is sent (e.g. base64 JPEG, max side); the content hash,
    not the path, enters the request key, so moving the data folder keeps the cache valid.

    Raises:
        ValueError: ``path``/``sha256`` not a str, ``video`` not a str or None, ``t_s`` not a
            number or None, ``type`` not ``"image"`` (naming the field). An int ``t_s`` becomes a float.
    """

    type: Literal["image"] = "image"
    path: str
    sha256: str = ""
    #: for a video frame: the source video's path and the frame's time in seconds (logged in the
    #: sample record; not part of the request key, which hashes the frame's pixels).
    video: str | None = None
    t_s: float | None = None

    def __post_init__(self) -> None:
        if self.type != "image":
            raise _bad("ImagePart", "type", "'image'", self.type)
        _check_str("ImagePart", "path", self.path)
        _check_str("ImagePart", "sha256", self.sha256)
        _check_str("ImagePart", "video", self.video, optional=True)
        t = self.t_s
        if t is not None and type(t) is not float:
            if isinstance(t, bool) or not isinstance(t, (int, float)):
                raise _bad("ImagePart", "t_s", "a number of seconds or None", t)
            object.__setattr__(self, "t_s", float(t))

    @classmethod
    def of(cls, path: str | Path, *, video: str | None = None, t_s: float | None = None) -> "ImagePart":
        """Image part for ``path`` with its content hash. Raises FileNotFoundError naming the file.

        ``video``/``t_s`` mark a decoded video frame (source video path, time in seconds).
        """
        return cls(path=str(path), sha256=file_sha256(path), video=video, t_s=t_s)


def _tuple_of(value: Any, owner: str, name: str, want: str, kinds: tuple[type, ...], convert) -> tuple:
    """``value`` as a tuple of ``kinds`` instances (a list or other iterable kept as a tuple; items of
    other types through ``convert``, e.g. dicts read back from JSON). Raises ValueError naming the field
    for a str, bytes, mapping or non-iterable."""
    if type(value) is not tuple:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise _bad(owner, name, want, value)
        value = tuple(value)
    if any(type(x) not in kinds for x in value):
        value = tuple(convert(x) for x in value)
    return value


def _part(p: Any) -> TextPart | ImagePart:
    """A message part; a dict (e.g. read back from JSON) becomes the part its keys name."""
    if isinstance(p, (TextPart, ImagePart)):
        return p
    if isinstance(p, Mapping):
        return ImagePart(**p) if p.get("type") == "image" or "path" in p else TextPart(**p)
    raise _bad("Message", "parts", "a sequence of TextPart / ImagePart", p)


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One chat message: a role and its ordered parts (images and text as the protocol orders them).

    ``parts`` given as a list (or any sequence) is kept as a tuple.

    Raises:
        ValueError: ``role`` not one of ``"system"``, ``"user"``, ``"assistant"``, or a part that is
            not a :class:`TextPart` / :class:`ImagePart` (naming the field).
    """

    role: Literal["system", "user", "assistant"] = "user"
    parts: tuple[TextPart | ImagePart, ...]

    def __post_init__(self) -> None:
        if self.role not in _MESSAGE_ROLES:
            raise _bad("Message", "role", "one of 'system', 'user', 'assistant'", self.role)
        parts = _tuple_of(self.parts, "Message", "parts", "a sequence of TextPart / ImagePart", (TextPart, ImagePart),
                          _part)
        if parts is not self.parts:
            object.__setattr__(self, "parts", parts)

    @classmethod
    def user(cls, *parts: TextPart | ImagePart | str) -> "Message":
        """User message from parts; plain strings become :class:`TextPart`."""
        return cls(role="user", parts=tuple(TextPart(text=p) if isinstance(p, str) else p for p in parts))


_MESSAGE_ROLES = frozenset({"system", "user", "assistant"})
_REQUEST_ROLES = frozenset({"model", "judge"})

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


#: the parameters of a request given none (shared: GenParams is frozen).
_DEFAULT_PARAMS = GenParams()


def _message(m: Any) -> Message:
    if isinstance(m, Message):
        return m
    if isinstance(m, Mapping):
        return Message(**m)
    raise _bad("Request", "messages", "a sequence of Message", m)


_PARAMS_MEMO: dict[tuple[int, str], tuple[GenParams, Any]] = {}


def _params_memo(params: GenParams, kind: str, make) -> Any:
    """``make(params)`` computed once per params object and ``kind`` (a benchmark's requests share one)."""
    ck = (id(params), kind)
    hit = _PARAMS_MEMO.get(ck)
    if hit is None or hit[0] is not params:
        if len(_PARAMS_MEMO) > 512:
            _PARAMS_MEMO.clear()
        hit = _PARAMS_MEMO[ck] = (params, make(params))
    return hit[1]


def params_dump(params: GenParams, *, exclude_defaults: bool = False) -> dict[str, Any]:
    """``params.model_dump(mode="json", exclude_defaults=...)``, computed once per params object
    (the dump was the costly part of every request key and store row). The dict is shared: read
    it, do not change it."""
    return _params_memo(params, "dump-x" if exclude_defaults else "dump",
                        lambda p: p.model_dump(mode="json", exclude_defaults=exclude_defaults))


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
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

    ``messages`` given as a list is kept as a tuple; ``params`` given as a dict becomes
    :class:`GenParams`; requests given no ``params`` share one default object, and those given no
    ``meta`` share one read-only empty mapping (a given ``meta`` is copied, as before).

    Raises:
        ValueError: ``id`` not a str, a message that is not a :class:`Message`, ``role`` not
            ``"model"``/``"judge"``, ``repeat`` not an int >= 0, ``meta`` not a mapping (naming
            the field); pydantic's ValidationError (a ValueError) for bad ``params``.
    """

    id: str
    messages: tuple[Message, ...]
    params: GenParams = _DEFAULT_PARAMS
    meta: Mapping[str, Any] = field(default_factory=lambda: _NO_META)  # the shared object (3.10 refuses a dict default)
    role: Literal["model", "judge"] = "model"
    repeat: int = 0

    def __post_init__(self) -> None:
        _check_str("Request", "id", self.id)
        msgs = _tuple_of(self.messages, "Request", "messages", "a sequence of Message", (Message,), _message)
        if msgs is not self.messages:
            object.__setattr__(self, "messages", msgs)
        if type(self.params) is not GenParams:
            if not isinstance(self.params, (GenParams, Mapping)):
                raise _bad("Request", "params", "GenParams or a dict of its fields", self.params)
            object.__setattr__(self, "params", GenParams.model_validate(self.params))
        meta = self.meta
        if meta is not _NO_META:
            if not isinstance(meta, Mapping):
                raise _bad("Request", "meta", "a mapping", meta)
            object.__setattr__(self, "meta", dict(meta) if meta else _NO_META)
        if self.role not in _REQUEST_ROLES:
            raise _bad("Request", "role", "'model' or 'judge'", self.role)
        rep = self.repeat
        if type(rep) is not int:
            if isinstance(rep, float) and rep.is_integer():
                rep = int(rep)
            elif isinstance(rep, bool):
                rep = int(rep)
            else:
                raise _bad("Request", "repeat", "an int >= 0", rep)
            object.__setattr__(self, "repeat", rep)
        if rep < 0:
            raise _bad("Request", "repeat", "an int >= 0", rep)

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
        out: dict[str, Any] = {"messages": msgs, "params": dict(params_dump(self.params))}
        if self.repeat:
            out["repeat"] = self.repeat
        return out

    def key_for(self, model_fingerprint: str) -> str:
        """Content hash (SHA-256 hex) of this request for a given model fingerprint: of
        ``json.dumps({"model": model_fingerprint, **self.content()}, sort_keys=True, ensure_ascii=False)``.

        That text is written here directly (keys in sorted order, the params' sorted JSON made once
        per params object): ~4x faster than dumping the dict, the same bytes (tests compare both)."""
        msgs = []
        for m in self.messages:
            parts = [f'{{"t": {json.dumps(p.text, ensure_ascii=False)}}}' if isinstance(p, TextPart)
                     else f'{{"img": {json.dumps(p.sha256, ensure_ascii=False)}}}' for p in m.parts]
            msgs.append(f'{{"parts": [{", ".join(parts)}], "role": {json.dumps(m.role)}}}')
        params = _params_memo(self.params, "key-json",
                              lambda p: json.dumps(params_dump(p), sort_keys=True, ensure_ascii=False))
        blob = (f'{{"messages": [{", ".join(msgs)}], "model": {json.dumps(model_fingerprint, ensure_ascii=False)}, '
                f'"params": {params}' + (f', "repeat": {json.dumps(self.repeat)}}}' if self.repeat else "}"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def images(self) -> list[ImagePart]:
        """All image parts in message order."""
        return [p for m in self.messages for p in m.parts if isinstance(p, ImagePart)]

    @property
    def text(self) -> str:
        """All text parts joined by newlines (for logs and text-only backends)."""
        return "\n".join(p.text for m in self.messages for p in m.parts if isinstance(p, TextPart))


@dataclass(slots=True)
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


@dataclass(slots=True)
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
