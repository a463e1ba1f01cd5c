"""The shared judge round (lensbench.scoring.judges) on a scripted generate function."""

from __future__ import annotations

import asyncio

import pytest

from lensbench.core.types import GenParams, Message, StoredResponse
from lensbench.scoring.judges import judge_round, retry_params


class Script:
    """generate() stand-in: ``answers[(key, attempt)]`` -> reply text, or an Exception = transport error."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []  # (label, [request, ...]) per generate call

    async def generate(self, requests, label="x"):
        self.calls.append((label, list(requests)))
        out = {}
        for r in requests:
            v = self.answers[(r.meta["for"], r.meta["attempt"])]
            ok = not isinstance(v, Exception)
            out[r.id] = StoredResponse(key=r.id, request_id=r.id, status="ok" if ok else "error",
                                       text=v if ok else None, error=None if ok else str(v))
        return out


def _read(text):
    return text if text in ("yes", "no") else None


def test_retries_are_new_requests_and_every_call_is_recorded():
    s = Script({("a", 0): "yes", ("b", 0): "hm", ("b", 1): "no", ("c", 0): "?", ("c", 1): "??", ("c", 2): "???"})
    base = GenParams(temperature=0.0, extra_body={"k": 1})
    res = asyncio.run(judge_round(s, {"a": "ra", "b": "rb", "c": "rc"}, prompt=lambda t: f"judge: {t}", read=_read,
                                  params=base, retries=2, label="lab"))
    assert [len(reqs) for _lab, reqs in s.calls] == [3, 2, 1]
    assert [lab for lab, _ in s.calls] == ["lab", "lab retry 1", "lab retry 2"]
    first, second, third = (reqs for _lab, reqs in s.calls)
    assert [r.id for r in first] == ["a/parser", "b/parser", "c/parser"]
    assert [r.id for r in second] == ["b/parser/t1", "c/parser/t1"] and [r.id for r in third] == ["c/parser/t2"]
    assert all(r.role == "judge" and r.text == f"judge: r{r.meta['for']}" for _l, rs in s.calls for r in rs)
    assert first[0].params == base
    assert second[0].params == GenParams(temperature=0.7, seed=1, extra_body={"k": 1})
    assert third[0].params.seed == 2
    # the keys differ from the first attempt's, so an engine sends them instead of serving the stored reply
    assert len({r.key_for("judge-fp") for _l, rs in s.calls for r in rs if r.meta["for"] == "c"}) == 3
    assert res["a"].verdict == "yes" and len(res["a"].calls) == 1
    assert res["b"].verdict == "no" and [c.verdict for c in res["b"].calls] == [None, "no"]
    assert res["c"].verdict is None and [c.reply for c in res["c"].calls] == ["?", "??", "???"]
    assert all(c.kind == "parser" and c.error is None for r in res.values() for c in r.calls)
    assert [c.attempt for c in res["c"].calls] == [0, 1, 2]


def test_transport_errors_end_an_item_unless_asked_to_retry():
    answers = {("a", 0): ConnectionError("down"), ("a", 1): "yes"}
    s = Script(answers)
    res = asyncio.run(judge_round(s, {"a": "x"}, prompt=str, read=_read, params=GenParams(), retries=1))
    assert res["a"].error == "down" and res["a"].verdict is None and len(s.calls) == 1
    s2 = Script(answers)
    res2 = asyncio.run(judge_round(s2, {"a": "x"}, prompt=str, read=_read, params=GenParams(), retries=1,
                                   retry_on_error=True, kind="judge"))
    assert res2["a"].error is None and res2["a"].verdict == "yes"
    assert [c.request_id for c in res2["a"].calls] == ["a/judge", "a/judge/t1"]


def test_message_prompts_params_function_and_bad_retries():
    s = Script({("k", 0): "no"})
    msg = Message.user("look", "here")
    res = asyncio.run(judge_round(s, {"k": None}, prompt=lambda _i: msg, read=_read,
                                  params=lambda attempt: GenParams(temperature=0.3, seed=99 + attempt)))
    (req,) = s.calls[0][1]
    assert req.messages == (msg,) and req.params.seed == 99 and res["k"].verdict == "no"
    assert retry_params(GenParams(temperature=0.0), 0) == GenParams(temperature=0.0)
    with pytest.raises(ValueError):
        asyncio.run(judge_round(s, {}, prompt=str, read=_read, params=GenParams(), retries=-1))
    assert asyncio.run(judge_round(s, {}, prompt=str, read=_read, params=GenParams())) == {}
