"""What a reviewer is shown and what they may answer: :class:`ReviewItem`, :class:`Field`, :class:`Form`.

A :class:`Form` is the list of fields every item asks for; a :class:`Field` is one answer slot of
one kind:

* ``choice``: one of ``options`` (``rate`` mode: Yes / No / Cannot determine, a 1-5 scale via
  :meth:`Field.scale`; ``judge`` mode: a binary verdict via :meth:`Field.judge`; the
  ``accept / edit / reject`` decision via :meth:`Field.decision`). A given value matches an
  option case-insensitively (surrounding blanks ignored) and is stored as the option's spelling.
* ``text``: an editable text, shown pre-filled with the item's ``texts[name]`` (``edit`` mode).
* ``box``: an editable box ``[x1, y1, x2, y2]`` in pixels of the item's first image, pre-filled
  with ``boxes[name]``; drawn on the image, redrawn by dragging or typed.

Values are given and stored as strings (a box as its JSON list or "x1,y1,x2,y2"); a choice or text
given as JSON true, a number, null or a list is refused. Section and info names become element ids
of the page (CSS / test hooks), so they are plain identifiers and avoid the page's own ids.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lensbench.core.answers import MAX_NAME, validate_reviewer

__all__ = ["Field", "Form", "Section", "ReviewItem", "validate_reviewer", "DECISIONS", "MAX_NAME", "MAX_TEXT"]

#: The decision options of ``accept / edit / reject`` review, in page order.
DECISIONS: tuple[str, ...] = ("accept", "edit", "reject")
#: Longest text value accepted (characters).
MAX_TEXT = 20_000

_IDENT = re.compile(r"[a-z][a-z0-9_]{0,39}")
_RESERVED = {"main", "login", "name", "start", "where", "progress", "bar", "status", "nav", "prev", "next",
             "imgbox", "img0", "panel", "title", "reviewer", "formtitle", "infos", "sections", "save", "overlay",
             "instructions-login"}


@dataclass(frozen=True)
class Field:
    """One answer slot. ``name``: identifier (``[a-z][a-z0-9_]*``); ``kind``: ``choice`` | ``text`` |
    ``box``; ``label``: the question shown (an item may override it in ``ReviewItem.labels``);
    ``options``: the choices (choice only); ``keys``: one keyboard key per option (optional);
    ``level``: ``nominal`` | ``ordinal`` | ``interval`` (how agreement treats the values);
    ``required``: the item counts as done for a reviewer only when every required field is answered."""

    name: str
    kind: str = "choice"
    label: str = ""
    options: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    level: str = "nominal"
    required: bool = True

    def __post_init__(self):
        if not _IDENT.fullmatch(self.name):
            raise ValueError(f"field name {self.name!r}: use [a-z][a-z0-9_]* (at most 40 characters)")
        if self.kind not in ("choice", "text", "box"):
            raise ValueError(f"field {self.name}: kind must be choice, text or box, got {self.kind!r}")
        if self.kind == "choice" and len(self.options) < 2:
            raise ValueError(f"field {self.name}: a choice needs at least 2 options")
        if self.keys and len(self.keys) != len(self.options):
            raise ValueError(f"field {self.name}: {len(self.keys)} keys for {len(self.options)} options")
        if self.level not in ("nominal", "ordinal", "interval"):
            raise ValueError(f"field {self.name}: level must be nominal, ordinal or interval")

    @classmethod
    def choice(cls, name: str, options: Sequence[str], label: str = "", keys: Sequence[str] = (),
               level: str = "nominal", required: bool = True) -> "Field":
        """A choice among ``options`` (``rate`` mode)."""
        return cls(name, "choice", label, tuple(options), tuple(keys), level, required)

    @classmethod
    def scale(cls, name: str, label: str = "", lo: int = 1, hi: int = 5, required: bool = True) -> "Field":
        """A rating ``lo``..``hi`` (options ``"1"``..``"5"``, digit keys, interval level)."""
        opts = tuple(str(i) for i in range(lo, hi + 1))
        return cls(name, "choice", label, opts, opts if hi < 10 and lo >= 0 else (), "interval", required)

    @classmethod
    def judge(cls, name: str, yes: str = "yes", no: str = "no", label: str = "", keys: Sequence[str] = ("y", "n"),
              required: bool = True) -> "Field":
        """A binary verdict (``judge`` mode), e.g. ``Field.judge("groundable", "groundable", "not groundable")``."""
        return cls(name, "choice", label, (yes, no), tuple(keys), "nominal", required)

    @classmethod
    def decision(cls, name: str = "decision", label: str = "Decision") -> "Field":
        """The ``accept / edit / reject`` decision (keys a / e / r)."""
        return cls(name, "choice", label, DECISIONS, ("a", "e", "r"), "nominal", True)

    @classmethod
    def text(cls, name: str, label: str = "") -> "Field":
        """An editable text (not required: filled when the reviewer edits)."""
        return cls(name, "text", label, required=False)

    @classmethod
    def box(cls, name: str, label: str = "") -> "Field":
        """An editable box in pixels of the first image (not required)."""
        return cls(name, "box", label, required=False)

    def clean(self, value: Any, size: tuple[int, int] | None = None) -> str:
        """``value`` as stored (string); raises ValueError saying what is wrong.

        choice: an option given as a string (case-insensitive; JSON ``true``, ``1``, ``null`` or a
        list is refused, never read as ``"Yes"`` or ``"1"``); text: a string of at most :data:`MAX_TEXT`
        characters; box: 4 finite numbers with x1 < x2, y1 < y2, inside ``size`` = (W, H) when
        known (a JSON list or ``"x1,y1,x2,y2"``), stored as a JSON list.
        """
        if self.kind == "choice":
            if not isinstance(value, str):
                raise ValueError(f"{self.name} must be one of {list(self.options)} as a string, got {_kind(value)}")
            s = " ".join(str(value).split()).lower()
            for o in self.options:
                if o.lower() == s:
                    return o
            raise ValueError(f"{self.name} must be one of {list(self.options)}, got {value!r}")
        if self.kind == "text":
            if not isinstance(value, str):
                raise ValueError(f"{self.name} must be a text, got {type(value).__name__}")
            if len(value) > MAX_TEXT:
                raise ValueError(f"{self.name} longer than {MAX_TEXT} characters")
            return value
        return json.dumps(parse_box(value, size, self.name))


def _kind(value: Any) -> str:
    """A JSON value's type in words, with the value when short (``true``, ``1``, ``null``, ``a list``)."""
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    return "a list" if isinstance(value, (list, tuple)) else "an object" if isinstance(value, Mapping) else \
        type(value).__name__


def parse_box(value: Any, size: tuple[int, int] | None = None, name: str = "box") -> list[float]:
    """``[x1, y1, x2, y2]`` from a list or a ``"x1,y1,x2,y2"`` / JSON string; raises ValueError."""
    v = value
    if isinstance(v, str):
        s = v.strip()
        try:
            v = json.loads(s) if s.startswith("[") else [float(t) for t in s.split(",")]
        except ValueError:
            raise ValueError(f"{name} must be 4 numbers x1,y1,x2,y2, got {value!r}") from None
    if not isinstance(v, (list, tuple)) or len(v) != 4 or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) for t in v):
        raise ValueError(f"{name} must be 4 numbers x1,y1,x2,y2, got {value!r}")
    x1, y1, x2, y2 = (float(t) for t in v)
    if not all(math.isfinite(t) for t in (x1, y1, x2, y2)) or not (x1 < x2 and y1 < y2):
        raise ValueError(f"{name} must have x1 < x2 and y1 < y2, got {value!r}")
    if min(x1, y1) < 0 or (size is not None and (x2 > size[0] or y2 > size[1])):
        raise ValueError(f"{name} {[x1, y1, x2, y2]} lies outside the image {size}")
    return [round(t, 2) for t in (x1, y1, x2, y2)]


@dataclass(frozen=True)
class Section:
    """A heading over some fields; ``name`` becomes the section's element id."""

    name: str
    title: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class Form:
    """What each item asks: ``fields`` in page order, grouped under ``sections`` (default: one
    untitled section ``fields``); ``info`` names the item texts shown read-only (each in an
    element with that id); ``title`` heads the page; ``done_word`` ends the progress text
    (``"3 / 40 rated"``); ``item_word`` names an item in the position text (``"Image 3 of 40"``);
    ``normalize`` (field, raw value) -> value maps a value before
    :meth:`Field.clean` (e.g. a benchmark's answer spellings); ``check`` (the cleaned values of one
    action) raises ValueError to refuse the action as a whole (rules across fields)."""

    fields: tuple[Field, ...]
    title: str = "Review"
    sections: tuple[Section, ...] = ()
    info: tuple[str, ...] = ()
    instructions: str = ""
    done_word: str = "reviewed"
    item_word: str = "Item"
    normalize: Callable[[Field, Any], Any] | None = field(default=None, compare=False)
    check: Callable[[dict[str, str]], None] | None = field(default=None, compare=False)

    def __post_init__(self):
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in {names}")
        if not self.sections:
            object.__setattr__(self, "sections", (Section("fields", "", tuple(names)),))
        for s in self.sections:
            if not _IDENT.fullmatch(s.name) or s.name in _RESERVED:
                raise ValueError(f"section name {s.name!r}: a plain identifier, not one of the page's ids")
            unknown = [f for f in s.fields if f not in names]
            if unknown:
                raise ValueError(f"section {s.name}: unknown fields {unknown}")
        for n in self.info:
            if not _IDENT.fullmatch(n) or n in _RESERVED or n in {s.name for s in self.sections}:
                raise ValueError(f"info name {n!r}: a plain identifier, not one of the page's ids")

    def by_name(self) -> dict[str, Field]:
        """``{field name: Field}``."""
        return {f.name: f for f in self.fields}

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the required fields."""
        return tuple(f.name for f in self.fields if f.required)

    def clean(self, values: Mapping[str, Any], size: tuple[int, int] | None = None) -> dict[str, str]:
        """``{field: stored value}`` for one action; raises ValueError naming an unknown field or a bad value."""
        if not isinstance(values, Mapping) or not values:
            raise ValueError("expected at least one field value")
        fields = self.by_name()
        out = {}
        for k, v in values.items():
            f = fields.get(k)
            if f is None:
                raise ValueError(f"unknown field {k!r} (one of {list(fields)})")
            if f.kind != "box" and not isinstance(v, str):  # before normalize: true must not become "Yes"
                raise ValueError(f"{k} must be a string, got {_kind(v)}")
            out[k] = f.clean(self.normalize(f, v) if self.normalize else v, size)
        if self.check is not None:
            self.check(out)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Form":
        """The form of :meth:`to_json` (without ``normalize`` / ``check``, which are code)."""
        fields = tuple(Field(f["name"], f["kind"], f.get("label", ""), tuple(f.get("options", ())),
                             tuple(f.get("keys", ())), f.get("level", "nominal"), f.get("required", True))
                       for f in d["fields"])
        return cls(fields=fields, title=d.get("title", "Review"), info=tuple(d.get("info", ())),
                   instructions=d.get("instructions", ""), done_word=d.get("done_word", "reviewed"),
                   item_word=d.get("item_word", "Item"),
                   sections=tuple(Section(x["name"], x["title"], tuple(x["fields"])) for x in d.get("sections", ())))

    def to_json(self) -> dict[str, Any]:
        """The form as the page reads it."""
        return {"title": self.title, "instructions": self.instructions, "done_word": self.done_word,
                "item_word": self.item_word, "info": list(self.info),
                "fields": [{"name": f.name, "kind": f.kind, "label": f.label, "options": list(f.options),
                            "keys": list(f.keys), "required": f.required, "level": f.level} for f in self.fields],
                "sections": [{"name": s.name, "title": s.title, "fields": list(s.fields)} for s in self.sections]}


@dataclass(frozen=True)
class ReviewItem:
    """One thing to review. ``key``: unique id (stored with every answer); ``images``: file paths
    shown (first one carries the boxes); ``title``; ``info``: ``{name: text}`` shown read-only
    for the form's ``info`` names; ``texts``: initial values of text fields; ``boxes``: ``{name:
    [x1, y1, x2, y2]}`` in pixels of the first image, all drawn (editable when a box field has the
    name); ``labels``: per-item field labels (e.g. this image's own questions); ``meta``: kept
    with the item and exported, never shown."""

    key: str
    images: tuple[str, ...] = ()
    title: str = ""
    info: Mapping[str, str] = field(default_factory=dict)
    texts: Mapping[str, str] = field(default_factory=dict)
    boxes: Mapping[str, Sequence[float]] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (image paths included: for the store, not for the page)."""
        return {"key": self.key, "images": list(self.images), "title": self.title, "info": dict(self.info),
                "texts": dict(self.texts), "boxes": {k: list(v) for k, v in self.boxes.items()},
                "labels": dict(self.labels), "meta": dict(self.meta)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ReviewItem":
        """Inverse of :meth:`to_json`."""
        return cls(key=d["key"], images=tuple(d.get("images") or ()), title=d.get("title") or "",
                   info=d.get("info") or {}, texts=d.get("texts") or {}, boxes=d.get("boxes") or {},
                   labels=d.get("labels") or {}, meta=d.get("meta") or {})
