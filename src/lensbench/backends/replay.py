"""Replay of recorded replies: our own JSONL export and third-party result files.

Formats read:

* lensbench JSONL (``lensbench export RUN_DIR``): one object per line (lines end at ``\\n`` only)
  with ``request_id`` and ``text`` (or ``error``), optionally ``model``. Matched on the request
  id. The same request id twice with another reply is refused (never silently last-wins).
* RGB-Th-Bench third-party results (``benchmark_results_*.json`` in the RGB-Th-Benchmark
  re-evaluation repo): a JSON list of ``{model, file, skill, question, vlm_response_raw, ...}``.
  Matched on (source/scene folder, skill, question text, occurrence) taken from
  ``request.meta["replay_match"]``. A reply starting with ``Error:`` is a recorded transport
  error, and a null reply a recorded server failure: both are replayed as errors, never as
  answers; an empty string is the model's answer "" (SPEC General rules). A question recorded once but asked
  twice has no reply for its second ask (an error, never a copy of the first reply).
  The file's input protocol is recorded: files written by the third-party
  ``benchmark_thermal*.py`` (thermal image only, its own context) are ``thermal-only``
  (named ``*_thermal_only.json`` by that script, and their records carry
  ``data_type_original`` = the release's data type instead of ``data_type``); all others are
  ``rgb+thermal``. A request whose ``meta["rgbth_input"]`` names another mode is refused
  with a ConfigError before anything is replayed.

A file holding several models' replies needs ``--replay-model NAME``. Every record is checked
before anything is replayed: a field of the wrong type (a number, NaN, a list as the text or the
request id), bytes that are not UTF-8 or a line that is not JSON is a DataError naming the file,
the line and the field.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lensbench.core.errors import ConfigError, DataError, TransportError
from lensbench.core.types import Completion, Request, file_sha256
from lensbench.backends.base import Backend, BackendConfig

__all__ = ["ReplayBackend", "load_replay_records", "rgbth_match_key", "rgbth_file_input"]


def rgbth_match_key(file: str, skill: str, question: str, occurrence: int = 0) -> tuple:
    """Match key of an RGB-Th-Bench question: (``Source N/scene``, skill, question, occurrence).

    ``file`` may use ``\\`` or ``/`` and may end in ``/questions.json`` (both are normalised).
    """
    f = file.replace("\\", "/")
    if f.endswith("/questions.json"):
        f = f[: -len("/questions.json")]
    return ("rgbth", f, skill, question.strip(), occurrence)


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
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                out.append((f"line {i}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DataError(path, f"line {i} is not valid JSON: {exc}") from None
    return out


class _Exported(BaseModel):
    """A ``lensbench export`` line (the fields replay reads; the others are kept as they are)."""

    model_config = ConfigDict(extra="allow", strict=True)
    request_id: str
    text: str | None = None
    error: str | None = None
    model: str | None = None


class _RgbthResult(BaseModel):
    """A record of a third-party RGB-Th-Bench result file (the fields replay reads)."""

    model_config = ConfigDict(extra="allow", strict=True)
    file: str
    skill: str
    question: str
    vlm_response_raw: str | None
    model: str | None = None


_RGBTH_FIELDS = frozenset({"file", "skill", "question", "vlm_response_raw"})


def _checked(path: Path, where: str, r: Any) -> BaseModel:
    """The record ``r`` validated as one of the two layouts; DataError names the file, line and field."""
    if not isinstance(r, dict):
        raise DataError(path, f"{where}: not a JSON object but {type(r).__name__}")
    if "request_id" in r:
        shape: type[BaseModel] = _Exported
    elif _RGBTH_FIELDS <= r.keys():
        shape = _RgbthResult
    else:
        raise DataError(path, f"{where} has neither 'request_id' nor the RGB-Th-Bench result fields "
                              "(file, skill, question, vlm_response_raw)", field="request_id")
    try:
        return shape.model_validate(r)
    except ValidationError as exc:
        e = exc.errors()[0]
        name = ".".join(str(x) for x in e["loc"]) or "?"
        value = r.get(e["loc"][0]) if e["loc"] else r
        shown = repr(value) if not isinstance(value, (list, dict)) or len(repr(value)) <= 60 else type(value).__name__
        want = "a string or null" if name in ("text", "error", "model", "vlm_response_raw") else "a string"
        raise DataError(path, f"{where}: {name!r} must be {want}, got {type(value).__name__} {shown}"[:300],
                        field=name) from None


_RGBTH_DATA_TYPES = ("Single RGB Image", "RGB-Thermal Pair")


def rgbth_file_input(path: str | Path, records: list[Any]) -> str | None:
    """The RGB-Th-Bench input mode a third-party result file was recorded with, or None (not such a file).

    ``"thermal-only"`` when the file name ends in ``_thermal_only`` (the third-party
    ``benchmark_thermal*.py`` output name) or every record carries ``data_type_original`` with a
    release data type and none carries ``data_type`` (what that script writes); else
    ``"rgb+thermal"`` (``benchmark.py``: the paper's input).
    """
    rows = [r for r in records if isinstance(r, dict) and {"file", "skill", "question", "vlm_response_raw"} <= r.keys()]
    if not rows:
        return None
    if Path(path).stem.endswith("_thermal_only"):
        return "thermal-only"
    if all(r.get("data_type_original") in _RGBTH_DATA_TYPES and "data_type" not in r for r in rows):
        return "thermal-only"
    return "rgb+thermal"


def load_replay_records(path: str | Path, model: str | None = None) -> tuple[dict[Any, dict], str]:
    """Index of recorded replies in ``path`` and the model name they belong to.

    Returns ``({match key or request id: {"text" | "error": str}}, model_name)``.

    Raises:
        DataError: unreadable file, unknown record layout (names the file and field).
        ConfigError: several models in the file and ``model`` not given or not among them.
    """
    index, name, _records = _load(path, model)
    return index, name


def _load(path: str | Path, model: str | None) -> tuple[dict[Any, dict], str, list[Any]]:
    p = Path(path)
    if not p.is_file():
        raise DataError(p, "replay file not found")
    rows = [(where, _checked(p, where, r), r) for where, r in _read_json_or_jsonl(p)]
    models = sorted({rec.model for _w, rec, _r in rows if rec.model is not None})
    if model is not None:
        if model not in models:
            raise ConfigError(f"--replay-model {model!r} is not in {p}; models there: {', '.join(models)}")
        rows = [row for row in rows if row[1].model == model]
    elif len(models) > 1:
        raise ConfigError(f"{p} holds replies of several models ({', '.join(models)}): choose one with --replay-model")
    name = model or (models[0] if models else p.stem)
    index: dict[Any, dict] = {}
    first_at: dict[Any, str] = {}
    seen: dict[tuple, int] = defaultdict(int)
    for where, rec, _r in rows:
        if isinstance(rec, _Exported):
            key: Any = rec.request_id
            entry = {"text": rec.text} if rec.text is not None else {"error": rec.error or "recorded error"}
            if key in index and index[key] != entry and ("text" in entry or "text" in index[key]):
                raise DataError(p, f"{where}: request_id {key!r} is recorded again with another reply (first at "
                                   f"{first_at[key]}); keep one of them", field="request_id")
            if key in index:
                continue  # the same reply twice (or two recorded errors): the first is kept
        else:
            base = rgbth_match_key(rec.file, rec.skill, rec.question)
            occ = seen[base]
            seen[base] += 1
            key = base[:-1] + (occ,)
            raw = rec.vlm_response_raw
            if raw is None:  # no content at all: a server failure, never an answer (an empty string IS one)
                entry = {"error": "recorded reply is null (no content)"}
            elif raw.startswith("Error:"):
                entry = {"error": raw}
            else:
                entry = {"text": raw}
        index[key] = entry
        first_at[key] = where
    return index, name, [r for _w, _rec, r in rows]


class ReplayBackend(Backend):
    """Answers from a recorded-reply file (see the module docstring).

    A request with no recorded reply, or a recorded ``Error:`` reply, raises a non-retryable
    :class:`TransportError` (scored as ``error``, never as an answer). An RGB-Th-Bench request
    whose input mode differs from the file's (:func:`rgbth_file_input`) raises ConfigError.
    """

    def __init__(self, path: str, model: str | None = None):
        if not path:
            raise ConfigError("--model replay:PATH needs a file path after 'replay:'")
        self.path = Path(path)
        self.index, self.display_name, records = _load(self.path, model)
        self.rgbth_input = rgbth_file_input(self.path, records)
        self.fingerprint = f"replay:{file_sha256(self.path)[:16]}:{self.display_name}"

    async def generate(self, request: Request) -> Completion:
        match = request.meta.get("replay_match")
        rec = None
        if match is not None:
            mode = request.meta.get("rgbth_input", "rgb+thermal")
            if match[0] == "rgbth" and self.rgbth_input is not None and mode != self.rgbth_input:
                raise ConfigError(f"{self.path} holds RGB-Th-Bench replies recorded with input {self.rgbth_input!r} "
                                  f"but this run uses --input {mode}: replay it with --input {self.rgbth_input}")
            rec = self.index.get(tuple(match))
        if rec is None:
            rec = self.index.get(request.id)
        if rec is None:
            raise TransportError(f"no recorded reply in {self.path} for request {request.id!r}", retryable=False)
        if "error" in rec:
            raise TransportError(f"recorded error: {rec['error'][:300]}", retryable=False)
        return Completion(text=rec["text"])


def make(arg: str, config: BackendConfig) -> Backend:
    return ReplayBackend(arg, config.replay_model)
