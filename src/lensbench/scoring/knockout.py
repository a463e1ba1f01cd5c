"""Pairwise knockout tournament: pick one of N candidates with a pairwise judge.

Used for best-of-N test-time scaling (GroundingME Sec. 5.2, Table 4). Per item, the surviving
candidates meet in rounds of (A, B) matches in their given order; an odd one out gets a bye
(advances unjudged). A judge call whose reply carries no verdict (unreadable, or a transport
error) is sent again up to ``retries`` times; after that the fixed rule applies: candidate A
(the earlier entrant) advances, and the match is counted as a fallback.

All items advance in lockstep: one batch of judge calls per round and attempt, so the engine
sends them concurrently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lensbench.core.records import JudgeCall
from lensbench.core.types import Request, StoredResponse

__all__ = ["Match", "Knockout", "run_knockouts"]

#: ``make_request(item, a, b, round, attempt) -> Request``: the judge call comparing entrants a (shown as A)
#: and b (shown as B) of ``item`` in round ``round`` (1-based), attempt ``attempt`` (0 = first try).
MakeRequest = Callable[[str, int, int, int, int], Request]
#: ``generate(requests, label) -> {request id: reply}`` (``RunContext.generate``).
Generate = Callable[[Sequence[Request], str], Awaitable[dict[str, StoredResponse]]]


@dataclass
class Match:
    """One match: entrants ``a`` and ``b``, the ``verdict`` read (``"A"``/``"B"``; None = none
    after all attempts), the ``winner``, how many judge ``attempts`` were sent and whether the
    fixed rule decided (``fallback``)."""

    round: int
    a: int
    b: int
    verdict: str | None
    winner: int
    attempts: int
    fallback: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {"round": self.round, "a": self.a, "b": self.b, "verdict": self.verdict, "winner": self.winner,
                "attempts": self.attempts, "fallback": self.fallback}


@dataclass
class Knockout:
    """One item's tournament: the ``winner``, its ``matches`` in play order, ``fallbacks``
    (matches decided by the fixed rule), ``judge_errors`` (judge calls that failed in transport)
    and every judge ``calls`` (one :class:`JudgeCall` per attempt, kind ``"pairwise"``)."""

    winner: int
    matches: list[Match] = field(default_factory=list)
    fallbacks: int = 0
    judge_errors: int = 0
    calls: list[JudgeCall] = field(default_factory=list)


async def run_knockouts(entrants: dict[str, list[int]], make_request: MakeRequest, generate: Generate,
                        parse_verdict: Callable[[str | None], str | None], *, retries: int = 1,
                        label: str = "judge") -> dict[str, Knockout]:
    """Run one knockout per item.

    Args:
        entrants: ``{item: [candidate index, ...]}`` in seeding order (at least one each; a
            single entrant wins without a match).
        make_request: builds a judge call (see :data:`MakeRequest`); ids must be unique per
            (item, a, b, round, attempt).
        generate: sends a batch (see :data:`Generate`); called with label ``f"{label}-r{round}"``.
        parse_verdict: ``"A"``, ``"B"`` or None from a reply text.
        retries: extra attempts for a match without a verdict (>= 0).

    Returns:
        ``{item: Knockout}``. Raises ValueError for an item without entrants.
    """
    for item, cands in entrants.items():
        if not cands:
            raise ValueError(f"knockout item {item!r} has no entrants")
    alive = {item: list(c) for item, c in entrants.items()}
    out = {item: Knockout(winner=c[0]) for item, c in entrants.items()}
    rnd = 0
    while any(len(v) > 1 for v in alive.values()):
        rnd += 1
        pending = {item: [(v[i], v[i + 1]) for i in range(0, len(v) - 1, 2)] for item, v in alive.items() if len(v) > 1}
        verdicts, attempts = await _judge_round(pending, rnd, out, make_request, generate, parse_verdict, retries,
                                                f"{label}-r{rnd}")
        for item, pairs in pending.items():
            winners = []
            for a, b in pairs:
                v = verdicts.get((item, a, b))
                fallback = v is None
                w = b if v == "B" else a
                if fallback:
                    out[item].fallbacks += 1
                out[item].matches.append(Match(rnd, a, b, v, w, attempts.get((item, a, b), 0), fallback))
                winners.append(w)
            v = alive[item]
            if len(v) % 2 == 1:
                winners.append(v[-1])
            alive[item] = winners
    for item, v in alive.items():
        out[item].winner = v[0]
    return out


async def _judge_round(pending: dict[str, list[tuple[int, int]]], rnd: int, out: dict[str, Knockout],
                       make_request: MakeRequest, generate: Generate, parse_verdict: Callable[[str | None], str | None],
                       retries: int, label: str) -> tuple[dict[tuple[str, int, int], str | None], dict[tuple[str, int, int], int]]:
    """The judge calls of one round: each match asked until it has a verdict or ``retries`` more attempts are
    spent; every call and failure is recorded in its item's :class:`Knockout`. Returns ``(verdicts, attempts)``
    by ``(item, a, b)``."""
    verdicts: dict[tuple[str, int, int], str | None] = {}
    attempts: dict[tuple[str, int, int], int] = {}
    todo = [(item, a, b) for item, pairs in pending.items() for a, b in pairs]
    for attempt in range(retries + 1):
        if not todo:
            break
        reqs = [make_request(item, a, b, rnd, attempt) for item, a, b in todo]
        replies = await generate(reqs, label)
        nxt = []
        for (item, a, b), rq in zip(todo, reqs):
            r = replies[rq.id]
            attempts[(item, a, b)] = attempt + 1
            v = parse_verdict(r.text) if r.ok else None
            if not r.ok:
                out[item].judge_errors += 1
            out[item].calls.append(JudgeCall(kind="pairwise", request_id=rq.id, reply=r.text if r.ok else None,
                                             verdict=v, error=None if r.ok else (r.error or "error"),
                                             round=rnd, a=a, b=b, attempt=attempt))
            verdicts[(item, a, b)] = v
            if v is None:
                nxt.append((item, a, b))
        todo = nxt
    return verdicts, attempts
