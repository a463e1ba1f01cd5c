"""Other harnesses' prediction files as replay formats: VLMEvalKit predictions and lmms-eval samples.

``--model predictions:FILE`` (or ``replay:FILE``) scores a file another harness wrote, through the normal run
path (load -> expand -> engine -> score), so the run folder is an ordinary one. Two layouts:

* **VLMEvalKit predictions** (``vlmeval/inference.py`` dumps the dataset's table with a ``prediction`` column;
  ``.xlsx`` by default, ``.tsv`` / ``.csv`` too): one row per model call with ``index``, ``prediction`` and
  the dataset's columns. A prediction holding VLMEvalKit's failure message (``Failed to obtain answer``) is a
  recorded failure (an ``error``), never an answer.
* **lmms-eval samples** (``--log_samples``: ``<date>_samples_<task>.jsonl``): one JSON object per document with
  ``doc_id``, ``doc`` (the document's non-media fields), ``target``, ``arguments``, ``resps`` (the raw replies,
  one list per request) and ``filtered_resps`` (after the task's filters). lensbench reads the raw
  ``resps[0][0]`` and applies its own parser; lmms-eval's filtered reply is not used.

Each benchmark states how its items map to the other harness's rows in an :class:`InteropMap` (its own
``interop.py``): the columns / document fields that identify its files, the unit (a request id, or a match key
its requests carry in ``meta["replay_match"]``) a row answers, and an optional ``probe`` text (the row's
question) that must occur in the request's text. A row whose unit cannot be read is listed as unmatched
(never scored), a row whose probe is not in the matched request's prompt leaves that item ``missing`` with the
reason (an ``error`` outcome, never ``wrong``), and an item no row answers is an ``error`` too. A file of
another benchmark is refused, naming the columns it lacks.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from lensbench.core.errors import DataError
from lensbench.core.replay import ReplayFormat, ReplayRead

__all__ = ["Unit", "Row", "InteropMap", "VLMEvalKitPredictions", "LmmsEvalSamples", "FAIL_MSG", "norm_text",
           "interop_formats"]

#: VLMEvalKit's failure marker (``vlmeval/smp/misc.py`` FAIL_MSG = 'Failed to obtain answer via API.')
FAIL_MSG = "Failed to obtain answer via API."


def norm_text(text: str) -> str:
    """``text`` with runs of whitespace made one space and stripped (probe comparison)."""
    return re.sub(r"\s+", " ", text).strip()


class Unit(NamedTuple):
    """What a foreign row answers: ``key`` (a request id ``str``, or a tuple its requests carry as
    ``meta["replay_match"]``) and ``probe``: text that must occur in that request's prompt, or None."""

    key: str | tuple
    probe: str | None = None


class InteropMap(ABC):
    """How one benchmark's items map to VLMEvalKit rows and lmms-eval documents (both ways).

    ``benchmark``: the benchmark's name; ``columns``: the dataset columns every VLMEvalKit row of it carries
    (besides ``index`` and ``prediction``), in export order; ``doc_fields``: the fields every lmms-eval ``doc``
    of it carries (default: ``columns``); ``extraction``: what lensbench applies to the raw reply (its
    protocol's parser, named) and what the other harness would have applied, for the run's notes.
    """

    benchmark: ClassVar[str]
    columns: ClassVar[tuple[str, ...]]
    doc_fields: ClassVar[tuple[str, ...] | None] = None
    extraction: ClassVar[str] = "lensbench's own parser of this benchmark's protocol"

    def unit(self, row: dict[str, Any]) -> Unit:
        """The unit a VLMEvalKit row (cells as text) answers. Raises ValueError(reason) when it names none.

        Default (the layouts lensbench defines in VLMEvalKit's style): the request named by the row's ``id``,
        whose ``question`` cell, when given, must be in that request's prompt."""
        rid = str(row.get("id", "")).strip()
        if not rid:
            raise ValueError("empty 'id'")
        return Unit(rid, row.get("question") or None)

    @abstractmethod
    def row(self, record: dict[str, Any]) -> dict[str, Any]:
        """The dataset columns (``columns``, plus ``index`` when the benchmark fixes it) of a ``samples.jsonl``
        record, for export."""

    def refuse(self, row: dict[str, Any]) -> str | None:
        """Why a row holding this benchmark's columns is still another benchmark's (its cells do not fit), or
        None (default)."""
        return None

    def doc_unit(self, doc_id: Any, doc: dict[str, Any]) -> Unit:
        """The unit an lmms-eval document answers (default: the document read as a VLMEvalKit row)."""
        return self.unit({k: _text(v) for k, v in doc.items()})

    def doc(self, record: dict[str, Any]) -> dict[str, Any]:
        """The lmms-eval ``doc`` of a ``samples.jsonl`` record (default: :meth:`row` without ``index``)."""
        return {k: v for k, v in self.row(record).items() if k != "index"}

    def target(self, record: dict[str, Any]) -> str:
        """The lmms-eval ``target`` of a record (default: its ``target`` as text)."""
        return _text(record.get("target"))


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return v if isinstance(v, str) else str(v)


class Row(NamedTuple):
    """A validated foreign row: ``data`` (the cells / the sample) and ``model`` (None: neither harness names
    the model inside the file; VLMEvalKit puts it in the file name)."""

    data: dict[str, Any]
    model: str | None = None


class _Rows:
    """Shared reading of rows into a replay index, with unmatched rows noted."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = path, what
        self.index: dict[Any, dict[str, str]] = {}
        self.first: dict[Any, str] = {}
        self.unmatched: list[str] = []

    def add(self, where: str, unit_of, entry: dict[str, str]) -> None:
        try:
            u = unit_of()
        except ValueError as exc:
            self.unmatched.append(f"{where}: {exc}")
            return
        entry = dict(entry, where=f"{self.path.name} {where}")
        if u.probe:
            entry["probe"] = norm_text(u.probe)
        key = u.key
        if key in self.index:
            old = {k: v for k, v in self.index[key].items() if k in ("text", "error")}
            new = {k: v for k, v in entry.items() if k in ("text", "error")}
            if old != new:
                raise DataError(self.path, f"{where} answers {key!r} again with another reply (first at "
                                           f"{self.first[key]}); keep one of them")
            return
        self.index[key] = entry
        self.first[key] = where

    def read(self, extraction: str) -> ReplayRead:
        note = f"{self.what} {self.path.name}: {len(self.index)} rows read; {extraction}"
        if self.unmatched:
            note += f"; {len(self.unmatched)} rows match no item (not scored): " + "; ".join(self.unmatched[:5])
        return ReplayRead(self.index, None, note)


class VLMEvalKitPredictions(ReplayFormat):
    """VLMEvalKit predictions rows of one benchmark (module docstring), read through its :class:`InteropMap`."""

    name = "VLMEvalKit predictions"
    fields = frozenset({"index", "prediction"})

    def __init__(self, mapping: InteropMap):
        self.mapping = mapping

    def validate(self, path: Path, where: str, record: dict[str, Any]) -> Row:
        """The row with every cell as text; DataError naming the columns a row of this benchmark needs and
        this one lacks (a file of another benchmark)."""
        missing = [c for c in self.mapping.columns if c not in record]
        if missing:
            have = ", ".join(sorted(record))
            raise DataError(path, f"{where}: not a {self.mapping.benchmark} VLMEvalKit predictions file: no "
                                  f"column {', '.join(repr(c) for c in missing)} (its columns: {have})",
                            field=missing[0])
        row = {k: _text(v) for k, v in record.items()}
        if why := self.mapping.refuse(row):
            raise DataError(path, f"{where}: not a {self.mapping.benchmark} VLMEvalKit predictions file: {why}")
        return Row(row)

    def read(self, path: Path, records: list[Row], raw: list[dict[str, Any]]) -> ReplayRead:
        """Replies keyed by each row's unit; a VLMEvalKit failure message is a recorded error."""
        rows = _Rows(path, "VLMEvalKit predictions")
        for i, rec in enumerate((r.data for r in records), 1):
            pred = rec["prediction"]
            entry = {"error": f"VLMEvalKit recorded a failure: {pred[:200]}"} if "Failed to obtain answer" in pred \
                else {"text": pred}
            rows.add(f"row {i} (index {rec['index']})", lambda rec=rec: self.mapping.unit(rec), entry)
        return rows.read(f"lensbench applied {self.mapping.extraction} to the raw 'prediction' column "
                         "(VLMEvalKit's own answer extraction is not used)")


class LmmsEvalSamples(ReplayFormat):
    """lmms-eval ``--log_samples`` records of one benchmark (module docstring), read through its map."""

    name = "lmms-eval samples"
    fields = frozenset({"doc_id", "doc", "resps"})

    def __init__(self, mapping: InteropMap):
        self.mapping = mapping

    def validate(self, path: Path, where: str, record: dict[str, Any]) -> Row:
        """The record checked: ``doc`` an object with this benchmark's fields, ``resps`` a list. DataError names
        the file, line and field (for another benchmark's documents, the fields they lack)."""
        doc, resps = record.get("doc"), record.get("resps")
        if not isinstance(doc, dict):
            raise DataError(path, f"{where}: 'doc' must be an object, got {type(doc).__name__}", field="doc")
        if not isinstance(resps, list):
            raise DataError(path, f"{where}: 'resps' must be a list, got {type(resps).__name__}", field="resps")
        need = self.mapping.doc_fields or self.mapping.columns
        missing = [c for c in need if c not in doc]
        if missing:
            raise DataError(path, f"{where}: not {self.mapping.benchmark} lmms-eval samples: doc has no "
                                  f"{', '.join(repr(c) for c in missing)} (its fields: {', '.join(sorted(doc))})",
                            field=f"doc.{missing[0]}")
        if why := self.mapping.refuse({k: _text(v) for k, v in doc.items()}):
            raise DataError(path, f"{where}: not {self.mapping.benchmark} lmms-eval samples: {why}")
        return Row(record)

    def read(self, path: Path, records: list[Row], raw: list[dict[str, Any]]) -> ReplayRead:
        """Replies keyed by each document's unit: the raw ``resps[0][0]`` (a document with no reply, or a
        non-text reply, is a recorded error)."""
        rows = _Rows(path, "lmms-eval samples")
        for i, rec in enumerate((r.data for r in records), 1):
            reply = _first_reply(rec["resps"])
            entry = {"text": reply} if reply is not None else {"error": "lmms-eval logged no text reply (resps)"}
            rows.add(f"line {i} (doc_id {rec['doc_id']})",
                     lambda rec=rec: self.mapping.doc_unit(rec["doc_id"], rec["doc"]), entry)
        return rows.read(f"lensbench applied {self.mapping.extraction} to the raw 'resps' "
                         "(lmms-eval's 'filtered_resps', its own filter's extraction, are not used)")


def _first_reply(resps: list[Any]) -> str | None:
    """The first raw reply of ``resps`` (``[["text"]]`` for generate_until; ``["text"]`` accepted)."""
    first = resps[0] if resps else None
    if isinstance(first, list):
        first = first[0] if first else None
    return first if isinstance(first, str) else None


def interop_formats(mapping: InteropMap) -> tuple[ReplayFormat, ...]:
    """The VLMEvalKit and lmms-eval replay formats of a benchmark's ``mapping``."""
    return (VLMEvalKitPredictions(mapping), LmmsEvalSamples(mapping))
