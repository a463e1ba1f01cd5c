"""Replay of recorded replies: our own JSONL export and third-party result files.

Formats read:

* lensbench JSONL (``lensbench export RUN_DIR``): one object per line with ``request_id`` and
  ``text`` (or ``error``), optionally ``model``. Matched on the request id.
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

A file holding several models' replies needs ``--replay-model NAME``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

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


def _read_json_or_jsonl(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise DataError(path, "expected a JSON list of records or JSON lines")
        return data
    except json.JSONDecodeError:
        pass
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(path, f"line {i} is not valid JSON: {exc}") from None
    return out


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
    records = _read_json_or_jsonl(p)
    models = sorted({str(r.get("model")) for r in records if isinstance(r, dict) and r.get("model") is not None})
    if model is not None:
        if model not in models:
            raise ConfigError(f"--replay-model {model!r} is not in {p}; models there: {', '.join(models)}")
        records = [r for r in records if r.get("model") == model]
    elif len(models) > 1:
        raise ConfigError(f"{p} holds replies of several models ({', '.join(models)}): choose one with --replay-model")
    name = model or (models[0] if models else p.stem)
    index: dict[Any, dict] = {}
    seen: dict[tuple, int] = defaultdict(int)
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            raise DataError(p, f"record {i} is not an object")
        if "request_id" in r:
            if "text" in r and r["text"] is not None:
                index[r["request_id"]] = {"text": r["text"]}
            else:
                index[r["request_id"]] = {"error": r.get("error") or "recorded error"}
        elif {"file", "skill", "question", "vlm_response_raw"} <= r.keys():
            base = rgbth_match_key(r["file"], r["skill"], r["question"])
            occ = seen[base]
            seen[base] += 1
            key = base[:-1] + (occ,)
            raw = r["vlm_response_raw"]
            if raw is None:  # no content at all: a server failure, never an answer (an empty string IS one)
                index[key] = {"error": "recorded reply is null (no content)"}
            elif isinstance(raw, str) and raw.startswith("Error:"):
                index[key] = {"error": raw}
            else:
                index[key] = {"text": str(raw)}
        else:
            raise DataError(p, f"record {i} has neither 'request_id' nor the RGB-Th-Bench result fields "
                               "(file, skill, question, vlm_response_raw)", field="request_id")
    return index, name, records


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
