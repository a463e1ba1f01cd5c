"""The shared LLM answer-parser / judge round: replies that need an LLM's reading go through the
same engine (cached, deduplicated, retried, stored) as ``role="judge"`` requests.

A benchmark gives the items to judge (``{key: item}``, e.g. ``{model request id: reply text}``),
a prompt function (item -> the judge's user message) and a reader (judge reply text -> verdict,
None = unreadable). :func:`judge_round` sends one request per item, then, for up to ``retries``
more attempts, a NEW request for each item whose verdict could not be read (its parameters
differ, see :func:`retry_params`, so the engine sends it instead of serving the stored reply).
Every call is returned as a :class:`lensbench.core.records.JudgeCall` for the sample record.

The judge backend is the run's ``--judge-model``; the engine keys each request on that backend's
fingerprint, so a run with another judge model never reuses the old verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lensbench.core.records import JudgeCall
from lensbench.core.types import GenParams, Message, Request

__all__ = ["JudgeResult", "judge_round", "retry_params", "default_request_id"]


@dataclass
class JudgeResult:
    """The judge calls made for one item and the verdict they gave.

    ``verdict``: the verdict read from the last call (None = unreadable or transport failure);
    ``calls``: one :class:`JudgeCall` per attempt, in order; ``error``: the transport failure of
    the last call, if it failed in transport (then the item must not be scored).
    """

    verdict: Any = None
    calls: list[JudgeCall] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        """The last call's transport error, or None."""
        return self.calls[-1].error if self.calls else None


def retry_params(base: GenParams, attempt: int) -> GenParams:
    """Parameters of attempt ``attempt`` (0-based): ``base`` for the first; for a retry,
    temperature 0.7 and ``seed = attempt`` (a new request, not the stored one: GroundingME's
    judge-retry rule)."""
    if attempt == 0:
        return base
    return base.model_copy(update={"temperature": 0.7, "seed": attempt})


def default_request_id(key: str, kind: str, attempt: int) -> str:
    """``"<key>/<kind>"`` for the first attempt, ``"<key>/<kind>/t<attempt>"`` for retries."""
    return f"{key}/{kind}" if attempt == 0 else f"{key}/{kind}/t{attempt}"


async def judge_round(ctx, items: Mapping[str, Any], *, prompt: Callable[[Any], str | Message],
                      read: Callable[[str | None], Any], params: GenParams | Callable[[int], GenParams],
                      kind: str = "parser", retries: int = 0, retry_on_error: bool = False,
                      request_id: Callable[[str, str, int], str] = default_request_id,
                      label: str = "judge", meta: Mapping[str, Any] | None = None) -> dict[str, JudgeResult]:
    """Judge every item through ``ctx.generate`` (role ``"judge"``); returns ``{key: JudgeResult}``.

    Args:
        ctx: a :class:`lensbench.benchmarks.base.RunContext` (anything with ``async generate``).
        items: ``{key: item}``; keys are unique (the request ids derive from them).
        prompt: item -> the user message text (or a full :class:`Message`, e.g. with an image).
        read: judge reply text -> verdict, or None when unreadable.
        params: generation parameters, or ``attempt -> GenParams`` (default rule for retries:
            :func:`retry_params` of the given base).
        kind: :attr:`JudgeCall.kind` and the request-id tag (``"parser"``, ``"judge"`` ...).
        retries: extra attempts (>= 0) for items whose verdict is None after a reply.
        retry_on_error: also retry items whose call failed in transport (after the engine's own
            retries); default False: a transport failure ends the item (never scored).
        request_id: ``(key, kind, attempt) -> request id``.
        label: progress label; meta: extra request meta (not part of the key).

    Raises ValueError for ``retries < 0``; the engine's errors (duplicate ids, no judge backend).
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    params_of = params if callable(params) else (lambda attempt, _b=params: retry_params(_b, attempt))
    results = {key: JudgeResult() for key in items}
    todo = list(items)
    for attempt in range(retries + 1):
        if not todo:
            break
        reqs: list[Request] = []
        for key in todo:
            p = prompt(items[key])
            msg = p if isinstance(p, Message) else Message.user(p)
            reqs.append(Request(id=request_id(key, kind, attempt), messages=(msg,), params=params_of(attempt),
                                role="judge", meta={**(meta or {}), "for": key, "attempt": attempt}))
        got = await ctx.generate(reqs, label=label if attempt == 0 else f"{label} retry {attempt}")
        nxt = []
        for key, rq in zip(todo, reqs):
            resp = got.get(rq.id)
            res = results[key]
            if resp is None or not resp.ok:
                err = (resp.error if resp is not None else None) or "no response"
                res.calls.append(JudgeCall(kind=kind, request_id=rq.id, error=err, attempt=attempt))
                res.verdict = None
                if retry_on_error:
                    nxt.append(key)
                continue
            verdict = read(resp.text)
            res.calls.append(JudgeCall(kind=kind, request_id=rq.id, reply=resp.text, verdict=verdict, attempt=attempt))
            res.verdict = verdict
            if verdict is None:
                nxt.append(key)
        todo = nxt
    return results
