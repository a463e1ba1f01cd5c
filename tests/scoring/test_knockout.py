"""The pairwise knockout tournament: pairing and byes, lockstep rounds, retries, the fixed rule,
transport errors and the judge-call log."""

from __future__ import annotations

import asyncio

import pytest

from lensbench.core.types import Message, Request, StoredResponse
from lensbench.scoring.knockout import run_knockouts


def _make(item, a, b, rnd, attempt):
    return Request(id=f"{item}/r{rnd}/{a}v{b}/t{attempt}", messages=(Message.user(f"{a} vs {b}"),), role="judge")


def _run(entrants, answer, retries=1):
    """``answer(item, a, b, attempt) -> text | None (transport error)``; returns (result, batches)."""
    batches = []

    async def gen(reqs, label):
        batches.append((label, [r.id for r in reqs]))
        out = {}
        for r in reqs:
            item, rnd, pair, t = r.id.split("/")
            a, b = (int(x) for x in pair.split("v"))
            text = answer(item, a, b, int(t[1:]))
            out[r.id] = (StoredResponse(key="k", request_id=r.id, status="error", text=None, error="HTTP 502") if text is None
                         else StoredResponse(key="k", request_id=r.id, status="ok", text=text))
        return out

    def verdict(text):
        return text if text in ("A", "B") else None

    return asyncio.run(run_knockouts(entrants, _make, gen, verdict, retries=retries, label="j")), batches


def test_higher_index_always_wins_with_byes():
    # 5 entrants: round 1 (0v1, 2v3, bye 4) -> 1, 3, 4; round 2 (1v3, bye 4) -> 3, 4; round 3 (3v4) -> 4
    res, batches = _run({"x": [0, 1, 2, 3, 4], "y": [7]}, lambda i, a, b, t: "B")
    ko = res["x"]
    assert ko.winner == 4 and res["y"].winner == 7 and res["y"].matches == []
    assert [(m.round, m.a, m.b, m.winner) for m in ko.matches] == [(1, 0, 1, 1), (1, 2, 3, 3), (2, 1, 3, 3), (3, 3, 4, 4)]
    assert [label for label, _ in batches] == ["j-r1", "j-r2", "j-r3"]
    assert len(batches[0][1]) == 2  # both round-1 matches sent together
    assert ko.fallbacks == 0 and len(ko.calls) == 4 and all(c.kind == "pairwise" for c in ko.calls)


def test_retry_then_fixed_rule_and_errors():
    # attempt 0 never gives a verdict; attempt 1 says B for item "r"; item "f" never answers (transport errors)
    def answer(item, a, b, t):
        if item == "f":
            return None
        return "B" if t == 1 else "no idea"

    res, batches = _run({"r": [2, 5], "f": [0, 3]}, answer, retries=1)
    r, f = res["r"], res["f"]
    assert r.winner == 5 and r.fallbacks == 0 and r.matches[0].attempts == 2 and r.matches[0].verdict == "B"
    assert [c.verdict for c in r.calls] == [None, "B"] and r.calls[0].reply == "no idea"
    # the fixed rule: candidate A (the earlier entrant) advances; counted
    assert f.winner == 0 and f.fallbacks == 1 and f.judge_errors == 2 and f.matches[0].fallback
    assert all(c.error == "HTTP 502" and c.reply is None for c in f.calls)
    assert [len(ids) for _, ids in batches] == [2, 2]  # the retry batch holds only matches without a verdict
    res0, _ = _run({"r": [2, 5]}, answer, retries=0)
    assert res0["r"].winner == 2 and res0["r"].fallbacks == 1 and res0["r"].matches[0].attempts == 1


def test_no_entrants_is_an_error():
    with pytest.raises(ValueError):
        _run({"x": []}, lambda *a: "A")
