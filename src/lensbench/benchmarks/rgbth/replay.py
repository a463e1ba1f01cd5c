"""RGB-Th-Bench third-party result files as a replay format (``--model replay:benchmark_results_*.json``).

The RGB-Th-Benchmark re-evaluation repository writes a JSON list of ``{model, file, skill, question,
vlm_response_raw, ...}``. A reply is matched on (``Source N/scene`` folder, skill, question text,
occurrence), the key :meth:`RGBThBench.expand <lensbench.benchmarks.rgbth.benchmark.RGBThBench.expand>`
puts in ``meta["replay_match"]``. A reply starting with ``Error:`` is a recorded transport error, and a
null reply a recorded server failure: both are replayed as errors, never as answers; an empty string
is the model's answer "" (docs/protocol.md, general rules). A question recorded once but asked twice has no reply
for its second ask (an error, never a copy of the first reply).

The file's input protocol is recorded: files written by the third-party ``benchmark_thermal*.py``
(thermal image only, its own context) are ``thermal-only`` (named ``*_thermal_only.json`` by that
script, and their records carry ``data_type_original`` = the release's data type instead of
``data_type``); all others are ``rgb+thermal``. A request whose ``meta["rgbth_input"]`` names another
mode is refused with a ConfigError before anything is replayed, and so is a request whose image a ``--perturb``
palette re-coloured (``meta["extra"]["perturb"]``: the file's replies answered the released image).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from lensbench.core.errors import ConfigError
from lensbench.core.replay import ReplayFormat, ReplayRead, validated
from lensbench.core.types import Request

__all__ = ["ResultFile", "match_key", "file_input"]

_DATA_TYPES = ("Single RGB Image", "RGB-Thermal Pair")


def match_key(file: str, skill: str, question: str, occurrence: int = 0) -> tuple:
    """Match key of an RGB-Th-Bench question: (``Source N/scene``, skill, question, occurrence).

    ``file`` may use ``\\`` or ``/`` and may end in ``/questions.json`` (both are normalised).
    """
    f = file.replace("\\", "/")
    if f.endswith("/questions.json"):
        f = f[: -len("/questions.json")]
    return ("rgbth", f, skill, question.strip(), occurrence)


def file_input(path: str | Path, records: list[Any]) -> str | None:
    """The input mode a third-party result file was recorded with, or None (not such a file).

    ``"thermal-only"`` when the file name ends in ``_thermal_only`` (the third-party
    ``benchmark_thermal*.py`` output name) or every record carries ``data_type_original`` with a
    release data type and none carries ``data_type`` (what that script writes); else
    ``"rgb+thermal"`` (``benchmark.py``: the paper's input).
    """
    rows = [r for r in records if isinstance(r, dict) and ResultFile.fields <= r.keys()]
    if not rows:
        return None
    if Path(path).stem.endswith("_thermal_only"):
        return "thermal-only"
    if all(r.get("data_type_original") in _DATA_TYPES and "data_type" not in r for r in rows):
        return "thermal-only"
    return "rgb+thermal"


class _Result(BaseModel):
    """A record of a third-party result file (the fields replay reads)."""

    model_config = ConfigDict(extra="allow", strict=True)
    file: str
    skill: str
    question: str
    vlm_response_raw: str | None
    model: str | None = None


class ResultFile(ReplayFormat):
    """The third-party RGB-Th-Bench result file (module docstring)."""

    name = "RGB-Th-Bench result"
    fields = frozenset({"file", "skill", "question", "vlm_response_raw"})

    def validate(self, path: Path, where: str, record: dict[str, Any]) -> _Result:
        """The record checked; DataError names the file, the record and the field."""
        return validated(_Result, path, where, record, frozenset({"model", "vlm_response_raw"}))

    def read(self, path: Path, records: list[_Result], raw: list[dict[str, Any]]) -> ReplayRead:
        """Replies keyed by :func:`match_key` (the n-th record of a question is its n-th ask), and the check
        that a request's input mode is the file's."""
        index: dict[tuple, dict[str, str]] = {}
        seen: dict[tuple, int] = defaultdict(int)
        for rec in records:
            base = match_key(rec.file, rec.skill, rec.question)
            occ = seen[base]
            seen[base] += 1
            reply = rec.vlm_response_raw
            if reply is None:  # no content at all: a server failure, never an answer (an empty string IS one)
                index[base[:-1] + (occ,)] = {"error": "recorded reply is null (no content)"}
            elif reply.startswith("Error:"):
                index[base[:-1] + (occ,)] = {"error": reply}
            else:
                index[base[:-1] + (occ,)] = {"text": reply}
        mode = file_input(path, raw)

        def check(request: Request) -> None:
            if (request.meta.get("replay_match") or [None])[0] != "rgbth":
                return
            asked = request.meta.get("rgbth_input", "rgb+thermal")
            if mode is not None and asked != mode:
                raise ConfigError(f"{path} holds RGB-Th-Bench replies recorded with input {mode!r} but this run uses "
                                  f"--input {asked}: replay it with --input {mode}")
            if perturbed := (request.meta.get("extra") or {}).get("perturb"):
                raise ConfigError(f"{path} holds replies to the released images, but this run sends perturbed input "
                                  f"(--perturb {perturbed}): replay it without --perturb")

        return ReplayRead(index, check)
