"""Replay of recorded replies: our own JSONL export and the benchmark's own result-file formats.

Formats read:

* lensbench JSONL (``lensbench export RUN_DIR``): one object per line (lines end at ``\\n`` only)
  with ``request_id`` and ``text`` (or ``error``), optionally ``model``. Matched on the request
  id. The same request id twice with another reply is refused (never silently last-wins). A line
  that holds the request's ``messages`` (every export does) also records its input mode: the images and
  videos it carried. A request that carries others (an export of a run with images replayed under
  ``--blind``, ``--input blind`` or IV-Bench's ``--pattern no-video``, or the other way round) is
  refused with a ConfigError naming both, before any reply is given.
* the formats of the run's benchmark (:class:`lensbench.core.replay.ReplayFormat`, given in
  ``BackendConfig.replay_formats``; e.g. RGB-Th-Bench's third-party result files): a record holding a
  format's fields is read by it and matched on the key the benchmark's requests carry in
  ``meta["replay_match"]``; the format may refuse a request it cannot answer (ConfigError).
* other harnesses' predictions (``--model predictions:FILE``, the same backend): VLMEvalKit tables
  (``.tsv`` / ``.csv`` / ``.xlsx``, read by :mod:`lensbench.core.tabular`) and lmms-eval samples JSONL, through
  the benchmark's :class:`~lensbench.core.interop.InteropMap` (:mod:`lensbench.core.interop`). A row whose
  question is not in the matched request's prompt answers nothing (the item is ``missing``, an error);
  :attr:`ReplayBackend.notes` says what was read, which extraction applies and which rows no request asked for.

A recorded error is replayed as an error, never as an answer. A file holding several models' replies
needs ``--replay-model NAME``. Every record is checked before anything is replayed: a field of the
wrong type (a number, NaN, a list as the text or the request id), bytes that are not UTF-8 or a line
that is not JSON is a DataError naming the file, the line and the field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from lensbench.core.errors import ConfigError, DataError, TransportError
from lensbench.core.interop import norm_text
from lensbench.core.jsonl import parse_jsonl
from lensbench.core.tabular import is_table, read_table
from lensbench.core.replay import (Media, ReplayFormat, describe_media, logged_media, request_media, same_media,
                                   validated)
from lensbench.core.types import Completion, Request, TextPart, file_sha256
from lensbench.backends.base import Backend, BackendConfig

__all__ = ["ReplayBackend"]


def _read_records(path: Path) -> list[tuple[str, Any]]:
    """``[(where, record)]`` of a table (``.tsv`` / ``.csv`` / ``.xlsx``: :func:`lensbench.core.tabular.read_table`)
    or a JSON / JSON-lines file (:func:`_read_json_or_jsonl`)."""
    if is_table(path):
        return list(read_table(path))
    return _read_json_or_jsonl(path)


def _read_json_or_jsonl(path: Path) -> list[tuple[str, Any]]:
    """``[(where, record)]`` of a JSON list / object or a JSON-lines file; ``where`` is ``line N``
    (JSON lines, split on ``\\n`` only: a reply may hold U+2028, U+2029 or U+0085, which
    ``str.splitlines`` would split) or ``record N`` (a JSON list, counted from 1).

    Raises DataError naming the file and line for bytes that are not UTF-8 and lines that are not JSON.
    """
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(path, f"line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                              "replay files are UTF-8 JSON") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        pass
    else:
        if isinstance(data, dict):
            return [("record 1", data)]
        if not isinstance(data, list):
            raise DataError(path, "expected a JSON list of records or JSON lines")
        return [(f"record {i}", r) for i, r in enumerate(data, 1)]
    return [(f"line {i}", r) for i, r in parse_jsonl(path, text)]


class _Exported(BaseModel):
    """A ``lensbench export`` line (the fields replay reads; the others are kept as they are)."""

    model_config = ConfigDict(extra="allow", strict=True)
    request_id: str
    text: str | None = None
    error: str | None = None
    model: str | None = None


def _exported(path: Path, where: str, r: dict[str, Any]) -> _Exported:
    """An export line checked; DataError names the file, the line and the field."""
    return validated(_Exported, path, where, r, frozenset({"text", "error", "model"}))


def _checked(path: Path, where: str, r: Any, formats: Sequence[ReplayFormat]) -> tuple[ReplayFormat | None, Any]:
    """``(format or None for an export line, the record validated)``; DataError names the file, line and field."""
    if not isinstance(r, dict):
        raise DataError(path, f"{where}: not a JSON object but {type(r).__name__}")
    if "request_id" in r:
        return None, _exported(path, where, r)
    for fmt in formats:
        if fmt.fields <= r.keys():
            return fmt, fmt.validate(path, where, r)
    known = "".join(f" nor the {f.name} fields ({', '.join(sorted(f.fields))})" for f in formats)
    raise DataError(path, f"{where} has neither 'request_id'{known or ' (a lensbench export line)'}",
                    field="request_id")


class ReplayBackend(Backend):
    """Answers from a recorded-reply file (see the module docstring).

    ``index``: ``{request id or match key: {"text": reply} | {"error": why}}``; ``display_name``: the
    model the replies belong to. A request with no recorded reply, or a recorded error, raises a
    non-retryable :class:`TransportError` (scored as ``error``, never as an answer).

    Raises DataError (unreadable file, unknown record layout, a field of the wrong type, a request id
    recorded twice with different replies) and ConfigError (several models in the file and ``model``
    not given or not among them).
    """

    recorded = True

    def __init__(self, path: str, model: str | None = None, formats: Sequence[ReplayFormat] = ()):
        if not path:
            raise ConfigError("--model replay:PATH needs a file path after 'replay:'")
        self.path = Path(path)
        if not self.path.is_file():
            raise DataError(self.path, "replay file not found")
        rows = [(where, *_checked(self.path, where, r, formats), r) for where, r in _read_records(self.path)]
        models = sorted({rec.model for _w, _f, rec, _r in rows if rec.model is not None})
        if model is not None:
            if model not in models:
                raise ConfigError(f"--replay-model {model!r} is not in {self.path}; models there: {', '.join(models)}")
            rows = [row for row in rows if row[2].model == model]
        elif len(models) > 1:
            raise ConfigError(f"{self.path} holds replies of several models ({', '.join(models)}): choose one with "
                              "--replay-model")
        self.display_name = model or (models[0] if models else self.path.stem)
        #: the images and videos each exported request carried (its input mode), with the line it came from
        self.media: dict[str, tuple[str, tuple[Media, ...]]] = {}
        self.index = self._exports([(w, rec) for w, f, rec, _r in rows if f is None])
        self._checks = []
        self._notes: list[str] = []
        self._foreign: dict[Any, str] = {}  # a foreign row's key -> where it is (rows no request asks for are noted)
        self._used: set[Any] = set()
        for fmt in formats:
            mine = [(rec, r) for _w, f, rec, r in rows if f is fmt]
            if mine:
                read = fmt.read(self.path, [rec for rec, _r in mine], [r for _rec, r in mine])
                self.index.update(read.index)
                if read.check is not None:
                    self._checks.append(read.check)
                if read.note:
                    self._notes.append(read.note)
                    self._foreign.update((k, v.get("where", repr(k))) for k, v in read.index.items())
        self.fingerprint = f"replay:{file_sha256(self.path)[:16]}:{self.display_name}"

    def _exports(self, rows: list[tuple[str, _Exported]]) -> dict[Any, dict[str, str]]:
        """Export lines by request id; the same id again with another reply is refused (the same reply, or
        two recorded errors, keep the first)."""
        index: dict[Any, dict[str, str]] = {}
        first_at: dict[str, str] = {}
        for where, rec in rows:
            key = rec.request_id
            entry = {"text": rec.text} if rec.text is not None else {"error": rec.error or "recorded error"}
            if key in index:
                if index[key] != entry and ("text" in entry or "text" in index[key]):
                    raise DataError(self.path, f"{where}: request_id {key!r} is recorded again with another reply "
                                               f"(first at {first_at[key]}); keep one of them", field="request_id")
                continue
            index[key] = entry
            first_at[key] = where
            msgs = (rec.model_extra or {}).get("messages")
            if msgs is not None:
                media = logged_media(msgs)
                if media is None:
                    raise DataError(self.path, f"{where}: 'messages' is not a request's messages as exported "
                                               "(a list of {role, content: [text / image / video parts]})",
                                    field="messages")
                self.media[key] = (where, media)
        return index

    def check_request(self, request: Request) -> None:
        """Refuse (ConfigError) a request whose recorded reply was recorded under another input mode: a
        third-party format's own check, or an export line's images and videos (module docstring)."""
        self._lookup(request)

    def _lookup(self, request: Request) -> dict[str, str] | None:
        """The recorded entry answering ``request`` (None: none), after the input-mode checks."""
        match = request.meta.get("replay_match")
        rec = None
        if match is not None:
            for check in self._checks:
                check(request)
            rec = self.index.get(tuple(match))
            if rec is not None:
                self._used.add(tuple(match))
        if rec is None:
            rec = self.index.get(request.id)
            if rec is not None:
                self._used.add(request.id)
            if rec is not None and request.id in self.media:
                self._check_media(request)
        if rec is not None and "probe" in rec:
            return _probed(rec, request)
        return rec

    @property
    def notes(self) -> list[str]:
        """Lines for the run's notes: what each foreign format read (which answer extraction applies, rows that
        name no item) and the rows no request of this run asked for (items outside it, or replies already
        stored by an earlier attempt), never scored."""
        unused = [w for k, w in self._foreign.items() if k not in self._used]
        if not unused:
            return list(self._notes)
        shown = ", ".join(unused[:5])
        return [*self._notes, f"{len(unused)} rows were not asked for by this run (not scored): {shown}"]

    async def generate(self, request: Request) -> Completion:
        rec = self._lookup(request)
        if rec is None:
            raise TransportError(f"no recorded reply in {self.path} for request {request.id!r}", retryable=False)
        if "error" in rec:
            raise TransportError(f"recorded error: {rec['error'][:300]}", retryable=False)
        return Completion(text=rec["text"])


    def _check_media(self, request: Request) -> None:
        """Refuse (ConfigError) a request whose images and videos are not those its exported reply was
        recorded with: a reply to another input mode never answers this one."""
        where, recorded = self.media[request.id]
        asked = request_media(request)
        if not same_media(recorded, asked):
            raise ConfigError(f"{self.path} {where}: request {request.id!r} was recorded with "
                              f"{describe_media(recorded, asked)} but this run sends "
                              f"{describe_media(asked, recorded)}: "
                              "a reply recorded under another input mode cannot answer this one; replay the file "
                              "with the input options it was recorded with (its run's run.json 'options')")


def _probed(rec: dict[str, str], request: Request) -> dict[str, str]:
    """A foreign row's entry for ``request``: its reply when the row's ``probe`` (its question) occurs in the
    request's prompt, else a missing-item error naming the row and both texts (never scored as an answer)."""
    text = norm_text(" ".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart)))
    if rec["probe"] in text:
        return {k: v for k, v in rec.items() if k in ("text", "error")}
    return {"error": f"missing: {rec.get('where', 'the row')} names item {request.id!r} but its question "
                     f"{rec['probe'][:80]!r} is not in this item's prompt"}


def make(arg: str, config: BackendConfig) -> Backend:
    return ReplayBackend(arg, config.replay_model, config.replay_formats)
