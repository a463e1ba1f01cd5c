"""The one per-sample record of every benchmark (``samples.jsonl``), and the message log format.

Reports, the viewer, comparisons and statistics read only these records (DESIGN.md "The one
flow"). One line of ``samples.jsonl`` = one :class:`SampleRecord` as JSON.

Outcomes: ``correct`` / ``wrong`` (a scored answer), ``unparseable`` (the model replied but no
answer could be read: counted, and scored wrong where the protocol says so), ``error`` (no reply:
transport or server failure after retries; never scored, re-sent by the next run), ``scored``
(a benchmark with no right answer, e.g. GOBench critiques: the numbers are in ``scores``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lensbench.core.types import ImagePart, Message, Request, StoredResponse, TextPart

__all__ = ["SCHEMA_VERSION", "Outcome", "JudgeCall", "SampleRecord", "log_messages", "outcome_of", "count_outcomes",
           "count_empty_replies"]

#: Version of the ``samples.jsonl`` record format; bumped on any incompatible change.
SCHEMA_VERSION = 1

Outcome = Literal["correct", "wrong", "unparseable", "error", "scored"]


def log_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages as sent, in the log format of ``SampleRecord.messages``.

    ``[{"role": ..., "content": [part, ...]}]`` with parts in protocol order:
    ``{"type": "text", "text"}`` (verbatim), ``{"type": "image", "path", "sha256"}``, and for
    consecutive frames of one video ``{"type": "video", "path", "timestamps": [s, ...],
    "frames": [sha256, ...]}``.
    """
    out = []
    for m in messages:
        content: list[dict[str, Any]] = []
        for p in m.parts:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
            elif isinstance(p, ImagePart) and p.video is not None:
                last = content[-1] if content else None
                if last is not None and last["type"] == "video" and last["path"] == p.video:
                    last["timestamps"].append(p.t_s)
                    last["frames"].append(p.sha256)
                else:
                    content.append({"type": "video", "path": p.video, "timestamps": [p.t_s], "frames": [p.sha256]})
            else:
                content.append({"type": "image", "path": p.path, "sha256": p.sha256})
        out.append({"role": m.role, "content": content})
    return out


class JudgeCall(BaseModel):
    """One answer-parser or judge call made while scoring a sample.

    ``kind``: what the call decided (``"parser"``, ``"pairwise"``, ...); ``request_id`` its id in
    the run; ``reply`` the raw reply (None on error); ``verdict`` what was read from it (a letter,
    ``"A"``/``"B"``, ...; None = unreadable); ``error`` the transport failure, if any.
    """

    model_config = ConfigDict(extra="allow")
    kind: str
    request_id: str
    reply: str | None = None
    verdict: Any = None
    error: str | None = None


class SampleRecord(BaseModel):
    """One scored unit of one benchmark (one line of ``samples.jsonl``).

    Attributes:
        benchmark: CLI name (``"rgb-th-bench"``, ...).
        sample_id: unique within the run (e.g. ``"q12/en/rot2"``).
        request_id: the model request's id (None for units with no single request).
        messages: what was sent, see :func:`log_messages`.
        reply / reasoning: raw reply text (reasoning tags kept) and the separate reasoning
            channel, if the server returned one.
        answer: the parsed answer (letter, "Yes"/"No", box, ratings ...; None = none read).
        target: the right answer (None where there is none).
        outcome: see the module docstring.
        error: the transport failure when ``outcome == "error"``.
        scores: numbers (IoU, SPS terms, soft circular score ...).
        labels: category labels used for grouping (skill, dimension, task, L-1/L-2, language,
            rotation ...).
        judge: parser / judge calls with their replies and verdicts.
        usage: token usage as returned by the server; latency_s: seconds for the final attempt.
        extra: benchmark-specific facts that are neither scores nor labels (option lists ...).
    """

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")  # NaN scores stay NaN
    schema_version: int = SCHEMA_VERSION
    benchmark: str
    sample_id: str
    request_id: str | None = None
    messages: list[dict[str, Any]] = Field(default_factory=list)
    reply: str | None = None
    reasoning: str | None = None
    answer: Any = None
    target: Any = None
    outcome: Outcome
    error: str | None = None
    scores: dict[str, float | int | None] = Field(default_factory=dict)
    labels: dict[str, Any] = Field(default_factory=dict)
    judge: list[JudgeCall] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)
    latency_s: float | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_reply(cls, benchmark: str, sample_id: str, request: Request | None, resp: StoredResponse | None,
                   **fields: Any) -> "SampleRecord":
        """A record filled from a request and its stored reply; ``fields`` set the rest.

        With no reply or an ``error`` reply, ``outcome`` is ``"error"`` and ``error`` says why,
        whatever ``fields`` give for ``outcome`` (a transport failure is never scored).
        """
        base: dict[str, Any] = {"benchmark": benchmark, "sample_id": sample_id}
        if request is not None:
            base["request_id"] = request.id
            base["messages"] = log_messages(request.messages)
        if resp is not None:
            base.update(reply=resp.text, reasoning=resp.reasoning, usage=resp.usage or {}, latency_s=resp.latency_s)
        base.update(fields)
        if resp is None or not resp.ok:
            base["outcome"] = "error"
            base["error"] = (resp.error if resp is not None else None) or "no reply"
        return cls(**base)

    def line(self) -> dict[str, Any]:
        """JSON-able dict (one ``samples.jsonl`` line)."""
        return self.model_dump(mode="json")

    def json_line(self) -> str:
        """One ``samples.jsonl`` line (no newline): compact JSON, UTF-8 text unescaped, NaN/Infinity as
        ``json.dumps`` writes them (so :meth:`line` keeps them too), values of unknown types as ``str()``. Serialised by pydantic-core
        (~4x faster than ``json.dumps(self.line())``; issue 11: writing the log counts in a run's wall time)."""
        return self.model_dump_json(fallback=str)


def outcome_of(correct: bool | None) -> Outcome:
    """``"correct"``/``"wrong"`` for a truth value, ``"unparseable"`` for None."""
    if correct is None:
        return "unparseable"
    return "correct" if correct else "wrong"


def count_outcomes(records: Iterable[SampleRecord]) -> dict[str, int]:
    """``{"n": scored units (not error), "n_correct", "n_wrong", "n_unparseable", "n_error", "n_scored"}``."""
    c = {"n": 0, "n_correct": 0, "n_wrong": 0, "n_unparseable": 0, "n_error": 0, "n_scored": 0}
    for r in records:
        c[f"n_{r.outcome}"] += 1
        if r.outcome != "error":
            c["n"] += 1
    return c



def count_empty_replies(records: Iterable[SampleRecord]) -> int:
    """Scored records whose model answered with an empty string and no reasoning (docs/protocol.md, general rules:
    the model's own answer, scored as a reply with no answer in it and counted apart, never dropped)."""
    return sum(1 for r in records if r.outcome != "error" and r.reply == "" and not r.reasoning)
