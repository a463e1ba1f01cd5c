"""A benchmark's own recorded-reply file format, read by ``--model replay:FILE`` (the hook a benchmark registers).

``replay:FILE`` reads lensbench's export JSONL (matched on the request id) and the formats the run's
benchmark lists in ``Benchmark.replay_formats`` (e.g. RGB-Th-Bench's third-party result files, matched on
the question): the runner hands them to the backend (``BackendConfig.replay_formats``), so the replay
backend knows no benchmark. A format recognises its records by their keys, checks their fields, and keys
each reply as the benchmark's requests carry it in ``meta["replay_match"]``.

A recorded reply answers only a request of its own input mode: :func:`request_media` /
:func:`logged_media` list the images and videos a request carries (from the request, or from an export
line's ``messages``), :func:`same_media` compares them and :func:`describe_media` names them in refusals.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath
from typing import Any, ClassVar, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from lensbench.core.errors import DataError
from lensbench.core.types import ImagePart, Request

__all__ = ["ReplayFormat", "ReplayRead", "validated", "Media", "request_media", "logged_media", "same_media",
           "describe_media"]

M = TypeVar("M", bound=BaseModel)


def validated(shape: type[M], path: Path, where: str, record: dict[str, Any], nullable: frozenset[str]) -> M:
    """``record`` validated as ``shape`` (a strict pydantic model). Raises DataError naming ``path``, ``where``
    (``line N`` / ``record N``) and the first wrong field: ``'text' must be a string or null, got int 5``
    (``nullable``: the fields that may be null)."""
    try:
        return shape.model_validate(record)
    except ValidationError as exc:
        e = exc.errors()[0]
        name = ".".join(str(x) for x in e["loc"]) or "?"
        value = record.get(e["loc"][0]) if e["loc"] else record
        shown = repr(value) if not isinstance(value, (list, dict)) or len(repr(value)) <= 60 else type(value).__name__
        want = "a string or null" if name in nullable else "a string"
        raise DataError(path, f"{where}: {name!r} must be {want}, got {type(value).__name__} {shown}"[:300],
                        field=name) from None


class ReplayRead(NamedTuple):
    """What a format read from one file: ``index`` = ``{match key (a tuple): {"text": reply} | {"error": why}}``
    and ``check``: called with each request matched in this file before its reply is given (raises
    ConfigError when the file cannot answer it, e.g. recorded under another input mode), or None; ``note``: a
    line for the run's notes (what was read, rows matching no item, which answer extraction applies), or None.
    An entry may carry ``probe`` (text that must occur in the request's prompt) and ``where`` (the row, for the
    reason when it does not: the item is then missing, an error, never scored)."""

    index: dict[tuple, dict[str, str]]
    check: Callable[[Request], None] | None = None
    note: str | None = None


class ReplayFormat(ABC):
    """One recorded-reply format (see the module docstring). ``name``: the format in messages; ``fields``:
    the keys every record of it has (a record holding them all is one of its records)."""

    name: ClassVar[str]
    fields: ClassVar[frozenset[str]]

    @abstractmethod
    def validate(self, path: Path, where: str, record: dict[str, Any]) -> Any:
        """The record checked (an object with a ``model`` attribute: the model it was recorded from, or None).
        Raises DataError naming ``path``, ``where`` (``line N`` / ``record N``) and the field."""

    @abstractmethod
    def read(self, path: Path, records: list[Any], raw: list[dict[str, Any]]) -> ReplayRead:
        """The replies of this format's ``records`` (validated, in file order; ``raw`` as read) of ``path``."""


class Media(NamedTuple):
    """One image or video a request carries, in message order: ``kind`` ``"image"`` / ``"video"``, ``name``
    (the file name, for messages) and ``sha256`` (an image's content hash; "" for a video, named by its file)."""

    kind: str
    name: str
    sha256: str = ""

    def same(self, other: "Media") -> bool:
        """Same input: an image with the same bytes (wherever it lies), a video of the same file name
        (its frames, times and count are the run's frame settings, not its input mode)."""
        return self.kind == other.kind and (self.sha256 == other.sha256 if self.kind == "image" else
                                            self.name == other.name)


def request_media(request: Request) -> tuple[Media, ...]:
    """The images and videos ``request`` carries (consecutive frames of one video are one video)."""
    out: list[Media] = []
    last_video = None
    for m in request.messages:
        for p in m.parts:
            if isinstance(p, ImagePart):
                if p.video is None:
                    out.append(Media("image", PurePath(p.path).name, p.sha256))
                elif p.video != last_video:
                    out.append(Media("video", PurePath(p.video).name))
                last_video = p.video
            else:
                last_video = None
    return tuple(out)


def logged_media(messages: Any) -> tuple[Media, ...] | None:
    """The images and videos of messages in the log format (an export line's ``messages``:
    :func:`lensbench.core.records.log_messages`), or None when they are not in that format."""
    if not isinstance(messages, list):
        return None
    out: list[Media] = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if not isinstance(content, list):
            return None
        for p in content:
            kind = p.get("type") if isinstance(p, dict) else None
            if kind in ("image", "video") and not isinstance(p.get("path"), str):
                return None
            if kind == "image":
                if not isinstance(p.get("sha256"), str):
                    return None
                out.append(Media("image", PurePath(p["path"].replace("\\", "/")).name, p["sha256"]))
            elif kind == "video":
                out.append(Media("video", PurePath(p["path"].replace("\\", "/")).name))
            elif kind != "text":
                return None
    return tuple(out)


def same_media(a: Sequence[Media], b: Sequence[Media]) -> bool:
    """True when ``a`` and ``b`` carry the same images and videos in the same order (:meth:`Media.same`)."""
    return len(a) == len(b) and all(x.same(y) for x, y in zip(a, b))


def describe_media(media: Sequence[Media], other: Sequence[Media] = ()) -> str:
    """``media`` in words for a message: ``"no image or video"``, ``"images rgb.jpg, thermal.jpg"``,
    ``"video v1.mp4, then image q.jpg"``; an image whose name is in ``other`` with other bytes shows its hash."""
    if not media:
        return "no image or video"
    names = {m.name: m.sha256 for m in other}
    words = []
    for m in media:
        shown = m.name if names.get(m.name, m.sha256) == m.sha256 else f"{m.name} (sha256 {m.sha256[:12]})"
        words.append(f"{m.kind} {shown}")
    return ", then ".join(words)
